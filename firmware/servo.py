"""The aiming servo's signal: one pulse every 20 ms, whose width (1 to 2 ms) is the angle.

gpiozero's ``AngularServo`` sends that width as a PWM duty cycle. Its lgpio backend (Raspberry
Pi OS Bookworm, Pi 5) hands lgpio the duty in whole percent, rounded down (``int(value * 100)``):
0.2 ms steps of the 20 ms frame, 36° of the servo's 180°, so the default seats -60, -20, 20 and
60° would land on -90, -54, 18 and 54°. On lgpio the box therefore pulses the line with lgpio's
own servo call (``tx_servo``: the width in whole microseconds, 0.18° steps):
:class:`LgpioServo`. On mock pins (and RPi.GPIO, whose duty is a float) gpiozero's
``AngularServo`` drives it. Both map an angle to a width the same way (:func:`pulse_width_us`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from gpiozero import AngularServo, DigitalOutputDevice

from firmware.pins import is_lgpio

# An SG90/MG90S: 1 ms at one end of its swing, 2 ms at the other, a pulse every 20 ms (gpiozero's
# defaults, given here so both drivers share them).
MIN_PULSE_S = 1 / 1000
MAX_PULSE_S = 2 / 1000
FRAME_S = 20 / 1000
FRAME_HZ = round(1 / FRAME_S)


def pulse_width_us(angle: float, min_angle: float, max_angle: float) -> float:
    """The pulse width in microseconds that turns the servo to ``angle`` (``min_angle`` at
    ``MIN_PULSE_S``, ``max_angle`` at ``MAX_PULSE_S``, linear between)."""
    share = (angle - min_angle) / (max_angle - min_angle)
    return (MIN_PULSE_S + share * (MAX_PULSE_S - MIN_PULSE_S)) * 1e6


def angle_of(width_us: float, min_angle: float, max_angle: float) -> float:
    """The angle a pulse of ``width_us`` microseconds stands for (:func:`pulse_width_us`'s
    inverse)."""
    share = (width_us / 1e6 - MIN_PULSE_S) / (MAX_PULSE_S - MIN_PULSE_S)
    return min_angle + share * (max_angle - min_angle)


def make_servo(pin: int, *, factory: Any, min_angle: float, max_angle: float) -> Any:
    """The servo on ``pin``, at 0° (or the end of its range nearer 0°): an :class:`LgpioServo`
    on gpiozero's lgpio backend, gpiozero's ``AngularServo`` elsewhere. Either has ``angle``
    (None while detached), ``detach()`` and ``close()``."""
    start = min(max(0.0, min_angle), max_angle)  # AngularServo refuses its default 0 outside
    if is_lgpio(factory):
        return LgpioServo(
            pin, factory=factory, min_angle=min_angle, max_angle=max_angle, initial_angle=start
        )
    return AngularServo(
        pin,
        initial_angle=start,
        min_angle=min_angle,
        max_angle=max_angle,
        min_pulse_width=MIN_PULSE_S,
        max_pulse_width=MAX_PULSE_S,
        frame_width=FRAME_S,
        pin_factory=factory,
    )


class LgpioServo:
    """The servo line on gpiozero's lgpio backend, pulsed by lgpio's ``tx_servo``.

    The line itself is a gpiozero ``DigitalOutputDevice`` (composed, not subclassed): gpiozero
    reserves the pin and has lgpio claim it as an output, low, on the factory's chip handle, so a
    line another program holds is refused as any other output is. The pulses go out on that
    handle, their width rounded to the microsecond. ``detach()`` stops them and drives the line
    low (lgpio stops a pulse train wherever it is, which may be mid-pulse, high); ``close()``
    does that and hands the line back. Both are safe to repeat.
    """

    def __init__(
        self,
        pin: int,
        *,
        factory: Any,
        min_angle: float,
        max_angle: float,
        initial_angle: float | None = 0.0,
    ) -> None:
        import lgpio  # the module under the factory (only on lgpio, so imported here)

        self._lgpio = lgpio
        self.min_angle = min_angle
        self.max_angle = max_angle
        self.closed = False
        self._gpio = pin
        self._width: int | None = None  # µs of the pulses running (None: detached)
        self._line = DigitalOutputDevice(pin, pin_factory=factory)
        try:
            # gpiozero's LGPIOFactory keeps its chip handle here (gpiozero 2.0 on); every lgpio
            # call of its pins goes through it.
            self._handle = factory._handle
            self.angle = initial_angle
        except Exception:
            self.close()
            raise

    @property
    def pulse_width_us(self) -> int | None:
        """The width of the pulses going out, in microseconds (None while detached)."""
        return self._width

    @property
    def angle(self) -> float | None:
        """The angle the pulses going out stand for (None while detached). Setting it starts or
        changes them; None detaches."""
        if self._width is None:
            return None
        return angle_of(self._width, self.min_angle, self.max_angle)

    @angle.setter
    def angle(self, angle: float | None) -> None:
        if angle is None:
            self.detach()
            return
        if self.closed:
            raise RuntimeError("the servo is closed")
        if not self.min_angle <= angle <= self.max_angle:
            raise ValueError(f"servo angle must be between {self.min_angle} and {self.max_angle}")
        width = round(pulse_width_us(angle, self.min_angle, self.max_angle))
        # A new width replaces the running one at the end of its 20 ms frame (lgpio's queue).
        self._lgpio.tx_servo(self._handle, self._gpio, width, FRAME_HZ)
        self._width = width

    def detach(self) -> None:
        """Stop the pulses and hold the line low (the servo holds by friction)."""
        if self.closed:
            return
        width, self._width = self._width, None
        try:
            if width is not None:
                self._lgpio.tx_servo(self._handle, self._gpio, 0, FRAME_HZ)
        finally:
            # lgpio stops where its pulse thread is: the line may be left high. Low now.
            self._line.off()

    def close(self) -> None:
        """Detach, then release the line; idempotent."""
        if self.closed:
            return
        try:
            with contextlib.suppress(Exception):
                self.detach()
        finally:
            self.closed = True
            self._line.close()
