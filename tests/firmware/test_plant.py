"""The plant: the simulated mechanism on mock pins."""

from __future__ import annotations

import json

import pytest
from gpiozero import DigitalInputDevice, DigitalOutputDevice, Motor


@pytest.fixture
def rig(mock_factory, make_config, tmp_path):
    """A plant on the fast config with bare gpiozero devices standing in for the daemon's."""
    from firmware.plant import Plant

    made = []

    def make(overrides=None, *, state_path=None):
        cfg = make_config(overrides)
        pins = cfg.pins
        motor = Motor(pins.ejector_forward, pins.ejector_backward, pwm=False,
                      pin_factory=mock_factory)  # fmt: skip
        enable = DigitalOutputDevice(pins.ejector_enable, pin_factory=mock_factory)
        sensor = DigitalInputDevice(pins.sensor, pull_up=False, pin_factory=mock_factory)
        empty = DigitalInputDevice(pins.hopper_empty, pull_up=True, pin_factory=mock_factory)
        plant = Plant(cfg.plant, mock_factory, pins, state_path=state_path, kind="motor").start()
        made.append((plant, motor, enable, sensor, empty))
        return plant, motor, enable, sensor, empty

    yield make
    for plant, *devices in made:
        plant.stop()
        for d in devices:
            d.close()


def test_cards_cross_while_the_motor_runs_forward(rig):
    plant, motor, enable, sensor, _ = rig()
    edges = []
    sensor.when_activated = lambda: edges.append(1)
    motor.forward()
    enable.on()
    assert plant.wait_cards(4, timeout=5)
    motor.stop()
    total = plant.ejected_total
    assert plant.hopper == 60 - total
    assert len(plant.crossings) == total
    gaps = [b - a for a, b in zip(plant.crossings, plant.crossings[1:], strict=False)]
    assert all(gap >= 12_000_000 for gap in gaps)  # 15 ms +/- 3 ms jitter
    assert not plant.wait_cards(total + 1, timeout=0.1)  # motor off: nothing more
    assert len(edges) >= total - 1


def test_no_cards_without_enable_or_in_reverse(rig):
    plant, motor, enable, _, _ = rig()
    motor.forward()  # EN low: the bridge is off
    assert not plant.wait_cards(1, timeout=0.1)
    enable.on()
    motor.backward()
    assert not plant.wait_cards(1, timeout=0.1)


def test_running_empty_closes_the_hopper_switch(rig):
    plant, motor, enable, _, empty = rig()
    plant.run_empty_after(2)
    assert not empty.is_active
    enable.on()
    motor.forward()
    assert plant.wait_cards(2, timeout=5)
    assert not plant.wait_cards(3, timeout=0.1)
    assert plant.hopper == 0 and empty.is_active
    plant.load(5)
    assert plant.hopper == 5 and not empty.is_active


def test_stall_stops_cards_until_fixed(rig):
    plant, motor, enable, _, _ = rig()
    plant.stall()
    enable.on()
    motor.forward()
    assert not plant.wait_cards(1, timeout=0.1)
    plant.fix()
    assert plant.wait_cards(1, timeout=5)


def test_misfeeds_skip_card_slots_and_a_reverse_regrips(rig):
    plant, motor, enable, _, _ = rig()
    plant.misfeed(1000)
    enable.on()
    motor.forward()
    assert not plant.wait_cards(1, timeout=0.1)
    motor.backward()
    motor.forward()
    assert plant.wait_cards(1, timeout=5)


def test_a_stuck_sensor_ignores_cards(rig):
    plant, motor, enable, sensor, _ = rig()
    plant.stick_sensor(True)
    assert sensor.is_active
    plant.stick_sensor(False)
    edges = []
    sensor.when_activated = lambda: edges.append(1)
    enable.on()
    motor.forward()
    assert plant.wait_cards(2, timeout=5)
    motor.stop()
    assert edges == []  # cards left, the beam never saw them
    plant.unstick()  # a card may still be in the beam; it leaves within beam_ms
    assert sensor.wait_for_inactive(timeout=5)


def test_state_file_keeps_the_hopper_across_restarts(rig, tmp_path):
    path = tmp_path / "plant.json"
    plant, motor, enable, _, _ = rig(state_path=path)
    enable.on()
    motor.forward()
    assert plant.wait_cards(3, timeout=5)
    motor.stop()
    plant.stop()
    saved = json.loads(path.read_text())
    assert saved == {"hopper": plant.hopper, "ejected_total": plant.ejected_total}
    from firmware.plant import Plant

    again = Plant(plant.config, plant.factory, plant.pins, state_path=path)
    assert (again.hopper, again.ejected_total) == (saved["hopper"], saved["ejected_total"])


def test_the_same_seed_gives_the_same_jitter(make_config, mock_factory):
    from firmware.plant import Plant

    cfg = make_config()
    a = Plant(cfg.plant, mock_factory, cfg.pins)
    b = Plant(cfg.plant, mock_factory, cfg.pins)
    assert [a._interval() for _ in range(20)] == [b._interval() for _ in range(20)]
    assert len({a._interval() for _ in range(20)}) > 1


def test_solenoid_plant_feeds_one_card_per_pulse(mock_factory, make_config):
    from firmware.plant import Plant
    from tests.firmware.conftest import SOLENOID

    cfg = make_config(SOLENOID)
    gate = DigitalOutputDevice(cfg.pins.ejector_forward, pin_factory=mock_factory)
    with Plant(cfg.plant, mock_factory, cfg.pins, kind="solenoid") as plant:
        for n in range(1, 4):
            gate.on()
            gate.off()
            assert plant.wait_cards(n, timeout=5)
        assert not plant.wait_cards(4, timeout=0.1)
    gate.close()
