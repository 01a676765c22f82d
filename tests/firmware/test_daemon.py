"""The daemon on mock pins with the plant: presses, bursts, queues, jams, empty hopper, commands."""

from __future__ import annotations

import pytest

from firmware.journal import MemoryJournal
from tests.conftest import PIN_FACTORIES
from tests.firmware.conftest import QUICK_JAM, assert_one_fire_per_press
from tests.wait import wait_until
from wire import protocol

# Every behaviour here holds on gpiozero's mock pins and through its lgpio backend on the
# simulated chip alike.
pytestmark = pytest.mark.parametrize("pins", PIN_FACTORIES, indirect=True)


def test_press_fires_the_planned_cards(make_box):
    box = make_box({"jam.count": 3})
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert fire["planned"] == 3
    assert fire["ejected"] == 3
    assert fire["reason"] == "fired"
    assert len(fire["card_ms"]) == 3
    assert fire["card_ms"] == sorted(fire["card_ms"])
    assert fire["first_card_ms"] == fire["card_ms"][0]
    assert fire["spinup_ms"] is not None and fire["total_ms"] >= fire["card_ms"][-1]
    assert box.plant.ejected_total == 3
    assert fire["hopper"] == 60 - 3 == box.plant.hopper
    box.wait_state("idle")
    assert box.power_outputs_off()
    assert_one_fire_per_press(box)


def test_press_event_comes_before_its_fire_and_state_goes_through_the_burst(make_box):
    box = make_box()
    box.daemon.press()
    box.wait_fires(1)
    box.wait_state("idle")
    kinds = [(e["kind"], e.get("to")) for e in box.daemon.events]
    assert kinds.index(("press", None)) < kinds.index(("fire", None))
    path = [e["to"] for e in box.daemon.events if e["kind"] == "state"]
    assert path == ["idle", "spinup", "ejecting", "cooldown", "idle"]


def test_dry_presses_fire_nothing_and_blink_faster_until_it_fires(make_box):
    box = make_box({"jam.mode": "pattern", "jam.pattern": [0, 0, 2]})
    rates = []
    for n in range(3):
        box.daemon.press()
        box.wait_fires(n + 1)
        box.wait_state("idle")
        rates.append(box.daemon.call(lambda: box.daemon.feedback_hz))
    dry1, dry2, fired = box.fires()
    assert (dry1["reason"], dry1["planned"], dry1["ejected"], dry1["dry_streak"]) == (
        "dry",
        0,
        0,
        0,
    )
    assert (dry2["reason"], dry2["dry_streak"]) == ("dry", 1)
    assert (fired["reason"], fired["ejected"], fired["dry_streak"]) == ("fired", 2, 2)
    assert rates[0] is not None and rates[1] > rates[0]
    assert rates[2] is None  # fired: the LED is steady again
    assert box.plant.ejected_total == 2


def test_presses_while_ejecting_are_queued_and_served_in_order(make_box):
    box = make_box({"jam.count": 2})
    box.daemon.press()
    box.daemon.wait_for(lambda e: e["kind"] == "state" and e["to"] == "ejecting")
    for _ in range(3):
        box.daemon.press()
    fires = box.wait_fires(4)
    assert [f["press_id"] for f in fires] == sorted(f["press_id"] for f in fires)
    said = [(f["reason"], f["ejected"], f.get("extra")) for f in fires]
    assert all(f["reason"] == "fired" and f["ejected"] == 2 for f in fires), said
    assert box.plant.ejected_total == 8
    assert_one_fire_per_press(box)


def test_a_full_queue_answers_the_extra_presses_with_queue_full(make_box):
    box = make_box({"jam.count": 4, "limits.press_queue": 2})
    box.daemon.press()
    box.daemon.wait_for(lambda e: e["kind"] == "state" and e["to"] == "spinup")
    for _ in range(4):
        box.daemon.press()
    fires = box.wait_fires(5)
    reasons = [f["reason"] for f in fires]
    assert reasons.count("queue_full") == 2
    assert reasons.count("fired") == 3
    assert_one_fire_per_press(box)


def test_a_stalled_feed_is_retried_then_latched_jammed_and_a_long_press_clears_it(make_box):
    box = make_box({**QUICK_JAM, "limits.unjam_retries": 2})
    box.plant.stall()
    box.daemon.press()
    jam = box.wait_kind("jam")
    assert jam["retries"] == 2
    (fire,) = box.wait_fires(1)
    assert (fire["reason"], fire["ejected"], fire["planned"]) == ("jammed", 0, 3)
    box.wait_state("jammed")
    assert box.power_outputs_off()
    reverse_pulses = [v for name, _, v in box.plant.output_log if name == "ejector_backward" and v]
    assert len(reverse_pulses) == 2
    # A press while jammed is answered, not lost.
    box.daemon.press()
    assert box.wait_fires(2)[1]["reason"] == "jammed"
    box.plant.fix()
    box.hold_button()
    box.wait_state("idle")
    box.daemon.press()
    assert box.wait_fires(4)[-1]["reason"] == "fired"
    assert_one_fire_per_press(box)


