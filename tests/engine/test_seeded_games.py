"""Seeded simulations play exactly the games they played before: a guard for speed work.

Each case is a `unoattack sim --json` run (tests/perf/sim_digest.py, which has the full matrix);
the md5 of its output without the timing fields is pinned. An optimisation of the engine, the
deck or the bots must leave every one unchanged. A deliberate rule change (or a change to what
`sim --json` reports) does change them: check the new games are right, then re-pin the printed
digests with `.venv/bin/python tests/perf/sim_digest.py`.
"""

from __future__ import annotations

import pytest

from tests.perf.sim_digest import argv_of, digest

PINNED = [
    (("classic", 4, "heuristic", 20, ()), "6c5c1285a51b0f051a4903c8a18c17e3"),
    (("classic", 4, "random", 5, ()), "9783fa2ce647d87af6903f7806745bd6"),
    (("attack", 7, "random", 5, ()), "8a851ed4ec3eed7d23243ff67245b7c9"),
    (("attack-1998", 9, "heuristic", 20, ()), "9508b75d8f917ada96660e83e99d52c8"),
    (
        ("classic", 3, "random", 2, ("--option", "jump_in=true", "--option", "multi_play=true")),
        "0024463cb1b1956b05ad5aea4beb092d",
    ),
    (
        (
            "attack",
            4,
            "heuristic",
            6,
            ("--option", "stacking=true", "--option", "multi_play=true"),
        ),
        "4a6d3ac0fa85821ffa62b088cb713aed",
    ),
    (
        ("attack", 4, "random,heuristic,random,heuristic", 3, ("--option", "jump_in=true")),
        "3787ee7a6b4a14cffd84d6a772883d9c",
    ),
    (
        ("classic", 4, "heuristic", 6, ("--option", "draw_until_playable=true")),
        "6d6466601b38392924b044f7f25f670e",
    ),
]


@pytest.mark.parametrize(
    ("case", "md5"), PINNED, ids=[" ".join(map(str, case[:3])) for case, _ in PINNED]
)
def test_seeded_sim_plays_the_same_games(case: tuple, md5: str) -> None:
    assert digest(argv_of(*case)) == md5, " ".join(argv_of(*case))
