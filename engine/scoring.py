"""Scoring a game: what each seat gains from a round, and when the game is over and who won or
lost, in the seven modes of docs/rules.md ("Game scoring modes"). `Game` (engine/game.py) and
the table referee (engine/table/referee.py) both score through here. What a card is worth left
in a hand is the deck's (`Deck.points`, engine/cards.py).

Seed 001 (the Chinese sheet) names most of them: 計分制/得分制 (`target`), its classic
另一種計分方法 and UNO Attack b (`lowest`), 淘汰賽 (`elimination`), 組隊比賽 (`teams`), 淘汰制
(`knockout`), 籌碼制 (`chips`) and 輸分制 (`losing`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from i18n import _

__all__ = [
    "LOWER_WINS",
    "SCORING_MODES",
    "Verdict",
    "decide",
    "judge",
    "modes_help",
    "round_gains",
    "target_help",
    "team_of",
    "teams_help",
    "teams_problem",
]

# target: the round winner scores the points left in every other hand; first to the target wins.
# lowest: everyone scores their own hand; once anyone reaches the target the lowest total wins.
# elimination: as lowest, and reaching the target puts you out; the last one left wins.
# teams: partners sit apart; each team scores its own members' hands; once a team reaches the
#        target the lowest team wins and the highest loses.
# knockout: a round goes on after a player goes out, until one player is left: the loser.
# chips: each loser pays the round winner chips for their points, out of a stake of `target`
#        chips; when a player has none left the most chips wins and the broke player loses.
# losing: as lowest, and once anyone reaches the target the most points is the loser.
SCORING_MODES: tuple[str, ...] = (
    "target",
    "lowest",
    "elimination",
    "teams",
    "knockout",
    "chips",
    "losing",
)
# Modes whose totals count against a player (points left in their own hands): a schedule's
# standings rank these lowest first.
LOWER_WINS: frozenset[str] = frozenset({"lowest", "elimination", "teams", "losing"})


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a round decided about the game: the game's winners and losers (both empty while it
    goes on; a mode may name only one of the two) and the seats out of the game from now on."""

    winners: tuple[int, ...] = ()
    losers: tuple[int, ...] = ()
    gone: tuple[int, ...] = ()

    @property
    def over(self) -> bool:
        """True once the game has a result."""
        return bool(self.winners or self.losers)


def modes_help() -> str:
    """What `--mode` offers, each mode in a few words with seed 001's name for it (for --help)."""
    return _(
        "scoring: target (計分制: the round winner scores the cards left in the other hands; "
        "first to --target wins), lowest (each player scores their own cards; at --target the "
        "lowest total wins), elimination (淘汰賽: reaching --target puts you out; the last one "
        "left wins), teams (組隊比賽: --teams N teams, partners seated apart, each scoring its "
        "own members' cards; at --target the lowest team wins), knockout (淘汰制: the round "
        "goes on after a player goes out, until one is left: the loser), chips (籌碼制: each "
        "loser pays the winner chips for their cards, out of a stake of --target chips; when a "
        "player is broke the most chips wins), losing (輸分制: only losses count; at --target "
        "the most points is the loser)"
    )


def target_help() -> str:
    """What `--target` means in every mode (for --help)."""
    return _(
        "points that end a game (500); in chips mode the chips each player stakes; unused in "
        "knockout"
    )


def teams_help() -> str:
    """What `--teams` means (for --help)."""
    return _("with --mode teams: how many teams, partners seated apart (default 2)")


def team_of(seat: int, teams: int) -> int:
    """Team of a seat when `teams` teams share the table: partners sit apart, every `teams`-th
    seat (seed 001 組隊比賽: "同隊的隊友要相隔坐", partners sit apart)."""
    return seat % teams


def teams_problem(players: int, teams: int) -> bool:
    """True when `players` seats cannot sit as `teams` teams of two or more partners each
    (seed 001: "兩人或多人組成一隊", teams of two or more)."""
    return teams < 2 or players % teams != 0 or players // teams < 2