def test_a_misfeed_is_cleared_by_one_reverse_pulse(make_box):
    # The roller slips until a reverse pulse re-grips it; after that a card comes within one
    # feed slot (~45 ms), far inside the card timeout even on a loaded machine.
    box = make_box({"jam.count": 3, "timing.card_timeout_ms": 1000})
    box.plant.misfeed(1000)
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert (fire["reason"], fire["ejected"]) == ("fired", 3)
    reverse = [v for name, _, v in box.plant.output_log if name == "ejector_backward" and v]
    assert len(reverse) == 1


def test_hopper_running_empty_mid_burst_latches_empty_until_loaded(make_box):
    box = make_box({"jam.count": 5})
    box.plant.run_empty_after(2)
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert (fire["reason"], fire["ejected"], fire["planned"]) == ("empty", 2, 5)
    empty = box.wait_kind("empty")
    assert empty["press_id"] == fire["press_id"] and empty["hopper"] == 0
    box.wait_state("empty")
    box.daemon.press()
    assert box.wait_fires(2)[1]["reason"] == "empty"
    reply = box.command("load", count=10)
    assert reply == {"ok": True, "hopper": 10}
    refill = box.wait_kind("refill")
    assert (refill["hopper"], refill["added"]) == (10, 10)
    box.wait_state("idle")
    box.daemon.press()
    last = box.wait_fires(3)[-1]
    assert (last["reason"], last["ejected"]) == ("fired", 5)
    assert box.plant.hopper == 5 == last["hopper"]
    assert_one_fire_per_press(box)


def test_burst_is_capped_by_the_cards_in_the_hopper(make_box):
    box = make_box({"jam.count": 5, "plant.hopper": 3})
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert (fire["planned"], fire["ejected"], fire["reason"]) == (3, 3, "fired")
    box.wait_state("empty")


def test_lock_refuses_button_presses_but_dispense_still_deals(make_box):
    box = make_box({"jam.count": 1})
    assert box.command("lock") == {"ok": True, "state": "locked"}
    box.daemon.press()
    assert box.wait_fires(1)[0]["reason"] == "locked"
    reply = box.command("dispense", count=2)
    assert reply["ok"]
    fire = box.wait_fires(2)[1]
    assert (fire["press_id"], fire["ejected"], fire["source"]) == (reply["press_id"], 2, "dispense")
    box.wait_state("locked")
    assert box.command("unlock") == {"ok": True, "state": "idle"}
    box.daemon.press()
    assert box.wait_fires(3)[2]["reason"] == "fired"


def test_dispense_checks_its_count_and_the_state(make_box):
    box = make_box({**QUICK_JAM, "limits.max_burst": 6})
    bad = box.command("dispense", count=7)
    assert bad["ok"] is False and bad["error"]["code"] == "BAD_ARG"
    assert box.command("dispense", count="3")["error"]["code"] == "BAD_ARG"
    box.plant.stall()
    box.command("dispense", count=2)
    box.wait_state("jammed", timeout=10)
    assert box.command("dispense", count=1)["error"]["code"] == "JAMMED"


def test_status_reports_the_box(make_box):
    box = make_box()
    status = box.command("status")
    assert status["ok"] and status["state"] == "idle"
    assert status["hopper"] == 60 and status["queue"] == 0 and status["fault"] is None
    assert status["jam"]["mode"] == "fixed"
    assert status["uptime_ms"] >= 0


def test_model_set_is_range_checked_and_cannot_touch_limits(make_box):
    box = make_box({"limits.max_burst": 8})
    assert box.command("model.get")["params"]["mode"] == "fixed"
    ok = box.command("model.set", params={"mode": "hazard", "base": 0.5})
    assert ok["ok"] and ok["params"]["base"] == 0.5 and ok["params"]["mode"] == "hazard"
    bad = box.command("model.set", params={"base": 1.5})
    assert bad["error"]["code"] == "BAD_ARG" and "jam.base" in bad["error"]["message"]
    over = box.command("model.set", params={"max_burst": 20})
    assert over["error"]["code"] == "BAD_ARG" and "limits" in over["error"]["message"]
    limit = box.command("model.set", params={"ejector_max_on_ms": 99999})
    assert limit["error"]["code"] == "BAD_ARG"
    assert box.daemon.config.limits.ejector_max_on_ms == 8000
    assert box.command("model.get")["params"]["base"] == 0.5


