"""Safety: max-on deadlines, trips, the latched states and how they are cleared.

Every power output (ejector, flywheel) tells this guard before its pin goes high and after it
goes low (``firmware/devices.py``); the guard arms a ``max_on_ms`` deadline with the loop, which
forces every output off and latches ``fault`` when it passes. A trip (a deadline, a stuck
sensor, a door opened mid-burst, a handler that raised, a failed self-test) turns every output
off, sends a ``fault`` event, answers the running burst and latches ``fault``. ``jammed`` and
``empty`` are latched too; a person clears them (``clear``, ``reset``, a long press). The limits
themselves come from the config file only (``[limits]``); no op can change them.

Loop events: ``max_on`` (a deadline), ``hold`` (the long press). Ops: ``clear``, ``reset``.
``watch(fn)``: ``fn(name, on, t_ns)`` on the loop thread at every power output change (the bench
records the ejector's on-time with it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from common.errors import CommandError
from firmware.feature import Feature
from firmware.loop import Event
from firmware.machine import RESTING_STATES
from i18n import Text

if TYPE_CHECKING:
    from firmware.daemon import Daemon

log = logging.getLogger(__name__)

_MS = 1_000_000
OutputWatcher = Callable[[str, bool, int], None]


class Safety(Feature):
    """The guard of the power outputs and the keeper of the latched states."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.fault_reason: str | None = None
        self._on: dict[str, tuple[int, int]] = {}  # output -> (on since ns, deadline ns)
        self._watchers: list[OutputWatcher] = []
        box.on_event("max_on", self._on_max_on)
        box.on_event("hold", self._on_hold)
        box.on_state(self._on_state)
        box.serve("clear", self._op_clear)
        box.serve("reset", self._op_reset)

    def status(self) -> dict[str, Any]:
        """``fault``: the reason while in ``fault``, else null."""
        return {"fault": self.fault_reason if self.box.state == "fault" else None}

    # ------------------------------------------------------------------ the guard

    def watch(self, fn: OutputWatcher) -> None:
        """Call ``fn(name, on, t_ns)`` at every power output change (before ``start()``)."""
        self._watchers.append(fn)

    def output_on(self, name: str, max_on_ms: int) -> None:
        """Guard: ``name`` turns on; arm its max-on deadline."""
        now = self.box.clock()
        deadline = now + max_on_ms * _MS
        self._on[name] = (now, deadline)
        self.box.loop.set_deadline(f"max_on:{name}", deadline, "max_on", output=name)
        for fn in self._watchers:
            fn(name, True, now)

    def output_off(self, name: str) -> None:
        """Guard: ``name`` turned off; drop its deadline."""
        self._on.pop(name, None)
        self.box.loop.cancel_timer(f"max_on:{name}")
        if self._watchers:
            now = self.box.clock()
            for fn in self._watchers:
                fn(name, False, now)

    def outputs_on(self) -> dict[str, tuple[int, int]]:
        """Guarded outputs that are on: name -> (on since ns, max-on deadline ns)."""
        return dict(self._on)

    def _on_max_on(self, event: Event) -> None:
        output = event.data["output"]
        if output not in self._on:
            return  # went off in the same instant
        parts = self.box.devices_built().power_outputs()
        limit = next((p.max_on_ms for p in parts if p.name == output), None)
        self.trip(output, f"{output} on longer than max_on_ms = {limit}")

    # ------------------------------------------------------------------ trips

    def all_off(self) -> None:
        """Every output off, LED, buzzer and servo included (faults, errors, shutdown)."""
        box = self.box
        box.inflight.outputs_off()
        if box.devices is not None:
            box.devices.outputs_off()

    def trip(self, output: str, why: str) -> None:
        """Outputs off, ``fault`` event, the running burst answered, ``fault`` latched."""
        box = self.box
        self.all_off()
        self.fault_reason = why
        log.error("fault: %s: %s", output, why)
        box.emit("fault", output=output, why=why)
        if box.inflight.burst is not None:
            box.inflight.finish("fault", trigger=None)
        box.move("trip", why)  # not from fault or stopping (the table)
        self.fault_reason = why

    def _on_state(self, source: str, dest: str, why: str) -> None:
        if dest in RESTING_STATES:
            self.fault_reason = None

    # ------------------------------------------------------------------ clearing

    def clear_latch(self, why: str) -> None:
        """Leave ``jammed`` / ``empty`` (a person fixed it) where the table allows ``clear``;
        ``EMPTY`` while the switch reads empty (the table's ``unless`` on clearing ``empty``)."""
        box = self.box
        if not box.move("clear", why) and box.state == "empty":
            raise CommandError(
                "EMPTY", Text("the hopper-empty switch still reads empty; load cards")
            )

    def _on_hold(self, event: Event) -> None:
        """Long press: clear a latched jam / empty / fault (the person fixed it)."""
        box = self.box
        if not box.move("reset", "long press"):
            try:
                self.clear_latch("long press")
            except CommandError as exc:
                log.warning("long press cannot clear %s: %s", box.state, exc.message)
        box.presses.pump()

    def _op_clear(self, args: dict) -> dict:
        box = self.box
        if box.state == "fault":  # the error names the op that does apply
            raise CommandError("FAULT", Text("the box is in fault; use reset"))
        self.clear_latch("host clear")
        return {"state": box.state}

    def _op_reset(self, args: dict) -> dict:
        box = self.box
        if not box.move("reset", "host reset"):
            self.clear_latch("host reset")
        return {"state": box.state}
