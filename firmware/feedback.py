"""Feedback: the button LED and the buzzer, like the real box.

The LED is steady when the box is ready (dim when locked), on while it fires, blinks fast in a
latched state and, after dry presses, blinks faster with each one until the box fires; each dry
press also ticks the buzzer a semitone higher. Feedback only reacts: to state changes
(``box.on_state``) and to the journaled ``fire`` events (``box.subscribe``); nothing calls it.

Loop events (its timers): ``feedback`` (the blink), ``buzz_off``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from firmware.feature import Feature
from firmware.loop import Event
from firmware.machine import BUSY_STATES, LATCHED_STATES

if TYPE_CHECKING:
    from firmware.daemon import Daemon

BUZZ_MS = 60  # length of the dry-press tick
LATCHED_HZ = 4.0  # blink rate in jammed / empty / fault


class Feedback(Feature):
    """Drives the LED and the buzzer from what the box does."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self._blink_on = False
        self._blink_hz = 1.0
        box.on_event("feedback", lambda event: self._blink())
        box.on_event("buzz_off", self._on_buzz_off)
        box.on_state(lambda source, dest, why: self.show())
        box.subscribe(self._on_event)

    @property
    def hz(self) -> float | None:
        """The LED's blink rate in Hz (None while it is steady); read it on the loop thread."""
        return self._blink_hz if self.box.loop.timer_deadline("feedback") is not None else None

    def show(self) -> None:
        """LED by state: steady when ready, blinking faster with each dry press, off when busy."""
        box = self.box
        led = box.devices.led if box.devices is not None else None
        if led is None:
            return
        state = box.state
        box.loop.cancel_timer("feedback")
        dry_streak = box.presses.jam.dry_streak
        if state == "stopping":
            led.off()
        elif state in BUSY_STATES:
            led.set(1.0)
        elif state in LATCHED_STATES:
            self._blink_hz = LATCHED_HZ
            self._blink()
        elif dry_streak > 0:
            fb = box.config.feedback
            self._blink_hz = fb.led_base_hz + fb.led_step_hz * (dry_streak - 1)
            self._blink()
        else:
            led.set(1.0 if state == "idle" else 0.2)

    def _blink(self) -> None:
        box = self.box
        led = box.devices.led if box.devices is not None else None
        if led is None:
            return
        self._blink_on = not self._blink_on
        led.set(1.0 if self._blink_on else 0.0)
        box.loop.set_timer("feedback", 500 / max(self._blink_hz, 0.1), "feedback")

    def _on_event(self, event: dict) -> None:
        if event.get("kind") == "fire" and event.get("reason") == "dry":
            self._dry()

    def _dry(self) -> None:
        box = self.box
        self.show()
        buzzer = box.devices.buzzer if box.devices is not None else None
        if buzzer is not None:
            buzzer.tick(box.presses.jam.dry_streak)
            box.loop.set_timer("buzz", BUZZ_MS, "buzz_off")

    def _on_buzz_off(self, event: Event) -> None:
        box = self.box
        if box.devices is not None and box.devices.buzzer is not None:
            box.devices.buzzer.off()
