"""Moves as data, words in one place: every outcome kind (engine/outcomes.py) is either worded by
the narrator (engine/narrate.py `_WORDS`) or silent on purpose (told by another outcome or by the
state); a simulation records nothing; the same round says the same thing however it is told."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import engine.outcomes as outcomes
from engine.bots import HeuristicBot
from engine.cards import PRESETS, parse_card
from engine.game import Round
from engine.launchers import VirtualLauncher
from engine.narrate import _WORDS, SILENT, Narrator, log_lines
from engine.outcomes import Fired, Outcome, Owes, Played
from engine.rules import rules_for
from engine.sim import play_round

KINDS = [
    cls
    for _name, cls in inspect.getmembers(outcomes, inspect.isclass)
    if issubclass(cls, Outcome) and cls is not Outcome
]


def test_every_outcome_kind_is_worded_or_silent_on_purpose() -> None:
    assert len(KINDS) > 50  # the check can fail
    unworded = [k.__name__ for k in KINDS if k not in _WORDS and k not in SILENT]
    both = [k.__name__ for k in KINDS if k in _WORDS and k in SILENT]
    assert unworded == [] and both == []


def test_every_kind_is_a_frozen_slotted_record_listed_by_its_module() -> None:
    for kind in KINDS:
        assert dataclasses.is_dataclass(kind), kind
        assert kind.__dataclass_params__.frozen, kind  # type: ignore[attr-defined]
        assert "__slots__" in kind.__dict__, kind
        assert kind.__name__ in outcomes.__all__, kind


SETTINGS = [
    ("attack", {}),
    ("attack", {"play_fired_card": True, "jump_in": True, "multi_play": True}),
    ("attack-1998", {}),
    ("classic", {}),  # a plain draw: the fast path a simulation takes when it records nothing
    ("classic", {"draw_until_playable": True, "jump_in": True}),
]


def _round(preset: str, options: dict[str, object], record: bool, seed: int) -> Round:
    rnd = Round(
        PRESETS[preset],
        rules_for(preset, 3, **options),
        VirtualLauncher.seeded(seed),
        players=3,
        seed=seed,
        record=record,
    )
    play_round(rnd, [HeuristicBot(seed + i) for i in range(3)])
    return rnd


@pytest.mark.parametrize(("preset", "options"), SETTINGS)
def test_a_simulation_records_nothing_and_plays_the_same(
    preset: str, options: dict[str, object]
) -> None:
    for seed in range(40):
        quiet, told = _round(preset, options, False, seed), _round(preset, options, True, seed)
        assert quiet.outcomes == [] and not quiet.recording
        assert told.outcomes and told.recording  # the round's own story
        assert (quiet.winner, quiet.turns, quiet.presses, quiet.cards_fired) == (
            told.winner,
            told.turns,
            told.presses,
            told.cards_fired,
        )
        assert quiet.hands == told.hands and quiet.discard == told.discard
        lines = Narrator(["Ann", "Bob", "Cat"], classic=preset == "classic").lines(told.outcomes)
        assert lines and all(isinstance(line, str) and line for line in lines)
        assert log_lines(told.outcomes)


def test_the_narrator_names_players_and_the_log_names_seats() -> None:
    r5 = parse_card("R5")
    said = [Played(1, (r5,), "R"), Fired(2, 3), Owes(2, "hits", 2)]
    table = Narrator(["Ann", "Bob", "Cat"], classic=False, obligations=True).lines(said)
    assert table[0].startswith("Bob plays R5")
    assert any("Cat" in line for line in table[1:])
    assert log_lines(said) == ["seat 1 plays R5", "seat 2 hits: 3 cards"]
