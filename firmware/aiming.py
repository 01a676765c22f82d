"""Aiming: the optional servo that turns the ejector to a seat.

Ops: ``aim`` (``seat`` 0..seats-1; ``BAD_ARG`` without a servo).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from common.errors import CommandError
from firmware.feature import Feature, int_arg
from i18n import Text
from wire.ops import bounds

if TYPE_CHECKING:
    from firmware.daemon import Daemon


class Aiming(Feature):
    """The seat the ejector points at (None until the first ``aim``)."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.seat: int | None = None
        box.serve("aim", self._op_aim)

    def status(self) -> dict[str, Any]:
        """``aim``: the seat (or null)."""
        return {"aim": self.seat}

    def _op_aim(self, args: dict) -> dict:
        box = self.box
        aim = box.devices.aim if box.devices is not None else None
        if aim is None:
            raise CommandError(
                "BAD_ARG", Text("this box has no aiming servo ([pins] servo is not set)")
            )
        seats = min(box.config.box.seats, len(aim.seat_angles))
        least, _ = bounds("aim", "seat")  # the most is this box's
        seat = int_arg(args, "seat", least, seats - 1)
        angle = aim.aim(seat)
        self.seat = seat
        box.light.refresh()  # the light goes live in that seat's colour
        # degrees: an int when whole (as docs/protocol.md shows), else the float
        return {"seat": seat, "angle": int(angle) if float(angle).is_integer() else angle}
