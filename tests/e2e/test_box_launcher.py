"""`BoxLauncher`: the engine's launcher over the mock box."""

from __future__ import annotations

import re

import pytest

from common.boxconfig import default_path
from engine.box import BoxLauncher
from engine.mockbox import MockBox, demo_config
from wire.client import BoxClient, BoxError


@pytest.fixture
def launcher():
    text = demo_config(default_path().read_text(), speed=20, players=3, seed=1)
    text = re.sub(r'(?m)^mode = "hazard"', 'mode = "pattern"', text)
    text = re.sub(r"(?m)^pattern = \[.*?\]", "pattern = [3, 0]", text)
    with MockBox(text) as box:
        client = BoxClient(box.port, timeout=10.0)
        client.connect()
        seen: list[tuple[int, dict]] = []
        bl = BoxLauncher(client, on_fire=lambda seat, ev: seen.append((seat, ev)))
        try:
            yield bl, box, seen
        finally:
            client.close()


@pytest.mark.timeout(60)
def test_each_hit_is_one_press_and_takes_what_the_box_fired(launcher):
    bl, box, seen = launcher
    bl.reload(10)
    assert bl.client.status()["hopper"] == 10
    assert bl.hit(1, 10) == 3
    assert bl.client.status()["aim"] == 1
    assert bl.hit(2, 7) == 0
    assert [seat for seat, _ in seen] == [1, 2]
    assert [ev["press_id"] for _, ev in seen] == [ev["press_id"] for ev in bl.fires]
    assert bl.stats()["hits"] == 2 and bl.stats()["dry_hits"] == 1
    assert bl.dispense(2, 7) == 2
    assert bl.client.status()["hopper"] == 5 == box.plant()["hopper"]


@pytest.mark.timeout(60)
def test_a_burst_bigger_than_the_engines_pile_is_a_conservation_error(launcher):
    bl, _box, _ = launcher
    bl.reload(10)
    with pytest.raises(BoxError, match="held 2"):
        bl.hit(0, 2)  # the box holds 10 and fires 3: the engine's pile and the box disagree


@pytest.mark.timeout(60)
def test_a_seat_the_servo_cannot_reach_is_pressed_unaimed(launcher):
    bl, _box, _ = launcher
    bl.reload(10)
    assert bl.hit(7, 10) == 3  # the box has 3 seats: aim fails with BAD_ARG, the press goes on
    assert bl.servo is False
