"""The game systems of seed 001 (the Chinese sheet), each tested against the sheet's sentence:
knock-out by going out (淘汰制), chips (籌碼制), losing points (輸分制), teams (組隊比賽), the
last-card rule (玩法二), the dealer playing first and counter-clockwise play, Discard All as a
choice and Wild Customizable's effects. The seat rotation (玩家位置變化) is tests/engine/
test_schedule.py's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.bots import HeuristicBot, RandomBot
from engine.cards import PRESETS, parse_card
from engine.cli import main as unoattack
from engine.game import Game, Round
from engine.launchers import ScriptedLauncher, VirtualLauncher
from engine.rules import rules_for
from engine.sim import play_round
from tests.engine.game_util import finish, game
from tests.engine.scenario_util import check, run, run_error


def c(text: str) -> Any:
    return parse_card(text)


def sim_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = unoattack(["sim", "--games", "12", "--workers", "1", "--json", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


# -- 1. 淘汰制: knock-out by going out ---------------------------------------------------------
# "如果多人遊戲中有一人勝出，遊戲仍然繼續，即：假設這是四人局，有一人勝出，則四人局變成三人局，
# 遊戲繼續，三人局會變成二人局，最後有一個人輸。" (when one player goes out the game goes on: four
# becomes three, three becomes two, and in the end one player loses.) "在淘汰制中，最快出完手中牌
# 的人獲勝。其他的人繼續進行遊戲直到最後一個人輸。" (the first out wins; the others play on until
# the last loses.)

KNOCKOUT: dict[str, Any] = dict(
    mode="knockout",
    hands=[["R1"], ["R2", "G7"], ["G2", "G3"], ["G4", "Y9", "Y8"]],
    top="R5",
    turn=0,
)
TO_THE_LAST = [
    {"seat": 0, "play": "R1"},  # out first: four becomes three
    {"seat": 1, "play": "R2"},
    {"seat": 2, "play": "G2"},
    {"seat": 3, "play": "G4"},
    {"seat": 1, "play": "G7"},  # out: three becomes two
    {"seat": 2, "play": "G3"},  # out: seat 3 is left, the loser
]


def test_knockout_a_player_out_leaves_and_the_round_goes_on() -> None:
    state = run(**KNOCKOUT, actions=TO_THE_LAST[:1])
    check(
        state,
        {"finished": [0], "out": [0], "winner": None, "loser": None, "round_over": False},
    )
    check(state, {"turn": 1, "actor": 1})
    index, message, _ = run_error(**KNOCKOUT, actions=[*TO_THE_LAST[:1], {"seat": 0, "hit": True}])
    assert index == 1 and "not in this round" in message


def test_knockout_plays_on_until_one_is_left_the_loser() -> None:
    state = run(**KNOCKOUT, actions=TO_THE_LAST)
    check(state, {"finished": [0, 1, 2], "loser": 3, "winner": 0, "round_over": True})
    check(state, {"round_points": [0, 0, 0, 17], "hands": [[], [], [], ["Y9", "Y8"]]})


def test_knockout_without_the_mode_the_first_out_ends_the_round() -> None:
    state = run(**{**KNOCKOUT, "mode": "target"}, actions=TO_THE_LAST[:1])
    check(state, {"finished": [0], "winner": 0, "loser": None, "round_over": True, "out": []})


def test_knockout_a_last_penalty_card_is_still_served() -> None:
    # "若贏家最後一張打出的是罰抽2張牌或罰抽4張牌，此局遊戲已結束，但贏家的下一家仍需受罰": the next
    # player still takes the penalty; in a knockout round play then goes on past them.
    state = run(
        **{**KNOCKOUT, "hands": [["RH2"], ["R2", "G7"], ["G2", "G3"], ["G4", "Y9"]]},
        launcher=[1, 0],
        actions=[{"seat": 0, "play": "RH2"}],
    )
    check(state, {"pending": [{"seat": 1, "hits": 2}], "actor": 1, "turn": 2, "out": [0]})
    state = run(
        **{**KNOCKOUT, "hands": [["RH2"], ["R2", "G7"], ["G2", "G3"], ["G4", "Y9"]]},
        pile=["B1", "B2", "B3"],
        launcher=[1, 0],
        actions=[{"seat": 0, "play": "RH2"}, {"seat": 1, "hit": True}, {"seat": 1, "hit": True}],
    )
    check(
        state,
        {"pending": [], "actor": 2, "hands": [[], ["R2", "G7", "B1"], ["G2", "G3"], ["G4", "Y9"]]},
    )


@pytest.mark.parametrize(
    ("last", "turn", "direction"),
    [("RS", 2, 1), ("RR", 3, -1)],
    ids=["skip: the next is skipped", "reverse: play turns round"],
)
def test_knockout_play_passes_as_the_last_card_says(last: str, turn: int, direction: int) -> None:
    state = run(
        **{**KNOCKOUT, "hands": [[last], ["R2", "G7"], ["G2", "G3"], ["G4", "Y9"]]},
        actions=[{"seat": 0, "play": last}],
    )
    check(state, {"turn": turn, "direction": direction, "bonus": False, "out": [0]})


def test_knockout_skips_count_past_the_player_who_left() -> None:
    # Two Skips as the last cards (multi_play) with three players: both others are skipped and
    # the first of them plays next; the seat that left is not counted.
    state = run(
        mode="knockout",
        options={"multi_play": True},
        hands=[["RS", "BS"], ["R2", "G7"], ["G2", "G3"]],
        top="R5",
        turn=0,
        actions=[{"seat": 0, "play": ["RS", "BS"], "color": "B"}],
    )
    check(state, {"turn": 1, "out": [0], "color": "B"})


def test_knockout_two_left_play_by_the_two_player_rules() -> None:
    # Three becomes two: Reverse acts as Skip ("某位玩家打出Reverse牌時，該卡的功能相當於Skip牌").
    state = run(
        mode="knockout",
        hands=[["R1"], ["RR", "G7"], ["G2", "G3"]],
        top="R5",
        turn=0,
        actions=[{"seat": 0, "play": "R1"}, {"seat": 1, "play": "RR"}],
    )
    check(state, {"turn": 1, "out": [0]})


@pytest.mark.parametrize("preset", ["attack", "attack-1998", "classic"])
def test_knockout_game_is_one_round_first_out_wins_last_loses(preset: str) -> None:
    rules = rules_for(preset, 5)
    g = Game(PRESETS[preset], rules, VirtualLauncher.seeded(3), 5, mode="knockout", seed=9)
    rnd = g.start_round()
    play_round(rnd, [HeuristicBot(s) for s in range(4)] + [RandomBot(7)])
    result = g.finish_round()
    assert g.over and g.rounds_played == 1
    assert len(rnd.finished) == 4 and rnd.loser not in rnd.finished
    assert g.winners == (rnd.finished[0],) and g.losers == (rnd.loser,)
    assert result["finished"] == rnd.finished and result["loser"] == rnd.loser
    assert g.to_dict()["losers"] == [rnd.loser]


def test_knockout_sim_names_a_loser_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    data = sim_json(capsys, "--mode", "knockout", "--players", "4")
    assert data["rounds"] == data["games"] == 12
    assert sum(data["wins"]) == sum(data["losses"]) == 12


# -- 3. 籌碼制: chips -----------------------------------------------------------------------
# "輸家按輸分將籌碼給贏家（也可計分，只是手工計分較為麻煩），多盤累計，以籌碼多少論勝負" (each loser
# gives the winner chips for their losing points; totalled over many games, the chips decide).


def test_chips_each_loser_pays_the_winner_their_points() -> None:
    g = game("chips", target=100)
    result = finish(g, 0, [[], ["WAA"], ["B9"]])
    assert result["gained"] == [59, -50, -9]
    assert g.chips == [159, 50, 91] and not g.over


def test_chips_a_loser_pays_what_they_hold_and_the_broke_player_ends_the_game() -> None:
    g = game("chips", target=100)
    finish(g, 0, [[], ["WAA"], ["B9"]])
    result = finish(g, 2, [["WAA", "WAA"], ["WAA", "R9"], []])
    # Seat 1 owes 59 and holds 50 chips: it pays 50 and is broke.
    assert result["gained"] == [-100, -50, 150]
    assert g.chips == [59, 0, 241] and sum(g.chips) == 300
    assert g.over and g.winners == (2,) and g.losers == (1,)
    assert g.to_dict()["chips"] == [59, 0, 241]


def test_chips_sim_reports_the_chips_won(capsys: pytest.CaptureFixture[str]) -> None:
    data = sim_json(capsys, "--mode", "chips", "--target", "150")
    assert sum(data["chips"]) == 0 and data["chips"] == data["points_scored"]
    assert sum(data["wins"]) >= 12 and sum(data["losses"]) >= 12


# -- 4. 輸分制: losing points ---------------------------------------------------------------
# "只計輸家的輸分，多盤累計，達到或超過事先約定的分值（如500分），則以輸分最多者為輸家" (only the
# losers' points count, over many games; at or past the agreed total the most is the loser).


def test_losing_the_most_points_at_the_target_is_the_loser() -> None:
    g = game("losing", target=60)
    finish(g, 0, [[], ["R5", "WAA"], ["B9"]])
    assert g.scores == [0, 55, 9] and not g.over
    finish(g, 2, [["R2"], ["R6"], []])
    assert g.scores == [2, 61, 9]
    assert g.over and g.losers == (1,) and g.winners == ()


def test_losing_tied_highest_share_the_loss() -> None:
    g = game("losing", target=50)
    finish(g, 0, [[], ["WAA"], ["W"]])
    assert g.losers == (1, 2)


def test_losing_sim_names_only_losers(capsys: pytest.CaptureFixture[str]) -> None:
    data = sim_json(capsys, "--mode", "losing")
    assert sum(data["wins"]) == 0 and sum(data["losses"]) >= 12


# -- 5. 組隊比賽: teams ----------------------------------------------------------------------
# "您也可以兩人或多人組成一隊來進行比賽，比賽時同隊的隊友要相隔坐，當某一玩家出完手中的持牌之後，
# 此時的分數便以隊為單位來進行計算，總計每位隊員手中持牌的點數和來做為該隊的分數。" (teams of two or
# more, partners sitting apart; when a player goes out each team scores the sum of its own members'
# cards.)


def test_teams_three_teams_of_two_partners_sit_apart() -> None:
    g = game("teams", players=6, teams=3, target=500)
    assert [g.team_of(s) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    result = finish(g, 0, [[], ["R5"], ["B9"], ["WAA"], ["G1"], ["Y2"]])
    # Seat 0 went out, but its partner (seat 3) holds a Wild Attack-Attack: team 0 scores 50.
    assert result["gained"] == [50, 6, 11, 50, 6, 11]
    assert g.team_scores == [50, 6, 11]


def test_teams_two_teams_of_three() -> None:
    g = game("teams", players=6, teams=2, target=20)
    finish(g, 1, [["R9"], [], ["B9"], ["G1"], ["Y2"], ["R8"]])
    assert g.team_scores == [20, 9]
    assert g.over and g.winners == (1, 3, 5) and g.losers == (0, 2, 4)


def test_teams_sim_takes_the_number_of_teams(capsys: pytest.CaptureFixture[str]) -> None:
    data = sim_json(capsys, "--mode", "teams", "--teams", "3", "--players", "6")
    assert data["teams"] == 3
    wins, losses = data["wins"], data["losses"]
    # Partners share every result.
    assert wins[:3] == wins[3:] and losses[:3] == losses[3:]


# -- 6. 玩法二: the last card -----------------------------------------------------------------
# "最後一張牌不能是'reverse翻轉'，'skip跳過'或者是'wild變色'。如果你最後一張牌恰好是這種牌，
# 則視為無牌可出。" (the last card may not be Reverse, Skip or Wild: holding only such a card counts
# as having no card to play.) "若贏家最後一張打出的是罰抽2張牌或罰抽4張牌，此局遊戲已結束，
# 但贏家的下一家仍需受罰" (a winner's last card may be a Draw Two or Wild Draw Four: the next player
# still draws).

RESTRICT = {"last_card_restriction": True}


@pytest.mark.parametrize("last", ["GR", "GS", "W"])
def test_last_card_may_not_be_reverse_skip_or_wild(last: str) -> None:
    base: dict[str, Any] = dict(
        deck="classic", options=RESTRICT, hands=[[last], ["R2"], ["R3"]], top="G5", turn=0
    )
    play: dict[str, Any] = {"seat": 0, "play": last}
    if last == "W":
        play["color"] = "R"
    message = run_error(**base, actions=[play])[1]
    assert "may not go out" in message
    # It counts as having no card to play: the player draws.
    assert run(**base, pile=["B9"], actions=[{"seat": 0, "draw": True}])["hands"][0] == [last, "B9"]


def test_last_card_wild_draw_four_may_end_the_round_and_the_next_still_draws() -> None:
    state = run(
        deck="classic",
        options=RESTRICT,
        hands=[["WD4"], ["R2"], ["R3"]],
        top="G5",
        turn=0,
        pile=["B1", "B2", "B3", "B4"],
        actions=[{"seat": 0, "play": "WD4", "color": "B"}],
    )
    check(state, {"winner": 0, "pending": [{"seat": 1, "draws": 4}], "round_over": False})


@pytest.mark.parametrize(
    ("last", "bound", "allowed"),
    [("WH4", "W", True), ("WAA", "W", True), ("WC", "W", False), ("WC", "WH4", True)],
)
def test_last_card_attack_wilds_that_make_someone_hit_may_end_the_round(
    last: str, bound: str, allowed: bool
) -> None:
    options = {**RESTRICT, "custom_wild_effect": bound}
    play: dict[str, Any] = {"seat": 0, "play": last, "color": "B"}
    if last == "WAA":
        play["target"] = 1
    base: dict[str, Any] = dict(options=options, hands=[[last], ["R2"], ["R3"]], top="G5", turn=0)
    if allowed:
        assert run(**base, actions=[play])["winner"] == 0
    else:
        assert "may not go out" in run_error(**base, actions=[play])[1]


# -- 7. the start, the direction, Discard All, Wild Customizable ----------------------------


def test_dealer_plays_first_attack_wild_all_hit_turned_up() -> None:
    # dealer_plays_first with a WAH turned up: every player but the dealer hits once; the
    # dealer plays first.
    state = run(
        deck="attack-1998",
        options={"dealer_plays_first": True},
        hands=[["B1", "R2"], ["B2", "G3"], ["Y3", "G4"]],
        top="WAH",
        pile=["R7", "R8", "B9"],
    )
    check(state, {"turn": 0, "pending": [{"seat": 1, "hits": 1}, {"seat": 2, "hits": 1}]})


@pytest.mark.parametrize(
    ("deck", "first"),
    [("classic", 0), ("attack", 3)],
    ids=["classic: the dealer, then right", "attack: the dealer's right"],
)
def test_counter_clockwise_play_goes_right(deck: str, first: int) -> None:
    # Seed 001 (classic): "遊戲開始時，每人分派7張牌，然後按逆時針序一家接一家出牌" (then play goes
    # counter-clockwise, one after another).
    hands = [["R1", "B1"], ["R2", "B2"], ["R3", "B3"], ["R4", "B4"]]
    base: dict[str, Any] = dict(
        deck=deck, options={"counter_clockwise": True}, hands=hands, top="R5", pile=["G1"]
    )
    check(run(**base), {"turn": first, "direction": -1})
    after = run(**base, actions=[{"seat": first, "play": f"R{first + 1}"}])
    check(after, {"turn": (first - 1) % 4})
    # A Reverse turned up: the dealer plays first and play goes the other way (left).
    check(run(**{**base, "top": "GR"}), {"turn": 0, "direction": 1})


DA_HAND = [["BDA", "B3", "B7", "R4"], ["R2", "G7"], ["G2", "G3"]]


def test_discard_all_takes_every_card_of_its_colour_by_default() -> None:
    # Seed 003: "Aruncă toate permite jucătorului să joace toate cărțile de o culoare"; seed 001
    # (擊卡樂): "打出時連帶手上所有同色牌均可一次打出".
    state = run(hands=DA_HAND, top="B5", turn=0, actions=[{"seat": 0, "play": "BDA"}])
    check(state, {"hands": [["R4"], ["R2", "G7"], ["G2", "G3"]], "top": "BDA"})


def test_discard_all_choice_takes_the_cards_the_player_picks() -> None:
    base: dict[str, Any] = dict(
        options={"discard_all_choice": True}, hands=DA_HAND, top="B5", turn=0
    )
    state = run(**base, actions=[{"seat": 0, "play": ["BDA", "B7"]}])
    check(state, {"hands": [["B3", "R4"], ["R2", "G7"], ["G2", "G3"]], "top": "BDA"})
    check(
        run(**base, actions=[{"seat": 0, "play": "BDA"}]),
        {"hands": [["B3", "B7", "R4"], ["R2", "G7"], ["G2", "G3"]]},
    )
    message = run_error(**base, actions=[{"seat": 0, "play": ["BDA", "R4"]}])[1]
    assert "only cards of its colour" in message
    # The Discard All itself must match: B3 matching a 3 on top does not carry it.
    message = run_error(**{**base, "top": "R3"}, actions=[{"seat": 0, "play": ["BDA", "B3"]}])[1]
    assert "does not match" in message


def test_discard_all_choice_lists_every_choice() -> None:
    rules = rules_for("attack", 3, discard_all_choice=True)
    rnd = Round.from_position(
        PRESETS["attack"],
        rules,
        ScriptedLauncher([]),
        hands=[[c(t) for t in h] for h in DA_HAND],
        top=c("B5"),
        turn=0,
    )
    plays = sorted(" ".join(map(str, a.cards)) for a in rnd.legal_actions(0) if a.kind == "play")
    assert plays == ["B3", "B3 B7 BDA", "B3 BDA", "B7", "B7 BDA", "BDA"]


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        ("S", {"turn": 2, "color": "B", "pending": []}),
        ("R", {"turn": 3, "direction": -1, "color": "B"}),
        ("H2", {"turn": 2, "pending": [{"seat": 1, "hits": 2}]}),
    ],
)
def test_wild_customizable_may_be_written_as_another_attack_card(
    bound: str, expected: dict[str, Any]
) -> None:
    # Seeds 000/003/004: "Players can create any action they choose" (004: "Gall chwaraewyr greu
    # unrhyw weithred o'u dewis").
    state = run(
        options={"custom_wild_effect": bound, "skip_reverse_play_again": False},
        hands=[["WC", "R1"], ["R2"], ["R3"], ["R4"]],
        top="G5",
        turn=0,
        actions=[{"seat": 0, "play": "WC", "color": "B"}],
    )
    check(state, expected)


def test_wild_customizable_as_trade_hands() -> None:
    base: dict[str, Any] = dict(
        options={"custom_wild_effect": "TH"}, hands=[["WC", "R1"], ["R2", "B2", "G2"]], top="G5"
    )
    state = run(**base, turn=0, actions=[{"seat": 0, "play": "WC", "color": "B", "target": 1}])
    check(state, {"hands": [["R2", "B2", "G2"], ["R1"]], "color": "B"})
    # Like Trade Hands it is never a last card.
    last = {**base, "hands": [["WC"], ["R2", "B2"]]}
    message = run_error(
        **last, turn=0, actions=[{"seat": 0, "play": "WC", "color": "B", "target": 1}]
    )[1]
    assert "cannot be your last card" in message
