"""Every UNO Attack card effect, turn rule, UNO call and round-end rule, as scenarios."""

from __future__ import annotations

from typing import Any

import pytest

from engine.scenario import parse_scenario
from tests.engine.scenario_util import check, run, run_error, scenario

P3 = {"players": 3, "turn": 0}

# (id, scenario keyword arguments, expected subset of the final state)
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "R reverses; play goes right (attack-1998, no bonus)",
        dict(
            deck="attack-1998",
            hands=[["GR", "R1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GR"}],
        ),
        {"direction": -1, "turn": 2, "top": "GR", "color": "G", "hands": [["R1"], ["B2"], ["Y3"]]},
    ),
    (
        "R bonus: same player plays again, then play goes right",
        dict(
            hands=[["GR", "G7", "B1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GR"}, {"seat": 0, "play": "G7"}],
        ),
        {"direction": -1, "turn": 2, "top": "G7", "hands": [["B1"], ["B2"], ["Y3"]]},
    ),
    (
        "S skips the next player (attack-1998)",
        dict(
            deck="attack-1998",
            hands=[["GS", "B1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GS"}],
        ),
        {"turn": 2, "direction": 1, "top": "GS"},
    ),
    (
        "S bonus: one more card, and the skipped player stays skipped",
        dict(
            hands=[["GS", "G7", "B1"], ["B2"], ["Y3"], ["R4"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GS"}, {"seat": 0, "play": "G7"}],
        ),
        {"turn": 2, "top": "G7", "hands": [["B1"], ["B2"], ["Y3"], ["R4"]]},
    ),
    (
        "S bonus may be declined with pass",
        dict(
            hands=[["GS", "G7", "B1"], ["B2"], ["Y3"], ["R4"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GS"}, {"seat": 0, "pass": True}],
        ),
        {"turn": 2, "top": "GS", "bonus": False},
    ),
    (
        "H2: next player owes two hits and loses the turn",
        dict(
            hands=[["YH2", "B1"], ["B2", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            pile=["R1", "R2", "R3", "R4"],
            launcher=[1, 2],
            actions=[{"seat": 0, "play": "YH2"}],
        ),
        {"pending": [{"seat": 1, "hits": 2}], "turn": 2, "actor": 1},
    ),
    (
        "H2 hits are served: every fired card goes to the hitter",
        dict(
            hands=[["YH2", "B1"], ["B2", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            pile=["R1", "R2", "R3", "R4"],
            launcher=[1, 2],
            actions=[
                {"seat": 0, "play": "YH2"},
                {"seat": 1, "hit": True},
                {"seat": 1, "hit": True},
            ],
        ),
        {
            "pending": [],
            "turn": 2,
            "launcher_left": 1,
            "hands": [["B1"], ["B2", "G3", "R1", "R2", "R3"], ["Y3"]],
        },
    ),
    (
        "DA discards every card of its colour; DA ends on top",
        dict(
            hands=[["RDA", "R1", "R7", "B2", "RS"], ["B3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "RDA"}],
        ),
        {
            "hands": [["B2"], ["B3"], ["Y3"]],
            "top": "RDA",
            "color": "R",
            "turn": 1,
            "discard": ["R5", "R1", "R7", "RS", "RDA"],
        },
    ),
    (
        "DA plays on another DA of any colour",
        dict(
            hands=[["RDA", "R1", "B2"], ["B3"], ["Y3"]],
            top="BDA",
            turn=0,
            actions=[{"seat": 0, "play": "RDA"}],
        ),
        {"hands": [["B2"], ["B3"], ["Y3"]], "color": "R"},
    ),
    (
        "TH swaps whole hands with the chosen player",
        dict(
            deck="attack-1998",
            hands=[["RTH", "R1", "R2"], ["B5"], ["G6", "G7"]],
            top="R9",
            turn=0,
            actions=[{"seat": 0, "play": "RTH", "target": 2}],
        ),
        {"hands": [["G6", "G7"], ["B5"], ["R1", "R2"]], "turn": 1, "top": "RTH"},
    ),
    (
        "W names the colour",
        dict(
            hands=[["W", "R1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "w", "color": "b"}],
        ),
        {"color": "B", "top": "W", "turn": 1, "pending": []},
    ),
    (
        "WH4: next player hits four times and loses the turn",
        dict(
            hands=[["WH4", "R1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "WH4", "color": "Y"}],
        ),
        {"color": "Y", "pending": [{"seat": 1, "hits": 4}], "turn": 2},
    ),
    (
        "WAA: the chosen player hits twice; play passes on from the player as usual",
        dict(
            hands=[["WAA", "R1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "WAA", "color": "R", "target": 2}],
        ),
        {"pending": [{"seat": 2, "hits": 2}], "turn": 1, "color": "R"},
    ),
    (
        "WHF: next player hits until a card fires, then loses the turn",
        dict(
            deck="attack-1998",
            hands=[["WHF", "R1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            pile=["R1", "R2", "R3"],
            launcher=[0, 0, 2],
            actions=[
                {"seat": 0, "play": "WHF", "color": "G"},
                {"seat": 1, "hit": True},
                {"seat": 1, "hit": True},
            ],
        ),
        {
            "pending": [{"seat": 1, "until_fire": True}],
            "turn": 2,
            "hands": [["R1"], ["B2"], ["Y3"]],
        },
    ),
    (
        "WHF ends on the press that fires",
        dict(
            deck="attack-1998",
            hands=[["WHF", "G1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            pile=["R1", "R2", "R3"],
            launcher=[0, 0, 2],
            actions=[
                {"seat": 0, "play": "WHF", "color": "G"},
                {"seat": 1, "hit": True},
                {"seat": 1, "hit": True},
                {"seat": 1, "hit": True},
            ],
        ),
        {
            "pending": [],
            "turn": 2,
            "hands": [["G1"], ["B2", "R1", "R2"], ["Y3"]],
            "presses": 3,
            "cards_fired": 2,
        },
    ),
    (
        "WAH: every other player, from the player's left, hits once",
        dict(
            deck="attack-1998",
            hands=[["B1"], ["WAH", "R1"], ["B2"], ["Y3"]],
            top="G5",
            turn=1,
            actions=[{"seat": 1, "play": "WAH", "color": "B"}],
        ),
        {
            "pending": [{"seat": 2, "hits": 1}, {"seat": 3, "hits": 1}, {"seat": 0, "hits": 1}],
            "turn": 2,
        },
    ),
    (
        "WC is a plain wild by default",
        dict(
            hands=[["WC", "R1"], ["B2"], ["Y3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "WC", "color": "Y"}],
        ),
        {"pending": [], "turn": 1, "color": "Y", "top": "WC"},
    ),
    (
        "a hit when you cannot play ends the turn even if the fired card plays",
        dict(
            hands=[["B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["R7", "G1"],
            launcher=[1],
            actions=[{"seat": 0, "hit": True}],
        ),
        {"hands": [["B1", "R7"], ["B2"], ["Y3"]], "turn": 1, "launcher_left": 1},
    ),
    (
        "a dry hit gives nothing and ends the turn",
        dict(
            hands=[["B1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["R7"],
            launcher=[0],
            actions=[{"seat": 0, "hit": True}],
        ),
        {"hands": [["B1"], ["B2"], ["Y3"]], "turn": 1, "launcher_left": 1},
    ),
    (
        "you may hit instead of playing a playable card; a burst all goes to you",
        dict(
            hands=[["R1"], ["B2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=["G1", "G2", "G3", "G4"],
            launcher=[3],
            actions=[{"seat": 0, "hit": True}],
        ),
        {"hands": [["R1", "G1", "G2", "G3"], ["B2"], ["Y3"]], "turn": 1, "launcher_left": 1},
    ),
    (
        "caught without UNO: two hits",
        dict(
            hands=[["R1", "R2"], ["B5", "B6"], ["G1", "G2"]],
            top="R9",
            turn=0,
            pile=["Y1", "Y2", "Y3"],
            launcher=[1, 1],
            actions=[
                {"seat": 0, "play": "R1"},
                {"seat": 2, "catch": 0},
                {"seat": 0, "hit": True},
                {"seat": 0, "hit": True},
            ],
        ),
        {"hands": [["R2", "Y1", "Y2"], ["B5", "B6"], ["G1", "G2"]], "pending": [], "turn": 1},
    ),
    (
        "UNO called before playing: a catch is a wrong accusation",
        dict(
            hands=[["R1", "R2"], ["B5", "B6"], ["G1", "G2"]],
            top="R9",
            turn=0,
            actions=[{"seat": 0, "uno": True}, {"seat": 0, "play": "R1"}, {"seat": 2, "catch": 0}],
        ),
        {"pending": [{"seat": 2, "hits": 2}], "uno_called": [0], "turn": 1},
    ),
    (
        "UNO called after the card, before anyone catches it",
        dict(
            hands=[["R1", "R2"], ["B5", "B6"], ["G1", "G2"]],
            top="R9",
            turn=0,
            actions=[{"seat": 0, "play": "R1"}, {"seat": 0, "uno": True}, {"seat": 1, "catch": 0}],
        ),
        {"pending": [{"seat": 1, "hits": 2}]},
    ),
    (
        "UNO may be called with two cards, also before your turn",
        dict(
            hands=[["R1", "R2", "R3"], ["B5", "B6"], ["G1", "G2"]],
            top="R9",
            turn=0,
            actions=[{"seat": 1, "uno": True}],
        ),
        {"pending": [], "uno_called": [1]},
    ),
    (
        "a false UNO call (three or more cards) costs two hits",
        dict(
            hands=[["B1", "B2", "B3"], ["R3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "uno": True}],
        ),
        {"pending": [{"seat": 0, "hits": 2}], "uno_called": []},
    ),
    (
        "accusing a player who holds more than one card costs the accuser two hits",
        dict(
            hands=[["B1", "B2"], ["R3", "R4"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "catch": 1}],
        ),
        {"pending": [{"seat": 0, "hits": 2}]},
    ),
    (
        "the last card's hits still happen before the round is over",
        dict(
            hands=[["YH2"], ["B1"], ["G1"]],
            top="Y5",
            turn=0,
            pile=["R1", "R2", "R3"],
            launcher=[1, 1],
            actions=[{"seat": 0, "play": "YH2"}],
        ),
        {
            "winner": 0,
            "round_over": False,
            "pending": [{"seat": 1, "hits": 2}],
            "round_points": None,
        },
    ),
    (
        "round points after the last hits",
        dict(
            hands=[["YH2"], ["B1"], ["G1"]],
            top="Y5",
            turn=0,
            pile=["R1", "R2", "R3"],
            launcher=[1, 1],
            actions=[
                {"seat": 0, "play": "YH2"},
                {"seat": 1, "hit": True},
                {"seat": 1, "hit": True},
            ],
        ),
        {
            "winner": 0,
            "round_over": True,
            "pending": [],
            "round_points": [0, 4, 1],
            "hands": [[], ["B1", "R1", "R2"], ["G1"]],
        },
    ),
    (
        "a dry launcher reloads from the discard pile, keeping its top card",
        dict(
            hands=[["R1", "B1"], ["R2", "G2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=[],
            launcher=[1],
            actions=[
                {"seat": 0, "play": "R1"},
                {"seat": 1, "play": "R2"},
                {"seat": 2, "hit": True},
            ],
        ),
        {"top": "R2", "launcher_left": 1, "discard": ["R2"], "turn": 0},
    ),
    (
        "two players: R acts as S, the player goes again",
        dict(
            hands=[["GR", "G1", "B1"], ["B2", "B3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GR"}],
        ),
        {"turn": 0, "bonus": False},
    ),
    (
        "two players: S gives the turn back (attack-1998)",
        dict(
            deck="attack-1998",
            hands=[["GS", "G1"], ["B2", "B3"]],
            top="G5",
            turn=0,
            actions=[{"seat": 0, "play": "GS"}],
        ),
        {"turn": 0},
    ),
    (
        "two players: after H2 the opponent hits twice and you play again",
        dict(hands=[["YH2", "B1"], ["B2"]], top="Y5", turn=0, actions=[{"seat": 0, "play": "YH2"}]),
        {"turn": 0, "pending": [{"seat": 1, "hits": 2}], "actor": 1},
    ),
]


@pytest.mark.parametrize(("kwargs", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_attack_rule(kwargs: dict[str, Any], expected: dict[str, Any]) -> None:
    check(run(**kwargs), expected)


def test_reshuffled_cards_are_the_old_discards() -> None:
    state = run(
        hands=[["R1", "B1"], ["R2", "G2"], ["Y3"]],
        top="R5",
        turn=0,
        pile=[],
        launcher=[1],
        actions=[{"seat": 0, "play": "R1"}, {"seat": 1, "play": "R2"}, {"seat": 2, "hit": True}],
    )
    assert sorted([state["hands"][2][1], *state["pile"]]) == ["R1", "R5"]
    assert any("reloaded with 2 cards" in line for line in state["log"])


# (id, scenario keyword arguments, index of the refused action, message)
ERRORS: list[tuple[str, dict[str, Any], int, str]] = [
    (
        "playing while owing hits",
        dict(
            hands=[["YH2", "B1"], ["B2", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            actions=[{"seat": 0, "play": "YH2"}, {"seat": 1, "play": "B2"}],
        ),
        1,
        "seat 1 must hit 2 more times before playing",
    ),
    (
        "the turn player cannot play before someone else's hits",
        dict(
            hands=[["YH2", "B1"], ["B2", "G3"], ["Y3"]],
            top="Y5",
            turn=0,
            actions=[{"seat": 0, "play": "YH2"}, {"seat": 2, "play": "Y3"}],
        ),
        1,
        "seat 1 must hit 2 more times before anyone plays",
    ),
    (
        "a card that matches neither colour nor face",
        dict(
            hands=[["B1", "B2"], ["B3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "B1"}],
        ),
        0,
        "B1 does not match R5",
    ),
    (
        "out of turn",
        dict(hands=[["B1"], ["R3"], ["Y3"]], top="R5", turn=0, actions=[{"seat": 1, "play": "R3"}]),
        0,
        "it is seat 0's turn, not seat 1's",
    ),
    (
        "a card you do not hold",
        dict(hands=[["B1"], ["R3"], ["Y3"]], top="R5", turn=0, actions=[{"seat": 0, "play": "R7"}]),
        0,
        "seat 0 does not hold R7",
    ),
    (
        "a wild without a colour",
        dict(
            hands=[["W", "B1"], ["R3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "W"}],
        ),
        0,
        "name a colour for W",
    ),
    (
        "WAA without a target",
        dict(
            hands=[["WAA", "B1"], ["R3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "WAA", "color": "R"}],
        ),
        0,
        "WAA needs a target",
    ),
    (
        "WAA aimed at yourself",
        dict(
            hands=[["WAA", "B1"], ["R3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "WAA", "color": "R", "target": 0}],
        ),
        0,
        "WAA needs a target",
    ),
    (
        "no draw pile in UNO Attack",
        dict(hands=[["B1"], ["R3"], ["Y3"]], top="R5", turn=0, actions=[{"seat": 0, "draw": True}]),
        0,
        "UNO Attack has no draw pile",
    ),
    (
        "TH cannot go out (attack-1998)",
        dict(
            deck="attack-1998",
            hands=[["RTH"], ["R3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "RTH", "target": 1}],
        ),
        0,
        "TH cannot be your last card",
    ),
    (
        "a catch after the next player's first action is too late (no penalty for anyone)",
        dict(
            hands=[["R1", "R2"], ["B5", "R6"], ["G1", "G2"]],
            top="R9",
            turn=0,
            actions=[{"seat": 0, "play": "R1"}, {"seat": 1, "play": "R6"}, {"seat": 2, "catch": 0}],
        ),
        2,
        "too late to catch seat 0",
    ),
    (
        "a pass without a bonus turn",
        dict(
            hands=[["B1", "B2"], ["R3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "pass": True}],
        ),
        0,
        "seat 0 must play or hit",
    ),
    (
        "nothing after the round",
        dict(
            hands=[["R1"], ["R3"], ["Y3"]],
            top="R5",
            turn=0,
            actions=[{"seat": 0, "play": "R1"}, {"seat": 1, "play": "R3"}],
        ),
        1,
        "the round is over: seat 0 went out",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "index", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_attack_illegal_action_changes_nothing(
    kwargs: dict[str, Any], index: int, message: str
) -> None:
    got_index, got_message, state = run_error(**kwargs)
    assert got_index == index
    assert message in got_message
    # The state is the one before the refused action.
    before = run(**{**kwargs, "actions": kwargs["actions"][:index]})
    assert state == before


@pytest.mark.parametrize(
    ("effect", "extra", "expected"),
    [
        ("W", {}, {"pending": [], "turn": 1}),
        ("WH4", {}, {"pending": [{"seat": 1, "hits": 4}], "turn": 2}),
        ("WAA", {"target": 2}, {"pending": [{"seat": 2, "hits": 2}], "turn": 1}),
        ("WHF", {}, {"pending": [{"seat": 1, "until_fire": True}], "turn": 2}),
        ("WAH", {}, {"pending": [{"seat": 1, "hits": 1}, {"seat": 2, "hits": 1}], "turn": 1}),
    ],
)
def test_custom_wild_effect_binds_wc(
    effect: str, extra: dict[str, Any], expected: dict[str, Any]
) -> None:
    state = run(
        hands=[["WC", "R1"], ["B2"], ["Y3"]],
        top="G5",
        turn=0,
        options={"custom_wild_effect": effect},
        actions=[{"seat": 0, "play": "WC", "color": "B", **extra}],
    )
    check(state, {"color": "B", "top": "WC", **expected})


def test_reshuffle_tells_the_launcher_how_many_cards_it_now_holds() -> None:
    replay = parse_scenario(
        scenario(
            hands=[["R1", "B1"], ["R2", "G2"], ["Y3"]],
            top="R5",
            turn=0,
            pile=[],
            launcher=[1],
            actions=[
                {"seat": 0, "play": "R1"},
                {"seat": 1, "play": "R2"},
                {"seat": 2, "hit": True},
            ],
        )
    )
    launcher = replay.launcher
    reloads: list[int] = []
    launcher.reload = reloads.append  # type: ignore[method-assign]
    replay.run()
    assert reloads == [2]
