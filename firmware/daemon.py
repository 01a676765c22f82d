"""The launcher daemon: wires config, devices, plant, loop, state machine and journal.

Everything runs on the loop thread (``firmware/loop.py``). A press — from the button, the host or a
``dispense`` — gets a press id from the journal, a ``press`` event, a place in a bounded queue and,
eventually, exactly one ``fire`` event. The jam model decides how many cards a press fires; the
ejector runs until the exit sensor has counted them, and a feed motor's burst keeps counting for
``settle_ms`` after the motor stops (a coasting card is the fire's ``extra``). Every card the
sensor counts is in a ``fire`` or, with no burst counting, a ``stray`` event. Safety is the
loop's job: each power output carries a ``max_on_ms`` deadline, a feed with no card for
``card_timeout_ms`` tries reverse pulses and then latches ``jammed``, the solenoid's duty is
capped, and any handler error turns every output off and latches ``fault``.

``launcher run`` (``register``) is the command-line front of :class:`Daemon`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import select
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware import protocol
from firmware.devices import Devices, MotorEjector, SolenoidEjector
from firmware.errors import CommandError, JournalError, LauncherError, UsageError
from firmware.jam import JamModel, check_limit, from_mapping
from firmware.loop import Event, Loop
from firmware.machine import BUSY_STATES, LATCHED_STATES, LauncherModel, build_machine

log = logging.getLogger(__name__)

_MS = 1_000_000
SOFT_START_STEPS = 5  # PWM ramp steps of the feed motor's soft start
BUZZ_MS = 60  # length of the dry-press tick
HISTORY = 10_000  # events kept in memory for wait_for()

Reply = Callable[[dict], None]


@dataclass
class Press:
    """A press waiting to be served: who pressed, and for a dispense how many cards.

    ``press_id`` is None until the press is journaled (``Daemon._register``).
    """

    press_id: int | None
    source: str
    t_ns: int
    count: int | None = None


@dataclass
class Burst:
    """The press being fired right now."""

    press: Press
    planned: int
    dry_streak: int
    started_ns: int
    feed_ns: int | None = None  # feed motor on / first solenoid pulse
    spun_ns: int | None = None  # end of spin-up
    cards: list[int] = field(default_factory=list)  # ns of each card at the beam
    retries: int = 0
    pulses: int = 0  # solenoid pulses so far
    awaiting_card: bool = False  # solenoid: the last pulse's card has not crossed yet
    recovered: bool = True  # solenoid: recovery time after the last pulse has passed
    waiting_beam: bool = False  # spin-up waits for a card still in the beam to leave it
    settling: bool = False  # planned cards out, feed off: still counting until ``settle_ms``

    def card_ms(self) -> list[int]:
        """Milliseconds from feed start to each card."""
        start = self.feed_ns if self.feed_ns is not None else self.started_ns
        return [max(0, (t - start) // _MS) for t in self.cards]


class Daemon:
    """The box. ``start()`` builds the devices, starts the loop and returns after the self-test;
    ``stop()`` turns every output off and closes the devices (idempotent). A context manager.

    ``config`` is a ``firmware.config.Config``; ``factory`` the gpiozero pin factory for every
    device; ``journal`` a ``MemoryJournal``/``SqliteJournal`` (a fresh ``MemoryJournal`` if None);
    ``plant`` the simulated mechanism on mock pins (started and stopped with the daemon);
    ``clock`` a monotonic-ns clock for the loop.
    """

    def __init__(
        self,
        config: Any,
        *,
        factory: Any,
        journal: Any = None,
        plant: Any = None,
        clock: Callable[[], int] | None = None,
        config_path: str | None = None,
    ) -> None:
        if journal is None:
            from firmware.journal import MemoryJournal

            journal = MemoryJournal()
        self.config = config
        self.config_path = str(config_path or getattr(config, "path", "") or "")
        self.factory = factory
        self.journal = journal
        self.plant = plant
        self.loop = Loop(
            self._handle, clock=clock, on_error=self._on_loop_error, on_crash=self._on_crash
        )
        self.clock = self.loop.clock
        self.model = LauncherModel(self)
        self.machine = build_machine(self.model)
        self.jam = JamModel(config.jam)
        self.devices: Devices | None = None
        self.host_locked = False
        self.hopper: int | None = int(plant.hopper) if plant is not None else None
        self.queue: deque[Press] = deque()
        self.burst: Burst | None = None
        self.fault_reason: str | None = None
        self.aim_seat: int | None = None
        self.last_selftest: dict[str, Any] | None = None
        self.stray_cards = 0  # cards counted with no burst running (each one a ``stray`` event)
        self._last_edge = 0  # beam edge number of the last card handled (the feed cutoff)
        self.last_burst_press_id: int | None = None  # the press of the last burst (``stray``)
        self._subscribers: list[Callable[[dict], None]] = []
        self._history: deque[dict] = deque(maxlen=HISTORY)
        self._history_cond = threading.Condition()
        self._history_total = 0  # events emitted this run (the history keeps the newest)
        self._on: dict[str, tuple[int, int]] = {}  # output -> (on since ns, deadline ns)
        self._boot_ns = self.clock()
        self._booted = threading.Event()
        self._stopped = threading.Event()
        self._closed = False
        self._started = False
        self._watchdog: tuple[float, Callable[[], Any]] | None = None
        self._last_watchdog_ns = 0
        self.watchdog_skipped = 0  # pings withheld because the loop ran late
        self._blink_on = False
        self._blink_hz = 1.0
        self._ramp_step = 0
        self.failure: LauncherError | None = None  # why the loop stopped on its own (journal)
        self._cmd_id: str | None = None  # id of the host command being handled (exactly-once)
        self._cmd_key: str | None = None  # what that command asks (protocol.command_key)

    # ------------------------------------------------------------------ public, any thread

    @property
    def state(self) -> str:
        """Name of the machine state (part of the wire protocol)."""
        return str(self.model.state)

    @property
    def events(self) -> list[dict]:
        """The events of this run so far (the newest ``HISTORY``), oldest first."""
        with self._history_cond:
            return list(self._history)

    def subscribe(self, fn: Callable[[dict], None]) -> None:
        """Call ``fn(event)`` on the loop thread for every event once it is journaled.

        ``fn`` must not block; an exception in it is logged and ignored.
        """
        self._subscribers.append(fn)

    def submit(self, op: str, args: dict, reply: Reply, *, cmd_id: str | None = None) -> None:
        """Run command ``op`` on the loop; ``reply`` is called exactly once with the result.

        With ``cmd_id`` (the link's command id) a command whose effect is journaled (``press``,
        ``dispense``, ``load``) stores its wire reply under that id in the same journal
        transaction as the effect, so a retry of the id after a crash gets the stored reply
        instead of running the command again.
        """
        self.loop.post("cmd", op=op, args=dict(args or {}), reply=reply, cmd_id=cmd_id)

    def press(self, source: str = "button") -> None:
        """Post a press (tests, the host's ``press`` command)."""
        self.loop.post("press", source=source)

    def set_watchdog(self, interval_s: float | None, ping: Callable[[], Any]) -> None:
        """Ping ``ping()`` from the loop every ``interval_s / 2`` while healthy (before start)."""
        self._watchdog = (interval_s, ping) if interval_s else None

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float = 5.0) -> dict:
        """The first event of this run matching ``predicate``, waiting up to ``timeout`` s.

        Raises ``TimeoutError`` when none arrives in time.
        """
        deadline = time.monotonic() + timeout
        seen = 0  # events (counted over the whole run) already tested
        while True:
            with self._history_cond:
                items, total = list(self._history), self._history_total
            # Predicates run outside the lock: one may well ask the loop something (call()),
            # and the loop needs the lock to emit.
            for event in items[max(0, len(items) - (total - seen)) :]:
                if predicate(event):
                    return event
            seen = total
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no matching event within {timeout} s (state {self.state})")
            with self._history_cond:
                if self._history_total == seen:
                    self._history_cond.wait(left)

    def call(self, fn: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Run ``fn()`` on the loop thread and return its result (tests, inspection)."""
        if self.loop.on_loop_thread or not self.loop.alive:
            return fn()
        done = threading.Event()
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:
                box["error"] = exc
            finally:
                done.set()

        self.loop.post("call", fn=run)
        if not done.wait(timeout):
            raise TimeoutError("the loop did not run the call in time")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    @property
    def feedback_hz(self) -> float | None:
        """The LED's blink rate in Hz (None while it is steady); read it on the loop thread."""
        return self._blink_hz if self.loop.timer_deadline("feedback") is not None else None

    def outputs_on(self) -> dict[str, tuple[int, int]]:
        """Guarded outputs that are on: name -> (on since ns, max-on deadline ns)."""
        return dict(self._on)

    def start(self) -> Daemon:
        """Build the devices, start the plant and the loop; return after the self-test."""
        if self._started:
            return self
        self._started = True
        try:
            self.devices = Devices(
                self.config,
                factory=self.factory,
                post=self.loop.post,
                guard=self,
                clock=self.clock,
            )
            if self.plant is not None:
                self.plant.start()
            self.loop.start()
            self.loop.post("boot")
            if not self._booted.wait(10):
                raise LauncherError("the control loop did not finish booting within 10 s")
        except BaseException:
            self.stop()
            raise
        if self.failure is not None:
            self.stop()
            raise self.failure
        if self.loop.crashed is not None:
            self.stop()
            raise LauncherError(f"the control loop crashed while booting: {self.loop.crashed!r}")
        return self

    def stop(self) -> None:
        """Every output off (pending presses get ``stopping``), devices closed; idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.loop.alive and not self.loop.on_loop_thread:
            self.loop.post("stop")
            if not self._stopped.wait(5):
                log.error("the loop did not acknowledge stop; forcing outputs off")
            self.loop.stop()
        elif self.loop.on_loop_thread:
            self._shutdown("stop from the loop")
        if self.devices is not None:
            self.devices.close()  # outputs off first, then close
        if self.plant is not None:
            self.plant.stop()

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def pin_states(self) -> dict[str, float]:
        """Output pin states as the pin factory sees them (logged at exit)."""
        return self.devices.pin_states() if self.devices is not None else {}

    # ------------------------------------------------------------------ guard (loop thread)

    def output_on(self, name: str, max_on_ms: int) -> None:
        """Guard: ``name`` turns on; arm its max-on deadline."""
        now = self.clock()
        deadline = now + max_on_ms * _MS
        self._on[name] = (now, deadline)
        self.loop.set_deadline(f"max_on:{name}", deadline, "max_on", output=name)

    def output_off(self, name: str) -> None:
        """Guard: ``name`` turned off; drop its deadline."""
        self._on.pop(name, None)
        self.loop.cancel_timer(f"max_on:{name}")

    # ------------------------------------------------------------------ Box (machine callbacks)

    def begin_spinup(self) -> None:
        """Entered ``spinup``: flywheel first (if fitted), then the feed."""
        devices = self._devices()
        if devices.sensor.is_active:
            # The last card may still be in the beam; feed only once it clears, or a card would
            # go uncounted. A beam that stays broken is a stuck sensor (``_sensor_blocked``).
            assert self.burst is not None
            self.burst.waiting_beam = True
            self.loop.set_timer("burst", self.config.timing.card_timeout_ms, "sensor_blocked")
            return
        self._spin()

    def _spin(self) -> None:
        devices = self._devices()
        if self.burst is not None:
            self.burst.waiting_beam = False
        if devices.flywheel is not None:
            devices.flywheel.on()
            self.loop.set_timer("burst", self.config.ejector.flywheel_spinup_ms, "flywheel_ready")
        else:
            self._start_feed()

    def begin_feed(self) -> None:
        """Entered ``ejecting``: the solenoid starts pulsing (the motor is already running)."""
        burst = self.burst
        assert burst is not None
        burst.spun_ns = self.clock()
        if isinstance(self._devices().ejector, SolenoidEjector):
            self._pulse()

    def begin_cooldown(self) -> None:
        """Entered ``cooldown``: serve the next press after ``cooldown_ms``."""
        self.loop.set_timer("cooldown", self.config.timing.cooldown_ms, "cooled")

    def outputs_off(self) -> None:
        """Ejector and flywheel off, burst timers dropped (machine ``before`` callback)."""
        for name in ("burst", "ramp", "card_timeout", "reverse", "pulse"):
            self.loop.cancel_timer(name)
        if self.devices is not None:
            self.devices.sensor.disarm_cutoff()
            self.devices.power_off()

    def _all_off(self) -> None:
        """Every output off, LED, buzzer and servo included (faults, errors, shutdown)."""
        self.outputs_off()
        if self.devices is not None:
            self.devices.outputs_off()

    def state_changed(self, source: str, dest: str, why: str) -> None:
        """After every transition: the ``state`` event, feedback, and latched-state bookkeeping."""
        self._emit("state", **{"from": source, "to": dest, "why": why})
        if dest in LATCHED_STATES or dest == "stopping":
            reason = "stopping" if dest == "stopping" else dest
            while self.queue:
                self._fire_refused(self.queue.popleft(), reason)
        if dest in ("idle", "locked"):
            self.fault_reason = None
        self._feedback()

    # ------------------------------------------------------------------ the loop

    def _devices(self) -> Devices:
        if self.devices is None:
            raise LauncherError("devices are not built")
        return self.devices

    def _handle(self, event: Event) -> None:
        kind = event.kind
        if kind == "card":
            self._on_card(event)
        elif kind in ("button", "press"):
            source = event.data.get("source", "button")
            self._accept_press(source, event.t_ns, fast=True)
            self._pump()
        elif kind == "hold":
            self._on_hold()
        elif kind == "cmd":
            self._on_command(
                event.data["op"], event.data["args"], event.data["reply"], event.data.get("cmd_id")
            )
        elif kind == "switch":
            self._on_switch(event.data["name"], bool(event.data["active"]))
        elif kind == "max_on":
            self._on_max_on(event.data["output"])
        elif kind in _BURST_TIMERS:
            getattr(self, _BURST_TIMERS[kind])()
        elif kind == "cooled":
            if self.state == "cooldown":
                self.model.cooled(why="cooldown over")
            self._pump()
        elif kind == "feedback":
            self._blink()
        elif kind == "buzz_off":
            if self.devices is not None and self.devices.buzzer is not None:
                self.devices.buzzer.off()
        elif kind == "watchdog":
            self._on_watchdog(event)
        elif kind == "call":
            event.data["fn"]()
        elif kind == "boot":
            self._boot()
        elif kind == "stop":
            self._shutdown("stop requested")
            self.loop.stop(timeout=0)
        else:
            log.warning("unknown loop event %r", kind)

    def _on_loop_error(self, exc: BaseException, event: Event) -> None:
        # A bug must not leave a motor running: outputs off, fault latched, loop keeps going.
        self._all_off()
        if isinstance(exc, JournalError):
            # Nothing can be recorded any more (a full or failing disk): a box that cannot
            # journal cannot promise one fire per press. Outputs off, and stop.
            self.failure = exc
            log.critical("%s; outputs off, stopping", exc)
            self._booted.set()
            self._stopped.set()
            self.loop.stop(timeout=0)
            return
        if self.state not in ("fault", "stopping"):
            self._trip("internal", f"handler for {event.kind!r} failed: {type(exc).__name__}")

    def _on_crash(self, exc: BaseException) -> None:
        if self.devices is not None:
            self.devices.outputs_off()
        self._booted.set()
        self._stopped.set()

    def _boot(self) -> None:
        self._answer_interrupted()
        self._emit("hello", **_fit_hello(self._hello_fields()))
        result = self._selftest()
        self.model.booted(why="self-test passed" if result["passed"] else "self-test done")
        if not result["passed"]:
            failed = ", ".join(c["name"] for c in result["checks"] if not c["ok"])
            self._trip("selftest", f"self-test failed: {failed}")
        elif self._hopper_switch_empty():
            self.hopper = 0
            self._enter_empty(None)
        if self._watchdog is not None:
            self._on_watchdog(None)
        self._booted.set()
        self._pump()  # presses that arrived while booting

    def _hello_fields(self) -> dict[str, Any]:
        return {
            "name": self.config.box.name,
            "config": self.config_path,
            "ejector": self.config.ejector.kind,
            "hopper": self.hopper,
            # a journal moved aside or found short must reach a person, not only the log
            "journal_recovered": getattr(self.journal, "recovered", None),
            "journal_lost": getattr(self.journal, "lost", None),
        }

    def _answer_interrupted(self) -> None:
        """After a crash: a fire ``interrupted`` for every press the journal holds without a
        fire (the burst cut by the crash, with the cards it counted, and every press queued
        behind it). The journal opens a press with its ``press`` event and closes it with its
        ``fire`` in the same transaction, so no crash point leaves a press unanswered."""
        mine = {p.press_id for p in self.queue}  # pressed while booting: served, not answered
        for press in self.journal.open_presses():
            if press["press_id"] in mine:
                continue
            planned = int(press.get("planned", 0))
            ejected = int(press.get("ejected", 0))
            self._emit(
                "fire",
                press_id=press["press_id"],
                source=press.get("source", "button"),
                planned=planned,
                ejected=ejected,
                reason="interrupted",
                dry_streak=int(press.get("dry_streak", self.jam.dry_streak)),
                spinup_ms=None,
                first_card_ms=None,
                total_ms=None,
                card_ms=list(press.get("card_ms", [])),
                hopper=self.hopper,
                extra=max(0, ejected - planned),
            )

    def _on_watchdog(self, event: Event | None) -> None:
        assert self._watchdog is not None
        interval, ping = self._watchdog
        now = self.clock()
        late = event is not None and now - event.t_ns > interval * 1e9 / 2
        # Healthy: the loop serves its timers on time and is not shutting down.
        if not late and self.state != "stopping":
            ping()
            self._last_watchdog_ns = now
        else:
            self.watchdog_skipped += 1
            log.warning(
                "watchdog ping skipped: the loop served it %d ms late",
                (now - event.t_ns) // _MS if event else 0,
            )
        self.loop.set_timer("watchdog", interval * 1000 / 2, "watchdog")

    def _shutdown(self, why: str) -> None:
        if self.state == "stopping":
            self._stopped.set()
            return
        self._all_off()
        if self.burst is not None:
            self._finish("stopping", trigger=None)
        self.model.shutdown(why=why)
        self._stopped.set()

    # ------------------------------------------------------------------ presses

    def _accept_press(
        self,
        source: str,
        t_ns: int | None = None,
        count: int | None = None,
        *,
        fast: bool = False,
    ) -> int | None:
        """Queue the press or refuse it with a fire; returns its press id.

        With ``fast`` a press that will be served at once is journaled only after the ejector has
        started: journaling (an fsync with SQLite) must not sit between the button and the motor.
        """
        press = Press(None, source, t_ns or self.clock(), count)
        state = self.state
        if not (fast and state == "idle" and not self.queue and self.burst is None):
            self._register(press)
        if state == "stopping":
            self._fire_refused(press, "stopping")
        elif state in LATCHED_STATES:
            self._fire_refused(press, state)
        elif source != "dispense" and (self.host_locked or self._door_open()):
            self._fire_refused(press, "locked")
        elif len(self.queue) >= self.config.limits.press_queue:
            self._fire_refused(press, "queue_full")
        else:
            self.queue.append(press)  # journaled: a crash now gets it an ``interrupted`` fire
        return press.press_id

    def _register(self, press: Press) -> None:
        """Give ``press`` its id and journal its ``press`` event (once).

        A press made by a host command journals that command's reply with the event, and the
        journal opens the press in the same transaction (it is answered even after a crash)."""
        if press.press_id is None:
            press.press_id = self.journal.next_press_id()
            reply = None
            if press.source in ("host", "dispense"):
                reply = self._stored_reply(press_id=press.press_id)
            self._emit("press", reply=reply, press_id=press.press_id, source=press.source)

    def _stored_reply(self, **result: Any) -> tuple[str, dict, str | None] | None:
        """``(cmd_id, wire reply, command key)`` for the command being handled, or None (no host
        command). The same reply the link builds from the result: a retry gets exactly this."""
        if self._cmd_id is None:
            return None
        return self._cmd_id, protocol.reply_ok(self._cmd_id, **result), self._cmd_key

    def _pump(self) -> None:
        """Serve queued presses while the box rests in ``idle`` / ``locked``."""
        while self.queue and self.state in ("idle", "locked") and self.burst is None:
            press = self.queue.popleft()
            if press.source != "dispense" and (self.host_locked or self._door_open()):
                self._fire_refused(press, "locked")
                continue
            if self.hopper == 0 or self._hopper_switch_empty():
                self.hopper = 0
                self._fire_refused(press, "empty")
                self._enter_empty(press.press_id)
                return
            dry_before = self.jam.dry_streak
            if press.count is not None:
                planned = press.count if self.hopper is None else min(press.count, self.hopper)
            else:
                planned = self.jam.plan(self.hopper)
            if planned == 0:
                self._fire(press, planned=0, ejected=0, reason="dry", dry_streak=dry_before)
                self._dry_feedback()
                continue
            now = self.clock()
            self.burst = Burst(press, planned, dry_before, started_ns=now)
            why = "button press" if press.press_id is None else f"press {press.press_id}"
            self.model.start_burst(why=why)  # the ejector starts here
            self._register(press)
            if self.burst is not None:  # (a trip during start-up has answered it already)
                self._save_progress()
            return

    def _fire_refused(self, press: Press, reason: str) -> None:
        self._fire(press, planned=0, ejected=0, reason=reason, dry_streak=self.jam.dry_streak)

    def _fire(
        self,
        press: Press,
        *,
        planned: int,
        ejected: int,
        reason: str,
        dry_streak: int,
        burst: Burst | None = None,
    ) -> None:
        self._register(press)  # its press event always comes before its fire
        now = self.clock()
        card_ms = burst.card_ms() if burst is not None else []
        spinup_ms = first_card_ms = None
        total_ms = 0
        if burst is not None:
            spun = burst.spun_ns or burst.feed_ns or now
            spinup_ms = (spun - burst.started_ns) // _MS
            first_card_ms = card_ms[0] if card_ms else None
            total_ms = (now - burst.started_ns) // _MS
        self._emit(  # the journal closes the press in the same step
            "fire",
            press_id=press.press_id,
            source=press.source,
            planned=planned,
            ejected=ejected,
            reason=reason,
            dry_streak=dry_streak,
            spinup_ms=spinup_ms,
            first_card_ms=first_card_ms,
            total_ms=total_ms,
            card_ms=card_ms,
            hopper=self.hopper,
            extra=max(0, ejected - planned),
        )

    def _save_progress(self) -> None:
        """Record how far the running burst got, so a restart reports the cards it counted."""
        burst = self.burst
        if burst is None or burst.press.press_id is None:
            return
        self.journal.update_press(
            burst.press.press_id,
            planned=burst.planned,
            ejected=len(burst.cards),
            dry_streak=burst.dry_streak,
            card_ms=burst.card_ms(),
        )

    # ------------------------------------------------------------------ the burst

    def _start_feed(self) -> None:
        burst = self.burst
        if burst is None or self.state != "spinup":
            return
        devices = self._devices()
        ejector = devices.ejector
        burst.feed_ns = self.clock()
        if isinstance(ejector, MotorEjector):
            # The sensor stops the feed itself at the last planned card (devices.py: feed
            # cutoff); cards still on their way count in this burst from the card events.
            ejector.resume()
            devices.sensor.arm_cutoff(
                self._last_edge + burst.planned - len(burst.cards), ejector.halt
            )
            self._arm_card_timeout()
            soft = self.config.ejector.soft_start_ms
            if soft > 0 and ejector.has_speed_control:
                ejector.forward(1 / SOFT_START_STEPS)
                self._ramp_step = 1
                self.loop.set_timer("ramp", soft / SOFT_START_STEPS, "ramp")
                return
            ejector.forward(1.0)
        self.model.spun_up(why="feed at speed")

    def _ramp(self) -> None:
        ejector = self._devices().ejector
        burst = self.burst
        if burst is None or burst.settling or self.state != "spinup":
            return
        if not isinstance(ejector, MotorEjector):
            return
        if ejector.direction != 1:
            # An unjam pulse is running; the ramp resumes when it ends at full speed.
            return
        self._ramp_step += 1
        ejector.forward(min(1.0, self._ramp_step / SOFT_START_STEPS))
        if self._ramp_step >= SOFT_START_STEPS:
            self.model.spun_up(why="soft start done")
        else:
            soft = self.config.ejector.soft_start_ms
            self.loop.set_timer("ramp", soft / SOFT_START_STEPS, "ramp")

    def _flywheel_ready(self) -> None:
        self._start_feed()

    def _arm_card_timeout(self) -> None:
        self.loop.set_timer("card_timeout", self.config.timing.card_timeout_ms, "card_timeout")

    def _on_card(self, event: Event) -> None:
        self._last_edge = max(self._last_edge, int(event.data.get("edge", self._last_edge + 1)))
        if self.hopper is not None:
            self.hopper = max(0, self.hopper - 1)
        burst = self.burst
        if burst is None or self.state not in ("spinup", "ejecting"):
            self._stray()
            return
        burst.cards.append(event.t_ns)
        burst.awaiting_card = False
        self._save_progress()
        if burst.settling:
            return  # a card behind the burst: counted in it as ``extra``; the settle timer ends it
        if len(burst.cards) >= burst.planned:
            self._burst_done()
            return
        if isinstance(self._devices().ejector, SolenoidEjector):
            self.loop.cancel_timer("card_timeout")
            if burst.recovered:
                self._pulse()
        else:
            self._arm_card_timeout()

    def _stray(self) -> None:
        """A card crossed the beam with no burst counting: report it, never drop it."""
        self.stray_cards += 1
        log.warning("card at the beam with no burst running (%d so far)", self.stray_cards)
        self._emit("stray", count=1, hopper=self.hopper, after_press_id=self.last_burst_press_id)

    def _burst_done(self) -> None:
        """The planned cards are out: stop the feed, then keep counting for ``settle_ms``.

        A feed roller coasts, and a loop that reacted late may have let it push one more card;
        such a card reaches the beam after the motor stops. Counting it in this burst (the fire
        event's ``extra``) keeps the host's count equal to what left the hopper. A solenoid moves
        one card per pulse and stops dead, so its burst ends at once.
        """
        burst = self.burst
        assert burst is not None
        settle = self.config.timing.settle_ms
        if settle <= 0 or not isinstance(self._devices().ejector, MotorEjector):
            self._finish("fired", trigger="burst_done")
            return
        self.outputs_off()  # feed (and flywheel) off now; the state stays until the fire
        burst.settling = True
        self.loop.set_timer("settle", settle, "settled")

    def _settled(self) -> None:
        burst = self.burst
        if burst is not None and burst.settling:
            self._finish("fired", trigger="burst_done")

    def _on_card_timeout(self) -> None:
        burst = self.burst
        if burst is None or burst.settling or self.state not in ("spinup", "ejecting"):
            return
        if self.hopper == 0 or self._hopper_switch_empty():
            self.hopper = 0
            self._finish("empty", trigger="run_empty")
            return
        ejector = self._devices().ejector
        if burst.retries < self.config.limits.unjam_retries:
            burst.retries += 1
            if isinstance(ejector, MotorEjector):
                ejector.backward()
                self.loop.set_timer("reverse", self.config.ejector.reverse_pulse_ms, "reverse_done")
            else:
                burst.awaiting_card = False
                self._pulse()
            return
        self._emit("jam", press_id=burst.press.press_id, retries=burst.retries)
        self._finish("jammed", trigger="jam")

    def _reverse_done(self) -> None:
        ejector = self._devices().ejector
        if self.burst is None or self.burst.settling or not isinstance(ejector, MotorEjector):
            return
        ejector.forward(1.0)
        if self.state == "spinup":
            self.model.spun_up(why="soft start cut short by an unjam pulse")
        self._arm_card_timeout()

    def _pulse(self) -> None:
        """Solenoid: one pulse, as soon as the duty cap allows."""
        ejector = self._devices().ejector
        burst = self.burst
        if burst is None or not isinstance(ejector, SolenoidEjector) or burst.awaiting_card:
            return
        wait = ejector.wait_ms()
        if wait == float("inf"):
            self._trip("ejector", "solenoid pulse longer than the duty cap allows")
            return
        if wait > 0:
            self.loop.set_timer("pulse", wait, "pulse_next")
            return
        if burst.feed_ns is None:
            burst.feed_ns = self.clock()
        ejector.pulse_on()
        burst.pulses += 1
        burst.awaiting_card = True
        burst.recovered = False
        self.loop.set_timer("pulse", ejector.pulse_ms, "pulse_off")
        self._arm_card_timeout()

    def _pulse_off(self) -> None:
        ejector = self._devices().ejector
        ejector.off()
        self.loop.set_timer("pulse", getattr(ejector, "recovery_ms", 0), "pulse_recovered")

    def _pulse_recovered(self) -> None:
        burst = self.burst
        if burst is None:
            return
        burst.recovered = True
        if not burst.awaiting_card and len(burst.cards) < burst.planned:
            self._pulse()

    def _sensor_blocked(self) -> None:
        if self.burst is None or self.state != "spinup" or not self.burst.waiting_beam:
            return
        if self._devices().sensor.is_active:
            self._trip("sensor", "exit beam blocked before the feed started (sensor stuck high?)")
        else:
            self._spin()

    def _beam_clear(self) -> None:
        # Waiting in spinup for a card to leave the beam: go now.
        burst = self.burst
        if burst is not None and burst.waiting_beam and self.state == "spinup":
            self.loop.cancel_timer("burst")
            self._spin()

    def _finish(self, reason: str, trigger: str | None) -> None:
        """End the burst: outputs off, the fire event (the journal closes the press with it)."""
        burst = self.burst
        assert burst is not None
        self.outputs_off()
        self.loop.cancel_timer("settle")
        self.burst = None
        self.last_burst_press_id = burst.press.press_id
        if burst.settling:
            # Every planned card was out before whatever ends the settle window early (empty
            # hopper, fault, shutdown): the press fired.
            reason = "fired"
        ejected = len(burst.cards)
        self._fire(
            burst.press,
            planned=burst.planned,
            ejected=ejected,
            reason=reason,
            dry_streak=burst.dry_streak,
            burst=burst,
        )
        if trigger == "run_empty":
            self._enter_empty(burst.press.press_id)
        elif trigger is not None:
            self.model.trigger(trigger, why=reason)

    def _enter_empty(self, press_id: int | None) -> None:
        if self.state == "empty":
            return
        self._emit("empty", press_id=press_id, hopper=self.hopper)
        self.model.run_empty(why="hopper empty")

    # ------------------------------------------------------------------ safety

    def _on_max_on(self, output: str) -> None:
        if output not in self._on:
            return  # went off in the same instant
        limit = next(
            (p.max_on_ms for p in self._devices().power_outputs() if p.name == output), None
        )
        self._trip(output, f"{output} on longer than max_on_ms = {limit}")

    def _trip(self, output: str, why: str) -> None:
        """Outputs off, ``fault`` event, the running burst answered, ``fault`` latched."""
        self._all_off()
        self.fault_reason = why
        log.error("fault: %s: %s", output, why)
        self._emit("fault", output=output, why=why)
        if self.burst is not None:
            self._finish("fault", trigger=None)
        if self.state not in ("fault", "stopping"):
            self.model.trip(why=why)
        self.fault_reason = why

    def _hopper_switch_empty(self) -> bool:
        return bool(
            self.devices is not None
            and self.devices.hopper_empty is not None
            and self.devices.hopper_empty.is_active
        )

    def _door_open(self) -> bool:
        return bool(
            self.devices is not None
            and self.devices.door is not None
            and not self.devices.door.is_active
        )

    def _on_switch(self, name: str, active: bool) -> None:
        if name == "hopper_empty":
            if active:
                self.hopper = 0
                if self.burst is not None and self.burst.settling:
                    self._settled()  # the last planned card emptied it: fired, then empty
                    self._enter_empty(None)
                elif self.burst is not None:
                    self._finish("empty", trigger="run_empty")
                elif self.state in ("idle", "locked", "cooldown"):
                    self._enter_empty(None)
            elif self.state == "empty" and self.hopper != 0:
                self.model.clear(why="hopper refilled")
                self._pump()
        elif name == "door" and not active and self.burst is not None:
            if self.burst.settling:
                self._settled()  # the feed is already off: the burst is over, nothing to trip
            else:
                self._trip("door", "hopper door opened during a burst")

    def _on_hold(self) -> None:
        """Long press: clear a latched jam / empty / fault (the person fixed it)."""
        state = self.state
        if state == "fault":
            self.model.reset(why="long press")
        elif state in ("jammed", "empty"):
            try:
                self._clear_latch("long press")
            except CommandError as exc:
                log.warning("long press cannot clear %s: %s", state, exc.message)
        self._pump()

    def _clear_latch(self, why: str) -> None:
        if self.state == "empty":
            if self._hopper_switch_empty():
                raise CommandError("EMPTY", "the hopper-empty switch still reads empty; load cards")
            if self.hopper == 0:
                self.hopper = None  # refilled by hand: the count is unknown until `load`
        self.model.clear(why=why)

    # ------------------------------------------------------------------ feedback

    def _feedback(self) -> None:
        """LED by state: steady when ready, blinking faster with each dry press, off when busy."""
        led = self.devices.led if self.devices is not None else None
        if led is None:
            return
        state = self.state
        self.loop.cancel_timer("feedback")
        if state == "stopping":
            led.off()
        elif state in BUSY_STATES:
            led.set(1.0)
        elif state in LATCHED_STATES:
            self._blink_hz = 4.0
            self._blink()
        elif self.jam.dry_streak > 0:
            fb = self.config.feedback
            self._blink_hz = fb.led_base_hz + fb.led_step_hz * (self.jam.dry_streak - 1)
            self._blink()
        else:
            led.set(1.0 if state == "idle" else 0.2)

    def _blink(self) -> None:
        led = self.devices.led if self.devices is not None else None
        if led is None:
            return
        self._blink_on = not self._blink_on
        led.set(1.0 if self._blink_on else 0.0)
        self.loop.set_timer("feedback", 500 / max(self._blink_hz, 0.1), "feedback")

    def _dry_feedback(self) -> None:
        self._feedback()
        buzzer = self.devices.buzzer if self.devices is not None else None
        if buzzer is not None:
            buzzer.tick(self.jam.dry_streak)
            self.loop.set_timer("buzz", BUZZ_MS, "buzz_off")

    # ------------------------------------------------------------------ commands

    def _on_command(self, op: str, args: dict, reply: Reply, cmd_id: str | None = None) -> None:
        handler = _COMMANDS.get(op)
        self._cmd_id = cmd_id
        self._cmd_key = protocol.command_key(op, args) if cmd_id is not None else None
        try:
            if handler is None:
                raise CommandError(
                    "UNKNOWN_OP", f"unknown op {op!r}; allowed: {', '.join(_COMMANDS)}"
                )
            result = getattr(self, handler)(args)
            if "ok" in result:
                # the envelope's ok is the command's success; a result must never shadow it
                raise LauncherError(f"{op} result carries its own 'ok'")
            response = {"ok": True, **result}
        except CommandError as exc:
            extra = {k: v for k, v in getattr(exc, "extra", {}).items() if k not in ("ok", "error")}
            response = {**_error(exc.code, exc.message), **extra}
        except Exception as exc:
            log.exception("command %r failed", op)
            response = _error("INTERNAL", f"{type(exc).__name__}: {exc}")
        finally:
            self._cmd_id = self._cmd_key = None
        try:
            reply(response)
        except Exception:
            log.exception("reply callback for %r failed", op)
        self._pump()

    def _cmd_status(self, args: dict) -> dict:
        p = self.jam.params
        return {
            "state": self.state,
            "hopper": self.hopper,
            "dry_streak": self.jam.dry_streak,
            "queue": len(self.queue),
            "aim": self.aim_seat,
            "fault": self.fault_reason if self.state == "fault" else None,
            "jam": {"mode": p.mode, "base": p.base, "step": p.step, "max_dry": p.max_dry},
            "uptime_ms": (self.clock() - self._boot_ns) // _MS,
            "locked": self.host_locked,
            "ejector": self.config.ejector.kind,
        }

    def _cmd_press(self, args: dict) -> dict:
        return {"press_id": self._accept_press("host")}

    def _cmd_dispense(self, args: dict) -> dict:
        count = _int_arg(args, "count", 1, self.config.limits.max_burst)
        state = self.state
        if state in LATCHED_STATES:
            raise CommandError(state.upper(), f"the box is {state}; clear it first")
        if state in ("booting", "stopping"):
            raise CommandError("BUSY", f"the box is {state}")
        if len(self.queue) >= self.config.limits.press_queue:
            raise CommandError("BUSY", "the press queue is full")
        return {"press_id": self._accept_press("dispense", count=count)}

    def _cmd_lock(self, args: dict) -> dict:
        self.host_locked = True
        if self.state == "idle":
            self.model.lock(why="host lock")
        return {"state": self.state}

    def _cmd_unlock(self, args: dict) -> dict:
        self.host_locked = False
        if self.state == "locked":
            self.model.unlock(why="host unlock")
        return {"state": self.state}

    def _cmd_aim(self, args: dict) -> dict:
        aim = self.devices.aim if self.devices is not None else None
        if aim is None:
            raise CommandError("BAD_ARG", "this box has no aiming servo ([pins] servo is not set)")
        seats = min(self.config.box.seats, len(aim.seat_angles))
        seat = _int_arg(args, "seat", 0, seats - 1)
        angle = aim.aim(seat)
        self.aim_seat = seat
        # degrees: an int when whole (as docs/protocol.md shows), else the float
        return {"seat": seat, "angle": int(angle) if float(angle).is_integer() else angle}

    def _cmd_load(self, args: dict) -> dict:
        has_count, has_total = "count" in args, "total" in args
        if has_count == has_total:
            raise CommandError("BAD_ARG", "load needs exactly one of count (cards added) or total")
        count = _int_arg(args, "count", 1, 10_000) if has_count else None
        total = None if has_count else _int_arg(args, "total", 0, 10_000)
        if self.plant is not None and self._cmd_id and self.plant.has_load(self._cmd_id):
            # A crash cut this load between its effect and its journal record: the cards are in
            # (this boot read the hopper from the plant), only the record is missing.
            added = count if count is not None else 0
        else:
            added = count if count is not None else total - (self.hopper or 0)
            self.hopper = (self.hopper or 0) + added if count is not None else total
            if self.plant is not None:
                self.plant.load(count, total=total, token=self._cmd_id)
        self._emit(
            "refill", reply=self._stored_reply(hopper=self.hopper), hopper=self.hopper, added=added
        )
        if self.state == "empty" and self.hopper > 0 and not self._hopper_switch_empty():
            self.model.clear(why="hopper loaded")
        return {"hopper": self.hopper}

    def _cmd_clear(self, args: dict) -> dict:
        if self.state == "fault":
            raise CommandError("FAULT", "the box is in fault; use reset")
        if self.state in ("jammed", "empty"):
            self._clear_latch("host clear")
        return {"state": self.state}

    def _cmd_reset(self, args: dict) -> dict:
        if self.state == "fault":
            self.model.reset(why="host reset")
        elif self.state in ("jammed", "empty"):
            self._clear_latch("host reset")
        return {"state": self.state}

    def _cmd_model_get(self, args: dict) -> dict:
        return {"params": self.jam.params.to_dict(), "dry_streak": self.jam.dry_streak}

    def _cmd_model_set(self, args: dict) -> dict:
        params = args.get("params")
        if not isinstance(params, dict) or not params:
            raise CommandError("BAD_ARG", "model.set needs params: a mapping of jam parameters")
        try:
            new = from_mapping(params, defaults=self.jam.params)
        except ValueError as exc:
            raise CommandError("BAD_ARG", str(exc)) from None
        try:
            check_limit(new, self.config.limits.max_burst)  # limits come from the config only
        except ValueError as exc:
            raise CommandError("BAD_ARG", str(exc)) from None
        self.jam.set_params(new)
        return {"params": new.to_dict()}

    def _cmd_selftest(self, args: dict) -> dict:
        if self.state in BUSY_STATES:
            raise CommandError("BUSY", f"the box is {self.state}; try again when it rests")
        result = self._selftest()
        if not result["passed"]:
            # the envelope says the command failed (ok false, FAULT); the checks say why
            failed = "; ".join(c["detail"] for c in result["checks"] if not c["ok"])
            error = CommandError("FAULT", f"self-test failed: {failed}")
            error.extra = {"passed": False, "checks": result["checks"]}  # type: ignore[attr-defined]
            raise error
        return {"passed": True, "checks": result["checks"]}

    def _selftest(self) -> dict:
        devices = self._devices()
        checks: list[dict[str, Any]] = []

        def check(name: str, ok: bool, detail: str) -> None:
            checks.append({"name": name, "ok": bool(ok), "detail": detail})

        states = devices.pin_states()
        power = ("ejector_forward", "ejector_backward", "ejector_enable", "flywheel")
        on = [name for name, value in states.items() if value and name in power]
        check("outputs_off", not on, "all outputs low" if not on else f"on: {', '.join(on)}")
        check(
            "sensor_clear",
            not devices.sensor.is_active,
            "exit beam clear" if not devices.sensor.is_active else "exit beam reads broken",
        )
        if devices.door is not None:
            check("door_shut", devices.door.is_active, "door switch closed")
        if isinstance(devices.ejector, SolenoidEjector):
            fits = devices.ejector.wait_ms(self.clock()) != float("inf")
            check("duty_cap", fits, "one pulse fits under the duty cap")
        try:
            self.jam.params.validate()
            check("jam_model", True, f"mode {self.jam.params.mode}")
        except ValueError as exc:
            check("jam_model", False, str(exc))
        # ``passed``, not ``ok``: ``ok`` is the reply envelope's, and a verdict merged into a
        # reply under that name would overwrite it
        result = {"passed": all(c["ok"] for c in checks), "checks": checks}
        self.last_selftest = result
        return result

    # ------------------------------------------------------------------ events

    def _emit(self, kind: str, *, reply: tuple | None = None, **fields: Any) -> dict:
        t_ms = (self.clock() - self._boot_ns) // _MS
        if reply is None:
            event = self.journal.append(kind, t_ms, fields)
        else:
            event = self.journal.append(kind, t_ms, fields, reply=reply)
        with self._history_cond:
            self._history.append(event)
            self._history_total += 1
            self._history_cond.notify_all()
        for fn in list(self._subscribers):
            try:
                fn(event)
            except Exception:
                log.exception("event subscriber failed")
        return event


_BURST_TIMERS = {
    "flywheel_ready": "_flywheel_ready",
    "ramp": "_ramp",
    "card_timeout": "_on_card_timeout",
    "reverse_done": "_reverse_done",
    "pulse_next": "_pulse",
    "pulse_off": "_pulse_off",
    "pulse_recovered": "_pulse_recovered",
    "sensor_blocked": "_sensor_blocked",
    "beam_clear": "_beam_clear",
    "settled": "_settled",
}

_COMMANDS = {
    "status": "_cmd_status",
    "press": "_cmd_press",
    "dispense": "_cmd_dispense",
    "lock": "_cmd_lock",
    "unlock": "_cmd_unlock",
    "aim": "_cmd_aim",
    "load": "_cmd_load",
    "clear": "_cmd_clear",
    "reset": "_cmd_reset",
    "model.get": "_cmd_model_get",
    "model.set": "_cmd_model_set",
    "selftest": "_cmd_selftest",
}


def _error(code: str, message: str) -> dict:
    return {"ok": False, "error": {"code": code, "message": message}}


def _fit_hello(fields: dict[str, Any]) -> dict[str, Any]:
    """`hello` fields cut to fit one frame: a long config path or loss report is shortened
    here (the log keeps it whole), never allowed to stop the box from starting."""
    out = dict(fields)
    envelope = {"v": 1, "type": "event", "seq": 10**12, "boot": "b" * 12, "stream": "s" * 32}

    def fits() -> bool:
        try:
            protocol.encode({**envelope, "t_ms": 10**9, "kind": "hello", **out})
        except ValueError:
            return False
        return True

    for key in ("journal_lost", "config", "journal_recovered", "name"):
        while not fits() and isinstance(out.get(key), str) and len(out[key]) > 24:
            out[key] = "..." + out[key][len(out[key]) // 4 :]
    return out


def _int_arg(args: dict, name: str, lo: int, hi: int) -> int:
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CommandError(
            "BAD_ARG", f"{name} must be a whole number from {lo} to {hi}, got {value!r}"
        )
    if not lo <= value <= hi:
        raise CommandError("BAD_ARG", f"{name} must be from {lo} to {hi}, got {value}")
    return value


# ====================================================================== `launcher run`


def _parse_console(line: str) -> tuple[str, dict]:
    """``press`` / ``dispense 3`` / ``load total=20`` / ``aim 1`` / ``{"op": ..., ...}``."""
    line = line.strip()
    if line.startswith("{"):
        data = json.loads(line)
        op = str(data.pop("op"))
        return op, data
    words = line.split()
    op, rest = words[0], words[1:]
    args: dict[str, Any] = {}
    for word in rest:
        key, sep, value = word.partition("=")
        if not sep:
            key, value = {"aim": "seat"}.get(op, "count"), word
        try:
            args[key] = json.loads(value)
        except ValueError:
            args[key] = value
    return op, args


def _console(daemon: Daemon, out: Callable[[dict], None]) -> None:
    """Read ops from stdin, one per line; write replies as JSON lines (tests and the bench)."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            op, args = _parse_console(line)
        except (ValueError, KeyError) as exc:
            out({"type": "reply", "ok": False, "error": {"code": "BAD_FRAME", "message": str(exc)}})
            continue
        daemon.submit(op, args, lambda r, op=op: out({"type": "reply", "op": op, **r}))


def _run(args: argparse.Namespace) -> int:
    from firmware import config as config_mod
    from firmware import notify
    from firmware.pins import claim_pins, make_factory, mock_requested

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="launcher: %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("transitions").setLevel(logging.WARNING)  # one line per callback otherwise
    path = args.config or config_mod.default_path()
    cfg = config_mod.load(path)  # ConfigError -> one line, exit 78
    mock = bool(args.mock or mock_requested())
    if args.plant_state and not mock:
        raise UsageError("--plant-state needs --mock (the plant only exists on mock pins)")
    from firmware.ports import BOX_WORDS, check_port

    # Before anything starts: a bad --port is the only line printed (PortError, exit 2).
    port = check_port(args.port, BOX_WORDS)
    if port != "none":
        try:
            from firmware.link import Link
        except ModuleNotFoundError as exc:
            raise UsageError(f"the serial link is not available ({exc}); use --port none") from None
    if args.plant_state:
        from firmware.plant import check_state_path

        check_state_path(args.plant_state)
    journal: Any
    if args.journal:
        from firmware.journal import SqliteJournal

        journal = SqliteJournal(args.journal)  # refuses a directory or a non-SQLite file
    else:
        from firmware.journal import MemoryJournal

        journal = MemoryJournal()

    # The handler only sets a flag: it runs on the main thread between bytecodes, possibly inside
    # a lock the main thread holds (Event.set() there can deadlock). The wakeup fd makes the
    # main thread's select() return at once, so SIGTERM turns the outputs off without delay.
    stop_requested: list[int] = []
    wake_r, wake_w = socket.socketpair()
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)

    def on_signal(signum: int, frame: Any) -> None:
        stop_requested.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    # Real pins are exclusive: `launcher bench` must not drive them while we run.
    pins_lock = None if mock else claim_pins()
    factory = make_factory(mock=mock)
    plant = None
    if mock:
        from firmware.plant import Plant

        plant = Plant(
            cfg.plant, factory, cfg.pins, state_path=args.plant_state, kind=cfg.ejector.kind
        )
    printer: _Printer | None = _Printer() if args.console else None
    daemon = Daemon(cfg, factory=factory, journal=journal, plant=plant, config_path=str(path))
    daemon.set_watchdog(notify.watchdog_interval(), notify.watchdog)
    if printer is not None:
        daemon.subscribe(printer.put)
    link = None
    code = 0
    try:
        daemon.start()
        if port != "none":
            link = Link(port, daemon, journal)
            link.start()
            if port == "pty":
                print(f"PORT {link.port_path}", flush=True)
        if printer is not None:
            printer.start()
            threading.Thread(target=_console, args=(daemon, printer.put), daemon=True).start()
        notify.ready(
            f"{daemon.state}; {cfg.ejector.kind} ejector; {'mock' if mock else 'gpio'} pins"
        )
        log.info("ready: state %s, hopper %s", daemon.state, daemon.hopper)
        while not stop_requested:
            if select.select([wake_r], [], [], 0.5)[0]:
                with contextlib.suppress(OSError):
                    wake_r.recv(512)
            if daemon.failure is not None:
                code = 1  # said in one line below, after the outputs are off
                break
            if daemon.loop.crashed is not None:
                log.critical("control loop died; shutting down")
                code = 1
                break
    finally:
        notify.stopping("turning outputs off")
        daemon.stop()  # outputs off first; the link may still flush the last events
        if link is not None:
            link.stop()
        states = daemon.pin_states()
        log.info(
            "outputs at exit: %s",
            " ".join(f"{name}={value:g}" for name, value in sorted(states.items())) or "none",
        )
        if printer is not None:
            printer.put({"type": "exit", "outputs": states})
            printer.stop()
        with contextlib.suppress(Exception):
            journal.close()
        if pins_lock is not None:
            pins_lock.release()
        signal.set_wakeup_fd(-1)
        wake_r.close()
        wake_w.close()
    if daemon.failure is not None:
        raise daemon.failure
    return code


class _Printer:
    """Writes JSON lines to stdout from its own thread, so the loop never blocks on a pipe."""

    def __init__(self) -> None:
        self._queue: deque[dict | None] = deque()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="console-out", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, item: dict | None) -> None:
        with self._cond:
            self._queue.append(item)
            self._cond.notify()

    def stop(self) -> None:
        self.put(None)
        if self._thread.is_alive():
            self._thread.join(5)
        else:
            self._run()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                item = self._queue.popleft()
            if item is None:
                return
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.write(json.dumps(item, separators=(",", ":")) + "\n")
                sys.stdout.flush()


