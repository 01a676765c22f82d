"""The rules issue 9 found wrong or disputed, as scenarios: each test failed before the fix.

Each case names the decision in docs/rules.md ("Decisions") it checks. The referee follows the
same code (engine/blind.py); tests/engine/test_table_differential.py shows it agrees.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.errors import InputError
from engine.scenario import parse_scenario
from tests.engine.scenario_util import check, run, run_error, scenario

# -- 1. After S, an R as the bonus card reverses from the player who played it --------------

S_THEN_R = dict(
    hands=[["GS", "GR", "G7", "B1"], ["B2"], ["Y3"], ["R4"]],
    top="G5",
    turn=0,
    pile=["R1", "R2"],
    launcher=[0],
)


@pytest.mark.parametrize(
    "last",
    [{"seat": 0, "play": "G7"}, {"seat": 0, "pass": True}, {"seat": 0, "hit": True}],
    ids=["card", "pass", "hit"],
)
def test_s_then_r_bonus_never_gives_the_same_player_another_turn(last: dict[str, Any]) -> None:
    state = run(
        **S_THEN_R,
        actions=[{"seat": 0, "play": "GS"}, {"seat": 0, "play": "GR"}, last],
    )
    # R reversed at seat 0: play goes right, to seat 3 (not back to seat 0).
    check(state, {"direction": -1, "turn": 3, "bonus": False, "actor": 3})


def test_s_then_s_bonus_skips_one_more_player() -> None:
    state = run(
        hands=[["GS", "RS", "G7"], ["B2"], ["Y3"], ["R4"], ["B5"]],
        top="G5",
        turn=0,
        actions=[{"seat": 0, "play": "GS"}, {"seat": 0, "play": "RS"}, {"seat": 0, "pass": True}],
    )
    check(state, {"direction": 1, "turn": 3})


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        ({"seat": 0, "pass": True}, {"turn": 1, "pending": []}),
        ({"seat": 0, "play": "BH2"}, {"turn": 2, "pending": [{"seat": 1, "hits": 2}]}),
    ],
    ids=["pass", "H2"],
)
def test_skips_that_go_round_the_table_never_give_the_player_the_turn_back(
    last: dict[str, Any], expected: dict[str, Any]
) -> None:
    # Three players: S skips seat 1, the bonus S skips seat 2; "next" is then seat 1 again, not
    # the player (and a bonus H2 never hits the player who played it).
    state = run(
        hands=[["GS", "BS", "BH2", "R1"], ["B2"], ["Y3"]],
        top="G5",
        turn=0,
        actions=[{"seat": 0, "play": "GS"}, {"seat": 0, "play": "BS"}, last],
    )
    check(state, {"bonus": False, **expected})


# -- 2. The UNO window stays open through the offender's own bonus card, pass or hit ----------


@pytest.mark.parametrize(
    ("bonus", "launcher"),
    [({"seat": 0, "pass": True}, []), ({"seat": 0, "hit": True}, [0])],
    ids=["pass", "dry hit"],
)
def test_a_missed_uno_can_be_caught_after_the_offenders_bonus_move(
    bonus: dict[str, Any], launcher: list[int]
) -> None:
    state = run(
        hands=[["GS", "B1"], ["B2", "B3"], ["Y3", "Y4"]],
        top="G5",
        turn=0,
        pile=["R1", "R2", "R3"],
        launcher=launcher,
        actions=[{"seat": 0, "play": "GS"}, bonus, {"seat": 1, "catch": 0}],
    )
    # The offender owes the penalty, not the catcher.
    check(state, {"pending": [{"seat": 0, "hits": 2}], "actor": 0})


# -- 3. A false UNO call and accusing a player who holds 2+ cards cost 2 (seed 001) -----------


@pytest.mark.parametrize(
    ("deck", "kind"), [("attack", "hits"), ("attack-1998", "hits"), ("classic", "draws")]
)
def test_false_uno_call_and_wrong_accusation_cost_two(deck: str, kind: str) -> None:
    hands = [["B1", "B2", "B3"], ["R3", "R4"], ["Y3", "Y6"]]
    state = run(deck=deck, hands=hands, top="R5", turn=0, actions=[{"seat": 0, "uno": True}])
    check(state, {"pending": [{"seat": 0, kind: 2}], "uno_called": []})
    state = run(deck=deck, hands=hands, top="R5", turn=0, actions=[{"seat": 2, "catch": 1}])
    check(state, {"pending": [{"seat": 2, kind: 2}]})


# -- 4. A catch after the next player started is refused, and costs nobody anything -----------


def test_a_late_catch_is_refused_with_a_reason() -> None:
    index, message, state = run_error(
        hands=[["R1", "R2"], ["B5", "R6"], ["G1", "G2"]],
        top="R9",
        turn=0,
        actions=[{"seat": 0, "play": "R1"}, {"seat": 1, "play": "R6"}, {"seat": 2, "catch": 0}],
    )
    assert index == 2
    assert "too late to catch seat 0" in message
    assert state["pending"] == []


# -- 5. play_fired_card: attack-1998 plays a fired card after a forced hit, attack does not ----

FORCED_HIT = dict(
    hands=[["B1", "B2"], ["G3"], ["Y4"]],
    top="R5",
    turn=0,
    pile=["R7", "R8"],
    launcher=[1],
)


def test_attack_1998_may_play_a_card_fired_by_a_forced_hit() -> None:
    state = run(
        deck="attack-1998",
        **FORCED_HIT,
        actions=[{"seat": 0, "hit": True}, {"seat": 0, "play": "R7"}],
    )
    check(state, {"top": "R7", "turn": 1, "hands": [["B1", "B2"], ["G3"], ["Y4"]]})


def test_attack_1998_a_forced_hit_may_keep_the_fired_card() -> None:
    state = run(
        deck="attack-1998",
        **FORCED_HIT,
        actions=[{"seat": 0, "hit": True}, {"seat": 0, "pass": True}],
    )
    check(state, {"top": "R5", "turn": 1, "hands": [["B1", "B2", "R7"], ["G3"], ["Y4"]]})


def test_attack_ends_the_turn_after_a_hit_even_if_a_fired_card_plays() -> None:
    state = run(**FORCED_HIT, actions=[{"seat": 0, "hit": True}])
    check(state, {"turn": 1, "fired_play": False})
    index, message, _ = run_error(
        **FORCED_HIT, actions=[{"seat": 0, "hit": True}, {"seat": 0, "play": "R7"}]
    )
    assert index == 1 and "turn" in message


def test_attack_1998_a_hit_by_choice_still_ends_the_turn() -> None:
    # Seat 0 could play R1 but hits (seed 001: "then let the next player continue").
    state = run(
        deck="attack-1998",
        hands=[["R1", "B2"], ["G3"], ["Y4"]],
        top="R5",
        turn=0,
        pile=["R7"],
        launcher=[1],
        actions=[{"seat": 0, "hit": True}],
    )
    check(state, {"turn": 1, "fired_play": False})


def test_play_fired_card_is_an_option_either_way() -> None:
    state = run(
        deck="attack",
        options={"play_fired_card": True},
        **FORCED_HIT,
        actions=[{"seat": 0, "hit": True}, {"seat": 0, "play": "R7"}],
    )
    check(state, {"top": "R7", "turn": 1})
    state = run(
        deck="attack-1998",
        options={"play_fired_card": False},
        **FORCED_HIT,
        actions=[{"seat": 0, "hit": True}],
    )
    check(state, {"turn": 1})


# -- 6. A wild turned up first: the first player names the colour, even to hit or draw --------


@pytest.mark.parametrize(("deck", "verb"), [("attack", "hit"), ("classic", "draw")])
def test_a_wild_turned_up_first_gets_its_colour_even_if_the_first_player_takes(
    deck: str, verb: str
) -> None:
    base: dict[str, Any] = dict(
        deck=deck,
        hands=[["B1"], ["R3", "Y6"], ["Y3", "B7"]],
        top="W",
        pile=["R1", "R2", "R4"],
        launcher=[0],
        # Seat 1 is the first player (classic's dealer_plays_first: test_rules_first_card).
        options={"dealer_plays_first": False},
    )
    state = run(**base, actions=[{"seat": 1, verb: True, "color": "G"}])
    check(state, {"color": "G", "turn": 2})
    index, message, _ = run_error(
        **base, actions=[{"seat": 1, verb: True, "color": "G"}, {"seat": 2, "play": "Y3"}]
    )
    assert index == 1 and "does not match" in message
    index, message, _ = run_error(**base, actions=[{"seat": 1, verb: True}])
    assert index == 0 and "names the colour first" in message


def test_a_wc_turned_up_first_is_a_plain_wild_whatever_it_is_bound_to() -> None:
    state = run(
        hands=[["B1"], ["R3", "Y6"], ["Y3", "B7"]],
        top="WC",
        options={"custom_wild_effect": "WAA"},
        actions=[{"seat": 1, "play": "R3"}],
    )
    check(state, {"pending": [], "color": "R", "turn": 2})


# -- 7. attack-1998 seats 2 to 9 (its sheet) ------------------------------------------------


def test_attack_1998_seats_at_most_nine() -> None:
    hands = [[f"{c}{n}"] for c in "RB" for n in range(1, 6)]
    with pytest.raises(InputError, match="from 2 to 9"):
        parse_scenario(scenario(deck="attack-1998", players=10, hands=hands, top="G5"))
    parse_scenario(scenario(deck="attack", players=10, hands=hands, top="G5"))
    parse_scenario(scenario(deck="attack-1998", players=9, hands=hands[:9], top="G5"))


# -- 8. stacking also answers a turned-up H2 / D2 -------------------------------------------


@pytest.mark.parametrize(
    ("deck", "top", "answer", "kind"),
    [("attack", "YH2", "RH2", "hits"), ("classic", "YD2", "RD2", "draws")],
)
def test_stacking_answers_a_penalty_turned_up_first(
    deck: str, top: str, answer: str, kind: str
) -> None:
    state = run(
        deck=deck,
        options={"stacking": True, "dealer_plays_first": False},
        hands=[["B1"], [answer, "Y6"], ["Y3", "B7"]],
        top=top,
        actions=[{"seat": 1, "play": answer}],
    )
    check(state, {"pending": [{"seat": 2, kind: 4}], "turn": 0, "top": answer})


# -- 9. Wild All Hit goes round from the next player in the current direction ----------------


def test_wild_all_hit_goes_round_in_the_direction_of_play() -> None:
    state = run(
        deck="attack-1998",
        hands=[["B1"], ["WAH", "R1"], ["B2"], ["Y3"]],
        top="G5",
        turn=1,
        direction=-1,
        actions=[{"seat": 1, "play": "WAH", "color": "B"}],
    )
    order = [d["seat"] for d in state["pending"]]
    check(state, {"turn": 0})
    assert order == [0, 3, 2]


# -- a scenario `color` must agree with a coloured top card ------------------------------------


def test_scenario_color_with_a_coloured_top_card_is_malformed() -> None:
    with pytest.raises(InputError, match=r"start\.color"):
        parse_scenario(scenario(hands=[["R1"], ["B2"]], top="R5", turn=0, color="B"))
    # The same colour is harmless.
    parse_scenario(scenario(hands=[["R1"], ["B2"]], top="R5", turn=0, color="R"))
