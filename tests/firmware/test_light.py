"""Button light: the look of every situation, blink timing on loop timers, the backends."""

from __future__ import annotations

import itertools

import pytest

from firmware.light import MockPixels, RgbBackend
from firmware.looks import NAMED, OFF, LookPlayer, look_for, parse_color, situation
from firmware.loop import Event, FakeClock, Loop
from tests.conftest import PIN_FACTORIES
from tests.wait import wait_until


class _Rig:
    """A LookPlayer on MockPixels driven by a loop on a fake clock."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.pixels = MockPixels()
        self.loop = Loop(self._handle, clock=self.clock)
        self.light = LookPlayer(
            self.pixels,
            set_timer=self.loop.set_timer,
            cancel_timer=self.loop.cancel_timer,
            base_hz=1.0,
            step_hz=1.0,
            max_dry=10,
        )

    def _handle(self, event: Event) -> None:
        assert event.kind == LookPlayer.TICK
        self.light.tick()

    def run(self, ms: float, step: float = 10) -> list:
        """Advance ``ms`` in steps; the colours seen at each step."""
        seen = []
        for _ in range(int(ms / step)):
            self.clock.advance(step)
            self.loop.run_pending()
            seen.append(self.pixels.color)
        return seen


@pytest.mark.parametrize(
    ("state", "facts", "expected"),
    [
        ("booting", {}, "booting"),
        ("idle", {}, "ready"),
        ("idle", {"seat": 2}, "live"),
        ("idle", {"dry_streak": 3}, "dry"),
        ("locked", {"dry_streak": 3}, "locked"),
        ("spinup", {}, "busy"),
        ("ejecting", {"dry_streak": 2}, "busy"),
        ("cooldown", {}, "busy"),
        ("jammed", {}, "jammed"),
        ("empty", {}, "empty"),
        ("fault", {"door_open": True}, "fault"),
        ("idle", {"door_open": True}, "door_open"),
        ("jammed", {"door_open": True}, "door_open"),
        ("stopping", {"door_open": True}, "stopping"),
    ],
)
def test_situation_of_each_state(state: str, facts: dict, expected: str) -> None:
    assert situation(state, **facts) == expected


def test_each_situation_has_its_own_look() -> None:
    looks = {
        name: look_for(name, dry_streak=1, seat=0)
        for name in ("ready", "live", "locked", "busy", "dry", "jammed", "empty", "fault")
    } | {"door_open": look_for("door_open")}
    frames = [look.frames for look in looks.values()]
    assert len(set(frames)) == len(frames)  # no two situations look alike
    assert looks["ready"].steady and looks["live"].steady and looks["locked"].steady
    assert not looks["fault"].steady and not looks["dry"].steady
    assert look_for("stopping").frames[0][0] == OFF
    with pytest.raises(ValueError, match="unknown light situation"):
        look_for("party")


def test_live_shows_the_seat_colour() -> None:
    colors = [parse_color(c) for c in ("#ff0000", "#0000ff")]
    assert look_for("live", seat=1, seat_colors=colors).frames[0][0] == (0.0, 0.0, 1.0)
    assert look_for("live", seat=2, seat_colors=colors).frames[0][0] == (1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="#rrggbb"):
        parse_color("red")


def test_dry_streak_blinks_faster_and_redder() -> None:
    looks = [look_for("dry", dry_streak=n, max_dry=10) for n in (1, 3, 6, 10)]
    holds = [look.frames[0][1] for look in looks]
    assert holds == sorted(holds, reverse=True) and len(set(holds)) == 4
    greens = [look.frames[0][0][1] for look in looks]  # less green: from amber to red
    assert greens == sorted(greens, reverse=True) and greens[-1] == 0


def test_blink_runs_on_the_loop_timer() -> None:
    rig = _Rig()
    rig.light.show("fault")  # 4 Hz: 125 ms on, 125 ms off
    assert rig.pixels.color == NAMED["fault"]
    seen = rig.run(1000)
    changes = sum(1 for a, b in itertools.pairwise(seen) if a != b)
    assert changes == 7  # 8 half-periods in a second, the first one shown at once
    rig.light.show("fault")  # the same look again keeps the rhythm (no restart)
    assert rig.loop.timer_deadline(LookPlayer.TIMER) is not None
    rig.light.show("idle")
    assert rig.pixels.color == NAMED["ready"]
    assert rig.loop.timer_deadline(LookPlayer.TIMER) is None  # steady: no timer
    rig.run(500)
    assert set(rig.pixels.frames) >= {NAMED["fault"], OFF, NAMED["ready"]}
    rig.light.show("jammed")
    rig.light.off()
    assert rig.pixels.color == OFF and rig.loop.timer_deadline(LookPlayer.TIMER) is None


def test_rgb_backend_on_mock_pwm_pins(mock_factory: object) -> None:
    backend = RgbBackend(16, 20, 26, factory=mock_factory)
    try:
        backend.show((1.0, 0.5, 0.0))
        pins = [mock_factory.pin(n).state for n in (16, 20, 26)]  # type: ignore[attr-defined]
        assert pins == [1.0, 0.5, 0.0]
        backend.off()
        assert [mock_factory.pin(n).state for n in (16, 20, 26)] == [0, 0, 0]  # type: ignore[attr-defined]
    finally:
        backend.close()


# --------------------------------------------------------------------------- on the daemon


@pytest.mark.parametrize("pins", PIN_FACTORIES, indirect=True)
def test_the_box_light_follows_state_streak_seat_and_door(make_box) -> None:
    box = make_box({"jam.mode": "pattern", "jam.pattern": [0, 0, 3], "pins.door": 5})
    d = box.daemon
    light = d.light

    def look() -> str:
        return d.call(lambda: light.looks.look.name)

    assert look() == "ready"
    # PWM on the light's pins (lgpio: 100 Hz software PWM, its duty in whole percent)
    header, pins = box.plant.header, box.config.pins
    ready = [header.value(n) for n in (pins.light_red, pins.light_green, pins.light_blue)]
    assert ready == pytest.approx(NAMED["ready"], abs=0.01)
    box.command("press")
    box.wait_fires(1)
    assert look() == "dry"
    box.command("press")
    box.wait_fires(2)
    hz2 = d.call(lambda: light.looks.look.frames[0][1])
    box.command("press")  # fires 3: busy, then ready again
    d.wait_for(lambda e: e["kind"] == "state" and e["to"] == "spinup")
    box.wait_fires(3)
    box.wait_state("idle")
    assert look() == "ready"
    assert hz2 < look_for("dry", dry_streak=1).frames[0][1]  # the second dry blinked faster
    assert box.command("aim", seat=1)["ok"]
    assert look() == "live"
    assert d.call(lambda: light.color) == parse_color("#1e88e5")
    # The door switch journals nothing: wait for the look itself (on lgpio the switch's edge
    # reaches the loop a little after the plant moved it).
    box.plant.open_door()
    wait_until(lambda: look() == "door_open", what="the door-open look")
    box.plant.close_door()
    wait_until(lambda: look() == "live", what="the live look again")
    assert box.command("settings.set", settings={"light.enabled": False})["ok"]
    assert [box.pin(n).state for n in ("light_red", "light_green", "light_blue")] == [0, 0, 0]
    box.command("lock")
    assert d.call(lambda: light.looks.look) is None  # off stays off
    d.stop()
    assert [box.pin(n).state for n in ("light_red", "light_green", "light_blue")] == [0, 0, 0]


def test_a_box_without_a_colour_light_runs_as_before(make_box) -> None:
    box = make_box({"pins.light_red": None, "pins.light_green": None, "pins.light_blue": None})
    box.command("press")
    box.wait_fires(1)
    assert box.daemon.light.refresh() is None and box.daemon.devices.light is None


def test_ws2812_on_mock_pins_records_its_frames(make_box) -> None:
    box = make_box(
        {"pins.light_red": None, "pins.light_green": None, "pins.light_blue": None,
         "pins.light_data": 10}
    )  # fmt: skip
    pixels = box.daemon.devices.light
    assert isinstance(pixels, MockPixels) and pixels.count == 2
    assert pixels.color == NAMED["ready"]
    box.command("press")
    box.wait_fires(1)
    box.wait_state("idle")
    assert NAMED["busy"] in pixels.frames
