"""Button-light looks: what the colour light shows in each situation of the box, as data.

A *look* is a loop of frames (colour, hold ms); a steady colour is one frame. :func:`situation`
names what the box shows from its state (ready, live for a seat, busy, dry streak building,
jammed, empty, fault, door open, ...), :func:`look_for` gives its look, and :class:`LookPlayer`
plays looks on any backend with one loop timer (``light``), so nothing sleeps and the loop alone
drives the pins. The backends and the daemon's feature are in ``firmware/light.py``.

Standard library only (``[light]`` of the config is read with it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

Color = tuple[float, float, float]  # red, green, blue, each 0-1
OFF: Color = (0.0, 0.0, 0.0)
_HEX = re.compile(r"#[0-9a-fA-F]{6}")

# The colours of UNO; the ready light avoids pure red and green, which mean fault and live.
NAMED: dict[str, Color] = {
    "ready": (1.0, 0.78, 0.0),  # UNO yellow
    "locked": (0.25, 0.2, 0.15),  # dim warm white: waiting for the host
    "busy": (1.0, 1.0, 1.0),
    "dry": (1.0, 0.55, 0.0),  # amber, turning red as the streak grows
    "dry_hot": (1.0, 0.0, 0.0),
    "jam": (1.0, 0.3, 0.0),
    "empty": (0.0, 0.3, 1.0),
    "fault": (1.0, 0.0, 0.0),
    "door_open": (0.8, 0.0, 1.0),
    "booting": (0.2, 0.2, 0.2),
}
SEAT_COLORS: tuple[str, ...] = ("#e53935", "#1e88e5", "#43a047", "#fdd835")  # R B G Y, repeating

SITUATIONS = (
    "booting",
    "ready",
    "live",
    "locked",
    "busy",
    "dry",
    "jammed",
    "empty",
    "fault",
    "door_open",
    "stopping",
)


def parse_color(text: str) -> Color:
    """``"#rrggbb"`` -> (r, g, b) in 0-1; ``ValueError`` otherwise."""
    if not _HEX.fullmatch(text):
        raise ValueError(f"{text!r} is not a colour written #rrggbb")
    return tuple(int(text[i : i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


@dataclass(frozen=True)
class LightConfig:
    """``[light]``: WS2812 pixel count and brightness, and one colour per seat (``live``)."""

    pixels: int = 2
    brightness: float = 0.8
    seat_colors: tuple[str, ...] = SEAT_COLORS


@dataclass(frozen=True)
class Look:
    """What the light does: ``frames`` of (colour, hold ms), looped; one frame is steady."""

    name: str
    frames: tuple[tuple[Color, int], ...]

    @property
    def steady(self) -> bool:
        """One frame: no timer needed."""
        return len(self.frames) == 1


def _blink(name: str, color: Color, hz: float, low: Color = OFF) -> Look:
    half = max(10, round(500 / max(hz, 0.1)))
    return Look(name, ((color, half), (low, half)))


def _mix(a: Color, b: Color, t: float) -> Color:
    t = max(0.0, min(1.0, t))
    return tuple(x + (y - x) * t for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def situation(
    state: str, *, dry_streak: int = 0, seat: int | None = None, door_open: bool = False
) -> str:
    """What the light shows for the box's ``state`` and the facts around it."""
    if state == "stopping":
        return "stopping"
    if door_open and state not in ("fault", "booting"):
        return "door_open"
    if state in ("spinup", "ejecting", "cooldown"):
        return "busy"
    if state in ("jammed", "empty", "fault", "booting"):
        return state
    if state == "locked":
        return "locked"
    if dry_streak > 0:
        return "dry"
    return "live" if seat is not None else "ready"


