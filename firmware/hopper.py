"""The hopper: the card count, the hopper-empty switch, the door, ``load`` and stray cards.

``count`` is the cards the box believes it holds (None: unknown, after a refill by hand until a
``load``); each card the exit sensor counts takes one. A card counted with no burst running is a
``stray`` event at once, never dropped. The hopper-empty switch (if fitted) empties the count
and latches ``empty``; opening the hopper door (if fitted) refuses presses and trips a burst.

Loop events: ``switch`` (hopper-empty switch and door). Ops: ``load``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from common.errors import CommandError
from firmware.feature import Feature, int_arg
from firmware.loop import Event
from wire.ops import OPS, bounds

if TYPE_CHECKING:
    from firmware.daemon import Daemon

log = logging.getLogger(__name__)


class Hopper(Feature):
    """The hopper's count and switches."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        plant = box.plant
        self.count: int | None = int(plant.hopper) if plant is not None else None
        self.strays = 0  # cards counted with no burst running (each one a ``stray`` event)
        box.on_event("switch", self._on_switch)
        box.serve("load", self._op_load)

    def status(self) -> dict[str, Any]:
        """``hopper``: the count (or null)."""
        return {"hopper": self.count}

    def switch_empty(self) -> bool:
        """True while the hopper-empty switch (if fitted) reads empty."""
        devices = self.box.devices
        switch = devices.hopper_empty if devices is not None else None
        return bool(switch is not None and switch.is_active)

    def door_open(self) -> bool:
        """True while the hopper door (if fitted) is open."""
        devices = self.box.devices
        return bool(devices is not None and devices.door is not None and not devices.door.is_active)

    def runs_dry(self) -> bool:
        """True (and the count 0) when the count is 0 or the switch reads empty."""
        if self.count == 0 or self.switch_empty():
            self.count = 0
            return True
        return False

    def took_card(self) -> None:
        """A card crossed the exit beam: one fewer in the hopper."""
        if self.count is not None:
            self.count = max(0, self.count - 1)

    def stray(self, after_press_id: int | None) -> None:
        """A card crossed the beam with no burst counting: report it, never drop it."""
        self.strays += 1
        log.warning("card at the beam with no burst running (%d so far)", self.strays)
        self.box.emit("stray", count=1, hopper=self.count, after_press_id=after_press_id)

    def enter_empty(self, press_id: int | None) -> None:
        """The ``empty`` event and the ``empty`` latch (once)."""
        box = self.box
        if not box.may("run_empty"):  # latched already (or not running)
            return
        box.emit("empty", press_id=press_id, hopper=self.count)
        box.model.run_empty(why="hopper empty")

    def _on_switch(self, event: Event) -> None:
        box = self.box
        name, active = event.data["name"], bool(event.data["active"])
        inflight = box.inflight
        if name == "hopper_empty":
            if active:
                self.count = 0
                if inflight.settled():  # the last planned card emptied it: fired, then empty
                    self.enter_empty(None)
                elif inflight.burst is not None:
                    inflight.finish("empty", trigger="run_empty")
                else:
                    self.enter_empty(None)  # where the table has run_empty
            elif box.move("refill", "hopper refilled"):
                box.presses.pump()
        elif name == "door":
            if not active and inflight.burst is not None:
                # A settling burst is over already (feed off): settled() sends its fire; else
                # trip.
                settled = inflight.settled()
                if not settled:
                    box.safety.trip("door", "hopper door opened during a burst")
            box.door.changed()  # maintenance mode: warnings while open, ready once shut

    def _op_load(self, args: dict) -> dict:
        box = self.box
        together = OPS["load"].problem(args)  # exactly one of count and total
        if together is not None:
            raise CommandError("BAD_ARG", together)
        has_count = "count" in args
        count = int_arg(args, "count", *bounds("load", "count")) if has_count else None
        total = None if has_count else int_arg(args, "total", *bounds("load", "total"))
        cmd_id = box.command_id
        plant = box.plant
        if plant is not None and cmd_id and plant.has_load(cmd_id):
            # A crash cut this load between its effect and its journal record: the cards are in
            # (this boot read the hopper from the plant), only the record is missing.
            added = count if count is not None else 0
        else:
            added = count if count is not None else total - (self.count or 0)  # type: ignore[operator]
            self.count = (self.count or 0) + added if count is not None else total
            if plant is not None:
                plant.load(count, total=total, token=cmd_id)
        reply = box.stored_reply(hopper=self.count)
        box.emit("refill", reply=reply, hopper=self.count, added=added)
        box.move("refill", "hopper loaded")
        return {"hopper": self.count}
