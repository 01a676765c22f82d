"""The engine's fast paths agree with its general code, on positions from seeded random play.

legal_actions answers the common case (the seat to move, nothing pending) from precomputed
tables, and apply accepts the shared Action objects it hands out without the full check. Here:
the fast legal list equals the general one (same actions, same order), every shared single-card
play is accepted by apply exactly when legal_actions lists it, and the count of one-card hands
that gates catches is always right.
"""

from __future__ import annotations

import random

import pytest

from engine.cards import PRESETS, parse_card, parse_cards
from engine.errors import InputError, RuleError
from engine.game import Round
from engine.launchers import VirtualLauncher
from engine.rules import rules_for

CASES = [
    ("classic", 4, {}),
    ("classic", 2, {}),
    ("classic", 3, {"draw_until_playable": True, "jump_in": True}),
    ("attack", 4, {}),
    ("attack", 3, {"custom_wild_effect": "WAA", "last_card_restriction": True}),
    ("attack", 5, {"stacking": True, "multi_play": True}),
    ("attack-1998", 4, {"skip_reverse_play_again": True}),
    ("attack-1998", 2, {"hand_size": 2}),
]


def play(preset: str, players: int, options: dict, seed: int) -> None:
    rules = rules_for(preset, players, **options)
    rnd = Round(
        PRESETS[preset],
        rules,
        VirtualLauncher.seeded(seed),
        players=players,
        dealer=seed % players,
        seed=seed,
        record=False,
    )
    rng = random.Random(seed)
    for _ in range(300):  # plenty of positions; whether the round ends is tested elsewhere
        actor = rnd.actor
        if actor is None:
            return
        for seat in range(players):
            assert rnd.legal_actions(seat) == rnd._legal_slow(seat), (seat, rnd.to_dict())
        # Every shared play of the cards the actor (and one other seat) holds, and of the top.
        for seat in {actor, rng.randrange(players)}:
            legal = {id(a) for a in rnd.legal_actions(seat)}
            table = rnd._plays_of[seat]
            for card in {*rnd.hands[seat], rnd.top}:
                for act in table[card]:
                    trial = rnd.copy()
                    try:
                        trial.apply(act)
                        accepted = True
                    except RuleError:
                        accepted = False
                    assert accepted == (id(act) in legal), (act, rnd.to_dict())
        moves = [a for a in rnd.legal_actions(actor) if a.kind not in ("uno", "catch")]
        rnd.apply(rng.choice(moves))


@pytest.mark.parametrize(("preset", "players", "options"), CASES)
def test_fast_paths_match_the_general_rules(preset: str, players: int, options: dict) -> None:
    for seed in range(2):
        play(preset, players, options, seed)


def test_a_given_generator_deals_as_the_seed_it_was_made_with() -> None:
    deck, rules = PRESETS["classic"], rules_for("classic", 4)
    seeded = Round(deck, rules, VirtualLauncher.seeded(1), players=4, seed=5, record=False)
    shared = random.Random(5)
    first = Round(deck, rules, VirtualLauncher.seeded(1), players=4, record=False, rng=shared)
    assert first.hands == seeded.hands and first.pile == seeded.pile
    # The generator is advanced, so the next round from it is another deal.
    second = Round(deck, rules, VirtualLauncher.seeded(1), players=4, record=False, rng=shared)
    assert second.hands != first.hands


def test_a_position_with_an_unknown_colour_is_refused() -> None:
    deck = PRESETS["classic"]
    with pytest.raises(InputError, match="color = 'P': one of R, Y, G, B"):
        Round.from_position(
            deck,
            rules_for("classic", 2),
            VirtualLauncher.seeded(1),
            hands=[parse_cards(["R1", "R2"]), parse_cards(["G1", "G2"])],
            top=parse_card("R5"),
            color="P",
            turn=0,
        )
