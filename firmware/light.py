"""Button light: an RGB LED or WS2812 pixels showing what the box is doing, in colour.

A *look* is data: a loop of frames (colour, hold ms); a steady colour is one frame.
:func:`situation` names what the box shows from its state (ready, live for a seat, busy, dry
streak building, jammed, empty, fault, door open, ...), :func:`look_for` gives the look, and
:class:`LightFeature` plays it on a backend with one loop timer (``light``), so nothing sleeps
and the loop alone drives the pins.

Backends (one ``show(rgb)`` / ``off()`` / ``close()`` interface):

- :class:`RgbBackend`: a common-cathode RGB LED on three PWM pins (gpiozero ``RGBLED``; works on
  ``MockPWMPin`` in tests).
- :class:`PixelBackend`: WS2812 ("NeoPixel") pixels through Adafruit's maintained
  ``adafruit-circuitpython-neopixel`` (the ``ws2812`` extra, Pi only); without the library, one
  log line and the light stays dark: the box works without it.
- :class:`MockPixels`: WS2812 on mock pins; keeps every frame it was shown.

A box with neither keeps its plain PWM LED (``[pins] button_led``), driven as before.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from firmware.feature import Feature
from firmware.loop import Event

if TYPE_CHECKING:
    from firmware.daemon import Daemon

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


# --------------------------------------------------------------------------- backends


class RgbBackend:
    """A common-cathode RGB LED on three PWM pins (gpiozero ``RGBLED``)."""

    def __init__(self, red: int, green: int, blue: int, *, factory: Any) -> None:
        from gpiozero import RGBLED

        self.led = RGBLED(red, green, blue, pwm=True, pin_factory=factory)

    def show(self, color: Color) -> None:
        """Set the colour."""
        self.led.value = tuple(max(0.0, min(1.0, c)) for c in color)

    def off(self) -> None:
        """Dark."""
        self.led.off()

    def close(self) -> None:
        """Dark, then release the pins; idempotent."""
        try:
            self.led.off()
        finally:
            self.led.close()


class MockPixels:
    """WS2812 pixels on mock pins: keeps the newest frames shown, as (r, g, b) tuples."""

    def __init__(self, count: int = 1, brightness: float = 1.0) -> None:
        self.count = count
        self.brightness = brightness
        self.frames: deque[Color] = deque(maxlen=1000)
        self.color: Color = OFF

    def show(self, color: Color) -> None:
        """Every pixel to ``color``."""
        self.color = color
        self.frames.append(color)

    def off(self) -> None:
        """Dark."""
        self.show(OFF)

    def close(self) -> None:
        """Dark."""
        self.off()


class PixelBackend:
    """WS2812 pixels on a Pi through ``adafruit-circuitpython-neopixel`` (``ws2812`` extra)."""

    def __init__(self, pin: int, *, count: int, brightness: float) -> None:
        import board  # type: ignore[import-not-found]  # Adafruit Blinka, Pi only
        import neopixel  # type: ignore[import-not-found]

        self.pixels = neopixel.NeoPixel(
            getattr(board, f"D{pin}"), count, brightness=brightness, auto_write=False
        )

    def show(self, color: Color) -> None:
        """Every pixel to ``color``."""
        self.pixels.fill(tuple(round(255 * max(0.0, min(1.0, c))) for c in color))
        self.pixels.show()

    def off(self) -> None:
        """Dark."""
        self.show(OFF)

    def close(self) -> None:
        """Dark, then release the pin; idempotent."""
        try:
            self.off()
        finally:
            self.pixels.deinit()


def make_backend(pins: Any, light: Any, *, factory: Any, mock: bool) -> Any:
    """The backend the config's pins call for, or None when the box has no colour light.

    ``pins`` has ``light_red``/``light_green``/``light_blue`` (RGB) or ``light_data`` (WS2812);
    a WS2812 without its library logs one line and gives None (the box runs dark).
    """
    if pins.light_red is not None:
        return RgbBackend(pins.light_red, pins.light_green, pins.light_blue, factory=factory)
    if pins.light_data is None:
        return None
    if mock:
        return MockPixels(light.pixels, light.brightness)
    try:
        return PixelBackend(pins.light_data, count=light.pixels, brightness=light.brightness)
    except (ImportError, AttributeError, RuntimeError, OSError, ValueError) as exc:
        log.warning(
            "light: WS2812 on GPIO %d unavailable (%s; pip install 'unoattack-launcher[ws2812]');"
            " the button light stays dark",
            pins.light_data,
            exc,
        )
        return None


# --------------------------------------------------------------------------- the feature


class LightFeature:
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


# --------------------------------------------------------------------------- the box's feature


class Light(Feature):
    """The colour light of the box (``box.light``): follows the state, the dry streak, the seat
    aimed at and the door. Harmless without one: :meth:`refresh` does nothing.

    Loop events: ``light_tick`` (its timer).
    """

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.looks: LightFeature | None = None
        box.on_event(LightFeature.TICK, self._on_tick)
        box.on_state(lambda source, dest, why: self.refresh())
        box.subscribe(self._on_event)

    def _player(self) -> LightFeature | None:
        box = self.box
        backend = getattr(box.devices, "light", None) if box.devices is not None else None
        if backend is None:
            return None
        if self.looks is None or self.looks.backend is not backend:
            cfg = box.config
            self.looks = LightFeature(
                backend,
                set_timer=box.loop.set_timer,
                cancel_timer=box.loop.cancel_timer,
                seat_colors=[parse_color(c) for c in cfg.light.seat_colors],
                base_hz=cfg.feedback.led_base_hz,
                step_hz=cfg.feedback.led_step_hz,
                max_dry=max(1, cfg.jam.max_dry),
            )
        return self.looks

    def refresh(self) -> Look | None:
        """Show what the box is doing now; the look shown (None: no light, or it is off)."""
        looks = self._player()
        if looks is None:
            return None
        box = self.box
        if not box.settings.value("light.enabled"):
            looks.off()
            return None
        return looks.show(
            box.state,
            dry_streak=box.presses.jam.dry_streak,
            seat=box.aiming.seat,
            door_open=box.hopper.door_open(),
        )

    @property
    def color(self) -> Color | None:
        """The colour shown now (None without a light)."""
        return self.looks.color if self.looks is not None else None

    def _on_tick(self, event: Event) -> None:
        if self.looks is not None:
            self.looks.tick()

    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("kind") == "fire":
            self.refresh()  # the dry streak changed (or ended)
