"""The press queue: admission, press ids, refusals, the jam model's plan and fire records.

A press — from the button, the host's ``press`` or a ``dispense`` — gets a press id from the
journal and a ``press`` event, a place in a bounded queue and, eventually, exactly one ``fire``
event. One that cannot be served (locked, latched, queue full, stopping) is answered at once by a
``fire`` with ``ejected: 0`` and the reason. The jam model decides how many cards a press fires;
the burst itself is the in-flight record's (``firmware/inflight.py``).

Loop events: ``button`` and ``press`` (a press to admit), ``cooled`` (the cooldown after a burst).
Ops: ``press``, ``dispense``, ``lock``, ``unlock``, ``model.get``, ``model.set``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from common.errors import CommandError
from common.jam import JamError, JamModel, check_limit, from_mapping
from firmware.feature import Feature, int_arg
from firmware.loop import Event
from firmware.machine import LATCHED_STATES
from i18n import Text
from wire.ops import bounds

if TYPE_CHECKING:
    from firmware.daemon import Daemon
    from firmware.inflight import Burst

_MS = 1_000_000


@dataclass
class Press:
    """A press waiting to be served: who pressed, and for a dispense how many cards.

    ``press_id`` is None until the press is journaled (:meth:`PressQueue.register`).
    """

    press_id: int | None
    source: str
    t_ns: int
    count: int | None = None
    rapid: int = 0  # its place in a run of rapid button presses (firmware/attenuation.py)
    cut: int = 0  # cards the attenuation took from its burst


class PressQueue(Feature):
    """Admits presses, serves them in order and answers each with exactly one ``fire``."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.jam = JamModel(box.config.jam)
        self.queue: deque[Press] = deque()
        self.host_locked = False
        box.on_event("button", self._on_press)
        box.on_event("press", self._on_press)
        box.on_event("cooled", self._on_cooled)
        box.on_state(self._on_state)
        box.serve("press", self._op_press)
        box.serve("dispense", self._op_dispense)
        box.serve("lock", self._op_lock)
        box.serve("unlock", self._op_unlock)
        box.serve("model.get", self._op_model_get)
        box.serve("model.set", self._op_model_set)

    def status(self) -> dict[str, Any]:
        """``dry_streak``, ``queue``, ``jam`` (params summary), ``locked`` (host lock)."""
        p = self.jam.params
        return {
            "dry_streak": self.jam.dry_streak,
            "queue": len(self.queue),
            "jam": {"mode": p.mode, "base": p.base, "step": p.step, "max_dry": p.max_dry},
            "locked": self.host_locked,
        }

    # ------------------------------------------------------------------ admission

    def _on_press(self, event: Event) -> None:
        self.accept(event.data.get("source", "button"), event.t_ns, fast=True)
        self.pump()

    def accept(
        self, source: str, t_ns: int | None = None, count: int | None = None, *, fast: bool = False
    ) -> int | None:
        """Queue the press or refuse it with a fire; returns its press id.

        With ``fast`` a press that will be served at once is journaled only after the ejector has
        started: journaling (an fsync with SQLite) must not sit between the button and the motor.
        """
        box = self.box
        press = Press(None, source, t_ns or box.clock(), count)
        if source == "button":
            press.rapid = box.attenuation.note(press.t_ns)
        state = box.state
        if not (fast and state == "idle" and not self.queue and box.inflight.burst is None):
            self.register(press)
        if state == "stopping":
            self.refuse(press, "stopping")
        elif state in LATCHED_STATES:
            self.refuse(press, state)
        elif self._locked_out(source):
            self.refuse(press, "locked")
        elif len(self.queue) >= box.config.limits.press_queue:
            self.refuse(press, "queue_full")
        else:
            self.queue.append(press)  # journaled: a crash now gets it an ``interrupted`` fire
        return press.press_id

    def _locked_out(self, source: str) -> bool:
        # The host's lock leaves dispense (the rules' draws) alone; an open door stops all.
        return (source != "dispense" and self.host_locked) or self.box.hopper.door_open()

    def register(self, press: Press) -> None:
        """Give ``press`` its id and journal its ``press`` event (once).

        A press made by a host command journals that command's reply with the event, and the
        journal opens the press in the same transaction (it is answered even after a crash)."""
        if press.press_id is None:
            box = self.box
            press.press_id = box.journal.next_press_id()
            reply = None
            if press.source in ("host", "dispense"):
                reply = box.stored_reply(press_id=press.press_id)
            box.emit("press", reply=reply, press_id=press.press_id, source=press.source)

    def pump(self) -> None:
        """Serve queued presses while the box rests in ``idle`` / ``locked``."""
        box = self.box
        while self.queue and box.may("start_burst") and box.inflight.burst is None:
            press = self.queue.popleft()
            if self._locked_out(press.source):
                self.refuse(press, "locked")
                continue
            hopper = box.hopper
            if hopper.runs_dry():
                self.refuse(press, "empty")
                hopper.enter_empty(press.press_id)
                return
            dry_before = self.jam.dry_streak
            if press.count is not None:
                planned = press.count if hopper.count is None else min(press.count, hopper.count)
            else:
                planned = self.jam.plan(hopper.count)
                if press.rapid:
                    kept = box.attenuation.cut(planned, press.rapid)
                    press.cut, planned = planned - kept, kept
            pattern = box.motion.choose(press, planned)
            if planned == 0 and pattern is None:
                self.fire(press, planned=0, ejected=0, reason="dry", dry_streak=dry_before)
                continue
            box.inflight.start(press, planned, dry_before, pattern=pattern)
            return

    def _on_state(self, source: str, dest: str, why: str) -> None:
        if dest in LATCHED_STATES or dest == "stopping":
            reason = "stopping" if dest == "stopping" else dest
            while self.queue:
                self.refuse(self.queue.popleft(), reason)

    def begin_cooldown(self) -> None:
        """Entered ``cooldown``: serve the next press after ``cooldown_ms``."""
        self.box.loop.set_timer("cooldown", self.box.config.timing.cooldown_ms, "cooled")

    def _on_cooled(self, event: Event) -> None:
        self.box.move("cooled", "cooldown over")
        self.pump()

    # ------------------------------------------------------------------ fire records

    def refuse(self, press: Press, reason: str) -> None:
        """Answer ``press`` with a fire of nothing for ``reason``."""
        self.fire(press, planned=0, ejected=0, reason=reason, dry_streak=self.jam.dry_streak)

    def fire(
        self,
        press: Press,
        *,
        planned: int,
        ejected: int,
        reason: str,
        dry_streak: int,
        burst: Burst | None = None,
    ) -> None:
        """The ``fire`` event of ``press`` (the journal closes the press in the same step)."""
        box = self.box
        self.register(press)  # its press event always comes before its fire
        now = box.clock()
        card_ms = burst.card_ms() if burst is not None else []
        spinup_ms = first_card_ms = None
        total_ms = 0
        if burst is not None:
            spun = burst.spun_ns or burst.feed_ns or now
            spinup_ms = (spun - burst.started_ns) // _MS
            first_card_ms = card_ms[0] if card_ms else None
            total_ms = (now - burst.started_ns) // _MS
        box.emit(
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
            hopper=box.hopper.count,
            extra=max(0, ejected - planned),
            retries=burst.retries if burst is not None else 0,
            pattern=burst.pattern if burst is not None else None,
            cut=press.cut,
            retract_ms=burst.retract_ms() if burst is not None else None,
        )

    def answer_interrupted(self) -> None:
        """After a crash: a fire ``interrupted`` for every press the journal holds without a
        fire (the burst cut by the crash, with the cards it counted, and every press queued
        behind it). The journal opens a press with its ``press`` event and closes it with its
        ``fire`` in the same transaction, so no crash point leaves a press unanswered."""
        box = self.box
        mine = {p.press_id for p in self.queue}  # pressed while booting: served, not answered
        for press in box.journal.open_presses():
            if press["press_id"] in mine:
                continue
            planned = int(press.get("planned", 0))
            ejected = int(press.get("ejected", 0))
            box.emit(
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
                hopper=box.hopper.count,
                extra=max(0, ejected - planned),
                retries=0,
                pattern=None,
                cut=0,
                retract_ms=None,
            )

    # ------------------------------------------------------------------ ops

    def _op_press(self, args: dict) -> dict:
        return {"press_id": self.accept("host")}

    def _op_dispense(self, args: dict) -> dict:
        box = self.box
        least, _ = bounds("dispense", "count")  # the most is this box's
        count = int_arg(args, "count", least, box.config.limits.max_burst)
        state = box.state
        if state in LATCHED_STATES:
            raise CommandError(
                state.upper(), Text("the box is {state}; clear it first", state=state)
            )
        if state in ("booting", "stopping"):
            raise CommandError("BUSY", Text("the box is {state}", state=state))
        if box.hopper.door_open():
            raise CommandError(
                "LOCKED", Text("the hopper door is open: nothing moves until it shuts")
            )
        if len(self.queue) >= box.config.limits.press_queue:
            raise CommandError("BUSY", Text("the press queue is full"))
        return {"press_id": self.accept("dispense", count=count)}

    def _op_lock(self, args: dict) -> dict:
        self.host_locked = True
        self.box.move("lock", "host lock")  # from idle; elsewhere the flag waits
        return {"state": self.box.state}

    def _op_unlock(self, args: dict) -> dict:
        self.host_locked = False
        self.box.move("unlock", "host unlock")
        return {"state": self.box.state}

    def _op_model_get(self, args: dict) -> dict:
        return {"params": self.jam.params.to_dict(), "dry_streak": self.jam.dry_streak}

    def _op_model_set(self, args: dict) -> dict:
        params = args.get("params")
        if not isinstance(params, dict) or not params:
            raise CommandError(
                "BAD_ARG", Text("model.set needs params: a mapping of jam parameters")
            )
        try:
            new = from_mapping(params, defaults=self.jam.params)
            check_limit(new, self.box.config.limits.max_burst)  # limits come from the config only
        except ValueError as exc:
            raise CommandError(
                "BAD_ARG", exc.text if isinstance(exc, JamError) else str(exc)
            ) from None
        self.jam.set_params(new)
        self.box.settings.remember_jam(params)  # kept beside the journal for the next start
        return {"params": new.to_dict()}
