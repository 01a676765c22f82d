"""Engine speed: whole classic rounds per second, ours against RLCard's `UnoGame`.

Both engines play classic UNO with 4 random players in this one process, driven the same way:
the player to move picks uniformly among its card plays (a Wild Draw Four only when nothing else
plays, as RLCard's rules have it), draws when it cannot play, and the round runs until a hand is
empty. RLCard plays a drawn playable card at once; ours offers it as a play, which the same policy
takes. RLCard has no UNO calls, catches or challenges, so our players skip them here.

Also measured: UNO Attack rounds per second (same policy, hitting instead of drawing).

Run: `.venv/bin/python tests/perf/bench_engine.py [--rounds N] [--repeat K]`. Needs the `perf` extra
(`pip install rlcard`). The LAST line is `ratio X` (our classic rounds/s over RLCard's).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.cards import PRESETS
from engine.game import Action, Round
from engine.launchers import VirtualLauncher
from engine.rules import rules_for

PLAYERS = 4


def random_move(acts: list[Action], rng: random.Random) -> Action:
    """RLCard's random agent, on our action set: a random card play if there is one (WD4 only
    when nothing else plays), else draw/hit, else pass. One pass over the actions, so the policy
    costs about what RLCard's `rng.choice(legal)` does."""
    plays: list[Action] = []
    wd4: list[Action] = []
    take = None
    for act in acts:
        kind = act.kind
        if kind == "play":
            (wd4 if act.cards[0].face == "WD4" else plays).append(act)
        elif kind in ("draw", "hit") or (kind == "pass" and take is None):
            take = act
    pick = plays or wd4
    if pick:
        return pick[rng.randrange(len(pick))]
    if take is None:
        raise RuntimeError(f"no move among {acts}")
    return take


def ours(preset: str, rounds: int, seed: int) -> tuple[float, float]:
    """(rounds per second, actions per round) for our engine."""
    deck = PRESETS[preset]
    rules = rules_for(preset, PLAYERS)
    launcher = VirtualLauncher.seeded(seed)
    rng = random.Random(seed)
    actions = 0
    start = time.perf_counter()
    for i in range(rounds):
        rnd = Round(deck, rules, launcher, players=PLAYERS, dealer=i % PLAYERS, seed=i, log=False)
        while not rnd.over:
            actor = rnd.actor
            rnd.apply(random_move(rnd.legal_actions(actor), rng))  # type: ignore[arg-type]
            actions += 1
    elapsed = time.perf_counter() - start
    return rounds / elapsed, actions / rounds


def rlcard_classic(rounds: int, seed: int) -> tuple[float, float]:
    """(rounds per second, actions per round) for RLCard's UnoGame through its public API."""
    import numpy as np
    from rlcard.games.uno.game import UnoGame

    game = UnoGame(num_players=PLAYERS)
    game.np_random = np.random.RandomState(seed)
    rng = random.Random(seed)
    actions = 0
    start = time.perf_counter()
    for _ in range(rounds):
        game.init_game()
        while not game.is_over():
            legal = game.get_legal_actions()
            game.step(legal[rng.randrange(len(legal))])
            actions += 1
    elapsed = time.perf_counter() - start
    return rounds / elapsed, actions / rounds


def measure(label: str, fn: Callable[[], tuple[float, float]]) -> float:
    rate, per_round = fn()
    print(f"{label:<24} {rate:10.1f} rounds/s  ({per_round:.1f} actions/round)")
    return rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3000, help="rounds per engine (3000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs, best kept (3)")
    args = parser.parse_args(argv)
    try:
        import rlcard  # noqa: F401
    except ImportError:
        print("rlcard is not installed: .venv/bin/pip install rlcard (the perf extra)")
        return 1
    n, seed, repeats = args.rounds, args.seed, args.repeat
    # Warm both up so neither pays for imports and first-call costs inside the timing.
    ours("classic", 50, seed)
    rlcard_classic(50, seed)
    # Interleave the runs and keep each engine's best: on a shared machine the best run is the
    # one least disturbed by other processes, for both engines alike.
    mine = theirs = 0.0
    for i in range(repeats):
        mine = max(mine, measure(f"ours, classic ({i + 1})", lambda: ours("classic", n, seed)))
        theirs = max(theirs, measure(f"rlcard UnoGame ({i + 1})", lambda: rlcard_classic(n, seed)))
    attack = measure("ours, attack", lambda: ours("attack", n, seed))
    attack98 = measure("ours, attack-1998", lambda: ours("attack-1998", n, seed))
    print(f"best classic rounds/s: ours {mine:.1f}, rlcard {theirs:.1f}")
    print(f"attack rounds/s: {attack:.1f}, attack-1998 rounds/s: {attack98:.1f}")
    print(f"ratio {mine / theirs:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
