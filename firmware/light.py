"""Button light: an RGB LED or WS2812 pixels showing what the box is doing, in colour.

The looks (what each situation shows) are data in ``firmware/looks.py``; this module has the
backends (one ``show(rgb)`` / ``off()`` / ``close()`` interface) and the daemon's feature:

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
from collections import deque
from typing import TYPE_CHECKING, Any

from firmware.feature import Feature
from firmware.looks import OFF, Color, Look, LookPlayer, parse_color
from firmware.loop import Event

if TYPE_CHECKING:
    from firmware.daemon import Daemon

log = logging.getLogger(__name__)


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
        import board  # Adafruit Blinka, Pi only
        import neopixel

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


# --------------------------------------------------------------------------- the box's feature


class Light(Feature):
    """The colour light of the box (``box.light``): follows the state, the dry streak, the seat
    aimed at and the door. Harmless without one: :meth:`refresh` does nothing.

    Loop events: ``light_tick`` (its timer).
    """

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.looks: LookPlayer | None = None
        box.on_event(LookPlayer.TICK, self._on_tick)
        box.on_state(lambda source, dest, why: self.refresh())
        box.subscribe(self._on_event)

    def _player(self) -> LookPlayer | None:
        box = self.box
        backend = getattr(box.devices, "light", None) if box.devices is not None else None
        if backend is None:
            return None
        if self.looks is None or self.looks.backend is not backend:
            cfg = box.config
            self.looks = LookPlayer(
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
