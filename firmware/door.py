"""Door-open maintenance mode: with the hopper door open nothing moves, and the box says so.

While the door switch (``[pins] door``, closed = shut) reads open, the press queue refuses every
press and dispense (reason ``locked``) and a burst that was running trips ``fault`` (the daemon's
safety rule). :class:`DoorWatch` adds what a person at the table notices: a warning (the
``door_open`` cue and one log line) when the door opens and again every
``[door] warn_interval_s`` while it stays open, and a ``ready`` cue once when it closes again
(also when the box booted with the door open: that is maintenance, not a fault). A box without
a door switch never opens its door.

Loop events: ``door_warn`` (its timer). Standard library only; the loop's timers are passed in.
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
