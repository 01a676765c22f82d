"""Properties over random seeded games (hypothesis), all three presets, 2-6 players.

- cards are conserved: hands + discard pile + launcher pile = the deck, after every action;
- every game ends (bounded by the simulator's runaway guard);
- round scores equal the points left in the losing hands;
- no illegal move is ever accepted: an action outside `legal_actions` raises RuleError and leaves
  `to_dict()` unchanged; every action inside it is accepted.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bots import HeuristicBot, RandomBot
from engine.cards import COLORED_FACES, PRESETS, WILD_FACES, Card, Deck, card_of
from engine.cards import COLORS as CARD_COLORS
from engine.errors import RuleError
from engine.game import ACTION_KINDS, SCORING_MODES, Action, Game, Round
from engine.launchers import VirtualLauncher
from engine.rules import CUSTOM_WILD_EFFECTS, Rules, rules_for
from engine.sim import MAX_ACTIONS_PER_ROUND, MAX_ROUNDS_PER_GAME

pytestmark = pytest.mark.slow  # run first: see tests/conftest.py
ALL_CARDS: list[Card] = [card_of(c, f) for c in CARD_COLORS for f in COLORED_FACES] + [
    card_of(None, f) for f in WILD_FACES
]


@st.composite
def setups(draw: st.DrawFn) -> tuple[str, int, Rules, int]:
    """A preset, a player count, random rule options and a seed."""
    preset = draw(st.sampled_from(["attack", "attack-1998", "classic"]))
    players = draw(st.integers(2, 6))
    options: dict[str, object] = {
        "stacking": draw(st.booleans()),
        "multi_play": draw(st.booleans()),
        "jump_in": draw(st.booleans()),
        "last_card_restriction": draw(st.booleans()),
        "skip_reverse_play_again": draw(st.booleans()),
        "two_player_rules": draw(st.booleans()),
        "dealer_plays_first": draw(st.booleans()),
        "counter_clockwise": draw(st.booleans()),
    }
    if preset == "classic":
        options["draw_until_playable"] = draw(st.booleans())
    else:
        options["custom_wild_effect"] = draw(st.sampled_from(CUSTOM_WILD_EFFECTS))
    seed = draw(st.integers(0, 2**32 - 1))
    return preset, players, rules_for(preset, players, **options), seed


def conserved(rnd: Round, deck: Deck) -> bool:
    held: Counter[Card] = Counter(rnd.pile)
    held.update(rnd.discard)
    for hand in rnd.hands:
        held.update(hand)
    return held == Counter(deck.counts)


def play_checked(rnd: Round, bots: list[Any], deck: Deck) -> int:
    """Play a round to its end, asserting conservation after every action."""
    assert conserved(rnd, deck)
    actions = 0
    while not rnd.over:
        moved = False
        if rnd.window is not None or rnd.rules.jump_in:
            for seat in rnd.seats:
                if rnd.over:
                    break
                act = bots[seat].react(rnd, seat)
                if act is not None:
                    rnd.apply(act)
                    assert conserved(rnd, deck), act
                    moved = True
        if rnd.over:
            break
        actor = rnd.actor
        act = bots[actor].choose(rnd, actor)
        rnd.apply(act)
        assert conserved(rnd, deck), act
        actions += 1 + moved
        assert actions < MAX_ACTIONS_PER_ROUND, "round does not end"
    return actions


@settings(max_examples=60)
@given(setup=setups(), data=st.data())
def test_games_conserve_cards_end_and_score_the_losing_hands(
    setup: tuple[str, int, Rules, int], data: st.DataObject
) -> None:
    preset, players, rules, seed = setup
    deck = PRESETS[preset]
    # Teams of two or more partners: 2 teams of 2 or 3, or 3 teams of 2.
    splits = [t for t in (2, 3) if players % t == 0 and players // t >= 2]
    modes = [m for m in SCORING_MODES if m != "teams" or splits]
    mode = data.draw(st.sampled_from(modes))
    teams = data.draw(st.sampled_from(splits)) if mode == "teams" else 2
    rng = random.Random(seed)
    # Heuristic players keep games short; one random player explores odd corners (a table of
    # random players in classic can need thousands of actions per round).
    bots: list[Any] = [HeuristicBot(rng.getrandbits(32)) for _ in range(players)]
    if data.draw(st.booleans()):
        bots[rng.randrange(players)] = RandomBot(rng.getrandbits(32))
    game = Game(
        deck,
        rules,
        VirtualLauncher.seeded(seed),
        players,
        mode=mode,
        target=200,
        teams=teams,
        seed=seed,
    )
    while not game.over:
        assert game.rounds_played < MAX_ROUNDS_PER_GAME, "game does not end"
        rnd = game.start_round()
        play_checked(rnd, bots, deck)
        assert rnd.winner is not None
        assert rnd.hands[rnd.winner] == []
        left = [deck.points_of(hand) for hand in rnd.hands]
        held = list(game.chips or ())
        result = game.finish_round()
        assert result["points_left"] == left
        gained = result["gained"]
        if mode == "target":
            assert gained[rnd.winner] == sum(left)
            assert sum(gained) == sum(left)
        elif mode in ("lowest", "elimination", "losing"):
            assert gained == left
        elif mode == "teams":
            # A team's score is its own members' cards, every member credited with it.
            for s, g in enumerate(gained):
                assert g == sum(p for t, p in enumerate(left) if game.team_of(t) == game.team_of(s))
        elif mode == "chips":
            # Chips change hands: each loser pays the winner their points, at most what they hold.
            assert sum(gained) == 0
            for s, g in enumerate(gained):
                if s != rnd.winner:
                    assert g == -min(left[s], held[s])
        else:
            # Knockout: everyone but the loser went out, the first out wins; no points.
            assert mode == "knockout" and gained == [0] * players
            assert sorted([*rnd.finished, rnd.loser]) == list(range(players))
            assert rnd.finished[0] == rnd.winner and rnd.hands[rnd.loser]
            assert all(rnd.hands[s] == [] for s in rnd.finished)
            assert game.winners == (rnd.winner,) and game.losers == (rnd.loser,)
    assert game.over
    assert game.winners or game.losers


@st.composite
def any_action(draw: st.DrawFn, players: int) -> Action:
    """An action built from every card, seat and kind, legal or not."""
    kind = draw(st.sampled_from(ACTION_KINDS))
    seat = draw(st.integers(-1, players))
    cards: tuple[Card, ...] = ()
    if kind == "play" or draw(st.integers(0, 9)) == 0:
        n = draw(st.sampled_from([1, 1, 1, 2, 3, 0]))
        cards = tuple(draw(st.sampled_from(ALL_CARDS)) for _ in range(n))
    color = draw(st.sampled_from([None, None, *CARD_COLORS, "X"]))
    target = draw(st.sampled_from([None, None, -1, *range(players + 1)]))
    return Action(kind, seat, cards, color, target)


@settings(max_examples=40)
@given(setup=setups(), data=st.data())
def test_no_illegal_move_is_ever_accepted(
    setup: tuple[str, int, Rules, int], data: st.DataObject
) -> None:
    preset, players, rules, seed = setup
    deck = PRESETS[preset]
    rnd = Round(deck, rules, VirtualLauncher.seeded(seed), players=players, seed=seed)
    rng = random.Random(seed)
    # Walk a random game; at every step throw random actions at it, then make a legal move.
    for _ in range(data.draw(st.integers(5, 60))):
        if rnd.over:
            break
        for _ in range(4):
            act = data.draw(any_action(players))
            legal = 0 <= act.seat < players and act in rnd.legal_actions(act.seat)
            if legal or rnd.is_mistake(act):  # a mistake is accepted, and penalised
                probe = rnd.copy()
                probe.apply(act)  # must be accepted
            else:
                before = rnd.to_dict()
                try:
                    rnd.apply(act)
                except RuleError:
                    pass
                else:
                    raise AssertionError(f"accepted an illegal action: {act}")
                assert rnd.to_dict() == before, act
        # Every legal action of every seat is accepted (on copies, the round goes on unchanged).
        for seat in rnd.seats:
            acts = rnd.legal_actions(seat)
            for act in acts:
                rnd.copy().apply(act)
            # The calls (UNO, catch) come first (RandomBot reads them off the front).
            calls = [act.kind in ("uno", "catch") for act in acts]
            assert calls == sorted(calls, reverse=True), acts
        actor = rnd.actor
        assert actor is not None
        moves = rnd.legal_actions(actor)
        assert moves, "the seat the round waits for has no legal action"
        rnd.apply(moves[rng.randrange(len(moves))])
        assert conserved(rnd, deck)
