"""Classic UNO effects, draws, Wild Draw Four challenges and UNO penalties, as scenarios."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.scenario_util import check, run, run_error

C = {"deck": "classic"}

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "D2: next player draws two and loses the turn",
        dict(
            hands=[["RD2", "B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G1", "G2", "G3"],
            actions=[{"seat": 0, "play": "RD2"}],
        ),
        {"pending": [{"seat": 1, "draws": 2}], "turn": 2},
    ),
    (
        "D2 draws are served in one draw",
        dict(
            hands=[["RD2", "B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G1", "G2", "G3"],
            actions=[{"seat": 0, "play": "RD2"}, {"seat": 1, "draw": True}],
        ),
        {
            "pending": [],
            "turn": 2,
            "hands": [["B1"], ["B2", "G1", "G2"], ["Y3"]],
            "launcher_left": 1,
        },
    ),
    (
        "WD4 played legally; the challenger draws six",
        dict(
            hands=[["WD4", "B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G1"] * 1 + ["G2"] * 2 + ["G3", "G4", "G5", "G6"],
            actions=[{"seat": 0, "play": "WD4", "color": "G"}, {"seat": 1, "challenge": True}],
        ),
        {"pending": [{"seat": 1, "draws": 6}], "turn": 2, "color": "G"},
    ),
    (
        "WD4 played holding the colour: the player draws four, the challenger plays",
        dict(
            hands=[["WD4", "R1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G1", "G2", "G3", "G4"],
            actions=[
                {"seat": 0, "play": "WD4", "color": "B"},
                {"seat": 1, "challenge": True},
                {"seat": 0, "draw": True},
            ],
        ),
        {"pending": [], "turn": 1, "hands": [["R1", "G1", "G2", "G3", "G4"], ["B2"], ["Y3"]]},
    ),
    (
        "a drawn playable card may be played at once",
        dict(
            hands=[["B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["R7", "G1"],
            actions=[{"seat": 0, "draw": True}, {"seat": 0, "play": "R7"}],
        ),
        {"hands": [["B1"], ["B2"], ["Y3"]], "top": "R7", "turn": 1},
    ),
    (
        "a drawn playable card may be kept with pass",
        dict(
            hands=[["B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["R7", "G1"],
            actions=[{"seat": 0, "draw": True}, {"seat": 0, "pass": True}],
        ),
        {"hands": [["B1", "R7"], ["B2"], ["Y3"]], "top": "R5", "turn": 1},
    ),
    (
        "after a draw only the drawn card may be played (it waits for play or pass)",
        dict(
            hands=[["R1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["R7", "G1"],
            actions=[{"seat": 0, "draw": True}],
        ),
        {"drawn": "R7", "turn": 0},
    ),
    (
        "an unplayable drawn card ends the turn",
        dict(
            hands=[["B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G7", "G1"],
            actions=[{"seat": 0, "draw": True}],
        ),
        {"hands": [["B1", "G7"], ["B2"], ["Y3"]], "turn": 1, "drawn": None},
    ),
    (
        "draw_until_playable draws until a card plays",
        dict(
            hands=[["B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G7", "B8", "R9", "G1"],
            options={"draw_until_playable": True},
            actions=[{"seat": 0, "draw": True}],
        ),
        {
            "hands": [["B1", "G7", "B8", "R9"], ["B2"], ["Y3"]],
            "drawn": "R9",
            "turn": 0,
            "launcher_left": 1,
        },
    ),
    (
        "caught without UNO: draw two",
        dict(
            hands=[["R1", "R2"], ["B5", "B6"], ["G1", "G2"]],
            top="R9",
            turn=0,
            pile=["Y1", "Y2", "Y3"],
            actions=[{"seat": 0, "play": "R1"}, {"seat": 1, "catch": 0}, {"seat": 0, "draw": True}],
        ),
        {"hands": [["R2", "Y1", "Y2"], ["B5", "B6"], ["G1", "G2"]], "pending": [], "turn": 1},
    ),
    (
        "a wrong accusation costs the accuser two cards",
        dict(
            hands=[["R1", "R2"], ["B5", "B6"], ["G1", "G2"]],
            top="R9",
            turn=0,
            actions=[{"seat": 0, "uno": True}, {"seat": 0, "play": "R1"}, {"seat": 2, "catch": 0}],
        ),
        {"pending": [{"seat": 2, "draws": 2}]},
    ),
    (
        "a false UNO call (three or more cards) costs two cards",
        dict(
            hands=[["R1", "R2", "R3"], ["B5", "B6"], ["G1", "G2", "G3"]],
            top="R9",
            turn=0,
            actions=[{"seat": 2, "uno": True}],
        ),
        {"pending": [{"seat": 2, "draws": 2}]},
    ),
    (
        "a winning D2 still makes the next player draw",
        dict(
            hands=[["RD2"], ["B1"], ["G1"]],
            top="R5",
            turn=0,
            pile=["Y1", "Y2"],
            actions=[{"seat": 0, "play": "RD2"}, {"seat": 1, "draw": True}],
        ),
        {"winner": 0, "round_over": True, "round_points": [0, 4, 1]},
    ),
    (
        "an empty draw pile is refilled from the discard pile except its top",
        dict(
            hands=[["R1", "B1"], ["R2", "G2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=[],
            actions=[
                {"seat": 0, "play": "R1"},
                {"seat": 1, "play": "R2"},
                {"seat": 2, "draw": True},
            ],
        ),
        {"top": "R2", "discard": ["R2"], "launcher_left": 1},
    ),
    (
        "two players: R acts as S",
        dict(
            hands=[["GR", "G1"], ["B2", "B3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GR"}],
        ),
        {"turn": 0},
    ),
    (
        "two players: S gives the turn back",
        dict(
            hands=[["GS", "G1"], ["B2", "B3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GS"}],
        ),
        {"turn": 0},
    ),
    (
        "three players: R reverses, no bonus",
        dict(
            hands=[["GR", "G1"], ["B2"], ["B3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GR"}],
        ),
        {"turn": 2, "direction": -1, "bonus": False},
    ),
]


@pytest.mark.parametrize(("kwargs", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classic_rule(kwargs: dict[str, Any], expected: dict[str, Any]) -> None:
    check(run(**C, **kwargs), expected)


ERRORS: list[tuple[str, dict[str, Any], int, str]] = [
    (
        "after drawing, another card",
        dict(
            hands=[["R1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["R7"],
            actions=[{"seat": 0, "draw": True}, {"seat": 0, "play": "R1"}],
        ),
        1,
        "after drawing, only the drawn R7 may be played",
    ),
    (
        "hit in classic",
        dict(hands=[["R1"], ["B2"], ["Y3"]], top="R5", turn=0, actions=[{"seat": 0, "hit": True}]),
        0,
        "classic rules draw cards: use draw, not hit",
    ),
    (
        "a challenge without a WD4",
        dict(
            hands=[["RD2", "R1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "RD2"}, {"seat": 1, "challenge": True}],
        ),
        1,
        "seat 1 has no Wild Draw Four to challenge",
    ),
    (
        "a challenge after the first draw",
        dict(
            hands=[["WD4", "R1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G1"] * 1,
            actions=[
                {"seat": 0, "play": "WD4", "color": "G"},
                {"seat": 1, "draw": True},
                {"seat": 1, "challenge": True},
            ],
        ),
        2,
        "no Wild Draw Four to challenge",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "index", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_classic_illegal_action(kwargs: dict[str, Any], index: int, message: str) -> None:
    got_index, got_message, _ = run_error(**C, **kwargs)
    assert (got_index, message in got_message) == (index, True), got_message
