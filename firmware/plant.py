"""The plant: a simulated card mechanism attached to simulated pins.

It plays the part of the physical box for tests and the demo. It watches the ejector output pins
(the feed motor's IN1/IN2/EN, or the solenoid gate) and drives the input pins the way the real
mechanism would: while the feed motor runs forward a card crosses the exit beam every
``feed_interval_ms`` (± seeded jitter) after ``spinup_ms``; with a solenoid one card crosses
``spinup_ms`` after each pulse starts. It keeps the hopper count, closes the hopper-empty switch
when it runs out, keeps the door shut, and can be told to misbehave: ``misfeed(n)``, ``stall()``,
``stick_sensor(high)``, ``run_empty_after(n)``, ``overrun(n)`` (the motor coasts on for ``n`` more
cards after it stops) and ``push_card()`` (a card crosses the beam with nothing driving it).

The plant is "the world", so it keeps its own time on its own thread, independent of the daemon's
loop. A test on a fake clock starts it without the thread (``start(thread=False)``, as
``Daemon.start(thread=False)`` does) and moves it with ``run_due()`` to the time ``next_due()``
names, in turn with the loop: the mechanism's timings cost no wall time there.

It reaches the pins through their world side (:func:`world_of`): gpiozero's mock pins
(``--mock``), or the simulated gpiochip that tests and ``make pi-check`` put under gpiozero's own
lgpio backend (``tests/simchip``). Real pins have none, so there is no plant on a real box.
Nothing else in the firmware imports it but the commands that build one (``run``, ``bench``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import textfile
from common.errors import UsageError
from firmware.pins import is_lgpio

log = logging.getLogger(__name__)

_MS = 1_000_000
KEEP_HISTORY = 2_000  # newest crossings and output changes kept (a soak runs for days)
KEEP_LOADS = 64  # tokens of the newest loads, so a load retried after a crash is not doubled


class MockHeader:
    """The world side of gpiozero's ``MockFactory`` pins: what drives an input and watches an
    output from outside (the simulated chip of ``tests/simchip`` has the same four methods)."""

    def __init__(self, factory: Any) -> None:
        self.factory = factory
        self._patched: dict[tuple[int, int], tuple[Any, Any]] = {}

    def drive(self, number: int, high: bool) -> None:
        """Drive input ``number`` high or low (an output is the box's to drive: unchanged)."""
        pin = self.factory.pin(number)
        if pin.function != "input":
            return
        if high:
            pin.drive_high()
        else:
            pin.drive_low()

    def value(self, number: int) -> float:
        """What pin ``number`` does now (a PWM output's duty, 0-1)."""
        return float(self.factory.pin(number).state or 0)

    def watch(self, number: int, fn: Callable[[float], None]) -> None:
        """Call ``fn(value)`` when output ``number`` changes."""
        # Mock output pins have no change callback; wrap this one pin object's state change
        # (an instance attribute, so nothing else in gpiozero is affected).
        pin = self.factory.pin(number)
        original = pin._change_state

        def changed(value: Any, _original: Any = original) -> bool:
            result = _original(value)
            if result:
                fn(float(value))
            return bool(result)

        pin._change_state = changed
        self._patched[(number, id(fn))] = (pin, original)

    def unwatch(self, number: int, fn: Callable[[float], None]) -> None:
        """Stop calling ``fn``."""
        pin, _original = self._patched.pop((number, id(fn)), (None, None))
        if pin is not None:
            with contextlib.suppress(AttributeError):
                # Restore the class method (the instance attribute shadowed it).
                del pin._change_state


def world_of(factory: Any) -> Any | None:
    """The world side of ``factory``'s pins, which a plant drives: :class:`MockHeader` for
    gpiozero's mock pins; the simulated chip for gpiozero's lgpio backend over
    ``tests/simchip``'s ``lgpio`` (its ``plant_side``, which the real lgpio does not have);
    None for real pins."""
    import sys

    from gpiozero.pins.mock import MockFactory

    if isinstance(factory, MockFactory):
        return MockHeader(factory)
    if is_lgpio(factory):
        side = getattr(sys.modules.get("lgpio"), "plant_side", None)
        if callable(side):
            return side(factory.chip)
    return None


def read_state(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The plant state kept in `path`: ``{"hopper", "ejected_total", "loads"}`` (``loads``: the
    tokens of the newest loads), or None when there is none yet (no file, or an empty one).

    Raises UsageError when `path` is a directory or a file that is not a plant-state JSON: it
    is someone's file, and the plant would overwrite it with every card."""
    path = Path(path)
    what = 'a plant-state JSON ({"hopper": N, "ejected_total": N})'
    if path.is_dir():
        raise UsageError(f"--plant-state {path} is a directory; give a file path")
    try:
        text = textfile.read_bytes(path)  # (at most textfile.MOST_BYTES: not /dev/zero)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"--plant-state {path} cannot be read: {exc.strerror or exc}") from None
    if not text.strip():
        return None
    try:
        data = textfile.parse_json(textfile.decode(text))  # (nested too deep: ValueError)
        hopper = data["hopper"]
        total = data.get("ejected_total", 0)
        loads = data.get("loads", [])
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in (hopper, total)):
            raise TypeError("counts must be whole numbers >= 0")
        if not isinstance(loads, list) or not all(isinstance(t, str) for t in loads):
            raise TypeError("loads must be a list of strings")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UsageError(
            f"--plant-state {path} exists and is not {what}; give a new path or move it away"
        ) from None
    return {"hopper": hopper, "ejected_total": total, "loads": loads}


def check_state_path(path: str | os.PathLike[str]) -> None:
    """Raise UsageError unless `path` is absent, empty or a plant-state JSON (``launcher run``
    checks this before anything starts)."""
    read_state(path)


class Plant:
    """Simulated mechanism on mock pins; see the module docstring. A context manager.

    ``config`` is the ``[plant]`` section, ``pins`` the ``[pins]`` section, ``factory`` the
    simulated pins' factory the daemon's devices use (``MockFactory``, or gpiozero's
    ``LGPIOFactory`` over the simulated chip: :func:`world_of`). ``kind`` is the ejector kind
    ("motor" or "solenoid"; guessed from the pins when not given). Call ``start()`` after the
    devices exist (their pull-ups would otherwise override what the plant drives).
    """

    def __init__(
        self,
        config: Any,
        factory: Any,
        pins: Any,
        *,
        state_path: str | os.PathLike[str] | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        kind: str | None = None,
    ) -> None:
        self.config = config
        self.factory = factory
        header = world_of(factory)
        if header is None:
            raise ValueError(f"a plant needs simulated pins, not {type(factory).__name__}")
        self.header = header
        self.pins = pins
        self.kind = kind or ("motor" if pins.ejector_backward is not None else "solenoid")
        self.clock = clock
        self.state_path = Path(state_path) if state_path is not None else None
        self.rng = random.Random(config.seed)
        self.hopper = int(config.hopper)
        self.ejected_total = 0
        self.loads: list[str] = []  # tokens of the newest loads (``load(..., token=)``)
        if self.state_path is not None:
            self._read_state()
        self.crossings: list[int] = []  # clock ns of each card entering the beam
        self.output_log: list[tuple[str, int, float]] = []  # (pin name, ns, value)
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._watching: list[tuple[int, Callable[[float], None]]] = []
        # mechanism state (guarded by _cond)
        self._running_since: int | None = None  # motor forward since
        self._next_card: int | None = None
        self._beam_until: int | None = None
        self._pending_pulses: list[int] = []  # solenoid: card crossing times
        self._misfeeds = 0
        self._overrun = 0  # cards the next stop coasts on for (``overrun``)
        self._coast = 0  # motor off, card slots still to come from the coasting roller
        self._stalled = False
        self._stuck: bool | None = None
        self._door_open = False
        self._values: dict[str, float] = {}
        self._pin_names = {
            name: getattr(pins, name)
            for name in ("ejector_forward", "ejector_backward", "ejector_enable")
            if getattr(pins, name, None) is not None
        }

    # -- life cycle ----------------------------------------------------------------------------

    def start(self, *, thread: bool = True) -> Plant:
        """Attach to the pins and start the mechanism's thread (``thread=False``: the caller
        moves the mechanism with ``run_due()``, on a fake clock)."""
        if self._thread is not None or self._watching:
            return self
        for name, number in self._pin_names.items():
            self._values[name] = self.header.value(number)

            def changed(value: float, _name: str = name) -> None:
                self._output_changed(_name, value)

            self.header.watch(number, changed)
            self._watching.append((number, changed))
        with self._cond:
            self._update_motion(self.clock())
            self._drive_inputs()
            self._save()
        if thread:
            self._thread = threading.Thread(target=self._run, name="plant", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Detach from the pins and stop the thread; idempotent."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        for number, fn in self._watching:
            self.header.unwatch(number, fn)
        self._watching.clear()

    close = stop

    def __enter__(self) -> Plant:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the person at the box -----------------------------------------------------------------

    def load(
        self, count: int | None = None, *, total: int | None = None, token: str | None = None
    ) -> int:
        """Put ``count`` cards in (or make it hold exactly ``total``); returns the hopper.

        With ``token`` (the ``load`` command's id) the load is done once: the token is kept in
        the same state-file write as the cards, and a load with a token already kept is not
        done again (the box crashed after the cards went in, before it journaled the load)."""
        with self._cond:
            if token is not None and token in self.loads:
                return self.hopper
            if total is not None:
                self.hopper = max(0, int(total))
            elif count is not None:
                self.hopper += max(0, int(count))
            if token is not None:
                self.loads = [*self.loads, token][-KEEP_LOADS:]
            self._drive_inputs()
            self._save()
            self._cond.notify_all()
            return self.hopper

    def has_load(self, token: str) -> bool:
        """True when a ``load`` with this token is already in the hopper."""
        with self._cond:
            return token in self.loads

    def misfeed(self, n: int = 1) -> None:
        """The next ``n`` card slots feed nothing (the roller slips); a reverse pulse re-grips."""
        with self._cond:
            self._misfeeds += n

    def overrun(self, n: int = 1) -> None:
        """The roller coasts: the next time the feed motor stops (not reverses), ``n`` more card
        slots follow at the feed interval as if it still ran. With a solenoid, the next pulse
        pushes ``n`` cards behind its own."""
        with self._cond:
            self._overrun += max(0, int(n))
            self._cond.notify_all()

    def push_card(self) -> None:
        """A card crosses the beam now with nothing driving it (pushed by hand, or shaken loose).

        It leaves the hopper like any other; a stall or an empty hopper stops it too."""
        with self._cond:
            self._pending_pulses.append(self.clock())
            self._cond.notify_all()

    def stall(self) -> None:
        """A card wedges: nothing crosses the beam until ``fix()``, whatever the motor does."""
        with self._cond:
            self._stalled = True

    def fix(self) -> None:
        """A person clears the jam and any misfeed."""
        with self._cond:
            self._stalled = False
            self._misfeeds = 0
            self._cond.notify_all()

    def stick_sensor(self, high: bool) -> None:
        """The beam reads broken (``high``) or clear (not ``high``) whatever crosses it."""
        with self._cond:
            self._stuck = bool(high)
            self._drive_sensor(self._stuck)

    def unstick(self) -> None:
        """The beam sensor works again."""
        with self._cond:
            self._stuck = None
            self._drive_sensor(self._beam_until is not None)

    def run_empty_after(self, n: int) -> None:
        """The hopper really holds only ``n`` more cards (it runs empty mid-burst)."""
        with self._cond:
            self.hopper = min(self.hopper, max(0, n))
            self._drive_inputs()
            self._save()

    def open_door(self) -> None:
        """Open the hopper door (the door switch opens)."""
        with self._cond:
            self._door_open = True
            self._drive_inputs()

    def close_door(self) -> None:
        """Shut the hopper door."""
        with self._cond:
            self._door_open = False
            self._drive_inputs()

    def wait_cards(self, total: int, timeout: float) -> bool:
        """Wait until ``ejected_total`` reaches ``total``; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.ejected_total < total:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def wait_quiet(self, timeout: float) -> bool:
        """Wait until nothing moves (``quiet``); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.quiet:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    @property
    def quiet(self) -> bool:
        """Nothing moves: no card in the beam, none on its way (a running or coasting roller,
        a solenoid pulse or a pushed card)."""
        with self._cond:
            return self.next_due() is None

    # -- on a fake clock ---------------------------------------------------------------------

    def next_due(self) -> int | None:
        """When the mechanism next changes by itself (clock ns: a card reaches the beam or
        leaves it), or None while nothing moves."""
        with self._cond:
            if self._beam_until is not None:
                return self._beam_until  # the next card waits behind the one in the beam
            due = [t for t in (self._next_card, *self._pending_pulses) if t is not None]
            return min(due) if due else None

    def run_due(self) -> int:
        """Do what is due by now on the plant's clock (a plant started without its thread);
        returns how many changes that made."""
        steps = 0
        with self._cond:
            while (due := self.next_due()) is not None and due <= self.clock():
                self._step(self.clock())
                steps += 1
        return steps

    # -- pins ----------------------------------------------------------------------------------

    def _output_changed(self, name: str, value: float) -> None:
        with self._cond:
            now = self.clock()
            self.output_log.append((name, now, value))
            if len(self.output_log) > 2 * KEEP_HISTORY:
                del self.output_log[:-KEEP_HISTORY]
            was_forward = self._values.get("ejector_forward", 0.0) > 0
            self._values[name] = value
            if self.kind == "solenoid":
                if name == "ejector_forward" and value > 0 and not was_forward:
                    self._solenoid_pulse(now)
            else:
                self._update_motion(now)
            self._cond.notify_all()

    def _motor_forward(self) -> bool:
        v = self._values
        enabled = "ejector_enable" not in v or v["ejector_enable"] > 0
        return v.get("ejector_forward", 0) > 0 and v.get("ejector_backward", 0) == 0 and enabled

    def _motor_backward(self) -> bool:
        v = self._values
        enabled = "ejector_enable" not in v or v["ejector_enable"] > 0
        return v.get("ejector_backward", 0) > 0 and v.get("ejector_forward", 0) == 0 and enabled

    def _update_motion(self, now: int) -> None:
        if self.kind != "motor":
            return
        if self._motor_backward():
            self._misfeeds = 0  # reversing re-grips a slipping roller (not a wedged card)
        if self._motor_forward():
            if self._running_since is None:
                self._running_since = now
                self._coast = 0
                self._next_card = now + self.config.spinup_ms * _MS + self._interval()
        else:
            if self._motor_backward():
                self._coast = 0  # reversing stops the roller dead
            elif self._running_since is not None and self._overrun > 0:
                # It coasts: the card slots already under way still come (``overrun``).
                self._coast, self._overrun = self._overrun, 0
            self._running_since = None
            if self._coast == 0:
                self._next_card = None

    def _solenoid_pulse(self, now: int) -> None:
        arrive = now + self.config.spinup_ms * _MS
        # An overrun pushes its cards right behind this pulse's own (the beam keeps them apart).
        self._pending_pulses.extend([arrive] * (1 + self._overrun))
        self._overrun = 0

    def _interval(self) -> int:
        jitter = self.config.feed_jitter_ms
        ms = self.config.feed_interval_ms + (self.rng.uniform(-jitter, jitter) if jitter else 0.0)
        return int(max(ms, 1.0) * _MS)

    def _drive_sensor(self, high: bool) -> None:
        self.header.drive(self.pins.sensor, high)

    def _drive_inputs(self) -> None:
        # Switches to ground: active (closed) = low.
        if self.pins.hopper_empty is not None:
            self.header.drive(self.pins.hopper_empty, self.hopper > 0)
        if self.pins.door is not None:
            self.header.drive(self.pins.door, self._door_open)
        if self._stuck is not None:
            self._drive_sensor(self._stuck)
        elif self._beam_until is None:
            self._drive_sensor(False)

    # -- the mechanism -------------------------------------------------------------------------

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                self._step(self.clock())
                due = self.next_due()
                timeout = None if due is None else max(0.0, (due - self.clock()) / 1e9)
                self._cond.wait(timeout)

    def _step(self, now: int) -> None:
        if self._beam_until is not None and now >= self._beam_until:
            self._beam_until = None
            if self._stuck is None:
                self._drive_sensor(False)
            self._cond.notify_all()  # wait_quiet()
        if self._beam_until is not None:
            return  # one card in the beam at a time; the next waits behind it
        if self._next_card is not None and now >= self._next_card:
            self._next_card = now + self._interval()
            if self._running_since is None:  # a coasting roller's slot
                self._coast = max(0, self._coast - 1)
                if self._coast == 0:
                    self._next_card = None
                    self._cond.notify_all()  # wait_quiet()
            self._feed_one(now)
        elif self._pending_pulses and now >= min(self._pending_pulses):
            self._pending_pulses.remove(min(self._pending_pulses))
            self._feed_one(now)
            self._cond.notify_all()  # wait_quiet(), even when nothing came out

    def _feed_one(self, now: int) -> None:
        if self._stalled or self.hopper <= 0:
            return
        if self._misfeeds > 0:
            self._misfeeds -= 1
            return
        self.hopper -= 1
        self.ejected_total += 1
        self.crossings.append(now)
        if len(self.crossings) > 2 * KEEP_HISTORY:
            del self.crossings[:-KEEP_HISTORY]
        self._beam_until = now + max(1, self.config.beam_ms) * _MS
        # The card has left the hopper before it reaches the beam: the state file says so first,
        # so a box that dies while it records the card never counts more than the plant holds.
        self._save()
        if self._stuck is None:
            self._drive_sensor(True)
        if self.hopper == 0:
            self._drive_inputs()
        self._cond.notify_all()

    # -- persistence ---------------------------------------------------------------------------

    def _read_state(self) -> None:
        assert self.state_path is not None
        data = read_state(self.state_path)  # never overwrite a file that is not ours
        if data is not None:
            self.hopper = data["hopper"]
            self.ejected_total = data["ejected_total"]
            self.loads = list(data["loads"])

    def _save(self) -> None:
        if self.state_path is None:
            return
        tmp = self.state_path.with_suffix(self.state_path.suffix + ".tmp")
        try:
            state: dict[str, Any] = {"hopper": self.hopper, "ejected_total": self.ejected_total}
            if self.loads:
                state["loads"] = self.loads
            tmp.write_text(json.dumps(state))
            os.replace(tmp, self.state_path)
        except OSError as exc:
            log.warning("cannot write plant state %s: %s", self.state_path, exc)