def register(subparsers: Any) -> None:
    """Add ``launcher run``."""
    parser = subparsers.add_parser(
        "run",
        help="run the launcher daemon",
        description="Run the launcher daemon: button, ejector, jam model and safety on real or "
        "mock pins. SIGTERM/SIGINT turn every output off and exit 0.",
    )
    parser.add_argument("--config", metavar="FILE", help="config file (default: the packaged one)")
    parser.add_argument(
        "--mock",
        action="store_true",
        help="mock pins with the simulated mechanism (also GPIOZERO_PIN_FACTORY=mock)",
    )
    parser.add_argument(
        "--port",
        default="none",
        metavar="PORT|pty|none",
        help="serial port or pyserial URL for the host link; 'pty' creates one and prints "
        "'PORT <path>' first on stdout; 'none' (default) runs without a link",
    )
    parser.add_argument("--journal", metavar="PATH", help="SQLite event journal (default: memory)")
    parser.add_argument(
        "--plant-state",
        metavar="PATH",
        help="with --mock: keep the simulated hopper in this JSON file across restarts",
    )
    parser.add_argument(
        "--console",
        action="store_true",
        help="read ops from stdin ('press', 'dispense 3', 'load total=20') and write replies "
        "and events as JSON lines on stdout (tests, bench)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.set_defaults(func=_run)
