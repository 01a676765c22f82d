"""Game scoring modes (target, lowest, elimination, teams), dealer choice and dealing."""

from __future__ import annotations

import random

import pytest

from engine.cards import PRESETS, parse_card
from engine.errors import InputError, RuleError
from engine.game import Action, Game, Round, choose_dealer
from engine.launchers import ScriptedLauncher
from engine.rules import rules_for
from tests.engine.game_util import finish, game


def cards(*texts: str) -> list:
    return [parse_card(t) for t in texts]


def test_target_winner_scores_the_other_hands_and_deals_next() -> None:
    g = game("target")
    g.start_round()
    result = finish(g, 1, [["R5", "WAA"], [], ["YH2", "B9"]])
    assert result["points_left"] == [55, 0, 29]
    assert g.scores == [0, 84, 0]
    assert g.dealer == 1 and not g.over
    assert g.start_round().dealer == 1


def test_target_is_configurable_and_ends_the_game() -> None:
    g = game("target", target=80)
    g.start_round()
    finish(g, 1, [["R5", "WAA"], [], ["YH2", "B9"]])
    assert g.over and g.winners == (1,) and g.winner == 1
    with pytest.raises(RuleError, match="the game is over"):
        g.start_round()


def test_lowest_each_player_scores_own_hand_lowest_total_wins() -> None:
    g = game("lowest", target=60)
    g.start_round()
    finish(g, 0, [[], ["R5", "WAA"], ["B9"]])
    assert g.scores == [0, 55, 9] and not g.over
    g.start_round()
    finish(g, 2, [["R2"], ["R6"], []])
    assert g.scores == [2, 61, 9]
    assert g.over and g.winners == (0,)


def test_elimination_player_at_target_is_out_last_left_wins() -> None:
    g = game("elimination", players=3, target=50)
    g.start_round()
    finish(g, 0, [[], ["WAA"], ["B9"]])
    assert g.out == {1} and not g.over
    rnd = g.start_round()
    assert rnd.out == frozenset({1}) and rnd.hands[1] == []
    assert all(a.seat != 1 for a in rnd.legal_actions(1)) and rnd.legal_actions(1) == []
    finish(g, 0, [[], [], ["WAA"]])
    assert g.out == {1, 2}
    assert g.over and g.winners == (0,)


def test_elimination_with_two_left_uses_two_player_rules() -> None:
    g = game("elimination", players=3, target=50)
    g.start_round()
    finish(g, 0, [[], ["WAA"], ["B9"]])
    rnd = Round.from_position(
        g.deck,
        g.rules,
        g.launcher,
        hands=[cards("GS", "G1"), [], cards("B2")],
        top=parse_card("G5"),
        turn=0,
        out=g.out,
    )
    rnd.apply(Action("play", 0, (parse_card("GS"),)))
    assert rnd.turn == 0  # S with two seats in play gives the turn back


def test_teams_a_team_scores_its_own_members_cards_lowest_team_wins() -> None:
    # Seed 001 組隊比賽: "總計每位隊員手中持牌的點數和來做為該隊的分數" (a team's score is the
    # sum of the points in its members' hands).
    g = game("teams", players=4, target=100)
    g.start_round()
    result = finish(g, 0, [[], ["R5"], ["WAA"], ["B9"]])
    # Team 0 is seats 0 and 2: the partner's WAA costs the team that went out.
    assert result["gained"] == [50, 14, 50, 14]
    assert g.team_scores == [50, 14] and not g.over
    g.start_round()
    finish(g, 3, [["R9"], ["B1"], ["R2"], []])
    assert g.team_scores == [61, 15] and g.scores == [61, 15, 61, 15]
    g.start_round()
    finish(g, 1, [["WAA"], [], ["R1"], ["B2"]])
    assert g.team_scores == [112, 17]
    assert g.over and g.winners == (1, 3) and g.losers == (0, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "highest"}, "unknown mode `highest`"),
        ({"mode": "target", "target": 0}, "target = 0"),
        ({"mode": "teams", "players": 3}, "3 players cannot sit as 2 teams"),
        ({"mode": "teams", "players": 6, "teams": 4}, "6 players cannot sit as 4 teams"),
        ({"mode": "teams", "players": 6, "teams": 6}, "6 players cannot sit as 6 teams"),
    ],
)
def test_bad_game_settings(kwargs: dict, message: str) -> None:
    players = kwargs.pop("players", 4)
    with pytest.raises(InputError, match=message):
        Game(
            PRESETS["attack"],
            rules_for("attack", players),
            ScriptedLauncher([]),
            players=players,
            **kwargs,
        )


