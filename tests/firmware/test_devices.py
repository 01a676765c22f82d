"""Device wrappers on mock pins: guards, the H-bridge, the solenoid duty cap, inputs, close()."""

from __future__ import annotations

import threading

import pytest

from firmware.devices import Devices, ExitSensor, MotorEjector, SolenoidEjector, Switch
from firmware.loop import FakeClock


class RecordingGuard:
    def __init__(self) -> None:
        self.log: list[tuple[str, str, int | None]] = []

    def output_on(self, name: str, max_on_ms: int) -> None:
        self.log.append(("on", name, max_on_ms))

    def output_off(self, name: str) -> None:
        self.log.append(("off", name, None))


class Posts:
    def __init__(self) -> None:
        self.items: list[tuple[str, dict]] = []
        self.cond = threading.Condition()

    def __call__(self, kind: str, **data) -> None:
        with self.cond:
            self.items.append((kind, data))
            self.cond.notify_all()

    def wait(self, kind: str, timeout: float = 5.0) -> dict:
        with self.cond:
            assert self.cond.wait_for(lambda: any(k == kind for k, _ in self.items), timeout)
            return next(d for k, d in self.items if k == kind)


def test_motor_reports_on_and_off_to_the_guard_once(mock_factory):
    guard = RecordingGuard()
    motor = MotorEjector(23, 24, 12, factory=mock_factory, guard=guard, max_on_ms=500)
    motor.forward(0.2)
    motor.forward(0.6)
    motor.backward()
    motor.off()
    motor.off()
    assert guard.log == [("on", "ejector", 500), ("off", "ejector", None)]
    motor.close()


def test_motor_never_drives_both_bridge_inputs_high(mock_factory):
    motor = MotorEjector(23, 24, 12, factory=mock_factory, guard=RecordingGuard(), max_on_ms=500)
    fwd, back, en = (mock_factory.pin(n) for n in (23, 24, 12))
    seen = []
    for action in (lambda: motor.forward(0.4), motor.backward, motor.forward, motor.off):
        action()
        seen.append((fwd.state, back.state, en.state))
    assert seen == [(1, 0, 0.4), (0, 1, 1.0), (1, 0, 1.0), (0, 0, 0)]
    for pin in (fwd, back):
        high = [s.state for s in pin.states]
        assert high  # both pins were exercised
    motor.close()


def test_close_is_idempotent_and_turns_outputs_off_first(mock_factory):
    guard = RecordingGuard()
    motor = MotorEjector(23, 24, None, factory=mock_factory, guard=guard, max_on_ms=500)
    motor.forward()
    motor.close()
    motor.close()
    assert mock_factory.pin(23).state == 0 and guard.log[-1] == ("off", "ejector", None)
    assert motor.closed


def test_solenoid_wait_is_zero_until_the_duty_cap_is_reached():
    clock = FakeClock(start_ns=0)
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    sol = SolenoidEjector(
        23, factory=factory, guard=RecordingGuard(), max_on_ms=50, pulse_ms=10,
        recovery_ms=0, duty_max=0.2, window_ms=100, clock=clock,
    )  # fmt: skip
    # Cap: 20 ms on per 100 ms window -> two 10 ms pulses.
    for _ in range(2):
        assert sol.wait_ms() == 0
        sol.pulse_on()
        clock.advance(10)
        sol.off()
    # The next pulse must wait until the first pulse starts leaving the window:
    # at t the window is [t-90, t+10]; used must be <= 10 ms -> t - 90 >= 10 -> t >= 100.
    assert sol.wait_ms() == pytest.approx(80, abs=0.2)
    clock.advance(80)
    assert sol.wait_ms() == 0
    factory.reset()


def test_solenoid_pulse_longer_than_the_cap_never_fits():
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    sol = SolenoidEjector(
        23, factory=factory, guard=RecordingGuard(), max_on_ms=50, pulse_ms=30,
        recovery_ms=0, duty_max=0.1, window_ms=100, clock=FakeClock(),
    )  # fmt: skip
    assert sol.wait_ms() == float("inf")
    factory.reset()


def test_exit_sensor_counts_rising_edges_and_posts_them(mock_factory):
    posts = Posts()
    sensor = ExitSensor(27, factory=mock_factory, post=posts)
    pin = mock_factory.pin(27)
    for _ in range(3):
        pin.drive_high()
        pin.drive_low()
    assert sensor.edges == 3
    kinds = [k for k, _ in posts.items]
    assert kinds.count("card") == 3 and kinds.count("beam_clear") == 3
    assert [d["edge"] for k, d in posts.items if k == "card"] == [1, 2, 3]
    sensor.close()


def test_switch_to_ground_is_active_when_closed(mock_factory):
    posts = Posts()
    switch = Switch("door", 5, factory=mock_factory, post=posts)
    assert not switch.is_active  # pull-up: open
    mock_factory.pin(5).drive_low()
    assert switch.is_active
    assert posts.wait("switch") == {"name": "door", "active": True}
    switch.close()


def _config(make_config, **overrides):
    return make_config(overrides)


def test_devices_build_every_fitted_part_and_close_outputs_first(mock_factory, make_config):
    cfg = make_config()
    guard = RecordingGuard()
    posts = Posts()
    devices = Devices(cfg, factory=mock_factory, post=posts, guard=guard, clock=FakeClock())
    assert devices.flywheel and devices.led and devices.buzzer and devices.aim
    assert devices.hopper_empty and devices.door
    devices.ejector.forward()
    devices.flywheel.on()
    devices.led.set(1)
    devices.buzzer.tick(2)
    devices.close()
    devices.close()
    assert all(v == 0 for v in devices.pin_states().values())
    assert sorted(n for kind, n, _ in guard.log if kind == "off") == ["ejector", "flywheel"]


def test_the_button_posts_a_press_and_a_hold(mock_factory, make_config):
    cfg = make_config()
    posts = Posts()
    devices = Devices(
        cfg, factory=mock_factory, post=posts, guard=RecordingGuard(), clock=FakeClock()
    )
    pin = mock_factory.pin(cfg.pins.button)
    pin.drive_low()
    posts.wait("button")
    posts.wait("hold", timeout=5)  # after hold_clear_s (0.5 s in the fast config)
    pin.drive_high()
    devices.close()


def test_a_failed_build_closes_what_it_built(mock_factory, make_config):
    cfg = make_config()
    # Someone else holds the sensor pin: the build fails after the outputs were made.
    from gpiozero import DigitalOutputDevice

    squatter = DigitalOutputDevice(cfg.pins.sensor, pin_factory=mock_factory)
    with pytest.raises(Exception):  # noqa: B017 - gpiozero's GPIOPinInUse
        Devices(cfg, factory=mock_factory, post=Posts(), guard=RecordingGuard(), clock=FakeClock())
    # The ejector pin was released: it can be claimed again.
    again = DigitalOutputDevice(cfg.pins.ejector_forward, pin_factory=mock_factory)
    again.close()
    squatter.close()
