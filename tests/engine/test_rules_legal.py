"""legal_actions(seat) is exactly the set of actions apply() accepts (but for the penalised
mistakes, Round.is_mistake), and a refused action changes nothing. Checked on positions reached
by seeded random play with every option."""

from __future__ import annotations

import itertools
import random

import pytest

from engine.cards import COLORS, PRESETS
from engine.errors import RuleError
from engine.game import Action, Round
from engine.rules import rules_for


class OneCard:
    """A stateless launcher: every hit fires one card, so copies of a round behave alike."""

    def hit(self, seat: int, loaded: int) -> int:
        return min(1, loaded)

    def dispense(self, n: int, loaded: int) -> int:
        return min(n, loaded)

    def reload(self, loaded: int) -> None:
        pass


def candidates(rnd: Round, seat: int, rng: random.Random) -> set[Action]:
    """Plausible actions, legal or not: every card held (alone, and pairs of one face), with
    every colour and target, plus every other kind of action."""
    seats = range(rnd.players)
    hand = sorted(set(rnd.hands[seat]))
    groups = [(c,) for c in hand] + [
        (a, b) for a, b in itertools.combinations(sorted(rnd.hands[seat]), 2) if a.face == b.face
    ]
    groups.append((rnd.top,))
    groups.append((rng.choice(rnd.deck.cards()),))
    out: set[Action] = set()
    for cards in groups:
        # Targets matter for WAA, TH and a WC bound to WAA; elsewhere one wrong target will do.
        targets = (None, *seats) if cards[0].face in ("WAA", "TH", "WC") else (None, seat)
        for color in (None, *COLORS):
            for target in targets:
                out.add(Action("play", seat, cards, color, target))
    for kind in ("hit", "draw", "pass", "uno", "challenge"):
        out.add(Action(kind, seat))
    for target in seats:
        out.add(Action("catch", seat, target=target))
    return out


def snapshot(rnd: Round) -> tuple:
    """Everything apply may change, cheaply comparable."""
    return (
        tuple(tuple(h) for h in rnd.hands),
        tuple(rnd.discard),
        tuple(rnd.pile),
        (rnd.turn, rnd.direction, rnd.color, rnd.winner, rnd.window, rnd.drawn, rnd.bonus),
        tuple((d.seat, d.kind, d.n, d.fresh) for d in rnd.pending),
        tuple(rnd.uno_called),
        (rnd.presses, rnd.cards_fired, rnd.last_seat, rnd.wd4_by),
    )


ALL_ON = {"stacking": True, "multi_play": True, "jump_in": True, "last_card_restriction": True}


@pytest.mark.parametrize("preset", ["attack", "attack-1998", "classic"])
@pytest.mark.parametrize("options", [{}, ALL_ON], ids=["plain", "house"])
@pytest.mark.parametrize("players", [2, 4])
def test_legal_actions_are_exactly_the_accepted_ones(
    preset: str, options: dict, players: int
) -> None:
    rng = random.Random(f"{preset}{players}{sorted(options)}")
    rules = rules_for(preset, players, **options)
    checked = 0
    for seed in range(2):
        rnd = Round(PRESETS[preset], rules, OneCard(), players=players, seed=seed, record=False)
        for _ in range(30):
            if rnd.over:
                break
            for seat in range(players):
                legal = rnd.legal_actions(seat)
                assert len(legal) == len(set(legal)), "duplicates"
                legal_set = set(legal)
                before = snapshot(rnd)
                for action in candidates(rnd, seat, rng) | legal_set:
                    trial = rnd.copy()
                    try:
                        trial.apply(action)
                    except RuleError:
                        assert action not in legal_set, f"refused listed {action}"
                        assert snapshot(trial) == before, f"{action} changed state"
                    else:
                        # Accepted and not listed: only a mistake the rules penalise.
                        assert action in legal_set or rnd.is_mistake(action), (
                            f"accepted unlisted {action}"
                        )
                    checked += 1
            # Move on: mostly the waited-for seat, sometimes an out-of-turn action.
            seat = rnd.actor if rng.random() < 0.85 else rng.randrange(players)
            acts = rnd.legal_actions(seat) or rnd.legal_actions(rnd.actor)
            plays = [a for a in acts if a.kind == "play"]
            rnd.apply(rng.choice(plays if plays and rng.random() < 0.7 else acts))
    assert checked > 500