def test_dealer_is_the_highest_number_drawn_seeded() -> None:
    deck = PRESETS["classic"]
    for seed in range(20):
        dealer = choose_dealer(deck, range(4), random.Random(seed))
        again = choose_dealer(deck, range(4), random.Random(seed))
        assert dealer == again
        # Replay the first draw: when it is decisive, the dealer holds the highest number.
        drawn = deck.cards()
        random.Random(seed).shuffle(drawn)
        values = [c.number if c.number is not None else -1 for c in drawn[:4]]
        if values.count(max(values)) == 1 and max(values) >= 0:
            assert values[dealer] == max(values)


@pytest.mark.parametrize("preset", ["attack", "attack-1998", "classic"])
def test_deal_gives_seven_each_and_conserves_the_deck(preset: str) -> None:
    deck = PRESETS[preset]
    rnd = Round(deck, rules_for(preset, 5), ScriptedLauncher([]), players=5, dealer=2, seed=9)
    assert [len(h) for h in rnd.hands] == [7] * 5
    every = [c for h in rnd.hands for c in h] + rnd.discard + rnd.pile
    assert sorted(every) == sorted(deck.cards())
    same = Round(deck, rules_for(preset, 5), ScriptedLauncher([]), players=5, dealer=2, seed=9)
    assert same.to_dict() == rnd.to_dict()


def test_whole_games_end_in_every_mode() -> None:
    rng = random.Random(1)
    for mode in ("target", "lowest", "elimination", "teams"):
        g = Game(
            PRESETS["attack"],
            rules_for("attack", 4),
            ScriptedLauncher([rng.randrange(4) for _ in range(20000)]),
            players=4,
            mode=mode,
            target=150,
            seed=2,
            record=False,
        )
        while not g.over:
            rnd = g.start_round()
            while not rnd.over:
                acts = [a for a in rnd.legal_actions(rnd.actor) if a.kind not in ("uno", "catch")]
                plays = [a for a in acts if a.kind == "play"]
                rnd.apply(rng.choice(plays or acts))
            g.finish_round()
            assert g.rounds_played < 200
        assert sum(h["gained"][s] for h in g.history for s in range(4)) == sum(g.scores)


def test_a_round_must_be_over_and_scored_before_the_next() -> None:
    g = game("target")
    g.start_round()
    with pytest.raises(RuleError, match="the current round is not over yet"):
        g.start_round()
    with pytest.raises(RuleError, match="the round is not over yet"):
        g.finish_round()
    g.round = Round.from_position(
        g.deck,
        g.rules,
        g.launcher,
        hands=[cards("R1"), cards("B2"), cards("B3")],
        top=parse_card("R5"),
        turn=0,
    )
    g.round.apply(Action("play", 0, (parse_card("R1"),)))
    with pytest.raises(RuleError, match="not scored yet"):
        g.start_round()
    g.finish_round()
    assert g.start_round().dealer == 0


@pytest.mark.parametrize(
    ("mode", "winners", "losers"),
    [
        ("target", (1,), ()),  # the highest total, however far from the target
        ("lowest", (0,), ()),
        ("elimination", (0,), ()),
        ("losing", (), (1,)),
        ("teams", (0, 2), (1, 3)),  # teams of seats 0 & 2 (3 + 2) and 1 & 3 (40 + 9)
        ("chips", (1,), (0,)),
    ],
)
def test_the_last_round_of_a_game_of_so_many_rounds_ends_it(mode, winners, losers):
    """A night's stage is a game of four rounds: its last ends the game whatever the target."""
    from engine.scoring import judge, team_of

    scores = [3, 40, 2, 9] if mode != "teams" else [5, 49, 5, 49]
    if mode == "chips":
        scores = [-12, 20, -3, -5]
    if mode == "lowest" or mode == "elimination":
        scores = [1, 40, 2, 9]
    verdict = judge(mode, scores, 500, [0, 1, 2, 3], lambda s: team_of(s, 2), final=True)
    assert verdict.winners == winners and verdict.losers == losers
    assert judge(mode, scores, 500, [0, 1, 2, 3], lambda s: team_of(s, 2)).over is False
