"""A game night in words: where each table is and the standings (`unoattack standings`,
`unoattack schedule --sim`, and `status`/`scores` at a night's table)."""

from __future__ import annotations

from collections.abc import Mapping

from engine.night_book import NightBook
from engine.schedule import Standings
from i18n import _, number
from i18n.layout import columns

__all__ = ["night_lines", "standings_lines", "tables_lines"]


def standings_lines(standings: Standings, bots: Mapping[str, str] | None = None) -> list[str]:
    """The standings as a table, best first (with each player's bot, a simulated night), and
    the champion(s) so far."""
    played = standings.played()
    head: list[str] = [
        _("place"),
        _("player"),
        *([_("bot")] if bots else []),
        _("total"),
        _("rounds"),
    ]
    rows: list[list[str]] = [head]
    for place, name, total in standings.ranking():
        bot = [bots[name]] if bots else []
        rows.append([str(place), name, *bot, number(total), number(played[name])])
    right = {0, len(head) - 2, len(head) - 1}
    champions = " & ".join(standings.champions())
    if not champions:
        last = _("no round recorded yet")
    elif len(set(played.values())) == 1:
        last = _("champion: {names}").format(names=champions)
    else:  # a total over fewer rounds is not yet comparable: nobody is champion mid-way
        last = _("leading: {names} (not every player has played as many rounds yet)").format(
            names=champions
        )
    return [*columns(rows, right=right), "", last]


def tables_lines(book: NightBook) -> list[str]:
    """Where each table is: the round it plays next and who sits there, clockwise."""
    lines: list[str] = []
    for table in range(book.schedule.tables):
        round_no = book.next_round(table)
        first, last = book.stage_rounds(round_no)
        lines.append(
            _("table {table}: round {round} next (rounds {first}-{last}: {players})").format(
                table=table + 1,
                round=round_no,
                first=first,
                last=last,
                players=" ".join(book.seating(table, round_no)),
            )
        )
    return lines


def night_lines(book: NightBook, table: int) -> list[str]:
    """At table `table` (from 0) of the night: the night, every table, the standings."""
    return [
        _("night {file}: this is table {table} of {tables}, scored {mode}").format(
            file=book.path.name, table=table + 1, tables=book.schedule.tables, mode=book.mode
        ),
        *tables_lines(book),
        *standings_lines(book.standings),
    ]
