"""Listing the plays of a hand, new against old, in this one process.

`Round.legal_actions` lists every play a player may make. With `discard_all_choice` a Discard
All may take any choice of the other cards of its colour with it, and with `multi_play` any
group of one face goes down together: a hand holding many cards of one colour offers hundreds of
such plays, each an `Action` whose cards are kept sorted. The simulator lists them on every move
(tests/engine/test_table_differential.py plays 10,000 such rounds).

- new: the cards sort by `card_rank` (a dict lookup in C per card, engine/cards.py), and a
  coloured Discard All's plays are built directly;
- old: the way it was before, restored for the "old" runs only: `Card.__lt__` builds the two
  cards' (colour, face) keys in Python on every comparison, `Action` sorts with it, every
  Discard All play goes through `Round._add_play`, and `RandomBot.react` lists the legal
  actions of the player on turn even when no call or jump-in can be among them. (Counting a
  hand's multi-play groups in plain dicts instead of Counters is in both.)

Both play the same seeded games, a chunk of that test (its rounds of every preset, player count,
rule option and scoring mode, each move checked against the table referee), and must make the
same number of moves. Timing is CPU
time of this process (`time.process_time`); the runs alternate and each side's best is kept.

Run: `.venv/bin/python tests/perf/bench_plays.py [--rounds N] [--repeat K]`. The LAST line is
`ratio X` (old CPU seconds over new: how many times faster the new listing plays the rounds).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine import cards as cards_module
from engine.bots import _CALLS, RandomBot
from engine.cards import Card
from engine.game import Action, Round, _sub_multisets
from tests.engine.test_table_differential import run_games


def _old_lt(self: Card, other: object) -> bool:
    if not isinstance(other, Card):
        return NotImplemented
    key = cards_module._sort_key
    return key(self) < key(other)


def _old_post_init(self: Action) -> None:
    if self.kind == "play":
        cards = self.cards
        if len(cards) > 1:
            cards = tuple(sorted(cards))
            object.__setattr__(self, "cards", cards)
        if self.color is None and cards:
            first = cards[0].color
            if first is not None and all(c.color == first for c in cards):
                object.__setattr__(self, "color", first)


def _old_discard_all_plays(
    self: Round, acts: list[Action], seat: int, hand: list[Card], seen: set[Card], ok: Any
) -> None:
    eff = self._eff
    for card in dict.fromkeys(c for c in hand if c in seen and eff[c].discards_colour):
        if not ok(card):
            continue
        others = Counter(c for c in hand if c.color == card.color)
        others[card] -= 1
        kinds = sorted(k for k in others if others[k] > 0)
        for combo in _sub_multisets(kinds, [others[k] for k in kinds]):
            if combo:
                self._add_play(acts, seat, (card, *combo), [])


def _old_react(self: RandomBot, rnd: Round, seat: int) -> Action | None:
    window = rnd.window is not None
    acts = [
        a
        for a in rnd.legal_actions(seat)
        if (a.kind in _CALLS and window) or (a.kind == "play" and seat != rnd.actor)
    ]
    i = self._below(len(acts) + 1)
    return acts[i] if i < len(acts) else None


@contextmanager
def old_style() -> Iterator[None]:
    """The sorting, the Discard All listing and the random bot's reaction as they were."""
    saved = (Card.__lt__, Action.__post_init__, Round._discard_all_plays, RandomBot.react)
    Card.__lt__ = _old_lt  # type: ignore[method-assign]
    Action.__post_init__ = _old_post_init  # type: ignore[method-assign]
    Round._discard_all_plays = _old_discard_all_plays  # type: ignore[method-assign]
    RandomBot.react = _old_react  # type: ignore[method-assign]
    try:
        yield
    finally:
        Card.__lt__, Action.__post_init__, Round._discard_all_plays, RandomBot.react = saved  # type: ignore[method-assign]


def play(chunk: int, rounds: int) -> tuple[float, int]:
    """Chunk `chunk` of the differential test, cut to `rounds` rounds; CPU seconds and moves."""
    start = time.process_time()
    tally = run_games(chunk, rounds)
    return time.process_time() - start, tally.moves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=250, help="rounds per run (250)")
    parser.add_argument("--chunk", type=int, default=3, help="the test's chunk to play (3)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs, best kept (3)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1:
        print("--rounds and --repeat must be at least 1", file=sys.stderr)
        return 2
    play(args.chunk, 5)  # warm up: imports and first calls outside the timing
    new: list[float] = []
    old: list[float] = []
    for i in range(args.repeat):
        for side in ("new", "old") if i % 2 == 0 else ("old", "new"):
            if side == "new":
                cpu, moves = play(args.chunk, args.rounds)
                new.append(cpu)
            else:
                with old_style():
                    cpu, old_moves = play(args.chunk, args.rounds)
                old.append(cpu)
            print(f"{side}: {cpu:6.2f} s CPU for {args.rounds} rounds of chunk {args.chunk}")
        if moves != old_moves:
            print(f"the two played different rounds: {moves} and {old_moves} actions")
            return 1
    print(f"{moves} actions a run; best CPU seconds: new {min(new):.2f}, old {min(old):.2f}")
    print(f"ratio {min(old) / min(new):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