def test_unknown_op_and_bad_args_get_one_error_reply(make_box):
    box = make_box()
    assert box.command("fly")["error"]["code"] == "UNKNOWN_OP"
    # load's rule, in the op table's words (the wire's check says the same: wire/ops.Op.one_of)
    for both_or_none in ({}, {"count": 1, "total": 2}):
        error = box.command("load", **both_or_none)["error"]
        assert error == {
            "code": "BAD_ARG",
            "message": "give exactly one of count, total",
            "text": {"template": "give exactly one of {names}", "args": {"names": "count, total"}},
        }
    assert box.command("aim", seat=9)["error"]["code"] == "BAD_ARG"
    assert box.command("clear") == {"ok": True, "state": "idle"}


def test_aim_turns_the_servo_to_the_seat_angle(make_box):
    box = make_box()
    servo = box.config.pins.servo
    # The default seats -60, -20, 20, 60 on a servo that takes 1 ms at -90 and 2 ms at 90,
    # one pulse every 20 ms. On lgpio gpiozero alone would send whole percent of the frame
    # (0.2 ms): -60 would stand at -90 and 60 at 54 (hardware/gpio.md).
    widths_us = [1166.7, 1388.9, 1611.1, 1833.3]
    for seat, angle in enumerate(box.config.servo.seat_angles):
        assert box.command("aim", seat=seat) == {"ok": True, "seat": seat, "angle": angle}
        width_us = box.plant.header.value(servo) * 20_000  # the duty of the 20 ms frame
        assert width_us == pytest.approx(widths_us[seat], abs=1.0)
        assert box.daemon.devices.aim.servo.angle == pytest.approx(angle, abs=0.18)
    reply = box.command("aim", seat=3)
    assert reply == {"ok": True, "seat": 3, "angle": 60.0}
    assert box.command("status")["aim"] == 3
    # a whole angle goes out as an int, as docs/protocol.md shows it ("angle":20)
    assert isinstance(reply["angle"], int)
    assert box.command("aim", seat=2)["angle"] == 20
    assert b'"angle":20}' in protocol.encode(
        {"v": 1, "type": "reply", "id": "a", **box.command("aim", seat=2)}
    )


def test_aim_keeps_a_fractional_angle(make_box):
    box = make_box({"servo.seat_angles": [-60.0, -20.5, 20.0, 60.0]})
    assert box.command("aim", seat=1)["angle"] == -20.5


def test_aim_without_a_servo_is_a_bad_arg(make_box):
    box = make_box({"pins.servo": None})
    assert box.command("aim", seat=0)["error"]["code"] == "BAD_ARG"


def test_load_total_sets_the_hopper_and_the_plant(make_box):
    box = make_box()
    assert box.command("load", total=20) == {"ok": True, "hopper": 20}
    assert box.plant.hopper == 20
    assert box.wait_kind("refill")["added"] == -40


def test_selftest_reports_its_checks(make_box):
    box = make_box()
    reply = box.command("selftest")
    assert reply["ok"] is True
    names = {c["name"]: c["ok"] for c in reply["checks"]}
    assert names["outputs_off"] and names["sensor_clear"] and names["door_shut"]


def test_selftest_fails_with_the_beam_blocked(make_box):
    box = make_box()
    box.plant.stick_sensor(True)
    reply = box.command("selftest")
    assert reply["ok"] is False and reply["error"]["code"] == "FAULT"
    assert "beam" in reply["error"]["message"]
    assert {c["name"]: c["ok"] for c in reply["checks"]}["sensor_clear"] is False


def test_a_press_cut_short_by_a_restart_is_reported_interrupted(make_box):
    journal = MemoryJournal()
    journal.append("press", 0, {"press_id": 41, "source": "button"})
    journal.update_press(41, planned=5, ejected=2, dry_streak=1)
    box = make_box(journal=journal)
    fire = box.wait_kind("fire")
    assert (fire["press_id"], fire["reason"], fire["ejected"], fire["planned"]) == (
        41,
        "interrupted",
        2,
        5,
    )
    assert journal.open_presses() == []
    kinds = [e["kind"] for e in box.daemon.events]
    assert kinds.index("fire") < kinds.index("hello")


def test_a_burst_is_recorded_as_it_goes_and_closed_by_its_fire(make_box):
    journal = MemoryJournal()
    box = make_box({"jam.count": 4}, journal=journal)
    seen = []
    box.daemon.subscribe(
        lambda e: seen.extend(journal.open_presses()) if e["kind"] == "state" else None
    )
    box.daemon.press()
    box.wait_fires(1)
    box.wait_state("idle")
    assert any(s["press_id"] == 1 and s.get("planned") == 4 for s in seen)
    assert journal.open_presses() == []


