"""No card goes unreported: every card the exit beam counts is in a ``fire`` or a ``stray`` event.

A feed motor is stopped at the planned card and the burst keeps counting for ``[timing]
settle_ms``: a card the coasting roller still pushes out (the plant's ``overrun``) is the fire's
``extra``. A card the beam counts with no burst counting is a ``stray`` event of its own.
"""

from __future__ import annotations

from typing import Any

from tests.firmware.conftest import SOLENOID, assert_one_fire_per_press
from wire import protocol

# Long enough that a coasting card (one feed interval, ~40 ms, behind the last) lands inside the
# window however late a loaded machine runs the plant's thread.
GENEROUS_SETTLE = {"timing.settle_ms": 1500}


def strays(box: Any) -> list[dict]:
    """Stray events of this run so far."""
    return [e for e in box.daemon.events if e["kind"] == "stray"]


def counted(box: Any) -> int:
    """Cards reported by fire and stray events."""
    return sum(f["ejected"] for f in box.fires()) + sum(s["count"] for s in strays(box))


def wait_counted(box: Any, total: int, timeout: float = 10.0) -> None:
    """Wait until the events report ``total`` cards."""
    box.daemon.wait_for(lambda e: counted(box) >= total, timeout)
    assert counted(box) == total


def test_a_card_the_motor_pushes_after_it_stops_is_counted_in_the_burst(make_box) -> None:
    box = make_box({**GENEROUS_SETTLE, "jam.count": 3})
    box.plant.overrun(1)
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert fire["reason"] == "fired"
    assert (fire["planned"], fire["ejected"], fire["extra"]) == (3, 4, 1)
    assert len(fire["card_ms"]) == 4
    assert strays(box) == []
    assert box.plant.ejected_total == 4
    assert fire["hopper"] == box.plant.hopper == 60 - 4
    assert_one_fire_per_press(box)


def test_the_motor_is_off_during_the_settle_window_and_the_state_stays_ejecting(make_box) -> None:
    # No soft start: the feed is at full speed (``ejecting``) as it starts. With one, a loop
    # late to run its ramp timers may count both cards while the burst is still in ``spinup``.
    box = make_box({"timing.settle_ms": 5000, "jam.count": 2, "ejector.soft_start_ms": 0})
    d = box.daemon
    d.press()
    assert box.plant.wait_cards(2, 10)
    # The sensor posted the second card before the plant counted it; the loop runs this after.
    assert d.call(lambda: (d.state, d.burst is not None and d.burst.settling)) == (
        "ejecting",
        True,
    )
    assert d.call(d.outputs_on) == {}
    assert box.power_outputs_off()
    assert box.fires() == []  # the result waits for the window to close
    d.stop()  # shutting down closes the window: every planned card is out, so it fired
    (fire,) = box.fires()
    assert (fire["reason"], fire["ejected"], fire["extra"]) == ("fired", 2, 0)


def test_without_a_settle_window_the_coasting_card_is_a_stray(make_box) -> None:
    box = make_box({"timing.settle_ms": 0, "jam.count": 2})
    box.plant.overrun(1)
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    stray = box.wait_kind("stray", timeout=10)
    assert (fire["ejected"], fire["extra"]) == (2, 0)
    assert stray["count"] == 1
    assert stray["after_press_id"] == fire["press_id"]
    assert stray["hopper"] == 60 - 3
    wait_counted(box, box.plant.ejected_total)


def test_a_card_at_the_beam_outside_any_burst_is_a_journaled_stray_event(make_box) -> None:
    box = make_box()
    box.plant.push_card()
    stray = box.wait_kind("stray")
    assert stray["count"] == 1
    assert stray["after_press_id"] is None  # no burst ran since the daemon started
    assert stray["hopper"] == 59
    assert box.daemon.state == "idle"
    journaled = box.daemon.journal.events_after(0, 100)
    assert [e for e in journaled if e["kind"] == "stray"] == [stray]
    # The event is a valid frame on the wire, as the host decodes it.
    line = protocol.encode({"v": 1, "type": "event", **stray})
    assert protocol.decode(line)["kind"] == "stray"
    # A later stray names the last burst's press.
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    box.plant.push_card()
    box.daemon.wait_for(lambda e: len(strays(box)) == 2)
    assert strays(box)[1]["after_press_id"] == fire["press_id"]
    wait_counted(box, box.plant.ejected_total)


def test_a_dispense_counts_the_coasting_card_as_extra(make_box) -> None:
    box = make_box(GENEROUS_SETTLE)
    box.plant.overrun(1)
    assert box.command("dispense", count=2)["ok"]
    (fire,) = box.wait_fires(1)
    assert (fire["source"], fire["planned"], fire["ejected"], fire["extra"]) == (
        "dispense",
        2,
        3,
        1,
    )
    assert box.plant.ejected_total == 3


def test_the_last_card_emptying_the_hopper_still_fires_then_latches_empty(make_box) -> None:
    box = make_box({**GENEROUS_SETTLE, "jam.count": 3, "plant.hopper": 3})
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert (fire["reason"], fire["ejected"], fire["extra"]) == ("fired", 3, 0)
    box.wait_state("empty")
    empty = box.wait_kind("empty")
    assert empty["seq"] > fire["seq"]


def test_a_solenoid_burst_ends_at_its_card_and_a_double_feed_is_a_stray(make_box) -> None:
    box = make_box({**SOLENOID, **GENEROUS_SETTLE, "jam.count": 1})
    box.plant.overrun(1)  # the pulse pushes a second card right behind the first
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert (fire["ejected"], fire["extra"]) == (1, 0)
    stray = box.wait_kind("stray", timeout=10)
    assert stray["after_press_id"] == fire["press_id"]
    wait_counted(box, 2)
    assert box.plant.ejected_total == 2


def test_a_late_loop_cannot_let_the_feed_run_past_the_planned_card(make_box) -> None:
    """The feed cutoff: the sensor stops the motor at the last planned card by itself. The loop
    is held up for the whole burst (a busy Pi); without the cutoff the roller would run on until
    the loop caught up, here until the hopper ran out."""
    import threading

    fast = {"plant.feed_interval_ms": 5, "plant.feed_jitter_ms": 0, "plant.beam_ms": 1}
    box = make_box({**fast, "jam.count": 6})
    d = box.daemon
    gate = threading.Event()
    # Stall the loop the moment the feed runs at full speed (on the loop thread, so no card
    # can have been handled in between).
    d.subscribe(
        lambda e: (
            d.loop.post("call", fn=gate.wait)
            if e["kind"] == "state" and e["to"] == "ejecting"
            else None
        )
    )
    d.press()
    try:
        assert box.plant.wait_cards(6, 10)
        assert box.plant.wait_quiet(10)  # stopped at the sixth card, though nobody looked
        assert box.plant.ejected_total == 6
        assert box.pin("ejector_forward").state == 0
    finally:
        gate.set()
    (fire,) = box.wait_fires(1)
    assert (fire["reason"], fire["planned"], fire["ejected"], fire["extra"]) == ("fired", 6, 6, 0)
    assert box.plant.ejected_total == 6
    assert_one_fire_per_press(box)
