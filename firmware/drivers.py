"""Burst drivers: how the ejector moves the planned cards, one object per ejector kind.

The daemon picks one driver from ``[ejector] kind`` when it is built (:func:`driver_for`); the
in-flight record (``firmware/inflight.py``) calls it through one small interface and never asks
which kind it has:

- ``start_feed(burst) -> bool``: the feed starts (``burst.feed_ns`` is set); True when it is at
  speed at once, else the driver calls ``box.model.spun_up`` itself later (a soft start).
- ``at_speed(burst)``: entered ``ejecting``.
- ``card(burst)``: a planned card crossed the beam and more are to come.
- ``unjam(burst)``: no card for ``card_timeout_ms``; one retry (the in-flight record counts them).
- ``stop()``: the burst is over: the driver's timers dropped (outputs go off with the devices).
- ``coasts``: True when cards can still come after the feed stops (a roller): the settle window.
- ``checks()``: the driver's self-test lines ``(name, ok, detail)``.

:class:`MotorDriver` (feed roller on an H-bridge): PWM soft start in ``SOFT_START_STEPS`` steps,
the feed cutoff armed on the sensor at the last planned card, reverse pulses to unjam.
:class:`SolenoidDriver`: one pulse per card of ``pulse_ms``, ``recovery_ms`` before the next,
each pulse waiting as long as the duty cap needs (a pulse that can never fit trips ``fault``).
Every step is a loop timer, so both run on a fake clock in tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.feature import Feature
from firmware.loop import Event

if TYPE_CHECKING:
    from firmware.daemon import Daemon
    from firmware.devices import MotorEjector, SolenoidEjector
    from firmware.inflight import Burst

SOFT_START_STEPS = 5  # PWM ramp steps of the feed motor's soft start


class BurstDriver(Feature):
    """The interface both drivers share (see the module docstring)."""

    kind = ""
    coasts = False
    TIMERS: tuple[str, ...] = ()

    def start_feed(self, burst: Burst) -> bool:
        """Start the feed; True when it is at speed already."""
        raise NotImplementedError

    def at_speed(self, burst: Burst) -> None:
        """Entered ``ejecting``."""

    def card(self, burst: Burst) -> None:
        """A planned card is out and more are to come."""

    def unjam(self, burst: Burst) -> None:
        """One unjam retry after a card timeout."""
        raise NotImplementedError

    def resume_feed(self, burst: Burst) -> None:
        """Feed again after a motion pattern's pause (``burst.left`` more cards)."""
        raise NotImplementedError

    def retract(self, burst: Burst) -> int:
        """Start the reverse phase after the planned cards are out; its length in ms (0: none)."""
        return 0

    def stop(self) -> None:
        """Drop this driver's timers (the burst is over)."""
        for name in self.TIMERS:
            self.box.loop.cancel_timer(name)

    def checks(self) -> list[tuple[str, bool, str]]:
        """Self-test lines ``(name, ok, detail)`` for this ejector."""
        return []


class MotorDriver(BurstDriver):
    """Feed roller: soft start, feed cutoff at the last planned card, reverse pulses."""

    kind = "motor"
    coasts = True
    TIMERS = ("ramp", "reverse", "retract")

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.ramp_step = 0
        box.on_event("ramp", self._on_ramp)
        box.on_event("reverse_done", self._on_reverse_done)
        box.on_event("retract_done", self._on_retract_done)

    @property
    def ejector(self) -> MotorEjector:
        """The feed motor (built with the devices)."""
        return self.box.devices_built().ejector  # type: ignore[return-value]

    def start_feed(self, burst: Burst) -> bool:
        box = self.box
        ejector = self.ejector
        # The sensor stops the feed itself at the last planned card (devices.py: feed cutoff);
        # cards still on their way count in this burst from the card events.
        ejector.resume()
        box.devices_built().sensor.arm_cutoff(box.inflight.last_edge + burst.left, ejector.halt)
        box.inflight.arm_card_timeout()
        soft = box.config.ejector.soft_start_ms
        if soft > 0 and ejector.has_speed_control:
            ejector.forward(1 / SOFT_START_STEPS)
            self.ramp_step = 1
            box.loop.set_timer("ramp", soft / SOFT_START_STEPS, "ramp")
            return False
        ejector.forward(1.0)
        return True

    def _on_ramp(self, event: Event) -> None:
        box = self.box
        if box.inflight.counting() is None or not box.may("spun_up"):
            return
        ejector = self.ejector
        if ejector.direction != 1:
            return  # an unjam pulse is running; the ramp resumes when it ends at full speed
        self.ramp_step += 1
        ejector.forward(min(1.0, self.ramp_step / SOFT_START_STEPS))
        if self.ramp_step >= SOFT_START_STEPS:
            box.model.spun_up(why="soft start done")
        else:
            box.loop.set_timer("ramp", box.config.ejector.soft_start_ms / SOFT_START_STEPS, "ramp")

    def card(self, burst: Burst) -> None:
        self.box.inflight.arm_card_timeout()

    def resume_feed(self, burst: Burst) -> None:
        box = self.box
        ejector = self.ejector
        ejector.resume()
        box.devices_built().sensor.arm_cutoff(box.inflight.last_edge + burst.left, ejector.halt)
        box.inflight.arm_card_timeout()
        ejector.forward(burst.feed_speed if ejector.has_speed_control else 1.0)

    def retract(self, burst: Burst) -> int:
        """``[ejector] retract_ms`` backwards at ``retract_speed`` (under the same max-on
        guard as any motor run; the config keeps it below ``ejector_max_on_ms``)."""
        cfg = self.box.config.ejector
        if cfg.retract_ms <= 0:
            return 0
        self.ejector.backward(cfg.retract_speed)
        burst.retract_ns[:] = [self.box.clock()]
        self.box.loop.set_timer("retract", cfg.retract_ms, "retract_done")
        return cfg.retract_ms

    def _on_retract_done(self, event: Event) -> None:
        self.ejector.off()
        burst = self.box.inflight.burst
        if burst is not None and len(burst.retract_ns) == 1:
            burst.retract_ns.append(self.box.clock())

    def unjam(self, burst: Burst) -> None:
        self.ejector.backward()
        self.box.loop.set_timer("reverse", self.box.config.ejector.reverse_pulse_ms, "reverse_done")

    def _on_reverse_done(self, event: Event) -> None:
        box = self.box
        burst = box.inflight.burst
        if burst is None or burst.settling:
            return
        self.ejector.forward(1.0)
        box.move("spun_up", "soft start cut short by an unjam pulse")  # if still in spinup
        box.inflight.arm_card_timeout()