def test_subscribers_see_every_event_after_the_journal(make_box):
    journal = MemoryJournal()
    box = make_box(journal=journal, start=False)
    seen = []
    box.daemon.subscribe(lambda e: seen.append((e["seq"], journal.last_seq >= e["seq"])))
    box.daemon.start()
    box.daemon.press()
    box.wait_fires(1)
    box.wait_state("idle")
    seqs = [s for s, _ in seen]
    assert seqs == list(range(1, len(seqs) + 1))
    assert all(journaled for _, journaled in seen)


def test_solenoid_box_fires_one_card_per_pulse(make_box):
    from tests.firmware.conftest import SOLENOID

    box = make_box({**SOLENOID, "jam.count": 4})
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert (fire["reason"], fire["ejected"]) == ("fired", 4)
    pulses = [v for name, _, v in box.plant.output_log if name == "ejector_forward" and v]
    assert len(pulses) == 4
    assert box.power_outputs_off()


def test_stop_answers_queued_presses_with_stopping(make_box):
    box = make_box({"jam.count": 12, "plant.feed_interval_ms": 40, "plant.beam_ms": 4})
    box.daemon.press()
    box.daemon.wait_for(lambda e: e["kind"] == "state" and e["to"] == "ejecting")
    box.daemon.press()
    box.daemon.press()
    box.daemon.wait_for(lambda e: len(box.presses()) == 3)
    box.daemon.stop()
    reasons = [f["reason"] for f in box.fires()]
    assert reasons == ["stopping"] * 3
    assert box.power_outputs_off()
    assert box.daemon.state == "stopping"
    box.daemon.stop()  # idempotent


def test_watchdog_is_pinged_from_the_loop_and_withheld_when_it_runs_late(make_box):
    import threading
    import time

    pings = []
    enough = threading.Event()

    def ping():
        pings.append(threading.current_thread().name)
        if len(pings) >= 3:
            enough.set()

    box = make_box(start=False)
    box.daemon.set_watchdog(0.1, ping)
    box.daemon.start()
    assert enough.wait(5)
    assert set(pings) == {"launcher-loop"}
    # A loop stuck in a handler for several intervals serves its watchdog timer late: no ping.
    box.daemon.call(lambda: time.sleep(0.3))
    box.daemon.call(lambda: None)
    assert box.daemon.watchdog_skipped >= 1


def test_after_a_crash_the_burst_and_the_presses_queued_behind_it_get_one_fire_each(
    make_box, pin_factory
):
    from firmware.daemon import Daemon
    from firmware.plant import Plant

    journal = MemoryJournal()
    slow = {"jam.count": 10, "plant.feed_interval_ms": 40, "plant.beam_ms": 4}
    box = make_box(slow, journal=journal)
    box.daemon.press()
    box.daemon.wait_for(lambda e: e["kind"] == "state" and e["to"] == "ejecting")
    box.daemon.press()
    box.daemon.press()
    box.daemon.wait_for(lambda e: len(box.presses()) == 3)
    assert box.plant.wait_cards(1, timeout=5)
    # The box has counted the card (on lgpio its edge reaches the loop after the plant made it).
    wait_until(lambda: box.daemon.call(lambda: len(box.daemon.inflight.burst.cards)) >= 1)
    # The loop dies without its shutdown (like kill -9): nothing answers the three presses.
    box.daemon.loop.stop()
    box.daemon.devices.close()
    box.plant.stop()
    assert box.fires() == []

    plant = Plant(box.config.plant, pin_factory, box.config.pins, kind="motor")
    again = Daemon(box.config, factory=pin_factory, journal=journal, plant=plant).start()
    try:
        fires = [e for e in again.events if e["kind"] == "fire"]
        ids = [e["press_id"] for e in box.presses()]
        assert sorted(f["press_id"] for f in fires) == sorted(ids)
        assert all(f["reason"] == "interrupted" for f in fires)
        first = next(f for f in fires if f["press_id"] == ids[0])
        assert first["planned"] == 10 and first["ejected"] >= 1
        assert journal.open_presses() == []
    finally:
        again.stop()


def test_a_restart_does_not_repeat_a_fire_already_journaled(make_box):
    journal = MemoryJournal()
    journal.append("press", 1, {"press_id": 5, "source": "button"})
    journal.append("press", 1, {"press_id": 6, "source": "host"})
    journal.append("fire", 2, {"press_id": 5, "source": "button", "planned": 2, "ejected": 2,
                               "reason": "fired"})  # fmt: skip
    box = make_box(journal=journal)
    fires = [e for e in box.daemon.events if e["kind"] == "fire"]
    assert [(f["press_id"], f["reason"], f["source"]) for f in fires] == [
        (6, "interrupted", "host")
    ]
