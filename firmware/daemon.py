"""The launcher daemon: the composition root of the box's features and its thread-safe API.

Everything runs on the loop thread (``firmware/loop.py``). The daemon builds the loop, the state
machine (``firmware/machine.py``), the journal's event stream and one object per feature, each
owning its state and registering the loop events, timers and serial ops it serves
(``firmware/feature.py``):

- the press queue (``presses.py``): admission, press ids, refusals, the jam model, fire records;
- the burst in flight (``inflight.py``) and the ejector's burst driver (``drivers.py``, motor or
  solenoid, chosen once from the config);
- safety (``safety.py``): max-on deadlines, trips, the latched states and clearing them;
- the hopper (``hopper.py``): count, switches, ``load``, strays;
- feedback (``feedback.py``), the self-test (``selftest.py``), aiming (``aiming.py``).

The daemon itself runs commands (one reply each, built in one place), emits and journals events,
boots, keeps the watchdog and shuts down. ``launcher run`` is in ``firmware/run.py``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from common.commandline import package_version
from common.errors import CommandError, JournalError, LauncherError
from firmware.aiming import Aiming
from firmware.attenuation import Attenuation
from firmware.devices import Devices
from firmware.door import Door
from firmware.drivers import driver_for
from firmware.feedback import Feedback
from firmware.hopper import Hopper
from firmware.inflight import Burst, InFlight
from firmware.light import Light
from firmware.loop import Event, Loop
from firmware.machine import LauncherModel, build_machine, may
from firmware.motion import Motion
from firmware.presses import Press, PressQueue
from firmware.safety import Safety
from firmware.selftest import SelfTest
from firmware.settings import Settings
from firmware.sound import SoundCues
from i18n import Text
from wire import protocol
from wire.ops import BOX_OPS

if TYPE_CHECKING:
    from gpiozero import Factory

    from firmware.config import Config
    from firmware.journal import Journal
    from firmware.plant import Plant

log = logging.getLogger(__name__)

_MS = 1_000_000
HISTORY = 10_000  # events kept in memory for wait_for()

Reply = Callable[[dict], None]
EventHandler = Callable[[Event], object]  # what a handler returns is not read
OpHandler = Callable[[dict], dict]
StateHook = Callable[[str, str, str], object]


class Daemon:
    """The box. ``start()`` builds the devices, starts the loop and returns after the self-test;
    ``stop()`` turns every output off and closes the devices (idempotent). A context manager.

    ``config`` is the checked config file; ``factory`` the gpiozero pin factory for every
    device; ``journal`` a ``MemoryJournal``/``SqliteJournal`` (a fresh ``MemoryJournal`` if None);
    ``plant`` the simulated mechanism on mock pins (started and stopped with the daemon);
    ``clock`` a monotonic-ns clock for the loop.
    """

    def __init__(
        self,
        config: Config,
        *,
        factory: Factory,
        journal: Journal | None = None,
        plant: Plant | None = None,
        clock: Callable[[], int] | None = None,
        config_path: str | None = None,
    ) -> None:
        if journal is None:
            from firmware.journal import MemoryJournal

            journal = MemoryJournal()
        self.config = config
        self.config_path = str(config_path or config.path or "")
        self.factory = factory
        self.journal: Journal = journal
        self.plant = plant
        self.loop = Loop(
            self._handle, clock=clock, on_error=self._on_loop_error, on_crash=self._on_crash
        )
        self.clock = self.loop.clock
        self.devices: Devices | None = None
        self.handlers: dict[str, EventHandler] = {}  # loop event kind -> its feature's handler
        self.ops: dict[str, OpHandler] = {}  # serial op -> its feature's handler
        self._state_hooks: list[StateHook] = []
        self._subscribers: list[Callable[[dict], None]] = []
        self._history: deque[dict] = deque(maxlen=HISTORY)
        self._history_cond = threading.Condition()
        self._history_total = 0  # events emitted this run (the history keeps the newest)
        self._boot_ns = self.clock()
        self._booted = threading.Event()
        self._stopped = threading.Event()
        self._closed = False
        self._started = False
        self._stepped = False  # started without a loop thread (tests drive the loop)
        self._watchdog: tuple[float, Callable[[], Any]] | None = None
        self.watchdog_skipped = 0  # pings withheld because the loop ran late
        self.failure: LauncherError | None = None  # why the loop stopped on its own (journal)
        self.command_id: str | None = None  # id of the host command being handled (exactly-once)
        self._cmd_key: str | None = None  # what that command asks (protocol.command_key)
        # The features, in the order their hooks run. Each registers what it owns.
        self.safety = Safety(self)
        self.hopper = Hopper(self)
        self.presses = PressQueue(self)
        self.inflight = InFlight(self)
        self.driver = driver_for(self, config)
        self.feedback = Feedback(self)
        self.selftest = SelfTest(self)
        self.aiming = Aiming(self)
        # The box's character (docs/personality.md): settings first (they apply the stored jam
        # model and hold the personality switches the others read).
        self.settings = Settings(self)
        self.sound = SoundCues(self)
        self.light = Light(self)
        self.door = Door(self)
        self.attenuation = Attenuation(self)
        self.motion = Motion(self)
        self.serve("status", self._op_status)
        unserved = [op for op in BOX_OPS if op not in self.ops]
        if unserved:
            raise LauncherError(f"no feature serves {', '.join(unserved)} (wire/ops.py)")
        self.model = LauncherModel(self)
        self.machine = build_machine(self.model)

    # ------------------------------------------------------------------ feature registration

    def on_event(self, kind: str, handler: EventHandler) -> None:
        """Route loop events (and timer expiries) of ``kind`` to ``handler``; one owner each."""
        if kind in self.handlers or kind in _OWN_EVENTS:
            raise LauncherError(f"loop event {kind!r} already has a handler")
        self.handlers[kind] = handler

    def serve(self, op: str, handler: OpHandler) -> None:
        """Serve the serial op ``op`` with ``handler(args) -> reply fields``; one owner each.
        The op must be in the op table (``wire/ops.py``), which says its arguments and reply."""
        if op not in BOX_OPS:
            raise LauncherError(f"op {op!r} is not in the op table (wire/ops.py)")
        if op in self.ops:
            raise LauncherError(f"op {op!r} already has a handler")
        self.ops[op] = handler

    def on_state(self, hook: StateHook) -> None:
        """Call ``hook(source, dest, why)`` after every state change (its event journaled)."""
        self._state_hooks.append(hook)

    def move(self, trigger: str, why: str) -> bool:
        """Pull ``trigger`` if the transitions table has a move for it from here (its source
        and conditions), else nothing: the table, not the feature, decides where a trigger
        applies. True when it moved. A trigger the table does not allow, pulled directly
        (``model.<trigger>()``), raises ``MachineError``: a bug."""
        if not self.may(trigger):
            return False
        self.model.trigger(trigger, why=why)
        return True

    def may(self, trigger: str) -> bool:
        """The transitions table has a move for ``trigger`` from here (its source, conditions
        and ``unless`` guards): for a feature whose work comes before the trigger it pulls."""
        return may(self.machine, self.model, trigger)

    def devices_built(self) -> Devices:
        """The devices (built by ``start()``)."""
        if self.devices is None:
            raise LauncherError("devices are not built")
        return self.devices

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
        return self.feedback.hz

    def outputs_on(self) -> dict[str, tuple[int, int]]:
        """Guarded outputs that are on: name -> (on since ns, max-on deadline ns)."""
        return self.safety.outputs_on()

    # Read-only views of the features' state (tests and tools; read them on the loop thread).
    @property
    def burst(self) -> Burst | None:
        """The burst in flight, or None."""
        return self.inflight.burst

    @property
    def queue(self) -> deque[Press]:
        """Presses waiting to be served."""
        return self.presses.queue

    @property
    def fault_reason(self) -> str | None:
        """Why the box is in ``fault`` (None outside it)."""
        return self.safety.fault_reason

    def start(self, *, thread: bool = True) -> Daemon:
        """Build the devices, start the plant and the loop; return after the self-test.

        ``thread=False`` (tests on a ``FakeClock``): no loop thread and no plant thread; the
        caller drives the loop with ``daemon.loop.run_pending()`` and the plant with
        ``plant.run_due()`` (the boot has run when this returns)."""
        if self._started:
            return self
        self._started = True
        if not thread:
            self._stepped = True
            self.devices = Devices(
                self.config, factory=self.factory, post=self.loop.post, guard=self.safety,
                clock=self.clock,
            )  # fmt: skip
            if self.plant is not None:
                self.plant.start(thread=False)
            self.loop.post("boot")
            self.loop.run_pending()
            return self
        try:
            self.devices = Devices(
                self.config,
                factory=self.factory,
                post=self.loop.post,
                guard=self.safety,
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
        elif self._stepped and self.failure is None:
            self._shutdown("stop")  # no loop thread: the caller's thread is the loop's
        if self.devices is not None:
            self.devices.close()  # outputs off first, then close
        if self.plant is not None:
            self.plant.stop()
        self.sound.close()

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def pin_states(self) -> dict[str, float]:
        """Output pin states as the pin factory sees them (logged at exit)."""
        return self.devices.pin_states() if self.devices is not None else {}

    # ------------------------------------------------------------------ machine callbacks

    @property
    def host_locked(self) -> bool:
        """The host asked for the button to be locked (the machine's condition)."""
        return self.presses.host_locked

    def begin_spinup(self) -> None:
        """Entered ``spinup``."""
        self.inflight.begin_spinup()

    def begin_feed(self) -> None:
        """Entered ``ejecting``."""
        self.inflight.begin_feed()

    def begin_cooldown(self) -> None:
        """Entered ``cooldown``."""
        self.presses.begin_cooldown()

    def outputs_off(self) -> None:
        """Ejector and flywheel off, burst timers dropped (machine ``before`` callback)."""
        self.inflight.outputs_off()

    def state_changed(self, source: str, dest: str, why: str) -> None:
        """After every transition: the ``state`` event, then every feature's state hook."""
        fields: dict[str, Any] = {"from": source, "to": dest, "why": why}  # `from`: a keyword
        self.emit("state", **fields)
        for hook in self._state_hooks:
            hook(source, dest, why)

    # ------------------------------------------------------------------ the loop

    def _handle(self, event: Event) -> None:
        kind = event.kind
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(event)
        elif kind == "cmd":
            data = event.data
            self._on_command(data["op"], data["args"], data["reply"], data.get("cmd_id"))
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
        self.safety.all_off()
        if isinstance(exc, JournalError):
            # Nothing can be recorded any more (a full or failing disk): a box that cannot
            # journal cannot promise one fire per press. Outputs off, and stop.
            self.failure = exc
            log.critical("%s; outputs off, stopping", exc)
            self._booted.set()
            self._stopped.set()
            self.loop.stop(timeout=0)
            return
        if self.may("trip"):
            self.safety.trip("internal", f"handler for {event.kind!r} failed: {type(exc).__name__}")

    def _on_crash(self, exc: BaseException) -> None:
        if self.devices is not None:
            self.devices.outputs_off()
        self._booted.set()
        self._stopped.set()

    def _boot(self) -> None:
        self.presses.answer_interrupted()
        self.emit("hello", **_fit_hello(self._hello_fields()))
        result = self.selftest.run()
        self.model.booted(why="self-test passed" if result["passed"] else "self-test done")
        if not result["passed"]:
            failed = ", ".join(c["name"] for c in result["checks"] if not c["ok"])
            self.safety.trip("selftest", f"self-test failed: {failed}")
        elif self.hopper.switch_empty():
            self.hopper.count = 0
            self.hopper.enter_empty(None)
        if self._watchdog is not None:
            self._on_watchdog(None)
        self._booted.set()
        self.presses.pump()  # presses that arrived while booting

    def _hello_fields(self) -> dict[str, Any]:
        return {
            "name": self.config.box.name,
            "config": self.config_path,
            "ejector": self.config.ejector.kind,
            "hopper": self.hopper.count,
            # a journal moved aside or found short must reach a person, not only the log
            "journal_recovered": self.journal.recovered,
            "journal_lost": self.journal.lost,
        }

    def _on_watchdog(self, event: Event | None) -> None:
        assert self._watchdog is not None
        interval, ping = self._watchdog
        now = self.clock()
        late = event is not None and now - event.t_ns > interval * 1e9 / 2
        # Healthy: the loop serves its timers on time and is not shutting down.
        if not late and self.state != "stopping":
            ping()
        else:
            self.watchdog_skipped += 1
            log.warning(
                "watchdog ping skipped: the loop served it %d ms late",
                (now - event.t_ns) // _MS if event else 0,
            )
        self.loop.set_timer("watchdog", interval * 1000 / 2, "watchdog")

    def _shutdown(self, why: str) -> None:
        if not self.may("shutdown"):  # stopping already
            self._stopped.set()
            return
        self.safety.all_off()
        if self.inflight.burst is not None:
            self.inflight.finish("stopping", trigger=None)
        self.model.shutdown(why=why)
        self._stopped.set()

    # ------------------------------------------------------------------ commands

    def _on_command(self, op: str, args: dict, reply: Reply, cmd_id: str | None = None) -> None:
        handler = self.ops.get(op)
        self.command_id = cmd_id
        self._cmd_key = protocol.command_key(op, args) if cmd_id is not None else None
        try:
            if handler is None:
                raise CommandError(
                    "UNKNOWN_OP",
                    Text(
                        "unknown op {op!r}; allowed: {allowed}", op=op, allowed=", ".join(self.ops)
                    ),
                )
            result = handler(args)
            if "ok" in result:
                # the envelope's ok is the command's success; a result must never shadow it
                raise LauncherError(f"{op} result carries its own 'ok'")
            response = protocol.result_ok(**result)
        except CommandError as exc:
            extra = {k: v for k, v in exc.extra.items() if k not in ("ok", "error")}
            known = exc.code in protocol.ERROR_CODES  # an unlisted code is a bug: INTERNAL
            code = exc.code if known else protocol.INTERNAL
            response = protocol.result_error(code, exc.message, text=exc.text, **extra)
        except Exception as exc:
            log.exception("command %r failed", op)
            response = protocol.result_error("INTERNAL", f"{type(exc).__name__}: {exc}")
        finally:
            self.command_id = self._cmd_key = None
        try:
            reply(response)
        except Exception:
            log.exception("reply callback for %r failed", op)
        self.presses.pump()

    def stored_reply(self, **result: Any) -> tuple[str, dict, str | None] | None:
        """``(cmd_id, wire reply, command key)`` for the command being handled, or None (no host
        command). The same reply the link builds from the result: a retry gets exactly this."""
        if self.command_id is None:
            return None
        return self.command_id, protocol.reply_ok(self.command_id, **result), self._cmd_key

    def _op_status(self, args: dict) -> dict:
        result: dict[str, Any] = {"state": self.state}
        for feature in (self.hopper, self.presses, self.aiming, self.safety, self.door):
            result.update(feature.status())
        result["uptime_ms"] = (self.clock() - self._boot_ns) // _MS
        result["ejector"] = self.config.ejector.kind
        result["version"] = package_version()  # the firmware's (the distribution's) version
        return result

    # ------------------------------------------------------------------ events

    def emit(self, kind: str, *, reply: tuple | None = None, **fields: Any) -> dict:
        """Journal the event ``kind`` (with a command's stored ``reply`` in the same step), keep
        it in the history and hand it to every subscriber."""
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


# Loop events the daemon handles itself (a feature cannot take them).
_OWN_EVENTS = frozenset({"cmd", "watchdog", "call", "boot", "stop"})


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