def look_for(
    name: str,
    *,
    dry_streak: int = 0,
    max_dry: int = 10,
    seat: int | None = None,
    seat_colors: Sequence[Color] = (),
    base_hz: float = 1.0,
    step_hz: float = 1.0,
) -> Look:
    """The look of situation ``name`` (``SITUATIONS``)."""
    if name == "stopping":
        return Look(name, ((OFF, 1000),))
    if name == "dry":
        # faster and redder with each dry press: the box is about to blow (feedback rates)
        hz = base_hz + step_hz * max(0, dry_streak - 1)
        heat = dry_streak / max(1, max_dry)
        return _blink(name, _mix(NAMED["dry"], NAMED["dry_hot"], heat), hz)
    if name == "live":
        colors = seat_colors or tuple(parse_color(c) for c in SEAT_COLORS)
        return Look(name, ((colors[(seat or 0) % len(colors)], 1000),))
    if name == "busy":
        return Look(name, ((NAMED["busy"], 60), (NAMED["ready"], 60)))
    if name == "jammed":
        return Look(name, ((NAMED["jam"], 250), (NAMED["fault"], 250)))
    if name == "empty":
        return _blink(name, NAMED["empty"], 0.75)
    if name == "fault":
        return _blink(name, NAMED["fault"], 4.0)
    if name == "door_open":
        return _blink(name, NAMED["door_open"], 1.5, low=_mix(OFF, NAMED["door_open"], 0.15))
    if name in ("ready", "locked", "booting"):
        return Look(name, ((NAMED[name], 1000),))
    raise ValueError(f"unknown light situation {name!r}; known: {', '.join(SITUATIONS)}")


# --------------------------------------------------------------------------- the player


class LookPlayer:
    """Plays looks on a backend with one loop timer.

    ``set_timer(name, delay_ms, kind)`` / ``cancel_timer(name)`` are the loop's; the loop calls
    :meth:`tick` when the ``light_tick`` timer fires. ``show(...)`` is called on every change of
    what the box shows (state changes, dry presses, aiming, the door).
    """

    TIMER = "light"
    TICK = "light_tick"

    def __init__(
        self,
        backend: Any,
        *,
        set_timer: Callable[..., Any],
        cancel_timer: Callable[[str], None],
        seat_colors: Sequence[Color] = (),
        base_hz: float = 1.0,
        step_hz: float = 1.0,
        max_dry: int = 10,
    ) -> None:
        self.backend = backend
        self._set_timer = set_timer
        self._cancel_timer = cancel_timer
        self.seat_colors = tuple(seat_colors)
        self.base_hz, self.step_hz, self.max_dry = base_hz, step_hz, max_dry
        self.look: Look | None = None
        self.color: Color = OFF
        self._frame = 0

    def show(
        self, state: str, *, dry_streak: int = 0, seat: int | None = None, door_open: bool = False
    ) -> Look:
        """Show what ``state`` (and the facts given) call for; returns the look."""
        name = situation(state, dry_streak=dry_streak, seat=seat, door_open=door_open)
        look = look_for(
            name,
            dry_streak=dry_streak,
            max_dry=self.max_dry,
            seat=seat,
            seat_colors=self.seat_colors,
            base_hz=self.base_hz,
            step_hz=self.step_hz,
        )
        if look == self.look:
            return look  # a blink keeps its rhythm through repeated updates
        self.look = look
        self._frame = 0
        self._apply()
        return look

    def tick(self) -> None:
        """The ``light_tick`` timer: next frame of the look."""
        if self.look is None or self.look.steady:
            return
        self._frame = (self._frame + 1) % len(self.look.frames)
        self._apply()

    def _apply(self) -> None:
        assert self.look is not None
        color, hold = self.look.frames[self._frame]
        self.color = color
        try:
            self.backend.show(color)
        except Exception:  # a light must never stop the box
            log.exception("light: showing %s failed", self.look.name)
        if self.look.steady:
            self._cancel_timer(self.TIMER)
        else:
            self._set_timer(self.TIMER, hold, self.TICK)

    def off(self) -> None:
        """Dark, timer dropped (faults, shutdown)."""
        self._cancel_timer(self.TIMER)
        self.look = None
        self.color = OFF
        try:
            self.backend.off()
        except Exception:
            log.exception("light: turning off failed")

    def close(self) -> None:
        """Dark and released."""
        self._cancel_timer(self.TIMER)
        self.backend.close()
