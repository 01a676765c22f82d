"""Door-open maintenance mode: with the hopper door open nothing moves, and the box says so.

While the door switch (``[pins] door``, closed = shut) reads open, the press queue refuses every
press and dispense (reason ``locked``) and a burst that was running trips ``fault`` (the daemon's
safety rule). :class:`DoorWatch` adds what a person at the table notices: a warning (the
``door_open`` cue and one log line) when the door opens and again every
``[door] warn_interval_s`` while it stays open, and a ``ready`` cue once when it closes again
(also when the box booted with the door open: that is maintenance, not a fault). A box without
a door switch never opens its door.

Loop events: ``door_warn`` (its timer). :class:`DoorWatch` takes the loop's timers as
arguments (a fake clock in tests); :class:`Door` is the daemon's feature over it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DoorConfig:
    """``[door]``: how often the open-door warning repeats."""

    warn_interval_s: float = 10.0


class DoorWatch:
    """Warns while the door is open and cues ``ready`` once when it closes.

    ``cue(name)`` plays a sound cue (a no-op without sound); ``set_timer`` / ``cancel_timer``
    are the loop's; the loop calls :meth:`tick` for the ``door_warn`` timer.
    """

    TIMER = "door_warn"
    TICK = "door_warn"

    def __init__(
        self,
        config: DoorConfig,
        *,
        cue: Callable[[str], Any],
        set_timer: Callable[..., Any],
        cancel_timer: Callable[[str], None],
    ) -> None:
        self.config = config
        self._cue = cue
        self._set_timer = set_timer
        self._cancel_timer = cancel_timer
        self.is_open = False
        self.warnings = 0  # warnings given while open, over the whole run

    def opened(self) -> None:
        """The door switch reads open (also at boot): warn now and every interval."""
        if self.is_open:
            return
        self.is_open = True
        self._warn()

    def closed(self) -> None:
        """The door is shut again: stop warning, cue ``ready`` once."""
        if not self.is_open:
            return
        self.is_open = False
        self._cancel_timer(self.TIMER)
        log.info("door closed: ready")
        self._cue("ready")

    def tick(self) -> None:
        """The ``door_warn`` timer: warn again while still open."""
        if self.is_open:
            self._warn()

    def _warn(self) -> None:
        self.warnings += 1
        log.warning("hopper door open: nothing moves until it is closed")
        self._cue("door_open")
        self._set_timer(self.TIMER, self.config.warn_interval_s * 1000, self.TICK)


# --------------------------------------------------------------------------- the box's feature


class Door:
    """Maintenance mode (``box.door``): the hopper tells it when the door switch moves; at boot
    it looks at the switch itself. Without a door switch it never does anything. A feature in
    the sense of ``firmware/feature.py`` without importing it (``[door]`` is read by the config,
    which the host imports too).

    Loop events: ``door_warn``.
    """

    def __init__(self, box: Any) -> None:
        self.box = box
        self.watch = DoorWatch(
            box.config.door,
            cue=lambda name: box.sound.cue(name),
            set_timer=box.loop.set_timer,
            cancel_timer=box.loop.cancel_timer,
        )
        box.on_event(DoorWatch.TICK, lambda event: self.watch.tick())
        box.on_state(self._on_state)

    def status(self) -> dict[str, Any]:
        """``door``: ``open``, ``shut`` or null (no door switch)."""
        devices = self.box.devices
        if devices is None or devices.door is None:
            return {"door": None}
        return {"door": "open" if self.box.hopper.door_open() else "shut"}

    def changed(self) -> None:
        """The door switch moved (the hopper's switch event): warn, or cue ready."""
        if self.box.state == "stopping":
            return
        if self.box.hopper.door_open():
            self.watch.opened()
        else:
            self.watch.closed()
        self.box.light.refresh()

    def _on_state(self, source: str, dest: str, why: str) -> None:
        if source == "booting" and self.box.hopper.door_open():
            self.watch.opened()  # booted with the door open: maintenance, warned at once
        elif dest == "stopping":
            self.box.loop.cancel_timer(DoorWatch.TIMER)
