"""Door-open maintenance mode on a fake clock: repeated warnings, one ready cue on closing."""

from __future__ import annotations

from firmware.door import DoorConfig, DoorWatch
from firmware.loop import Event, FakeClock, Loop


def test_warns_at_the_interval_while_open_and_cues_ready_once_on_closing() -> None:
    clock = FakeClock()
    cues: list[tuple[float, str]] = []
    start = clock()
    holder: dict = {}

    def handle(event: Event) -> None:
        assert event.kind == DoorWatch.TICK
        holder["door"].tick()

    loop = Loop(handle, clock=clock)
    door = DoorWatch(
        DoorConfig(warn_interval_s=2.0),
        cue=lambda name: cues.append(((clock() - start) / 1e6, name)),
        set_timer=loop.set_timer,
        cancel_timer=loop.cancel_timer,
    )
    holder["door"] = door
    door.opened()
    door.opened()  # a bouncing switch does not warn twice
    for _ in range(50):  # 5 s open
        clock.advance(100)
        loop.run_pending()
    door.closed()
    door.closed()
    for _ in range(50):
        clock.advance(100)
        loop.run_pending()
    assert cues == [(0, "door_open"), (2000, "door_open"), (4000, "door_open"), (5000, "ready")]
    assert door.warnings == 3 and not door.is_open
    assert loop.timer_deadline(DoorWatch.TIMER) is None


# --------------------------------------------------------------------------- on the daemon

DOOR = {"pins.door": 5, "door.warn_interval_s": 1.0}


def test_with_the_door_open_nothing_moves(make_box) -> None:
    box = make_box(DOOR)
    box.plant.open_door()
    d = box.daemon
    d.wait_for(lambda e: d.call(lambda: d.door.watch.is_open))
    assert box.command("status")["door"] == "open"
    box.command("press")
    box.daemon.press()
    reply = box.command("dispense", count=2)
    assert reply["ok"] is False and reply["error"]["code"] == "LOCKED"
    assert "door is open" in reply["error"]["message"]
    fires = box.wait_fires(2)
    assert [f["reason"] for f in fires] == ["locked", "locked"]
    assert not box.plant.output_log  # no output moved at all
    assert box.plant.ejected_total == 0
    sink = d.sound.sink
    # ready at boot, door_open now and again a second later (the refused presses cue press)
    sink.wait_until(lambda cues: [c.event for c in cues].count("door_open") >= 2, timeout=20)
    events = [e for e in sink.events() if e != "press"]
    assert events[:3] == ["ready", "door_open", "door_open"]
    box.plant.close_door()
    sink.wait_until(lambda cues: "ready" in [c.event for c in cues[1:]], timeout=20)
    assert box.command("status")["door"] == "shut"
    box.command("press")
    assert box.wait_fires(3)[2]["reason"] == "fired"


def test_booting_with_the_door_open_is_maintenance_not_a_fault(make_box) -> None:
    box = make_box(DOOR, start=False)
    box.plant.open_door()
    box.daemon.start()
    assert box.daemon.state == "idle"
    reply = box.command("selftest")
    assert reply["ok"] and reply["passed"]
    checks = {c["name"]: c for c in reply["checks"]}
    assert checks["door_shut"]["ok"] and "maintenance" in checks["door_shut"]["detail"]
    sink = box.daemon.sound.sink
    sink.wait(1, timeout=20)
    assert sink.events() == ["door_open"]  # no ready while the door is open
    box.plant.close_door()
    sink.wait(2, timeout=20)
    assert sink.events() == ["door_open", "ready"]  # ready once it closes
