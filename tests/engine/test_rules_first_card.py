"""The first card turned up, per preset: a scenario [start] without `turn` starts the round."""

from __future__ import annotations

from typing import Any

import pytest

from engine.scenario import parse_scenario
from tests.engine.scenario_util import check, run

HANDS3 = [["B1", "R2"], ["B2", "G3"], ["Y3", "G4"]]
HANDS4 = [["B1", "R2"], ["B2", "G3"], ["Y3", "G4"], ["Y4", "R6"]]

# (id, deck, top, players, expected). Dealer is seat 0, so seat 1 is the first player.
CASES: list[tuple[str, str, str, int, dict[str, Any]]] = [
    (
        "attack number: normal start",
        "attack",
        "R5",
        3,
        {"turn": 1, "color": "R", "pending": [], "direction": 1},
    ),
    (
        "attack W: first player names the colour by playing",
        "attack",
        "W",
        3,
        {"turn": 1, "color": None, "pending": []},
    ),
    ("attack WC: like W", "attack", "WC", 3, {"turn": 1, "color": None, "pending": []}),
    (
        "attack H2: first player hits twice, next starts",
        "attack",
        "YH2",
        3,
        {"turn": 2, "pending": [{"seat": 1, "hits": 2}], "actor": 1},
    ),
    (
        "attack WH4: first player hits four times",
        "attack",
        "WH4",
        3,
        {"turn": 2, "pending": [{"seat": 1, "hits": 4}]},
    ),
    (
        "attack WAA: first player hits twice",
        "attack",
        "WAA",
        3,
        {"turn": 2, "pending": [{"seat": 1, "hits": 2}]},
    ),
    (
        "attack-1998 WHF: first player hits until cards fire",
        "attack-1998",
        "WHF",
        3,
        {"turn": 2, "pending": [{"seat": 1, "until_fire": True}]},
    ),
    (
        "attack-1998 WAH: everyone but the dealer hits once; first player starts",
        "attack-1998",
        "WAH",
        4,
        {
            "turn": 1,
            "pending": [{"seat": 1, "hits": 1}, {"seat": 2, "hits": 1}, {"seat": 3, "hits": 1}],
        },
    ),
    ("attack S: first player skipped", "attack", "GS", 3, {"turn": 2, "pending": []}),
    (
        "attack R: dealer plays first, play goes right",
        "attack",
        "GR",
        3,
        {"turn": 0, "direction": -1},
    ),
    (
        "attack DA: normal start on its colour",
        "attack",
        "BDA",
        3,
        {"turn": 1, "color": "B", "pending": []},
    ),
    # Classic: the dealer plays first (seed 001 特殊情況: "如果為'變色'，則莊家可以下任意顏色的牌，
    # 如果為"+2"，則莊家罰抽兩張，如果為"轉向"，則遊戲由順時針變為逆時針，如果為"跳過"，則由莊家的
    # 下家開始下牌，其餘情況由莊家根據抽到的牌先下牌").
    ("classic number: the dealer plays first", "classic", "R0", 3, {"turn": 0, "color": "R"}),
    ("classic W: the dealer names the colour", "classic", "W", 3, {"turn": 0, "color": None}),
    (
        "classic D2: the dealer draws two and is skipped",
        "classic",
        "BD2",
        3,
        {"turn": 1, "pending": [{"seat": 0, "draws": 2}]},
    ),
    ("classic S: the dealer's next player starts", "classic", "BS", 3, {"turn": 1}),
    (
        "classic R: direction reversed, dealer first",
        "classic",
        "BR",
        3,
        {"turn": 0, "direction": -1},
    ),
]


@pytest.mark.parametrize(
    ("deck", "top", "players", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_first_card(deck: str, top: str, players: int, expected: dict[str, Any]) -> None:
    hands = HANDS3 if players == 3 else HANDS4
    state = run(deck=deck, hands=hands, top=top, pile=["R7", "R8", "B9"])
    check(state, {"top": top, **expected})


# With dealer_plays_first off, classic starts left of the dealer like the Attack sheets (and the
# sheet's own Wild paragraph: "如果該牌是抽出的首張牌，那么由莊家左邊玩家任意指定顏色出牌").
LEFT_OF_DEALER = [
    ("R0", {"turn": 1, "color": "R"}),
    ("W", {"turn": 1, "color": None}),
    ("BD2", {"turn": 2, "pending": [{"seat": 1, "draws": 2}]}),
    ("BS", {"turn": 2}),
    ("BR", {"turn": 0, "direction": -1}),
]


@pytest.mark.parametrize(("top", "expected"), LEFT_OF_DEALER, ids=[t for t, _ in LEFT_OF_DEALER])
def test_classic_first_card_left_of_the_dealer(top: str, expected: dict[str, Any]) -> None:
    state = run(
        deck="classic",
        hands=HANDS3,
        top=top,
        pile=["R7", "R8", "B9"],
        options={"dealer_plays_first": False},
    )
    check(state, {"top": top, **expected})


@pytest.mark.parametrize(("deck", "top"), [("attack-1998", "RTH"), ("classic", "WD4")])
def test_first_card_goes_back_and_another_is_turned(deck: str, top: str) -> None:
    state = run(deck=deck, hands=HANDS3, top=top, pile=["R7", "R8", "B9"], seed=3)
    assert state["top"] != top
    assert top in state["pile"]
    assert state["launcher_left"] == 3
    assert state["discard"] == [state["top"]]


def test_wild_first_card_lets_the_first_player_play_any_card() -> None:
    state = run(hands=HANDS3, top="W", pile=["R7"], actions=[{"seat": 1, "play": "G3"}])
    check(state, {"color": "G", "turn": 2, "top": "G3"})


def test_first_card_da_lets_the_first_player_play_another_da() -> None:
    state = run(
        hands=[["B1", "R2"], ["RDA", "G3"], ["Y3", "G4"]],
        top="BDA",
        pile=["R7"],
        actions=[{"seat": 1, "play": "RDA"}],
    )
    check(state, {"color": "R", "turn": 2, "hands": [["B1", "R2"], ["G3"], ["Y3", "G4"]]})


def test_dealt_round_without_start_is_seeded() -> None:
    one = parse_scenario({"deck": "attack", "players": 4, "seed": 7, "dealer": 2}).run()[0]
    two = parse_scenario({"deck": "attack", "players": 4, "seed": 7, "dealer": 2}).run()[0]
    other = parse_scenario({"deck": "attack", "players": 4, "seed": 8, "dealer": 2}).run()[0]
    assert one == two
    assert one["hands"] != other["hands"]
    assert [len(h) for h in one["hands"]] == [7, 7, 7, 7]
    assert one["launcher_left"] + 28 + len(one["discard"]) == 112
