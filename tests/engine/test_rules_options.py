"""Rule options: preset defaults and validation."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.rules import OPTION_NAMES, Rules, rules_for


def test_preset_defaults() -> None:
    assert rules_for("attack", 4).skip_reverse_play_again is True
    assert rules_for("attack-1998", 4).skip_reverse_play_again is False
    classic = rules_for("classic", 4)
    assert classic.skip_reverse_play_again is False
    assert classic.attack is False and rules_for("attack", 3).attack is True
    assert rules_for("attack", 2).custom_wild_effect == "W"


def test_options_override_and_custom_wild_is_case_insensitive() -> None:
    rules = rules_for("attack", 3, custom_wild_effect="waa", stacking=True)
    assert rules == Rules(preset="attack", custom_wild_effect="WAA", stacking=True)
    assert set(rules.to_dict()) == {"preset", *OPTION_NAMES}


@pytest.mark.parametrize(
    ("preset", "players", "options", "message"),
    [
        ("uno", 4, {}, "unknown preset `uno`"),
        ("attack", 1, {}, "players = 1: from 2 to 10"),
        ("attack", 11, {}, "players = 11"),
        ("attack", 4, {"stackng": True}, "unknown rule option `stackng`: allowed are"),
        ("attack", 4, {"stacking": "yes"}, "stacking = 'yes': true or false"),
        ("attack", 4, {"custom_wild_effect": "WD4"}, "custom_wild_effect = 'WD4': one of W,"),
        ("attack", 4, {"uno_penalty": 11}, "uno_penalty = 11"),
        ("attack", 4, {"draw_until_playable": True}, "draw_until_playable is a classic rule"),
    ],
)
def test_bad_options_are_one_line_errors(
    preset: str, players: int, options: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        rules_for(preset, players, **options)
