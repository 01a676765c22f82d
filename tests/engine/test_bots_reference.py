"""The fast HeuristicBot makes the reference bot's decisions, on every move of many whole games.

tests/engine/reference_bot.py is the heuristic bot as it was before it was made faster. Each
decision below is asked of both, in the same position with random sources in the same state: they
must choose the same action and leave their random sources in the same state (the tie-break draws
exactly as many numbers). Comparing decision by decision, rather than recorded transcripts, keeps
this test true while the rules engine changes which games happen.
"""

from __future__ import annotations

import random

import pytest

from engine.bots import HeuristicBot, RandomBot
from engine.cards import PRESETS
from engine.game import Action, Game, Round
from engine.launchers import VirtualLauncher
from engine.rules import rules_for
from engine.sim import play_round
from tests.engine.reference_bot import HeuristicBot as ReferenceBot


class _Twin:
    """Plays the fast bot's choice after checking that the reference bot makes it too."""

    def __init__(self, seed: int) -> None:
        self.fast = HeuristicBot(seed)
        self.reference = ReferenceBot(seed)
        self.decisions = 0

    def _same(self, rnd: Round, fast: Action | None, reference: Action | None) -> None:
        assert fast == reference, (fast, reference, rnd.to_dict())
        assert self.fast.rng.getstate() == self.reference.rng.getstate(), rnd.to_dict()
        self.decisions += 1

    def choose(self, rnd: Round, seat: int) -> Action:
        fast = self.fast.choose(rnd, seat)
        self._same(rnd, fast, self.reference.choose(rnd, seat))
        return fast

    def react(self, rnd: Round, seat: int) -> Action | None:
        fast = self.fast.react(rnd, seat)
        self._same(rnd, fast, self.reference.react(rnd, seat))
        return fast


# (preset, players, rule options): every effect the scoring looks at, in the seatings where it
# differs (two players, three, many), and the options that change what is legal.
CASES = [
    ("attack", 4, {}),
    ("attack", 2, {}),
    ("attack", 2, {"two_player_rules": False}),
    ("attack", 3, {"stacking": True, "jump_in": True}),
    ("attack", 5, {"multi_play": True}),
    ("attack", 6, {"custom_wild_effect": "WAA"}),
    ("attack", 4, {"custom_wild_effect": "WAH", "last_card_restriction": True}),
    ("attack", 4, {"custom_wild_effect": "WHF", "hand_size": 3}),
    ("attack", 10, {"custom_wild_effect": "WH4", "uno_penalty": 4}),
    ("attack-1998", 4, {}),
    ("attack-1998", 3, {"multi_play": True, "stacking": True}),
    ("attack-1998", 2, {}),
    ("classic", 4, {}),
    ("classic", 2, {}),
    ("classic", 3, {"stacking": True, "multi_play": True, "jump_in": True}),
    ("classic", 7, {"draw_until_playable": True, "last_card_restriction": True}),
]


@pytest.mark.parametrize(("preset", "players", "options"), CASES)
def test_fast_heuristic_bot_decides_as_the_reference(
    preset: str, players: int, options: dict[str, object]
) -> None:
    rules = rules_for(preset, players, **options)
    twins = 0
    for game_seed in range(5):
        rng = random.Random(f"{preset}:{players}:{game_seed}")
        # Mostly heuristic players, one random player to reach positions they avoid.
        bots: list = [_Twin(rng.getrandbits(32)) for _ in range(players)]
        bots[rng.randrange(players)] = RandomBot(rng.getrandbits(32))
        game = Game(
            PRESETS[preset],
            rules,
            VirtualLauncher.seeded(rng.getrandbits(32)),
            players,
            target=500,
            seed=rng.getrandbits(32),
            record=False,
        )
        while not game.over:
            play_round(game.start_round(), bots)
            game.finish_round()
        twins += sum(b.decisions for b in bots if isinstance(b, _Twin))
    assert twins > 250  # whole games were played through the twins


def test_the_reference_is_really_compared() -> None:
    # A bot that differs on one decision is caught (the twin is not a tautology).
    class _Contrary(HeuristicBot):
        def choose(self, rnd: Round, seat: int) -> Action:
            acts = rnd.legal_actions(seat)
            return acts[-1] if len(acts) > 1 else acts[0]

    twin = _Twin(1)
    twin.fast = _Contrary(1)
    rnd = Round(PRESETS["attack"], rules_for("attack", 2), VirtualLauncher.seeded(1), players=2)
    with pytest.raises(AssertionError):
        for _ in range(50):
            actor = rnd.actor
            assert actor is not None
            rnd.apply(twin.choose(rnd, actor))
