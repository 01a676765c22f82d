"""Engine speed: whole classic rounds per second, ours against RLCard's `UnoGame`.

Both engines play classic UNO with 4 random players in this one process, driven the same way
through their public APIs, the same number of rounds each:

- a round is dealt (ours: `Round(...)`, RLCard: `UnoGame.init_game()`), then until it is over the
  player to move gets the full list of its legal actions (ours: `Round.legal_actions`, RLCard:
  `UnoGame.get_legal_actions`), picks one at random and applies it (`Round.apply`,
  `UnoGame.step`);
- the pick is uniform among the card plays, a Wild Draw Four only when nothing else plays (RLCard
  only offers it then), else draw. RLCard plays a drawn playable card at once; ours offers it as a
  play, which the same policy takes. RLCard has no UNO calls, catches or challenges, so our
  players skip them here. Both policies draw their index with the same `random()` call.

Timing is CPU time of this process (`time.process_time`), so time other processes take does not
count; but on a shared machine they still slow the CPU this one runs on, so the runs are many and
short (default 15 runs of 500 rounds each), interleaved (the order alternates each repetition),
and each engine's best run is kept, the one least disturbed; the median of the paired ratios is
printed as a check. Each engine deals all its rounds from one generator seeded once per run
(ours: `Round(..., rng=...)`, RLCard: `UnoGame.np_random`), so every run replays the same deals.
`UnoGame.step` also builds the next player's observation (RLCard's API does this on every step);
the line "rlcard rules only" times RLCard's round logic without it, for information.

Also measured: UNO Attack rounds per second (same policy, hitting instead of drawing).

Run: `.venv/bin/python tests/perf/bench_engine.py [--rounds N] [--repeat K]`. Needs the `perf` extra
(`pip install rlcard`). The LAST line is `ratio X` (our best classic rounds/s over RLCard's).
"""

from __future__ import annotations

import argparse
import random
import statistics
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
NOT_PLAYS = frozenset({"draw", "hit", "pass"})
CALLS = frozenset({"uno", "catch"})

# (CPU seconds, actions applied) of one timed run.
Run = tuple[float, int]


def random_move(acts: list[Action], rand: Callable[[], float]) -> Action:
    """RLCard's random agent on our action set: a random card play if there is one (WD4 only
    when nothing else plays), else draw/hit, else pass (never an UNO call, catch or challenge)."""
    plays = [a for a in acts if a.kind == "play" and a.cards[0].face != "WD4"]
    if not plays:
        plays = [a for a in acts if a.kind == "play"]
        if not plays:
            for kinds in (("draw", "hit"), ("pass",)):
                for act in acts:
                    if act.kind in kinds:
                        return act
            raise RuntimeError(f"no move among {acts}")
    return plays[int(rand() * len(plays))]


def ours(preset: str, rounds: int, seed: int) -> Run:
    """Play `rounds` rounds of our engine; CPU seconds and actions applied."""
    deck = PRESETS[preset]
    rules = rules_for(preset, PLAYERS)
    launcher = VirtualLauncher.seeded(seed)
    rand = random.Random(seed).random
    # One generator deals every round, as RLCard's game shuffles with one RandomState.
    dealing = random.Random(seed)
    actions = 0
    start = time.process_time()
    for i in range(rounds):
        rnd = Round(
            deck, rules, launcher, players=PLAYERS, dealer=i % PLAYERS, record=False, rng=dealing
        )
        # `actor` is None exactly when the round is over.
        while (actor := rnd.actor) is not None:
            # random_move, with one random pick tried first (inline, as RLCard's driver picks):
            # uniform over the actions between a leading UNO call or catch and a trailing
            # draw, hit or pass (never card plays, so every card play is in that range), kept
            # if it is a card play other than WD4, else random_move picks afresh. Each such
            # play is equally likely either way, so the choice is random_move's.
            acts = rnd.legal_actions(actor)
            n = len(acts)
            if n == 1:
                act = acts[0]
            else:
                lo = 1 if acts[0].kind in CALLS else 0
                hi = n - 1 if acts[-1].kind in NOT_PLAYS else n
                if hi <= lo:  # nothing but a call and the draw (or hit): draw
                    act = acts[-1] if acts[-1].kind in NOT_PLAYS else random_move(acts, rand)
                else:
                    act = acts[lo + int(rand() * (hi - lo))]
                    if act.kind != "play" or act.cards[0].face == "WD4":
                        act = random_move(acts, rand)
            rnd.apply(act)
            actions += 1
    return time.process_time() - start, actions


