"""Fingerprints of seeded `unoattack sim --json` runs: a speed change must play the same games.

An engine or bot optimisation must not change a single move. This script runs `unoattack sim`
(through `engine.cli.main`, as typed) over a matrix of decks, player counts, bots, rule options
and scoring modes, drops the two timing fields (`elapsed_s`, `rounds_per_s`), and prints the md5
of each JSON output and of all of them together. Run it before and after a change and compare:

    .venv/bin/python tests/perf/sim_digest.py > before.txt   # on the old code
    .venv/bin/python tests/perf/sim_digest.py | diff before.txt -

Every case also exercises the rules it names (stacking, multi-play, jump-in, play-again, ...), so
the fast paths and the general code both take part. tests/engine/test_seeded_games.py pins a few
of these cases in the suite. The LAST line is `total <md5>`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.cli import main as unoattack

# Fields that measure the machine, not the games.
TIMING = ("elapsed_s", "rounds_per_s")

# (deck, players, bots, games, extra arguments): random players make long rounds (thousands of
# actions in an Attack round), so they play fewer games.
CASES: list[tuple[str, int, str, int, tuple[str, ...]]] = [
    (deck, players, bots, games, ())
    for deck in ("classic", "attack", "attack-1998")
    for players in (2, 4, 7, 10 if deck != "attack-1998" else 9)
    for bots, games in (("heuristic", 20), ("random", 5))
] + [
    ("classic", 4, "heuristic", 6, ("--option", "draw_until_playable=true")),
    ("classic", 3, "random", 2, ("--option", "jump_in=true", "--option", "multi_play=true")),
    ("classic", 4, "heuristic,random,heuristic,random", 4, ("--option", "stacking=true")),
    ("classic", 6, "heuristic", 4, ("--mode", "teams")),
    ("attack", 4, "heuristic", 6, ("--option", "stacking=true", "--option", "multi_play=true")),
    ("attack", 5, "random", 2, ("--option", "custom_wild_effect=WAA")),
    ("attack", 3, "heuristic", 6, ("--option", "last_card_restriction=true")),
    ("attack", 4, "random,heuristic,random,heuristic", 3, ("--option", "jump_in=true")),
    ("attack", 5, "heuristic", 4, ("--mode", "elimination", "--option", "hand_size=5")),
    ("attack", 2, "heuristic", 6, ("--option", "two_player_rules=false")),
    ("attack-1998", 4, "heuristic", 6, ("--option", "skip_reverse_play_again=true")),
    ("attack-1998", 3, "random", 2, ("--option", "play_fired_card=false", "--mode", "lowest")),
    ("attack-1998", 4, "heuristic", 6, ("--option", "uno_penalty=0", "--option", "stacking=true")),
    # Seed 001's systems (issue 23): the scoring modes and the rule options they brought.
    ("attack", 4, "heuristic", 8, ("--mode", "knockout")),
    ("classic", 5, "random", 2, ("--mode", "knockout")),
    ("attack", 4, "heuristic", 4, ("--mode", "chips", "--target", "200")),
    ("classic", 3, "heuristic", 4, ("--mode", "losing")),
    ("attack-1998", 6, "heuristic", 4, ("--mode", "teams", "--teams", "3")),
    ("attack", 4, "random", 2, ("--option", "discard_all_choice=true")),
    ("attack", 5, "heuristic", 6, ("--option", "custom_wild_effect=TH")),
    (
        "classic",
        4,
        "heuristic",
        6,
        ("--option", "counter_clockwise=true", "--option", "dealer_plays_first=false"),
    ),
]


def argv_of(deck: str, players: int, bots: str, games: int, extra: tuple[str, ...]) -> list[str]:
    """The `unoattack sim` command line of one case (seeded, one worker)."""
    argv = ["sim", "--deck", deck, "--players", str(players), "--bots", bots]
    return [*argv, "--games", str(games), "--seed", "14", "--workers", "1", "--json", *extra]


def digest(argv: list[str]) -> str:
    """md5 of the `--json` output of `argv` without its timing fields."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = unoattack(argv)
    if code != 0:
        raise SystemExit(f"unoattack {' '.join(argv)} exited {code}")
    data = json.loads(out.getvalue())
    for key in TIMING:
        data.pop(key)
    return hashlib.md5(json.dumps(data, sort_keys=True).encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    total = hashlib.md5()
    for case in CASES:
        line = f"{digest(argv_of(*case))}  {' '.join(argv_of(*case)[1:])}"
        total.update(line.encode())
        print(line, flush=True)
    print(f"total {total.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
