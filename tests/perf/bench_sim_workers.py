"""`unoattack sim --workers 2` against `--workers 1`, and the sweep's throughput, as typed.

Each run is the whole command in a child process (`.venv/bin/unoattack ...`: start-up, the worker
pool, the games, the report), timed on the wall clock, since using more cores only shows there.
The two commands run in turn, the order alternating, and the ratio is taken pair by pair: other
processes on a shared machine slow both members of a pair alike. The median pair ratio is the
figure; the best of each side and the CPU seconds of the children (all workers) are printed too, so
a machine too busy to give this process two cores is visible (the CPU time stays put while the
wall time does not shrink). Linux with `kernel.sched_autogroup_enabled = 1` shares CPU between
sessions first: while other sessions keep both cores busy, two workers get what one would.

Also timed, the same way: `unoattack sweep` over 6 settings, games per second at 1 and 2 workers.

Run: `.venv/bin/python tests/perf/bench_sim_workers.py [--games N] [--repeat K]`. The LAST line
is `ratio X`: the median of sim's paired wall-time ratios, workers 1 over workers 2 (2.0 would be
perfect on two free cores).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNOATTACK = str(Path(sys.executable).with_name("unoattack"))


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (this child and every worker it waited for) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [UNOATTACK, *argv], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"unoattack {' '.join(argv)} exited {done.returncode}: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def paired(label: str, one: list[str], two: list[str], repeat: int) -> list[float]:
    """Run `one` (1 worker) and `two` (2 workers) in turn; the wall ratios of each pair."""
    ratios = []
    walls: dict[str, list[float]] = {"1": [], "2": []}
    for i in range(repeat):
        order = [("1", one), ("2", two)] if i % 2 == 0 else [("2", two), ("1", one)]
        got = {}
        for name, argv in order:
            wall, cpu = timed(argv)
            got[name] = wall
            walls[name].append(wall)
            print(f"{label} --workers {name}: {wall:6.2f} s wall, {cpu:6.2f} s CPU")
        ratios.append(got["1"] / got["2"])
    print(
        f"{label}: best wall 1 worker {min(walls['1']):.2f} s, 2 workers {min(walls['2']):.2f} s; "
        f"pair ratios {', '.join(f'{r:.2f}' for r in ratios)}"
    )
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1500, help="sim games per run (1500)")
    parser.add_argument("--sweep-games", type=int, default=60, help="games per setting (60)")
    parser.add_argument("--repeat", type=int, default=5, help="pairs of runs (5)")
    args = parser.parse_args(argv)
    if min(args.games, args.sweep_games, args.repeat) < 1:
        print("--games, --sweep-games and --repeat must be at least 1", file=sys.stderr)
        return 2
    print(f"cores this process may use: {len(os.sched_getaffinity(0))}; load {os.getloadavg()}")
    sim = ["sim", "--games", str(args.games), "--seed", "1", "--json"]
    timed([*sim[:2], "20", *sim[3:], "--workers", "2"])  # warm the file cache
    sim_ratios = paired("sim", [*sim, "--workers", "1"], [*sim, "--workers", "2"], args.repeat)
    sweep = ["sweep", "--games", str(args.sweep_games), "--seed", "1", "--json"]
    sweep += ["--vary", "jam.base=0.12,0.22,0.35", "--vary", "players=3,4"]
    sweep_ratios = paired(
        "sweep", [*sweep, "--workers", "1"], [*sweep, "--workers", "2"], max(1, args.repeat // 2)
    )
    games = 6 * args.sweep_games
    best_one = min(timed([*sweep, "--workers", "1"])[0], timed([*sweep, "--workers", "1"])[0])
    best_two = min(timed([*sweep, "--workers", "2"])[0], timed([*sweep, "--workers", "2"])[0])
    print(
        f"sweep throughput (6 settings x {args.sweep_games} games, whole command): "
        f"{games / best_one:.0f} games/s on 1 worker, {games / best_two:.0f} games/s on 2; "
        f"median pair ratio {statistics.median(sweep_ratios):.2f}"
    )
    print(f"ratio {statistics.median(sim_ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
