"""The burst drivers step by step on a fake clock: no loop thread, no plant, no wall time.

The daemon is started without its thread (``start(thread=False)``); the test moves the
``FakeClock`` and runs what is due with ``loop.run_pending()``, and plays the exit sensor itself,
so each step of the motor and solenoid sequences is seen exactly when the config says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from firmware.loop import FakeClock

# No flywheel, door or hopper switch, no plant: the test is the mechanism.
BARE: dict[str, Any] = {
    "pins.flywheel": None,
    "pins.door": None,
    "pins.hopper_empty": None,
    "jam.mode": "fixed",
    "jam.count": 2,
    "timing.cooldown_ms": 50,
    "timing.card_timeout_ms": 200,
    "timing.settle_ms": 30,
    "limits.unjam_retries": 2,
}


class Stepped:
    """A daemon on mock pins whose loop the test runs, on a fake clock."""

    def __init__(self, daemon: Any, factory: Any, clock: FakeClock) -> None:
        self.daemon, self.factory, self.clock = daemon, factory, clock

    def step(self, ms: float = 0) -> None:
        """Move the clock ``ms`` and run every event and timer that is due."""
        self.clock.advance(ms)
        self.daemon.loop.run_pending()

    def pin(self, name: str) -> float:
        """State of the output pin ``[pins] name``."""
        return float(self.factory.pin(getattr(self.daemon.config.pins, name)).state)

    def card(self) -> None:
        """A card crosses the exit beam (rising, then falling edge), handled at once."""
        sensor = self.factory.pin(self.daemon.config.pins.sensor)
        sensor.drive_high()
        sensor.drive_low()
        self.step()

    @property
    def state(self) -> str:
        return self.daemon.state

    def kinds(self, kind: str) -> list[dict]:
        return [e for e in self.daemon.events if e["kind"] == kind]


@pytest.fixture
def stepped(mock_factory: Any, make_config: Callable[..., Any]) -> Iterator[Callable[..., Stepped]]:
    """``stepped(overrides) -> Stepped``, booted; stopped after the test."""
    from firmware.daemon import Daemon

    made: list[Any] = []

    def make(overrides: dict[str, Any] | None = None) -> Stepped:
        clock = FakeClock()
        daemon = Daemon(
            make_config({**BARE, **(overrides or {})}), factory=mock_factory, clock=clock
        )
        made.append(daemon)
        daemon.start(thread=False)
        assert daemon.state == "idle"
        return Stepped(daemon, mock_factory, clock)

    yield make
    for daemon in made:
        daemon.stop()


MOTOR_SOFT = {"ejector.soft_start_ms": 50}


def test_motor_soft_start_ramps_in_five_steps_then_feeds_at_full_speed(stepped):
    box = stepped(MOTOR_SOFT)
    box.daemon.press("host")
    box.step()
    assert box.state == "spinup" and box.pin("ejector_forward") == 1
    duties = [box.pin("ejector_enable")]
    for _ in range(4):
        box.step(9.9)  # not yet: each step is 10 ms
        assert box.pin("ejector_enable") == duties[-1]
        box.step(0.1)
        duties.append(box.pin("ejector_enable"))
    assert duties == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
    assert box.state == "ejecting"


def test_motor_without_a_card_reverses_each_card_timeout_then_latches_jammed(stepped):
    box = stepped({"ejector.soft_start_ms": 0, "ejector.reverse_pulse_ms": 20})
    box.daemon.press("host")
    box.step()
    assert box.state == "ejecting"
    for retry in (1, 2):
        box.step(199)
        assert box.pin("ejector_backward") == 0
        box.step(1)  # card timeout: one reverse pulse
        assert (box.pin("ejector_backward"), box.pin("ejector_forward")) == (1, 0), retry
        box.step(20)  # the pulse ends: forward again, the wait for a card starts over
        assert (box.pin("ejector_backward"), box.pin("ejector_forward")) == (0, 1), retry
    box.step(200)  # retries used up
    assert box.state == "jammed"
    assert box.pin("ejector_forward") == box.pin("ejector_backward") == 0
    (jam,) = box.kinds("jam")
    (fire,) = box.kinds("fire")
    assert jam["retries"] == fire["retries"] == 2
    assert (fire["reason"], fire["ejected"]) == ("jammed", 0)


def test_a_card_rearms_the_card_timeout(stepped):
    box = stepped({"ejector.soft_start_ms": 0, "jam.count": 3})
    box.daemon.press("host")
    box.step()
    box.step(150)
    box.card()
    box.step(150)  # 300 ms since feed start, 150 since the card: no timeout yet
    assert box.pin("ejector_backward") == 0 and box.state == "ejecting"
    box.step(50)
    assert box.pin("ejector_backward") == 1


def test_motor_settle_window_counts_a_coasting_card_as_extra(stepped):
    box = stepped({"ejector.soft_start_ms": 0})
    box.daemon.press("host")
    box.step()
    box.card()
    box.card()  # the planned two: the feed stops, the burst settles
    assert box.pin("ejector_forward") == 0 and box.state == "ejecting"
    assert not box.kinds("fire")
    box.step(20)
    box.card()  # coasting card inside the 30 ms window
    box.step(9)
    assert not box.kinds("fire")
    box.step(1)
    (fire,) = box.kinds("fire")
    assert (fire["planned"], fire["ejected"], fire["extra"], fire["reason"]) == (2, 3, 1, "fired")
    assert box.state == "cooldown"
    box.step(50)
    assert box.state == "idle"
    box.card()  # after the burst: a stray, never dropped
    assert box.kinds("stray")[0]["after_press_id"] == fire["press_id"]


def _queue_cards(box, n: int) -> None:
    """``n`` cards cross the beam while the loop is busy elsewhere: their events stay queued."""
    sensor = box.factory.pin(box.daemon.config.pins.sensor)
    for _ in range(n):
        sensor.drive_high()
        sensor.drive_low()


@pytest.mark.parametrize("end", ["stop", "trip"])
def test_a_burst_ended_while_its_cards_are_queued_counts_them(stepped, end):
    # A loop that is behind (busy machine) handles SIGTERM or a trip before the card events
    # of cards that left under the running motor: they are this burst's, not strays.
    box = stepped({"ejector.soft_start_ms": 0, "jam.count": 5})
    box.daemon.press("host")
    box.step()
    box.card()
    _queue_cards(box, 2)
    if end == "stop":
        box.daemon.stop()
    else:
        box.daemon.safety.trip("ejector", "test trip")
    box.step()  # the queued events come now
    (fire,) = box.kinds("fire")
    assert (fire["ejected"], fire["reason"]) == (3, "stopping" if end == "stop" else "fault")
    assert len(fire["card_ms"]) == 3
    assert not box.kinds("stray")


SOLENOID = {
    "ejector.kind": "solenoid",
    "pins.ejector_backward": None,
    "pins.ejector_enable": None,
    "ejector.soft_start_ms": 0,
    "ejector.pulse_ms": 10,
    "ejector.recovery_ms": 15,
    "limits.solenoid_max_on_ms": 50,
    "limits.solenoid_duty_max": 0.9,
    "limits.solenoid_duty_window_ms": 1000,
}


def test_solenoid_pulses_once_per_card_with_recovery_between(stepped):
    box = stepped(SOLENOID)
    box.daemon.press("host")
    box.step()
    assert box.state == "ejecting" and box.pin("ejector_forward") == 1
    box.step(9.9)
    assert box.pin("ejector_forward") == 1
    box.step(0.1)
    assert box.pin("ejector_forward") == 0  # pulse over
    box.card()
    box.step(14.9)
    assert box.pin("ejector_forward") == 0  # recovering
    box.step(0.1)
    assert box.pin("ejector_forward") == 1  # the second card's pulse
    box.step(10)
    box.card()
    (fire,) = box.kinds("fire")
    assert (fire["ejected"], fire["reason"]) == (2, "fired")
    assert box.state == "cooldown"  # no settle window for a solenoid


def test_solenoid_waits_for_the_duty_cap_before_the_next_pulse(stepped):
    # 15 % of 100 ms: after a 10 ms pulse at 0, the next fits only once at most 5 ms of the
    # first lies inside the window before it ends: at t = 95 ms.
    box = stepped(
        {**SOLENOID, "limits.solenoid_duty_max": 0.15, "limits.solenoid_duty_window_ms": 100}
    )
    box.daemon.press("host")
    box.step()
    box.step(10)
    box.card()
    box.step(84.9)
    assert box.pin("ejector_forward") == 0  # recovered at 25 ms, but the cap holds it back
    box.step(0.2)
    assert box.pin("ejector_forward") == 1


def test_solenoid_with_no_card_pulses_again_then_latches_jammed(stepped):
    box = stepped(SOLENOID)
    box.daemon.press("host")
    box.step()
    pulses = 1
    for _ in range(2):
        box.step(200)  # card timeout: one more pulse is the retry
        pulses += box.pin("ejector_forward") == 1
        box.step(10)
    assert pulses == 3
    box.step(200)
    assert box.state == "jammed"
    assert box.kinds("fire")[0]["retries"] == 2
