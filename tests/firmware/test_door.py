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
