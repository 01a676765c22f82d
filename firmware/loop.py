"""The event loop: one control thread, a thread-safe queue and loop-kept timers.

Everything that happens to the box (a button edge on a gpiozero thread, a command from the serial
reader, a signal) is ``post()``-ed here as an :class:`Event` stamped with ``time.monotonic_ns()``
(or with the time the edge happened, when the pin library stamps its edges: ``at_ns``).
Only the loop thread runs handlers, so only it touches the state machine and the outputs.

Timers are deadlines kept by the loop and waited for with ``queue.get(timeout=...)``: no timer
threads, nothing sleeps in a callback. Each timer has a name; setting or cancelling it bumps the
name's token, so an expired entry whose token is stale is dropped instead of firing late.

A handler that raises does not kill the thread silently: the loop logs it and calls ``on_error``
(the daemon turns every output off and latches ``fault``). If ``on_error`` raises too, the loop
calls ``on_crash`` (outputs off, nothing else) and stops.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

Clock = Callable[[], int]
"""A clock returns monotonic nanoseconds (``time.monotonic_ns`` or a :class:`FakeClock`)."""


@dataclass(frozen=True)
class Event:
    """Something that happened: ``kind``, monotonic stamp ``t_ns`` and free-form ``data``."""

    kind: str
    t_ns: int
    data: dict[str, Any] = field(default_factory=dict)


class FakeClock:
    """A manual clock for tests: ``advance(ms)`` moves time; the loop never waits on it."""

    def __init__(self, start_ns: int = 1_000_000_000) -> None:
        self._now = start_ns
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return self._now

    def advance(self, ms: float) -> None:
        """Move the clock forward by ``ms`` milliseconds."""
        with self._lock:
            self._now += int(ms * 1_000_000)

    def advance_to(self, now_ns: int) -> None:
        """Move the clock to ``now_ns`` (never back)."""
        with self._lock:
            self._now = max(self._now, now_ns)


_STOP = "__stop__"


class Loop:
    """The control loop. ``handler(event)`` runs on the loop thread for every event and timer.

    ``run()`` blocks (usually on a thread from ``start()``); ``run_pending()`` processes what is due
    without blocking, which is how tests drive a loop on a :class:`FakeClock`.
    """

    def __init__(
        self,
        handler: Callable[[Event], None],
        *,
        clock: Clock | None = None,
        on_error: Callable[[BaseException, Event], None] | None = None,
        on_crash: Callable[[BaseException], None] | None = None,
        name: str = "launcher-loop",
    ) -> None:
        self._handler = handler
        self.clock: Clock = clock or time.monotonic_ns
        self._on_error = on_error
        self._on_crash = on_crash
        self._name = name
        # Not queue.SimpleQueue: its get(timeout) recomputes the time left after taking its
        # lock and, when the deadline passed in between (a thread preempted on a busy or
        # emulated CPU, a signal handler), waits with that negative time, i.e. until the next
        # put: every timer, max-on deadlines among them, late until an edge or a command comes.
        # queue.Queue waits on a Condition and ends at its deadline whatever held it up.
        self._queue: queue.Queue[Event] = queue.Queue()
        # (deadline_ns, order, name, token, kind, data); order keeps equal deadlines FIFO.
        self._timers: list[tuple[int, int, str, int, str, dict[str, Any]]] = []
        self._tokens: dict[str, int] = {}
        self._deadlines: dict[str, int] = {}
        self._order = itertools.count()
        self._token_source = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._running = False
        self.crashed: BaseException | None = None
        self.errors = 0  # handler exceptions caught so far

    # -- any thread --------------------------------------------------------------------------

    def post(self, kind: str, /, *, at_ns: int | None = None, **data: Any) -> None:
        """Queue an event from any thread, stamped now with the loop's clock, or ``at_ns`` when
        the caller knows when it happened on that clock (an input edge the kernel stamped)."""
        self._queue.put(Event(kind, self.clock() if at_ns is None else at_ns, data))

    def start(self) -> None:
        """Run the loop on its own (daemon) thread."""
        if self._thread is not None:
            return
        self._running = True
        self._thread = threading.Thread(target=self._run_thread, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 5.0) -> None:
        """Ask the loop to finish after the events already queued, and wait for the thread."""
        self._queue.put(Event(_STOP, self.clock()))
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def alive(self) -> bool:
        """True while the loop thread runs."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def on_loop_thread(self) -> bool:
        """True when called from the loop thread itself."""
        return self._thread is threading.current_thread()

    # -- loop thread only ----------------------------------------------------------------------

    def set_timer(self, name: str, delay_ms: float, kind: str, **data: Any) -> int:
        """(Re)arm timer ``name`` to post ``kind`` after ``delay_ms``; returns its token.

        Re-arming replaces the previous deadline of that name (its token becomes stale).
        """
        return self.set_deadline(name, self.clock() + int(delay_ms * 1_000_000), kind, **data)

    def set_deadline(self, name: str, deadline_ns: int, kind: str, **data: Any) -> int:
        """Like ``set_timer`` with an absolute deadline on the loop's clock."""
        token = next(self._token_source)
        self._tokens[name] = token
        self._deadlines[name] = deadline_ns
        heapq.heappush(self._timers, (deadline_ns, next(self._order), name, token, kind, data))
        if len(self._timers) > 4 * len(self._tokens) + 64:
            # Re-armed and cancelled timers stay in the heap until their old deadline; with a
            # max-on deadline of seconds and a burst every few ms they would pile up. Keep only
            # the live ones (amortised: this runs once per many pushes).
            self._timers = [t for t in self._timers if self._tokens.get(t[2]) == t[3]]
            heapq.heapify(self._timers)
        return token

    def cancel_timer(self, name: str) -> None:
        """Forget timer ``name``; a pending expiry of it is dropped. No error if not armed."""
        self._tokens.pop(name, None)
        self._deadlines.pop(name, None)

    def timer_deadline(self, name: str) -> int | None:
        """Deadline (clock ns) of the armed timer ``name``, or None."""
        return self._deadlines.get(name)

    def timers(self) -> dict[str, int]:
        """Armed timers: name -> deadline ns."""
        return dict(self._deadlines)

    def next_deadline(self) -> int | None:
        """The deadline (clock ns) of the timer due first, or None (a test on a fake clock moves
        the clock there)."""
        return min(self._deadlines.values(), default=None)

    def run(self) -> None:
        """Process events and timers until ``stop()``; blocks."""
        self._running = True
        while self._running:
            timeout = self._next_timeout()
            try:
                event = self._queue.get(timeout=timeout) if timeout != 0 else None
            except queue.Empty:
                event = None
            if event is not None:
                if event.kind == _STOP:
                    self._running = False
                    break
                self._dispatch(event)
            self._fire_due()

    def run_pending(self) -> int:
        """Handle every queued event and due timer without blocking, in the order ``run()``
        would (after each event, the timers due by then); returns how many ran."""
        count = 0
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                break
            if event.kind == _STOP:
                self._running = False
                continue
            self._dispatch(event)
            count += 1 + self._fire_due()
        return count + self._fire_due()

    # -- internals -----------------------------------------------------------------------------

    def _run_thread(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # the loop must never die silently
            self.crashed = exc
            log.critical("control loop crashed: %r", exc, exc_info=exc)
            if self._on_crash is not None:
                try:
                    self._on_crash(exc)
                except Exception:
                    log.exception("safe shutdown after a loop crash failed")

    def _next_timeout(self) -> float | None:
        while self._timers:
            deadline, _, name, token, _, _ = self._timers[0]
            if self._tokens.get(name) != token:
                heapq.heappop(self._timers)  # stale: cancelled or re-armed
                continue
            return max(0.0, (deadline - self.clock()) / 1e9)
        return None

    def _fire_due(self) -> int:
        fired = 0
        now = self.clock()
        while self._timers and self._timers[0][0] <= now:
            deadline, _, name, token, kind, data = heapq.heappop(self._timers)
            if self._tokens.get(name) != token:
                continue
            del self._tokens[name]
            self._deadlines.pop(name, None)
            self._dispatch(Event(kind, deadline, {"timer": name, **data}))
            fired += 1
            now = self.clock()
        return fired

    def _dispatch(self, event: Event) -> None:
        try:
            self._handler(event)
        except Exception as exc:
            self.errors += 1
            if getattr(exc, "exit_code", None) is not None:
                # one of ours (a LauncherError): its message says it all, no traceback
                log.error("handler for %r failed: %s", event.kind, exc)
            else:
                log.error("handler for %r failed: %r", event.kind, exc, exc_info=exc)
            if self._on_error is None:
                raise
            # on_error raising propagates to _run_thread -> on_crash -> loop ends.
            self._on_error(exc, event)
