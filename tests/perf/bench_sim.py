"""`unoattack sim` against RLCard, side by side in one process, through each tool's normal path.

Both play classic UNO with 4 players, one round being one RLCard "game" (until a hand is empty):

- heuristic play: ours is `unoattack sim --deck classic --players 4 --bots heuristic --workers 1
  --json` run by `engine.cli.main` (the command a user types: parsing, games to 500 points with
  scoring, the virtual launcher, the report); RLCard's is `rlcard.make("uno")` with four
  `UNORuleAgentV1` agents, `env.run()` once per round (RLCard's documented way to play an agent).
- random play: ours is the same command with `--bots random`; RLCard's is its raw `UnoGame` with
  a uniform pick among `get_legal_actions()` per action (its fastest path, no environment).

Compared: rounds per second for heuristic play. For random play, actions per second: our random
player is uniform over every legal move, drawing while it could play and calling UNO or catching at
random, so its rounds last about 40 times as many actions as RLCard's (which only draws when
nothing plays); rounds per second would measure the players, not the engines. Both figures are
printed for both.

Timing is CPU time of this process (`time.process_time`), so other processes' time does not count;
they still slow the CPU this one runs on, so runs are many and short, interleaved (the order
alternates), and each side's best run is kept (the least disturbed); the median of the paired
ratios is printed as a check.

Run: `.venv/bin/python tests/perf/bench_sim.py [--games N] [--repeat K]`. Needs the `perf` extra
(rlcard). The LAST line is `ratio X`: the smaller of the two ratios (heuristic rounds/s, random
actions/s), ours over RLCard's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.cli import main as unoattack
from tests.perf.bench_engine import PLAYERS, rlcard_classic

# (CPU seconds, rounds, actions) of one timed run.
Run = tuple[float, int, int]


def ours(bots: str, games: int, seed: int) -> Run:
    """`unoattack sim` as typed, on one worker; CPU seconds, rounds and actions it reports."""
    argv = ["sim", "--deck", "classic", "--players", str(PLAYERS), "--bots", bots]
    argv += ["--games", str(games), "--seed", str(seed), "--workers", "1", "--json"]
    out = io.StringIO()
    start = time.process_time()
    with contextlib.redirect_stdout(out):
        code = unoattack(argv)
    cpu = time.process_time() - start
    if code != 0:
        raise SystemExit(f"unoattack sim exited {code}")
    data = json.loads(out.getvalue())
    rounds = data["rounds"]
    return cpu, rounds, round(data["mean_actions_per_round"] * rounds)


def rlcard_rule_agents(rounds: int, seed: int) -> Run:
    """RLCard's env with four UNORuleAgentV1, `env.run()` per round."""
    import numpy as np
    import rlcard
    from rlcard.models.uno_rule_models import UNORuleAgentV1

    env = rlcard.make("uno", config={"game_num_players": PLAYERS, "seed": seed})
    env.set_agents([UNORuleAgentV1() for _ in range(PLAYERS)])
    np.random.seed(seed)  # the rule agent picks with np.random
    actions = 0
    start = time.process_time()
    for _ in range(rounds):
        trajectories, _ = env.run(is_training=False)
        actions += sum((len(t) - 1) // 2 for t in trajectories)  # state, action, ..., state
    return time.process_time() - start, rounds, actions


def rlcard_random(rounds: int, seed: int) -> Run:
    """RLCard's raw UnoGame, a uniform legal pick per action (bench_engine's reference run)."""
    cpu, actions = rlcard_classic(rounds, seed)
    return cpu, rounds, actions


class Tally:
    """Every timed run of one side: rounds and actions per CPU second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.rounds: list[float] = []
        self.actions: list[float] = []

    def run(self, fn: Callable[[], Run]) -> tuple[float, float]:
        cpu, rounds, actions = fn()
        self.rounds.append(rounds / cpu)
        self.actions.append(actions / cpu)
        print(
            f"{self.label:<28} {rounds / cpu:9.1f} rounds/s {actions / cpu:11.0f} actions/s "
            f"({actions / rounds:.1f} actions/round, {rounds} rounds)"
        )
        return rounds / cpu, actions / cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="our games per run (30)")
    parser.add_argument("--random-games", type=int, default=12, help="random games per run (12)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=9, help="interleaved runs, best kept (9)")
    args = parser.parse_args(argv)
    if min(args.games, args.random_games, args.repeat) < 1:
        print("--games, --random-games and --repeat must be at least 1", file=sys.stderr)
        return 2
    try:
        import rlcard  # noqa: F401
    except ImportError:
        print("rlcard is not installed: .venv/bin/pip install rlcard (the perf extra)")
        return 1
    seed = args.seed
    # Warm up both sides (imports, first-call costs) and learn how many rounds our runs play,
    # so RLCard plays as many rounds per run.
    _, h_rounds, _ = ours("heuristic", args.games, seed)
    _, r_rounds, _ = ours("random", args.random_games, seed)
    rlcard_rule_agents(20, seed)
    rlcard_random(20, seed)
    mine_h, theirs_h = Tally("ours heuristic (sim)"), Tally("rlcard env + UNORuleAgentV1")
    mine_r, theirs_r = Tally("ours random (sim)"), Tally("rlcard UnoGame, random")
    pairs_h: list[float] = []
    pairs_r: list[float] = []
    for i in range(args.repeat):
        if i % 2 == 0:
            a, _ = mine_h.run(lambda: ours("heuristic", args.games, seed))
            b, _ = theirs_h.run(lambda: rlcard_rule_agents(h_rounds, seed))
            _, c = mine_r.run(lambda: ours("random", args.random_games, seed))
            _, d = theirs_r.run(lambda: rlcard_random(r_rounds, seed))
        else:
            b, _ = theirs_h.run(lambda: rlcard_rule_agents(h_rounds, seed))
            a, _ = mine_h.run(lambda: ours("heuristic", args.games, seed))
            _, d = theirs_r.run(lambda: rlcard_random(r_rounds, seed))
            _, c = mine_r.run(lambda: ours("random", args.random_games, seed))
        pairs_h.append(a / b)
        pairs_r.append(c / d)
    heuristic = max(mine_h.rounds) / max(theirs_h.rounds)
    rand = max(mine_r.actions) / max(theirs_r.actions)
    print(
        f"median of paired ratios: heuristic {statistics.median(pairs_h):.2f}, random "
        f"{statistics.median(pairs_r):.2f}"
    )
    print(
        f"best heuristic rounds/s: ours {max(mine_h.rounds):.1f}, rlcard "
        f"{max(theirs_h.rounds):.1f} -> {heuristic:.2f}x"
    )
    print(
        f"best random rounds/s: ours {max(mine_r.rounds):.1f}, rlcard {max(theirs_r.rounds):.1f} "
        f"(not comparable: see the docstring)"
    )
    print(
        f"best random actions/s: ours {max(mine_r.actions):.0f}, rlcard "
        f"{max(theirs_r.actions):.0f} -> {rand:.2f}x"
    )
    print(f"ratio {min(heuristic, rand):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