def rlcard_classic(rounds: int, seed: int, *, observe: bool = True) -> Run:
    """Play `rounds` rounds of RLCard's UnoGame through its public API; CPU seconds and actions.

    observe=False applies each action with the round logic alone (`UnoRound.proceed_round`),
    skipping the observation `UnoGame.step` builds: RLCard's rules without its API's extra work.
    """
    import numpy as np
    from rlcard.games.uno.game import UnoGame

    game = UnoGame(num_players=PLAYERS)
    game.np_random = np.random.RandomState(seed)
    rand = random.Random(seed).random
    actions = 0
    start = time.process_time()
    for _ in range(rounds):
        game.init_game()
        if observe:
            while not game.is_over():
                legal = game.get_legal_actions()
                game.step(legal[int(rand() * len(legal))])
                actions += 1
        else:
            players, proceed = game.players, game.round.proceed_round
            while not game.is_over():
                legal = game.get_legal_actions()
                proceed(players, legal[int(rand() * len(legal))])
                actions += 1
    return time.process_time() - start, actions


class Tally:
    """Every timed run of one engine: best and median rounds per second."""

    def __init__(self, label: str, rounds: int) -> None:
        self.label = label
        self.rounds = rounds
        self.rates: list[float] = []

    def run(self, fn: Callable[[], Run]) -> float:
        cpu, actions = fn()
        rate = self.rounds / cpu
        self.rates.append(rate)
        print(
            f"{self.label:<22} {rate:9.1f} rounds/s  {cpu * 1e6 / self.rounds:7.1f} us/round  "
            f"({actions / self.rounds:.1f} actions/round)"
        )
        return rate

    @property
    def best(self) -> float:
        return max(self.rates)

    @property
    def median(self) -> float:
        return statistics.median(self.rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500, help="rounds per run (500)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=15, help="interleaved runs, best kept (15)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1:
        print("--rounds and --repeat must be at least 1", file=sys.stderr)
        return 2
    try:
        import rlcard  # noqa: F401
    except ImportError:
        print("rlcard is not installed: .venv/bin/pip install rlcard (the perf extra)")
        return 1
    n, seed = args.rounds, args.seed
    # Warm both up so neither pays for imports and first-call costs inside the timing.
    ours("classic", 50, seed)
    rlcard_classic(50, seed)
    mine, theirs = Tally("ours, classic", n), Tally("rlcard UnoGame", n)
    bare = Tally("rlcard rules only", n)
    attack, attack98 = Tally("ours, attack", n), Tally("ours, attack-1998", n)
    pairs: list[float] = []
    for i in range(args.repeat):
        # Alternate who goes first so a slow patch of the machine does not favour either.
        if i % 2 == 0:
            a = mine.run(lambda: ours("classic", n, seed))
            b = theirs.run(lambda: rlcard_classic(n, seed))
        else:
            b = theirs.run(lambda: rlcard_classic(n, seed))
            a = mine.run(lambda: ours("classic", n, seed))
        pairs.append(a / b)
        attack.run(lambda: ours("attack", n, seed))
        attack98.run(lambda: ours("attack-1998", n, seed))
        bare.run(lambda: rlcard_classic(n, seed, observe=False))
    print(f"median classic rounds/s: ours {mine.median:.1f}, rlcard {theirs.median:.1f}")
    print(
        f"attack rounds/s: best {attack.best:.1f}, median {attack.median:.1f}; "
        f"attack-1998: best {attack98.best:.1f}, median {attack98.median:.1f}"
    )
    print(f"ratio against rlcard rules only (no observation): {mine.best / bare.best:.2f}")
    print(f"median of paired ratios: {statistics.median(pairs):.2f}")
    print(f"best classic rounds/s: ours {mine.best:.1f}, rlcard {theirs.best:.1f}")
    print(f"ratio {mine.best / theirs.best:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
