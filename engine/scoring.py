"""Scoring a game: what each seat gains from a round, and when the game is over, in the four
modes of docs/rules.md ("Game scoring modes"). `Game` (engine/game.py) and the table referee
(engine/table.py) both score through here. What a card is worth left in a hand is the deck's
(`Deck.points`, engine/cards.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["SCORING_MODES", "decide", "round_gains"]

# target: the round winner scores the points left in every other hand; first to the target wins.
# lowest: everyone scores their own hand; once anyone reaches the target the lowest total wins.
# elimination: as lowest, and reaching the target puts you out; the last one left wins.
# teams: partners sit alternately; the winner's team scores the other teams' hands.
SCORING_MODES: tuple[str, ...] = ("target", "lowest", "elimination", "teams")


def round_gains(
    mode: str, winner: int, left: Sequence[int], team_of: Callable[[int], int]
) -> list[int]:
    """Points each seat gains from a round `winner` won, with `left[s]` points left in seat s's
    hand (0 for seats not in the round). In teams mode every partner of the winner gains the
    team's points, so a seat's total is its team's."""
    seats = range(len(left))
    if mode == "target":
        gained = [0] * len(left)
        gained[winner] = sum(left)
        return gained
    if mode in ("lowest", "elimination"):
        return list(left)
    if mode == "teams":
        team = team_of(winner)
        won = sum(p for s, p in enumerate(left) if team_of(s) != team)
        return [won if team_of(s) == team else 0 for s in seats]
    raise ValueError(f"unknown scoring mode {mode!r}")


def decide(
    mode: str,
    scores: Sequence[int],
    target: int,
    active: Sequence[int],
    team_of: Callable[[int], int],
) -> tuple[tuple[int, ...], list[int]]:
    """After a round: (the game's winners, or () while it goes on; the seats now out).

    `active` are the seats still in the game. Ties: in target mode the lowest seat of the best
    total wins; in lowest and elimination mode tied lowest totals share the win; in teams mode the
    winners are every seat of the winning team. In elimination, when every seat left reaches the
    target in the same round, nobody is put out and the lowest total wins.
    """
    if mode == "target":
        reached = [s for s in active if scores[s] >= target]
        if reached:
            return (max(reached, key=lambda s: (scores[s], -s)),), []
        return (), []
    if mode == "lowest":
        if any(scores[s] >= target for s in active):
            return _lowest(scores, active), []
        return (), []
    if mode == "elimination":
        gone = [s for s in active if scores[s] >= target]
        left = [s for s in active if s not in gone]
        if not left:
            return _lowest(scores, active), []
        if len(left) == 1:
            return (left[0],), gone
        return (), gone
    if mode == "teams":
        reached = [s for s in active if scores[s] >= target]
        if not reached:
            return (), []
        best = team_of(max(reached, key=lambda s: (scores[s], -team_of(s))))
        return tuple(s for s in range(len(scores)) if team_of(s) == best), []
    raise ValueError(f"unknown scoring mode {mode!r}")


def _lowest(scores: Sequence[int], seats: Sequence[int]) -> tuple[int, ...]:
    low = min(scores[s] for s in seats)
    return tuple(s for s in seats if scores[s] == low)
