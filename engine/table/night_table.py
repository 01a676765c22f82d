"""One table of a game night: which game it plays next and where its rounds are recorded.

A night (engine/night_book.py) seats its players by the rotation (engine/schedule.py): at each
table the same players sit for a stage of the rotation's rounds, each opposite a partner. So a
table of the night plays one game a stage: a game of that stage's rounds (`Referee(span=...)`,
numbered as the night numbers them), of the players the rotation seats there, clockwise, scored
as the night is (in teams mode each opposite pair a team). When its last round is scored the
game is over, and `next` seats the next stage's players (engine/table/session.py
`TableSession.next_game`).

Every time the table's state file is saved, the rounds its game has scored are recorded in the
night (`NightBook.record_game`): undoing a round's score takes it out again, and a table that
restarts records what its state file holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.night_book import NightBook
from engine.table.referee import Referee
from i18n import _

__all__ = ["NightTable", "night_state_path"]


def night_state_path(night: Path, table: int) -> Path:
    """A night table's default state file: `NIGHT.tableT.json` beside the night file (two
    tables run from one folder never share one)."""
    return night.with_name(f"{night.stem}.table{table + 1}.json")


@dataclass
class NightTable:
    """Table `table` (from 0) of the night in `book`."""

    book: NightBook
    table: int
    _written: object = field(default=None, repr=False)  # the rounds last recorded

    def referee(self, after: Referee | None = None) -> Referee:
        """The next game at this table: the stage after `after`'s (the game just over), or
        the round after the last the night has recorded for this table."""
        if after is not None and after.span is not None:
            round_no = after.span[1] + 1
        else:
            round_no = self.book.next_round(self.table)
        return self.book.game(self.table, round_no)

    def check_game(self, ref: Referee, state: Path) -> None:
        """InputError unless the game saved in `state` is one this table of the night plays:
        rounds of the rotation, the players it seats there, the night's mode and deck."""
        seated = self.book.seating(self.table, ref.span[0]) if ref.span is not None else ()
        if (
            ref.span is None
            or self.book.span(ref.span[0])[1] != ref.span[1]
            or tuple(ref.players) != seated
            or ref.mode != self.book.mode
            or ref.deck_name != self.book.deck
        ):
            raise InputError(
                _(
                    "{path} holds a game that is not table {table} of the night {night}: give "
                    "another --state FILE, or --new to seat the night's next round"
                ).format(path=state, table=self.table + 1, night=self.book.path)
            )

    def record(self, ref: Referee) -> bool:
        """Record the rounds `ref`'s game has scored in the night (as the game now has them);
        True when the night file changed. OSError or InputError when it cannot be written (the
        next save tries again)."""
        assert ref.span is not None
        rounds = {
            r["round"]: {ref.players[s]: int(g) for s, g in enumerate(r["gained"])}
            for r in ref.rounds
        }
        if rounds == self._written:
            return False
        changed = self.book.record_game(self.table, ref.span, rounds)
        self._written = rounds
        return changed

    def elsewhere(self, round_no: int) -> dict[str, int]:
        """Players the rotation seats here from round `round_no` who are still playing the
        rounds before it at another table, as the night has recorded them: name -> that table
        (from 1). (With two tables the players change tables between stages: one table may
        finish its stage before the other.)"""
        if round_no <= 1:
            return {}
        schedule = self.book.schedule
        before = schedule.stage_of(round_no - 1)
        busy: dict[str, int] = {}
        for name in self.book.seating(self.table, round_no):
            table, _seat = before.table_of(schedule.names.index(name))
            if table != self.table and self.book.next_round(table) <= round_no - 1:
                busy[name] = table + 1
        return busy

    def next_seating(self, ref: Referee) -> dict[str, Any] | None:
        """Once `ref`'s game (this table's stage) is over: the rounds of the next stage here,
        the players it seats (clockwise) and those of them still playing at another table
        (`elsewhere`); None while the game goes on."""
        if ref.phase != "over" or ref.span is None:
            return None
        round_no = ref.span[1] + 1
        return {
            "rounds": list(self.book.stage_rounds(round_no)),
            "players": list(self.book.seating(self.table, round_no)),
            "elsewhere": self.elsewhere(round_no),  # still playing at another table
        }

    def to_state(self) -> dict[str, Any]:
        """What the state file keeps of the night: the night file and the table (from 1)."""
        return {"file": str(self.book.path), "table": self.table + 1}

    def view(self, ref: Referee) -> dict[str, Any]:
        """The night as this table's page shows it: the book's view, this table, and once its
        game is over the next seating here (`next_seating`)."""
        data = self.book.view()
        data["table"] = self.table + 1
        data["file"] = self.book.path.name  # (its name: pages are not told the server's paths)
        data["game_rounds"] = list(ref.span) if ref.span is not None else None
        data["next"] = self.next_seating(ref)
        return data
