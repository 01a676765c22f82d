"""Launchers: counts fired per hit / dispense, caps, scripts, counters."""

from __future__ import annotations

import random

import pytest

from common.jam import JamModel, JamParams
from engine.launchers import Launcher, ScriptedLauncher, VirtualLauncher


class _GreedyModel:
    """A stand-in model that always plans more cards than any hopper holds."""

    def plan(self, hopper: int | None = None) -> int:
        return 99


def test_both_launchers_satisfy_the_protocol() -> None:
    assert isinstance(ScriptedLauncher([1]), Launcher)
    assert isinstance(VirtualLauncher.seeded(1), Launcher)


def test_scripted_hits_follow_the_script_then_fire_nothing() -> None:
    launcher = ScriptedLauncher([0, 3, 5])
    assert [launcher.hit(seat, 50) for seat in range(5)] == [0, 3, 5, 0, 0]
    assert launcher.remaining == 0
    assert launcher.hits == 5
    assert launcher.dry_hits == 3
    assert launcher.hit_cards == 8


def test_scripted_hit_is_capped_by_the_cards_loaded() -> None:
    launcher = ScriptedLauncher([6, 2])
    assert launcher.hit(0, 4) == 4
    # The capped press still used its slot in the script.
    assert launcher.hit(0, 4) == 2


def test_scripted_dispense_fires_n_capped_and_keeps_the_script() -> None:
    launcher = ScriptedLauncher([7])
    assert launcher.dispense(4, 10) == 4
    assert launcher.dispense(4, 3) == 3
    assert launcher.hit(1, 10) == 7
    assert launcher.dispenses == 2
    assert launcher.dispensed_cards == 7
    assert launcher.cards_fired == 14


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True])
def test_scripted_rejects_counts_that_are_not_whole_numbers(bad: object) -> None:
    with pytest.raises(ValueError, match="launcher count 1"):
        ScriptedLauncher([1, bad])  # type: ignore[list-item]


def test_negative_loaded_is_a_bug_not_a_silent_zero() -> None:
    with pytest.raises(ValueError, match="loaded"):
        ScriptedLauncher([1]).hit(0, -1)


def test_virtual_fixed_model_fires_count_capped_by_loaded() -> None:
    launcher = VirtualLauncher(JamModel(JamParams(mode="fixed", count=3), rng=random.Random(1)))
    assert launcher.hit(0, 10) == 3
    assert launcher.hit(1, 2) == 2
    assert launcher.hit(2, 0) == 0
    assert launcher.stats() == {
        "hits": 3,
        "dry_hits": 1,
        "hit_cards": 5,
        "dispenses": 0,
        "dispensed_cards": 0,
        "cards_fired": 5,
        "reloads": 0,
    }


def test_virtual_hit_never_exceeds_loaded_even_for_a_greedy_model() -> None:
    launcher = VirtualLauncher(_GreedyModel())  # type: ignore[arg-type]
    assert launcher.hit(0, 5) == 5


def test_virtual_dispense_is_exact_and_does_not_touch_the_model() -> None:
    model = JamModel(JamParams(seed=3), rng=random.Random(3))
    launcher = VirtualLauncher(model)
    before = model.state()
    assert launcher.dispense(2, 30) == 2
    assert launcher.dispense(5, 1) == 1
    assert model.state() == before


def test_virtual_hazard_model_is_seeded_and_bounded() -> None:
    def run(seed: int) -> list[int]:
        launcher = VirtualLauncher.seeded(seed)
        return [launcher.hit(i % 4, 8) for i in range(300)]

    first = run(11)
    assert first == run(11)
    assert first != run(12)
    assert all(0 <= n <= 8 for n in first)
    # The default model fires on some presses and not on others.
    assert 0 in first
    assert any(n > 0 for n in first)


def test_virtual_dry_streak_is_bounded_by_max_dry() -> None:
    params = JamParams(max_dry=3)
    launcher = VirtualLauncher(JamModel(params, rng=random.Random(5)))
    streak = longest = dry = 0
    for _ in range(500):
        if launcher.hit(0, 40) == 0:
            dry += 1
            streak += 1
            longest = max(longest, streak)
        else:
            streak = 0
    assert longest <= params.max_dry
    assert launcher.dry_hits == dry
    assert launcher.hits == 500


def test_reload_is_counted() -> None:
    launcher = VirtualLauncher.seeded(2)
    launcher.reload(40)
    assert launcher.reloads == 1
