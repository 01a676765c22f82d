"""What game a table plays next, once one is over: the same players again (`next`, the page's
New game), or at a night's table the players the rotation seats next (engine/table/
night_table.py). engine/table/session.py `TableSession.next_game` keeps the last game and
starts this one."""

from __future__ import annotations

from engine.errors import RuleError
from engine.outcomes import NewGame, Outcome, Seating, StillPlaying
from engine.table.night_table import NightTable
from engine.table.referee import Referee
from i18n import _

__all__ = ["next_referee", "said_of", "upcoming"]


def next_referee(ref: Referee, night: NightTable | None, *, anytime: bool) -> Referee:
    """The game after `ref`'s: RuleError while `ref` is not over, unless `anytime` (the page's
    New game, which asks first) and not at a night's table (its rounds are the night's)."""
    if ref.phase != "over" and (night is not None or not anytime):
        if night is not None and ref.span is not None:
            raise RuleError(
                _("rounds {first}-{last} are being played: `next` once they are over").format(
                    first=ref.span[0], last=ref.span[1]
                )
            )
        raise RuleError(_("the game is not over: `next` starts a new one once it is"))
    if night is not None:
        return night.referee(after=ref)
    return Referee(
        ref.players,
        deck=ref.deck_name,
        mode=ref.mode,
        target=ref.target,
        teams=ref.teams,
        options=dict(ref.options),
    )


def said_of(fresh: Referee, night: NightTable | None) -> Outcome:
    """What the table says as `fresh` starts: a new game, or a night's seating now."""
    if night is None or fresh.span is None:
        return NewGame()
    return Seating(night.table + 1, *fresh.span, tuple(fresh.players))


def upcoming(ref: Referee, night: NightTable | None) -> list[Outcome]:
    """Once `ref`'s game is over at a night's table: the seating `next` starts, and who of it
    is still playing at another table."""
    seating = night.next_seating(ref) if night is not None else None
    if night is None or seating is None:
        return []
    first, last = seating["rounds"]
    seated = tuple(seating["players"])
    said: list[Outcome] = [Seating(night.table + 1, first, last, seated, True)]
    busy: dict[str, int] = seating["elsewhere"]
    for table in sorted(set(busy.values())):
        said.append(StillPlaying(tuple(n for n in seated if busy.get(n) == table), table))
    return said
