"""Wrappers over the gpiozero devices of the box.

Each wrapper composes gpiozero devices (never subclasses them) and is built with the pin factory
passed explicitly. Input callbacks arrive on gpiozero's threads and only ``post()`` an event to the
loop. Outputs are driven from the loop thread only, with one exception: the **feed cutoff**. The
loop arms it at the start of a motor burst with the beam edge of the burst's last planned card;
the exit sensor's callback stops the feed motor the moment that edge comes, without waiting for
the loop (as a Klipper MCU stops a stepper on its endstop trigger without asking the host). So a
late loop, on a busy Pi, cannot let the roller feed cards beyond the plan; a roller that coasts
on is counted by the loop's settle window (the fire's ``extra``).

Input events carry the time of their edge: where the pin factory stamps edges (lgpio: the
kernel's timestamp of each one, ``pins.stamps_edges``) a card or a press is dated by that stamp,
brought onto the loop's clock (:func:`edge_time`), so a busy CPU that runs the callback late does
not move the bench's card times; elsewhere the loop stamps the event when it is posted.

Every power output (ejector motor, solenoid, flywheel) reports each off-to-on and on-to-off change
to a :class:`Guard`; the daemon's guard arms a ``max_on_ms`` deadline with the loop, which forces
the output off and latches ``fault`` when it passes. The guard is told *before* the pin goes high so
no on-time escapes it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from gpiozero import (
    PWMLED,
    Button,
    DigitalInputDevice,
    DigitalOutputDevice,
    Motor,
    PWMOutputDevice,
    TonalBuzzer,
)
from gpiozero.tones import Tone

from firmware.light import make_backend
from firmware.pins import is_mock, pin_failure, stamps_edges
from firmware.servo import make_servo

log = logging.getLogger(__name__)

Post = Callable[..., None]
"""``post(kind, at_ns=None, **data)`` of the loop."""

# An edge reported older than this is no edge of ours: its ticks are on another clock (an lgpio
# built to stamp edges with CLOCK_REALTIME), so the callback's own time is used instead.
MAX_EDGE_AGE_S = 10.0


def edge_time(device: Any, active: bool, clock: Callable[[], int]) -> int:
    """When ``device`` (a gpiozero input in its ``when_activated``/``when_deactivated``
    callback) changed, on ``clock``.

    gpiozero keeps the ticks the pin factory reported with the change (lgpio: the kernel's stamp
    of the edge) and measures ``active_time``/``inactive_time`` from them with the factory's own
    clock. Now on ``clock`` minus that age is the edge on ``clock``: no assumption that the two
    clocks are the same one (the loop's may be a test's ``FakeClock``). Falls back to now when
    there is no age or it cannot be the age of this edge."""
    now = clock()
    age = device.active_time if active else device.inactive_time
    if age is None or not 0.0 <= age < MAX_EDGE_AGE_S:
        return now
    return now - round(age * 1e9)


class Guard(Protocol):
    """Told about every power output turning on and off (the loop's max-on deadlines)."""

    def output_on(self, name: str, max_on_ms: int) -> None: ...
    def output_off(self, name: str) -> None: ...


class _Part:
    """Common part of the wrappers: the gpiozero devices it owns and an idempotent close."""

    def __init__(self) -> None:
        self._owned: list[Any] = []
        self.closed = False

    def _own(self, device: Any) -> Any:
        self._owned.append(device)
        return device

    def off(self) -> None:
        """Outputs of this part off (inputs: nothing to do)."""

    def close(self) -> None:
        """Turn outputs off, then close the gpiozero devices; safe to call twice."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            self.off()
        for device in reversed(self._owned):
            with contextlib.suppress(Exception):
                _wake_hold_thread(device)
                device.close()
        self._owned.clear()


def _wake_hold_thread(device: Any) -> None:
    """Let the hold thread of a gpiozero ``Button`` see its stop at once.

    It looks at its stop flag only between waits of 0.1 s for a press, and ``close()`` joins it:
    every stop of the box would wait up to 0.1 s for that poll. Setting the press event as well
    as the stop flag ends its wait now (with the flag set, it fires no hold)."""
    thread = getattr(device, "_hold_thread", None)
    if thread is not None:
        thread.stopping.set()
        thread.holding.set()


# -- inputs -------------------------------------------------------------------------------------


class BigButton(_Part):
    """The big UNO button: a press posts ``button`` (dated by its edge where the factory stamps
    edges and a ``clock`` is given); holding it ``hold_s`` posts ``hold``."""

    def __init__(
        self,
        pin: int,
        *,
        factory: Any,
        post: Post,
        hold_s: float,
        debounce_ms: int,
        clock: Callable[[], int] | None = None,
    ) -> None:
        super().__init__()
        self.button = self._own(
            Button(
                pin,
                pull_up=True,
                bounce_time=debounce_ms / 1000 if debounce_ms > 0 else None,
                hold_time=hold_s,
                pin_factory=factory,
            )
        )
        # Nothing but a post in a callback: the loop thread does the work.
        if clock is not None and stamps_edges(factory):
            stamp = clock
            self.button.when_pressed = lambda: post(
                "button", at_ns=edge_time(self.button, True, stamp)
            )
        else:
            self.button.when_pressed = lambda: post("button")
        self.button.when_held = lambda: post("hold")

    @property
    def is_pressed(self) -> bool:
        """True while the button is down."""
        return bool(self.button.is_pressed)


class ExitSensor(_Part):
    """Card-exit beam: active while a card breaks it. A rising edge posts ``card``, a falling
    edge ``beam_clear``; with a ``clock``, each card is dated by its edge where the factory
    stamps edges (else by the callback's time on ``clock``)."""

    def __init__(
        self, pin: int, *, factory: Any, post: Post, clock: Callable[[], int] | None = None
    ) -> None:
        super().__init__()
        self.edges = 0
        self._lock = threading.Lock()
        self._clock = clock
        # (edge, ns) of the newest crossings: a burst that ends while the loop is behind
        # claims the cards the beam saw before its end (``crossed_after``), not the host.
        self._recent: deque[tuple[int, int]] = deque(maxlen=64)
        self._cutoff: tuple[int, Callable[[], None]] | None = None
        self.device = self._own(DigitalInputDevice(pin, pull_up=False, pin_factory=factory))
        edge_stamped = stamps_edges(factory)

        def crossed() -> None:
            at_ns = None
            if self._clock is not None:
                at_ns = edge_time(self.device, True, self._clock) if edge_stamped else self._clock()
            with self._lock:
                self.edges += 1
                edge = self.edges
                if at_ns is not None:
                    self._recent.append((edge, at_ns))
                stop = None
                if self._cutoff is not None and edge >= self._cutoff[0]:
                    stop, self._cutoff = self._cutoff[1], None
            if stop is not None:
                try:
                    stop()  # the last planned card: the feed stops now, not when the loop gets here
                except Exception:
                    log.exception("feed cutoff failed (the loop stops the feed)")
            post("card", at_ns=at_ns, edge=edge)

        self.device.when_activated = crossed
        self.device.when_deactivated = lambda: post("beam_clear")

    @property
    def is_active(self) -> bool:
        """True while the beam is broken."""
        return bool(self.device.is_active)

    def arm_cutoff(self, edge: int, stop: Callable[[], None]) -> None:
        """Call ``stop()`` from the sensor's callback when beam edge number ``edge`` comes (at
        once if it already came). Edges count from 1 since the sensor was built; the loop
        knows each card's edge from its ``card`` event."""
        with self._lock:
            passed = self.edges >= edge
            self._cutoff = None if passed else (edge, stop)
        if passed:
            stop()

    def crossed_after(self, edge: int) -> list[tuple[int, int]]:
        """``(edge, ns)`` of every crossing numbered above ``edge`` seen so far (whose ``card``
        event may still be queued)."""
        with self._lock:
            return [item for item in self._recent if item[0] > edge]

    def disarm_cutoff(self) -> None:
        """Forget an armed cutoff (the burst is over)."""
        with self._lock:
            self._cutoff = None


class Switch(_Part):
    """A switch to ground (internal pull-up): active while closed. Changes post ``switch``."""

    def __init__(self, name: str, pin: int, *, factory: Any, post: Post) -> None:
        super().__init__()
        self.name = name
        self.device = self._own(DigitalInputDevice(pin, pull_up=True, pin_factory=factory))
        self.device.when_activated = lambda: post("switch", name=name, active=True)
        self.device.when_deactivated = lambda: post("switch", name=name, active=False)

    @property
    def is_active(self) -> bool:
        """True while the switch is closed."""
        return bool(self.device.is_active)


# -- power outputs (guarded) --------------------------------------------------------------------


class _Guarded(_Part):
    """A power output whose on-time the guard watches."""

    def __init__(self, name: str, max_on_ms: int, guard: Guard) -> None:
        super().__init__()
        self.name = name
        self.max_on_ms = max_on_ms
        self._guard = guard
        self._on = False

    def _mark_on(self) -> None:
        if not self._on:
            self._guard.output_on(self.name, self.max_on_ms)  # deadline first, then the pin
            self._on = True

    def _mark_off(self) -> None:
        if self._on:
            self._on = False
            self._guard.output_off(self.name)


class MotorEjector(_Guarded):
    """Feed roller on an H-bridge: gpiozero ``Motor`` on IN1/IN2, optional PWM on EN.

    ``forward(speed)`` sets the EN duty (soft start steps come from the loop's timers);
    ``backward()`` is the unjam pulse. Without an EN pin the speed is always full.
    """

    kind = "motor"

    def __init__(
        self,
        forward: int,
        backward: int,
        enable: int | None,
        *,
        factory: Any,
        guard: Guard,
        max_on_ms: int,
        name: str = "ejector",
    ) -> None:
        super().__init__(name, max_on_ms, guard)
        try:
            self.motor = self._own(Motor(forward, backward, pwm=False, pin_factory=factory))
            self.enable = (
                self._own(PWMOutputDevice(enable, pin_factory=factory))
                if enable is not None
                else None
            )
        except Exception:
            self.close()
            raise
        self.direction = 0  # 1 forward, -1 backward, 0 stopped
        # The feed cutoff stopped it (from the sensor's callback); it stays stopped until
        # `off` or `resume`. No lock: the callback runs while the mock plant holds its own
        # lock, and the loop's pin writes go through that plant lock, so a lock here could
        # deadlock. Instead the loop looks at the flag again after its own pin writes.
        self.halted = False

    @property
    def has_speed_control(self) -> bool:
        """True when an EN pin allows a PWM soft start."""
        return self.enable is not None

    def forward(self, speed: float = 1.0) -> None:
        """Run the feed forward at ``speed`` (0-1, needs EN for anything but full). Does nothing
        after `halt` until `off` or `resume`: the planned cards are out."""
        if self.halted:
            return
        self._mark_on()
        if self.direction != 1:
            self.motor.stop()  # never both IN pins high on the bridge
            self.motor.forward()
            self.direction = 1
        if self.enable is not None:
            self.enable.value = max(0.0, min(1.0, speed))
        self._obey_halt()

    def backward(self, speed: float = 1.0) -> None:
        """Run the roller backward at ``speed`` (the unjam pulse at full speed, a pattern's whir
        or the retraction slower; needs EN for anything but full); nothing after `halt`."""
        if self.halted:
            return
        self._mark_on()
        if self.direction != -1:
            self.motor.stop()
            self.motor.backward()
            self.direction = -1
        if self.enable is not None:
            self.enable.value = max(0.0, min(1.0, speed))
        self._obey_halt()

    def _obey_halt(self) -> None:
        # A halt that came while these pins were being written: either it saw our writes and
        # undid them, or we see its flag now and stop; the motor cannot stay on after a halt.
        if self.halted:
            self._stop_pins()

    def _stop_pins(self) -> None:
        if self.enable is not None:
            self.enable.off()
        self.motor.stop()
        self.direction = 0

    def halt(self) -> None:
        """The feed cutoff (any thread): stop the motor now and keep it stopped until `off`.
        The guard is told by `off`, on the loop thread, which comes right after."""
        self.halted = True
        self._stop_pins()

    def resume(self) -> None:
        """Forget a halt (the loop, before arming the cutoff of a new burst)."""
        self.halted = False

    def off(self) -> None:
        """Stop the motor (EN low, both IN low)."""
        self._stop_pins()
        self.halted = False
        self._mark_off()


class SolenoidEjector(_Guarded):
    """Solenoid on a MOSFET: one pulse per card, with a duty-cycle cap over a sliding window.

    ``wait_ms(now_ns)`` says how long the next pulse must wait so that the on-time inside any
    ``window_ms`` stays at most ``duty_max * window_ms``; the loop schedules the pulse then.
    """

    kind = "solenoid"

    def __init__(
        self,
        pin: int,
        *,
        factory: Any,
        guard: Guard,
        max_on_ms: int,
        pulse_ms: int,
        recovery_ms: int,
        duty_max: float,
        window_ms: int,
        clock: Callable[[], int],
        name: str = "ejector",
    ) -> None:
        super().__init__(name, max_on_ms, guard)
        self.pulse_ms = pulse_ms
        self.recovery_ms = recovery_ms
        self.duty_max = duty_max
        self.window_ns = window_ms * 1_000_000
        self._clock = clock
        self._pulses: deque[tuple[int, int]] = deque()  # (start_ns, end_ns) inside the window
        self._pulse_start: int | None = None
        self.device = self._own(DigitalOutputDevice(pin, pin_factory=factory))
        self.direction = 0

    def pulse_on(self) -> None:
        """Start a pulse (the loop ends it after ``pulse_ms``)."""
        self._mark_on()
        self._pulse_start = self._clock()
        self.device.on()
        self.direction = 1

    def off(self) -> None:
        """End the pulse; its on-time joins the duty window."""
        self.device.off()
        self.direction = 0
        if self._pulse_start is not None:
            self._pulses.append((self._pulse_start, self._clock()))
            self._pulse_start = None
        self._mark_off()

    def used_ns(self, start_ns: int, end_ns: int) -> int:
        """On-time of past pulses inside [start_ns, end_ns]."""
        total = 0
        for s, e in self._pulses:
            total += max(0, min(e, end_ns) - max(s, start_ns))
        return total

    def wait_ms(self, now_ns: int | None = None) -> float:
        """Milliseconds until a ``pulse_ms`` pulse fits under the duty cap (0: now)."""
        now = self._clock() if now_ns is None else now_ns
        while self._pulses and self._pulses[0][1] <= now - self.window_ns:
            self._pulses.popleft()  # fully out of any window that could matter
        pulse = self.pulse_ms * 1_000_000
        cap = self.duty_max * self.window_ns

        def fits(t: int) -> bool:
            return self.used_ns(t + pulse - self.window_ns, t) + pulse <= cap

        if fits(now):
            return 0.0
        # used() only falls as t grows, so the earliest t that fits is found by bisection.
        lo, hi = now, now + self.window_ns
        if not fits(hi):
            return float("inf")  # a single pulse exceeds the cap: config forbids it
        while hi - lo > 100_000:  # 0.1 ms is plenty
            mid = (lo + hi) // 2
            if fits(mid):
                hi = mid
            else:
                lo = mid
        return (hi - now) / 1_000_000


class Flywheel(_Guarded):
    """Optional flywheel motor on a MOSFET gate."""

    def __init__(self, pin: int, *, factory: Any, guard: Guard, max_on_ms: int) -> None:
        super().__init__("flywheel", max_on_ms, guard)
        self.device = self._own(DigitalOutputDevice(pin, pin_factory=factory))

    def on(self) -> None:
        """Spin the flywheel."""
        self._mark_on()
        self.device.on()

    def off(self) -> None:
        """Stop the flywheel."""
        self.device.off()
        self._mark_off()


# -- feedback and aiming ------------------------------------------------------------------------


class ButtonLed(_Part):
    """PWM LED in the button; the loop's feedback timer sets its brightness."""

    def __init__(self, pin: int, *, factory: Any) -> None:
        super().__init__()
        self.led = self._own(PWMLED(pin, pin_factory=factory))

    def set(self, value: float) -> None:
        """Brightness 0-1."""
        self.led.value = max(0.0, min(1.0, value))

    def off(self) -> None:
        """LED off."""
        self.led.off()


class Buzzer(_Part):
    """Piezo buzzer (``TonalBuzzer``) for the dry-press tick."""

    def __init__(self, pin: int, *, factory: Any, tone: str) -> None:
        super().__init__()
        self.base = Tone(tone)
        self.buzzer = self._own(
            TonalBuzzer(pin, mid_tone=self.base, octaves=1, pin_factory=factory)
        )

    def tick(self, semitones_up: int = 0) -> None:
        """Sound a tone ``semitones_up`` above the base (capped to the buzzer's octave)."""
        midi = min(self.base.midi + max(0, semitones_up), self.buzzer.max_tone.midi)
        self.buzzer.play(Tone.from_midi(midi))

    def off(self) -> None:
        """Silence, the line low: on lgpio stopping the tone stops the pulses wherever they
        are, perhaps mid-pulse, high."""
        self.buzzer.stop()
        self.buzzer.pwm_device.off()


class Aim(_Part):
    """Aiming servo: one angle per seat (``firmware/servo.py`` drives the line: to the
    microsecond on lgpio, whose PWM gpiozero can only set in whole percent)."""

    def __init__(
        self,
        pin: int,
        *,
        factory: Any,
        min_angle: float,
        max_angle: float,
        seat_angles: tuple[float, ...],
    ) -> None:
        super().__init__()
        self.seat_angles = tuple(seat_angles)
        self.servo = self._own(
            make_servo(pin, factory=factory, min_angle=min_angle, max_angle=max_angle)
        )

    def aim(self, seat: int) -> float:
        """Turn to ``seat``; returns the angle."""
        angle = float(self.seat_angles[seat])
        self.servo.angle = angle
        return angle

    def off(self) -> None:
        """Stop driving the servo (it holds by friction)."""
        self.servo.detach()


# -- everything ---------------------------------------------------------------------------------


class Devices:
    """All devices of the box built from a config. ``close()`` turns every output off first.

    Optional parts are None when their pin is not configured. A part the pin library refuses (a
    pin another program holds, a pin library error) closes what was built and raises one line
    naming its ``[pins]`` key and GPIO (``pins.pin_failure``).
    """

    def __init__(
        self, config: Any, *, factory: Any, post: Post, guard: Guard, clock: Callable[[], int]
    ) -> None:
        self.factory = factory
        self.closed = False
        self._parts: list[_Part] = []
        self._pins = pins = config.pins
        limits = config.limits
        self.ejector: MotorEjector | SolenoidEjector
        self.flywheel: Flywheel | None = None
        self.led: ButtonLed | None = None
        self.buzzer: Buzzer | None = None
        self.aim: Aim | None = None
        self.hopper_empty: Switch | None = None
        self.door: Switch | None = None
        self.light: Any = None
        try:
            # Outputs first so they are low before any input can post an event.
            if config.ejector.kind == "motor":
                self.ejector = self._add(
                    ("ejector_forward", "ejector_backward", "ejector_enable"),
                    lambda: MotorEjector(
                        pins.ejector_forward,
                        pins.ejector_backward,
                        pins.ejector_enable,
                        factory=factory,
                        guard=guard,
                        max_on_ms=limits.ejector_max_on_ms,
                    ),
                )
            else:
                self.ejector = self._add(
                    ("ejector_forward",),
                    lambda: SolenoidEjector(
                        pins.ejector_forward,
                        factory=factory,
                        guard=guard,
                        max_on_ms=limits.solenoid_max_on_ms,
                        pulse_ms=config.ejector.pulse_ms,
                        recovery_ms=config.ejector.recovery_ms,
                        duty_max=limits.solenoid_duty_max,
                        window_ms=limits.solenoid_duty_window_ms,
                        clock=clock,
                    ),
                )
            if pins.flywheel is not None:
                self.flywheel = self._add(
                    ("flywheel",),
                    lambda: Flywheel(
                        pins.flywheel,
                        factory=factory,
                        guard=guard,
                        max_on_ms=limits.flywheel_max_on_ms,
                    ),
                )
            if pins.button_led is not None:
                self.led = self._add(
                    ("button_led",), lambda: ButtonLed(pins.button_led, factory=factory)
                )
            if pins.buzzer is not None:
                self.buzzer = self._add(
                    ("buzzer",),
                    lambda: Buzzer(pins.buzzer, factory=factory, tone=config.feedback.buzzer_tone),
                )
            # The colour light (RGB or WS2812; None without one): off and closed with the rest.
            self.light = self._add(
                ("light_red", "light_green", "light_blue", "light_data"),
                lambda: make_backend(pins, config.light, factory=factory, mock=is_mock(factory)),
            )
            if pins.servo is not None:
                self.aim = self._add(
                    ("servo",),
                    lambda: Aim(
                        pins.servo,
                        factory=factory,
                        min_angle=config.servo.min_angle,
                        max_angle=config.servo.max_angle,
                        seat_angles=config.servo.seat_angles,
                    ),
                )
            self.sensor = self._add(
                ("sensor",),
                lambda: ExitSensor(pins.sensor, factory=factory, post=post, clock=clock),
            )
            if pins.hopper_empty is not None:
                self.hopper_empty = self._add(
                    ("hopper_empty",),
                    lambda: Switch("hopper_empty", pins.hopper_empty, factory=factory, post=post),
                )
            if pins.door is not None:
                self.door = self._add(
                    ("door",), lambda: Switch("door", pins.door, factory=factory, post=post)
                )
            self.button = self._add(
                ("button",),
                lambda: BigButton(
                    pins.button,
                    factory=factory,
                    post=post,
                    hold_s=config.timing.hold_clear_s,
                    debounce_ms=config.timing.debounce_ms,
                    clock=clock,
                ),
            )
        except Exception:
            self.close()
            raise
        self._output_pins = dict(pins.outputs())

    def _add(self, names: tuple[str, ...], build: Callable[[], Any]) -> Any:
        """Build the part wired to ``[pins]`` ``names`` and keep it (None: nothing to keep)."""
        try:
            part = build()
        except Exception as exc:
            fitted = {
                n: getattr(self._pins, n) for n in names if getattr(self._pins, n) is not None
            }
            failure = pin_failure(exc, self.factory, fitted)
            if failure is None:
                raise
            raise failure from exc
        if part is not None:
            self._parts.append(part)
        return part

    def power_outputs(self) -> list[_Guarded]:
        """The guarded outputs (ejector, flywheel)."""
        return [p for p in self._parts if isinstance(p, _Guarded)]

    def power_off(self) -> None:
        """Ejector and flywheel off (the end of every burst)."""
        for part in self.power_outputs():
            try:
                part.off()
            except Exception:
                log.exception("turning %s off failed", part.name)

    def outputs_off(self) -> None:
        """Every output off; each part in its own try so one failure cannot keep another on."""
        for part in self._parts:
            try:
                part.off()
            except Exception:
                log.exception("turning %s off failed", type(part).__name__)

    def pin_states(self) -> dict[str, float]:
        """Output pin name -> current pin state (0 = off) as the pin factory sees it."""
        states: dict[str, float] = {}
        for name, number in self._output_pins.items():
            try:
                states[name] = float(self.factory.pin(number).state)
            except Exception:
                states[name] = float("nan")
        return states

    def close(self) -> None:
        """All outputs off, then every device closed; idempotent and safe on a half-built box."""
        if self.closed:
            return
        self.closed = True
        self.outputs_off()
        for part in reversed(self._parts):
            part.close()