def round_gains(
    mode: str,
    winner: int,
    left: Sequence[int],
    team_of: Callable[[int], int],
    *,
    scores: Sequence[int] = (),
    stake: int = 0,
) -> list[int]:
    """Points (or chips) each seat gains from a round `winner` won, with `left[s]` points left in
    seat s's hand (0 for seats not in the round). In teams mode every member of a team gains the
    team's points, so a seat's total is its team's. In chips mode `scores` are the chips each seat
    has won or lost so far and `stake` the chips each started with: a loser pays what they hold at
    most. A knockout round scores no points (its result is the order of going out)."""
    seats = range(len(left))
    if mode == "target":
        gained = [0] * len(left)
        gained[winner] = sum(left)
        return gained
    if mode in ("lowest", "elimination", "losing"):
        return list(left)
    if mode == "teams":
        # "總計每位隊員手中持牌的點數和來做為該隊的分數": a team's score is its members' cards.
        totals: dict[int, int] = {}
        for s in seats:
            totals[team_of(s)] = totals.get(team_of(s), 0) + left[s]
        return [totals[team_of(s)] for s in seats]
    if mode == "chips":
        # "輸家按輸分將籌碼給贏家": each loser gives the winner chips for their points.
        paid = [0 if s == winner else min(left[s], max(0, stake + scores[s])) for s in seats]
        gained = [-p for p in paid]
        gained[winner] = sum(paid)
        return gained
    if mode == "knockout":
        return [0] * len(left)
    raise ValueError(f"unknown scoring mode {mode!r}")


def judge(
    mode: str,
    scores: Sequence[int],
    target: int,
    active: Sequence[int],
    team_of: Callable[[int], int],
    *,
    finished: Sequence[int] = (),
    loser: int | None = None,
    final: bool = False,
) -> Verdict:
    """After a round: the game's verdict (see Verdict).

    `final`: the round was the last of a game of a fixed number of rounds (a stage of a game
    night, engine/night_book.py), so the game ends with it however far from the target: as if
    the target were reached (target mode: the highest total wins, ties sharing; chips: the
    most chips wins and the fewest loses).

    `active` are the seats still in the game. `finished` and `loser` are a knockout round's order
    of going out and the player left holding cards. Ties: in target mode the lowest seat of the
    best total wins; in lowest and elimination mode tied lowest totals share the win, in losing
    mode tied highest totals share the loss; in teams mode every seat of the lowest team wins and
    every seat of the highest team loses (tied teams share). In elimination, when every seat left
    reaches the target in the same round, nobody is put out and the lowest total wins.
    """
    if final and mode != "knockout":
        target = min(0, *(scores[s] for s in active))  # every total has "reached" it
        if mode == "target":
            return Verdict(winners=_extreme(scores, active, max))
        if mode == "chips":
            most = _extreme(scores, active, max)
            fewest = tuple(s for s in _extreme(scores, active, min) if s not in most)
            return Verdict(winners=most, losers=fewest)
    if mode == "target":
        reached = [s for s in active if scores[s] >= target]
        if reached:
            return Verdict(winners=(max(reached, key=lambda s: (scores[s], -s)),))
        return Verdict()
    if mode == "lowest":
        if any(scores[s] >= target for s in active):
            return Verdict(winners=_extreme(scores, active, min))
        return Verdict()
    if mode == "losing":
        # "以輸分最多者為輸家": past the agreed total, the most points is the loser.
        if any(scores[s] >= target for s in active):
            return Verdict(losers=_extreme(scores, active, max))
        return Verdict()
    if mode == "elimination":
        gone = tuple(s for s in active if scores[s] >= target)
        left = [s for s in active if s not in gone]
        if not left:
            return Verdict(winners=_extreme(scores, active, min))
        if len(left) == 1:
            return Verdict(winners=(left[0],), gone=gone)
        return Verdict(gone=gone)
    if mode == "teams":
        if not any(scores[s] >= target for s in active):
            return Verdict()
        low = min(scores[s] for s in active)
        high = max(scores[s] for s in active)
        winners = tuple(s for s in active if scores[s] == low)
        losers = tuple(s for s in active if scores[s] == high and high != low)
        return Verdict(winners=winners, losers=losers)
    if mode == "chips":
        # "以籌碼多少論勝負": the most chips wins, once a player has none left to pay with.
        broke = tuple(s for s in active if target + scores[s] <= 0)
        if broke:
            return Verdict(winners=_extreme(scores, active, max), losers=broke)
        return Verdict()
    if mode == "knockout":
        if loser is None or not finished:
            raise ValueError("a knockout round ends with a loser")
        return Verdict(winners=(finished[0],), losers=(loser,))
    raise ValueError(f"unknown scoring mode {mode!r}")


def decide(
    mode: str,
    scores: Sequence[int],
    target: int,
    active: Sequence[int],
    team_of: Callable[[int], int],
) -> tuple[tuple[int, ...], list[int]]:
    """judge() as (the game's winners, or () while it goes on; the seats now out), for the modes
    that name winners after a scored round."""
    verdict = judge(mode, scores, target, active, team_of)
    return verdict.winners, list(verdict.gone)


def _extreme(
    scores: Sequence[int], seats: Sequence[int], pick: Callable[..., int]
) -> tuple[int, ...]:
    best = pick(scores[s] for s in seats)
    return tuple(s for s in seats if scores[s] == best)
