"""House rules and rule options: stacking, multi_play, jump_in, last_card_restriction."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.scenario_util import check, run, run_error

STACK = {"stacking": True}
MULTI = {"multi_play": True}

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "stacking: H2 answered with H2, the next player takes four",
        dict(
            hands=[["YH2", "B1"], ["BH2", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            options=STACK,
            actions=[{"seat": 0, "play": "YH2"}, {"seat": 1, "play": "BH2"}],
        ),
        {"pending": [{"seat": 2, "hits": 4}], "turn": 0, "top": "BH2", "color": "B"},
    ),
    (
        "stacking: WH4 on H2 adds up",
        dict(
            hands=[["YH2", "B1"], ["WH4", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            options=STACK,
            actions=[{"seat": 0, "play": "YH2"}, {"seat": 1, "play": "WH4", "color": "G"}],
        ),
        {"pending": [{"seat": 2, "hits": 6}], "turn": 0},
    ),
    (
        "stacking classic: D2 answered with WD4",
        dict(
            deck="classic",
            hands=[["RD2", "B1"], ["WD4", "G3"], ["Y3"]],
            top="R5",
            turn=0,
            options=STACK,
            actions=[{"seat": 0, "play": "RD2"}, {"seat": 1, "play": "WD4", "color": "G"}],
        ),
        {"pending": [{"seat": 2, "draws": 6}], "turn": 0},
    ),
    (
        "stacking two players: the stack comes back to the first player",
        dict(
            hands=[["YH2", "B1"], ["BH2", "G3"]],
            top="Y5",
            turn=0,
            options=STACK,
            actions=[{"seat": 0, "play": "YH2"}, {"seat": 1, "play": "BH2"}],
        ),
        {"pending": [{"seat": 0, "hits": 4}], "turn": 1},
    ),
    (
        "multi_play: two S skip two players",
        dict(
            deck="attack-1998",
            hands=[["RS", "BS", "G1"], ["B2"], ["Y3"], ["Y4"], ["G5"]],
            top="R5",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["RS", "BS"], "color": "B"}],
        ),
        {"turn": 3, "top": "BS", "color": "B", "discard": ["R5", "RS", "BS"]},
    ),
    (
        "multi_play: an even number of R does not reverse",
        dict(
            deck="attack-1998",
            hands=[["RR", "BR", "G1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["RR", "BR"], "color": "R"}],
        ),
        {"direction": 1, "turn": 1, "top": "RR"},
    ),
    (
        "multi_play: an odd number of R reverses",
        dict(
            deck="attack-1998",
            hands=[["RR", "BR", "GR", "G1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["RR", "BR", "GR"], "color": "G"}],
        ),
        {"direction": -1, "turn": 2, "top": "GR"},
    ),
    (
        "multi_play: H2s add up",
        dict(
            hands=[["YH2", "BH2", "G1"], ["B2"], ["Y3"]],
            top="Y5",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["YH2", "BH2"], "color": "Y"}],
        ),
        {"pending": [{"seat": 1, "hits": 4}], "turn": 2},
    ),
    (
        "multi_play: several W count once, one colour named",
        dict(
            hands=[["W", "W", "G1"], ["B2"], ["Y3"]],
            top="Y5",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["W", "W"], "color": "B"}],
        ),
        {"pending": [], "turn": 1, "color": "B", "hands": [["G1"], ["B2"], ["Y3"]]},
    ),
    (
        "multi_play: numbers of one face, only one needs to match",
        dict(
            hands=[["G5", "B5", "G1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["g5", "b5"], "color": "G"}],
        ),
        {"color": "G", "top": "G5", "hands": [["G1"], ["B2"], ["Y3"]]},
    ),
    (
        "jump_in: an identical number out of turn; the players between lose their turn",
        dict(
            hands=[["R5", "B1"], ["B2"], ["R5", "Y3"], ["G4"]],
            top="R2",
            turn=0,
            options={"jump_in": True},
            actions=[{"seat": 0, "play": "R5"}, {"seat": 2, "play": "R5"}],
        ),
        {"turn": 3, "top": "R5", "hands": [["B1"], ["B2"], ["Y3"], ["G4"]]},
    ),
    (
        "last_card_restriction: going out on a number is fine",
        dict(
            hands=[["R1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            options={"last_card_restriction": True},
            actions=[{"seat": 0, "play": "R1"}],
        ),
        {"winner": 0, "round_over": True},
    ),
    (
        "skip_reverse_play_again off in attack: S just skips",
        dict(
            hands=[["GS", "G7"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            options={"skip_reverse_play_again": False},
            actions=[{"seat": 0, "play": "GS"}],
        ),
        {"turn": 2, "bonus": False},
    ),
    (
        "skip_reverse_play_again on in attack-1998",
        dict(
            deck="attack-1998",
            hands=[["GS", "G7"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            options={"skip_reverse_play_again": True},
            actions=[{"seat": 0, "play": "GS"}],
        ),
        {"turn": 0, "bonus": True},
    ),
]


@pytest.mark.parametrize(("kwargs", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_house_rule(kwargs: dict[str, Any], expected: dict[str, Any]) -> None:
    check(run(**kwargs), expected)


ERRORS: list[tuple[str, dict[str, Any], int, str]] = [
    (
        "no stacking without the option",
        dict(
            hands=[["YH2", "B1"], ["BH2", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            actions=[{"seat": 0, "play": "YH2"}, {"seat": 1, "play": "BH2"}],
        ),
        1,
        "seat 1 must hit 2 more times before playing",
    ),
    (
        "never D2 on WD4",
        dict(
            deck="classic",
            hands=[["WD4", "B1"], ["RD2", "G3"], ["Y3"]],
            top="R5",
            turn=0,
            options=STACK,
            actions=[{"seat": 0, "play": "WD4", "color": "R"}, {"seat": 1, "play": "RD2"}],
        ),
        1,
        "or answer with WD4 or WH4",
    ),
    (
        "no stacking once the hits have started",
        dict(
            hands=[["YH2", "B1"], ["BH2", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            options=STACK,
            actions=[
                {"seat": 0, "play": "YH2"},
                {"seat": 1, "hit": True},
                {"seat": 1, "play": "BH2"},
            ],
        ),
        2,
        "seat 1 must hit 1 more time before playing",
    ),
    (
        "several cards without multi_play",
        dict(
            hands=[["G5", "B5", "G1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": ["G5", "B5"], "color": "G"}],
        ),
        0,
        "play one card at a time (multi_play is off)",
    ),
    (
        "multi_play needs one face",
        dict(
            hands=[["G5", "G6", "G1"], ["B2"], ["Y3"]],
            top="G2",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["G5", "G6"]}],
        ),
        0,
        "must share a number or symbol",
    ),
    (
        "multi_play of two colours names one",
        dict(
            hands=[["G5", "B5", "G1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            options=MULTI,
            actions=[{"seat": 0, "play": ["G5", "B5"]}],
        ),
        0,
        "name the colour to continue with",
    ),
    (
        "jump_in needs the identical card",
        dict(
            hands=[["R5", "B1"], ["B2"], ["B5", "Y3"], ["G4"]],
            top="R2",
            turn=0,
            options={"jump_in": True},
            actions=[{"seat": 0, "play": "R5"}, {"seat": 2, "play": "B5"}],
        ),
        1,
        "it is seat 1's turn, not seat 2's",
    ),
    (
        "no jump_in without the option",
        dict(
            hands=[["R5", "B1"], ["B2"], ["R5", "Y3"], ["G4"]],
            top="R2",
            turn=0,
            actions=[{"seat": 0, "play": "R5"}, {"seat": 2, "play": "R5"}],
        ),
        1,
        "it is seat 1's turn, not seat 2's",
    ),
    (
        "last_card_restriction: not out on S",
        dict(
            hands=[["RS"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            options={"last_card_restriction": True},
            actions=[{"seat": 0, "play": "RS"}],
        ),
        0,
        "you may not go out on S",
    ),
    (
        "last_card_restriction: not out on a wild",
        dict(
            hands=[["W"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            options={"last_card_restriction": True},
            actions=[{"seat": 0, "play": "W", "color": "R"}],
        ),
        0,
        "you may not go out on W",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "index", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_house_rule_refusals(kwargs: dict[str, Any], index: int, message: str) -> None:
    got_index, got_message, _ = run_error(**kwargs)
    assert got_index == index
    assert message in got_message