class SolenoidDriver(BurstDriver):
    """Solenoid: a pulse per card, recovery between pulses, the duty cap's wait before each."""

    kind = "solenoid"
    TIMERS = ("pulse",)

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.awaiting_card = False  # the last pulse's card has not crossed yet
        self.recovered = True  # recovery time after the last pulse has passed
        box.on_event("pulse_next", lambda event: self.pulse())
        box.on_event("pulse_off", self._on_pulse_off)
        box.on_event("pulse_recovered", self._on_pulse_recovered)

    @property
    def ejector(self) -> SolenoidEjector:
        """The solenoid (built with the devices)."""
        return self.box.devices_built().ejector  # type: ignore[return-value]

    def start_feed(self, burst: Burst) -> bool:
        self.awaiting_card, self.recovered = False, True
        return True  # the first pulse comes on entering ``ejecting``

    def at_speed(self, burst: Burst) -> None:
        self.pulse()

    def pulse(self) -> None:
        """One pulse, as soon as the duty cap allows."""
        box = self.box
        burst = box.inflight.burst
        if burst is None or self.awaiting_card:
            return
        ejector = self.ejector
        wait = ejector.wait_ms()
        if wait == float("inf"):
            box.safety.trip("ejector", "solenoid pulse longer than the duty cap allows")
            return
        if wait > 0:
            box.loop.set_timer("pulse", wait, "pulse_next")
            return
        if burst.feed_ns is None:
            burst.feed_ns = box.clock()
        ejector.pulse_on()
        self.awaiting_card = True
        self.recovered = False
        box.loop.set_timer("pulse", ejector.pulse_ms, "pulse_off")
        box.inflight.arm_card_timeout()

    def _on_pulse_off(self, event: Event) -> None:
        ejector = self.ejector
        ejector.off()
        self.box.loop.set_timer("pulse", ejector.recovery_ms, "pulse_recovered")

    def _on_pulse_recovered(self, event: Event) -> None:
        burst = self.box.inflight.burst
        if burst is None:
            return
        self.recovered = True
        if not self.awaiting_card and burst.left > 0:
            self.pulse()

    def card(self, burst: Burst) -> None:
        self.awaiting_card = False
        self.box.loop.cancel_timer("card_timeout")
        if self.recovered:
            self.pulse()

    def resume_feed(self, burst: Burst) -> None:
        # a pattern's pause is longer than any recovery: pulse at once (the duty cap still rules)
        self.awaiting_card, self.recovered = False, True
        self.pulse()

    def unjam(self, burst: Burst) -> None:
        self.awaiting_card = False
        self.pulse()

    def checks(self) -> list[tuple[str, bool, str]]:
        fits = self.ejector.wait_ms(self.box.clock()) != float("inf")
        return [("duty_cap", fits, "one pulse fits under the duty cap")]


DRIVERS: dict[str, type[BurstDriver]] = {"motor": MotorDriver, "solenoid": SolenoidDriver}


def driver_for(box: Daemon, config: Any) -> BurstDriver:
    """The burst driver of ``[ejector] kind`` (chosen once, when the daemon is built)."""
    return DRIVERS[config.ejector.kind](box)
