"""Safety enforced by the loop: max-on deadlines, the solenoid duty cap, stuck sensors, the door,
handler errors."""

from __future__ import annotations

import pytest

from tests.conftest import PIN_FACTORIES
from tests.firmware.conftest import QUICK_JAM, SOLENOID, assert_one_fire_per_press

# Every behaviour here holds on gpiozero's mock pins and through its lgpio backend on the
# simulated chip alike.
pytestmark = pytest.mark.parametrize("pins", PIN_FACTORIES, indirect=True)


def _on_intervals(log, name):
    """(start, end) ns of each time output ``name`` was on, from the plant's pin log."""
    intervals, start = [], None
    for pin, t, value in log:
        if pin != name:
            continue
        if value and start is None:
            start = t
        elif not value and start is not None:
            intervals.append((start, t))
            start = None
    return intervals, start


# A burst of 12 cards 60 ms apart outlasts a 600 ms max-on. The card timeout must stay under
# the max-on (the config says so), and far above the feed interval: a plant thread that a busy
# machine runs late must not read as a jam (an unjam pulse would cut the forward run short).
LONG_BURST = {
    "jam.count": 12,
    "limits.ejector_max_on_ms": 600,
    "timing.card_timeout_ms": 500,
    "plant.feed_interval_ms": 60,
}


def test_max_on_deadline_forces_the_ejector_off_and_latches_fault(make_box):
    box = make_box(LONG_BURST)
    box.daemon.press()
    fault = box.wait_kind("fault")
    assert fault["output"] == "ejector" and "max_on_ms = 600" in fault["why"]
    (fire,) = box.wait_fires(1)
    assert fire["reason"] == "fault" and fire["ejected"] < 12
    box.wait_state("fault")
    assert box.power_outputs_off()
    intervals, still_on = _on_intervals(box.plant.output_log, "ejector_forward")
    assert still_on is None and len(intervals) == 1
    # Presses while in fault are answered with the fault, and a reset leaves it.
    box.daemon.press()
    assert box.wait_fires(2)[1]["reason"] == "fault"
    assert box.command("status")["fault"] == fault["why"]
    assert box.command("clear")["error"]["code"] == "FAULT"
    assert box.command("reset") == {"ok": True, "state": "idle"}
    assert_one_fire_per_press(box)


def test_a_long_press_resets_a_fault(make_box):
    box = make_box(LONG_BURST)
    box.daemon.press()
    box.wait_state("fault")
    box.hold_button()
    box.wait_state("idle")


def test_every_output_that_is_on_has_a_deadline_armed_in_the_loop(make_box):
    box = make_box({"jam.count": 6, "plant.feed_interval_ms": 30})
    box.daemon.press()
    box.daemon.wait_for(lambda e: e["kind"] == "state" and e["to"] == "ejecting")

    def check():
        on = box.daemon.outputs_on()
        timers = box.daemon.loop.timers()
        return on, {name: timers.get(f"max_on:{name}") for name in on}

    on, armed = box.daemon.call(check)
    assert "ejector" in on and "flywheel" in on
    for name, (since, deadline) in on.items():
        limit = {"ejector": 8000, "flywheel": 15000}[name]
        assert deadline == since + limit * 1_000_000 == armed[name]
    box.wait_fires(1)
    box.wait_state("idle")
    assert box.daemon.call(box.daemon.outputs_on) == {}
    assert not any(k.startswith("max_on:") for k in box.daemon.call(box.daemon.loop.timers))


def test_solenoid_duty_is_capped_over_the_sliding_window(make_box):
    # Cap: 10 % of 200 ms = 20 ms, i.e. four 5 ms pulses. Each pulse lasts at least 5 ms and ends
    # before the next starts, so a fifth pulse start within 195 ms of four others would break it.
    box = make_box(
        {
            **SOLENOID,
            "jam.count": 10,
            "limits.solenoid_duty_max": 0.1,
            "limits.solenoid_duty_window_ms": 200,
        }
    )
    box.daemon.press()
    (fire,) = box.wait_fires(1, timeout=15)
    assert (fire["reason"], fire["ejected"]) == ("fired", 10)
    intervals, _ = _on_intervals(box.plant.output_log, "ejector_forward")
    starts = [s for s, _ in intervals]
    assert len(starts) == 10
    for i in range(len(starts) - 4):
        assert starts[i + 4] - starts[i] > 195_000_000
    # Every pulse but the last ran its full width (the last is cut when its card is counted).
    assert all(e - s >= 5_000_000 for s, e in intervals[:-1])


def test_sensor_stuck_high_trips_fault_without_feeding(make_box):
    box = make_box({"pins.flywheel": None})
    box.plant.stick_sensor(True)
    box.daemon.press()
    fault = box.wait_kind("fault")
    assert fault["output"] == "sensor"
    assert box.wait_fires(1)[0]["reason"] == "fault"
    assert box.plant.ejected_total == 0
    assert not [v for name, _, v in box.plant.output_log if name == "ejector_forward" and v]
    box.wait_state("fault")


def test_sensor_stuck_low_reads_as_a_jam(make_box):
    box = make_box({**QUICK_JAM, "limits.unjam_retries": 1})
    box.plant.stick_sensor(False)
    box.plant.stall()  # and nothing moves: the beam is blind either way
    box.daemon.press()
    assert box.wait_kind("jam")["retries"] == 1
    box.wait_state("jammed")
    assert box.power_outputs_off()


def test_opening_the_door_during_a_burst_trips_fault(make_box):
    box = make_box({"jam.count": 12, "plant.feed_interval_ms": 40, "plant.beam_ms": 4})
    box.daemon.press()
    box.daemon.wait_for(lambda e: e["kind"] == "state" and e["to"] == "ejecting")
    box.plant.open_door()
    assert box.wait_kind("fault")["output"] == "door"
    box.wait_state("fault")
    assert box.power_outputs_off()
    # With the door open presses are refused, not fired.
    box.plant.close_door()
    box.command("reset")
    box.plant.open_door()
    box.daemon.press()
    assert box.wait_fires(2)[1]["reason"] == "locked"


def test_an_exception_in_a_handler_turns_outputs_off_and_latches_fault(make_box):
    box = make_box({"jam.count": 6, "plant.feed_interval_ms": 30})
    calls = {"n": 0}
    original = box.daemon.handlers["card"]

    def broken(event):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("bug in card counting")
        original(event)

    box.daemon.handlers["card"] = broken
    box.daemon.press()
    fault = box.wait_kind("fault")
    assert fault["output"] == "internal" and "RuntimeError" in fault["why"]
    (fire,) = box.wait_fires(1)
    assert fire["reason"] == "fault"
    box.wait_state("fault")
    assert box.power_outputs_off()
    assert box.daemon.loop.alive  # the loop survived and still answers
    assert box.command("status")["state"] == "fault"


def test_limits_cannot_be_raised_over_the_link(make_box):
    box = make_box()
    for key in ("ejector_max_on_ms", "press_queue", "unjam_retries"):
        assert box.command("model.set", params={key: 1})["error"]["code"] == "BAD_ARG"
    assert box.daemon.config.limits.ejector_max_on_ms == 8000
