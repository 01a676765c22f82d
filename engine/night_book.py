"""A game night in a file: the seat rotation the tables follow and the standings they record.

Seed 001 (玩家位置變化): "要把每局的分數記錄下來，玩個幾個輪迴，便可依累計分數產生冠軍" (record
every round's scores; after a few cycles the totals make the champion). `unoattack schedule
--players N --names ... --night FILE` writes the night; every table of it runs `unoattack table
--night FILE --table T` or `unoattack serve --night FILE --table T` (with a box or `--port none`)
and seats, round by round, the players the rotation puts there; each round a table scores is
recorded here at once, so the standings total each player over every table, and every table (and
`unoattack standings FILE`) shows them.

The file (JSON) holds what the night was made of (the players' names, the tables, the scoring
mode, the deck and the rule options: the rotation itself is worked out again from them,
engine/schedule.py) and the rounds recorded. Two tables write it: each write takes the night's
lock (`FILE.lock`, the kernel's flock), reads the file again, changes only its own table's
rounds, and replaces the file whole (written beside it, read back by the loader, renamed).

A table records the rounds of the game it plays, as that game now has them (`record_game`): a
round scored is added, a round taken back (undo) is taken out again, and a table that restarts
after a crash between its own save and the night's records what its state file holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import textfile
from common.atomic import write_atomic
from engine.errors import InputError, UnoError
from engine.schedule import Schedule, Standings, check_night_mode, rotation
from i18n import _, message_of

if TYPE_CHECKING:
    from engine.table.referee import Referee

__all__ = ["FORMAT", "KIND", "NightBook", "TableRounds", "night_error"]

FORMAT = 1
KIND = "unoattack-night"  # what the file says it is (a state file given here by mistake is not)
LOOK_S = 1.0  # how often a table's page looks for rounds the other tables recorded
LOCK_WAIT_S = 10.0  # another table writes for milliseconds; a lock held longer is a stuck one

# A round as a table records it: the round's number (over the night) and each player's points.
TableRounds = Mapping[int, Mapping[str, int]]


@dataclass
class NightBook:
    """A night read from its file: the `schedule`, how it is scored (`mode`, `deck`, rule
    `options`) and the `standings` recorded so far."""

    path: Path
    schedule: Schedule
    mode: str = "teams"
    deck: str = "attack"
    options: dict[str, object] = field(default_factory=dict)
    standings: Standings = field(init=False)

    def __post_init__(self) -> None:
        self.standings = Standings(self.schedule.names, self.mode)

    # -- making and reading -------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: Path,
        schedule: Schedule,
        *,
        mode: str = "teams",
        deck: str = "attack",
        options: Mapping[str, object] | None = None,
    ) -> NightBook:
        """A new night in `path` (which must not exist: a night's rounds are never written
        over); InputError naming what cannot be (a mode, the names, the deck, a rule option)."""
        book = cls(Path(path), schedule, mode, deck, dict(options or {}))
        book.check()
        with book._locked():  # (two at once: the second finds the first's file)
            if book.path.exists():
                raise InputError(
                    _(
                        "{path} exists: it may hold a night's rounds; give another FILE, or "
                        "remove it to start the night again"
                    ).format(path=path)
                )
            book._write()
        return book

    @classmethod
    def load(cls, path: Path) -> NightBook:
        """The night in `path`; InputError (one line, naming the file and what is wrong)."""
        path = Path(path)
        try:
            data = textfile.parse_json(textfile.read_text(path))
        except OSError as exc:
            raise InputError(textfile.cannot_read(path, exc).render()) from None
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise InputError(
                _("{path}: not a night file (unoattack schedule --night FILE writes one)").format(
                    path=path
                )
            ) from None
        try:
            return cls.from_dict(path, data)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None

    @classmethod
    def from_dict(cls, path: Path, data: Any) -> NightBook:
        """The night `to_dict` wrote, every field checked (InputError naming the first bad
        one)."""
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise InputError(_("not a night file (unoattack schedule --night FILE writes one)"))
        if data.get("format") != FORMAT:
            raise InputError(f"not a night file: format {data.get('format')!r}: expected {FORMAT}")
        names = data.get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InputError("not a night file: `names` must be a list of names")
        tables = data.get("tables")
        if isinstance(tables, bool) or not isinstance(tables, int):
            raise InputError("not a night file: `tables` must be a whole number")
        for key in ("mode", "deck"):
            if not isinstance(data.get(key), str):
                raise InputError(f"not a night file: `{key}` must be text")
        options = data.get("options")
        if not isinstance(options, dict):
            raise InputError("not a night file: `options` must be a table of rule options")
        book = cls(path, rotation(len(names), tables, names), data["mode"], data["deck"], options)
        book.check()
        rounds = data.get("rounds")
        if not isinstance(rounds, list):
            raise InputError("not a night file: `rounds` must be a list")
        for entry in rounds:
            book._read_round(entry)
        return book

    def _read_round(self, entry: Any) -> None:
        if not isinstance(entry, dict):
            raise InputError(f"not a night file: a round must be an object, got {entry!r:.60}")
        round_no, table, points = entry.get("round"), entry.get("table"), entry.get("points")
        if isinstance(round_no, bool) or not isinstance(round_no, int) or round_no < 1:
            raise InputError(f"not a night file: `round` must be a round number, got {round_no!r}")
        if isinstance(table, bool) or not isinstance(table, int):
            raise InputError(f"not a night file: `table` must be a table number, got {table!r}")
        if not 0 <= table < self.schedule.tables:
            raise InputError(f"not a night file: table {table + 1} of {self.schedule.tables}")
        seated = set(self.seating(table, round_no))
        if (
            not isinstance(points, dict)
            or set(points) != seated
            or any(isinstance(v, bool) or not isinstance(v, int) for v in points.values())
        ):
            raise InputError(
                f"not a night file: round {round_no} at table {table + 1} must give points to "
                f"{', '.join(sorted(seated))}, got {points!r:.80}"
            )
        self.standings.record(round_no, table, points)

    def check(self) -> None:
        """InputError unless the night can be played at a table: a mode a night is scored in,
        names a table takes, a deck with room for a table's hands, known rule options."""
        check_night_mode(self.mode)
        names = list(self.schedule.names)
        if all(n.isdigit() for n in names):
            raise InputError(
                _(
                    "a night at the tables needs the players' names: --names A,B,... ({count})"
                ).format(count=len(names))
            )
        # Each table's first game as the table would make it: the referee's own checks of the
        # names, the mode, the deck (room for the hands), the rule options.
        for table in range(self.schedule.tables):
            self.game(table, 1)

    def game(self, table: int, round_no: int) -> Referee:
        """The game `table` (from 0) plays from round `round_no` to its stage's last: the
        players the rotation seats there (clockwise), scored as the night is (in `teams` each
        opposite pair a team); InputError as the referee checks it."""
        from engine.table.referee import TEAMS, Referee  # (the table's own game and checks)

        players = list(self.seating(table, round_no))
        return Referee(
            players,
            deck=self.deck,
            mode=self.mode,
            teams=len(players) // 2 if self.mode == "teams" else TEAMS,
            options=dict(self.options),
            span=self.span(round_no),
        )

    def to_dict(self) -> dict[str, Any]:
        """The file's data."""
        return {
            "kind": KIND,
            "format": FORMAT,
            "names": list(self.schedule.names),
            "tables": self.schedule.tables,
            "mode": self.mode,
            "deck": self.deck,
            "options": dict(self.options),
            "rounds": [dict(r) for r in sorted(self.standings.rounds, key=_order)],
        }

    def view(self) -> dict[str, Any]:
        """The night as whoever watches it reads it (`unoattack standings --json`, the page):
        the players, the mode, where each table is (the round it plays next, who sits there by
        seat, clockwise) and the standings (every round, the totals, the ranking, the
        champions so far)."""
        tables = []
        for table in range(self.schedule.tables):
            round_no = self.next_round(table)
            tables.append(
                {
                    "table": table + 1,
                    "next_round": round_no,
                    "rounds": list(self.stage_rounds(round_no)),
                    "players": list(self.seating(table, round_no)),
                    "recorded": len(self.recorded(table)),
                }
            )
        return {
            "players": list(self.schedule.names),
            "tables": tables,
            "seats": self.schedule.seats,
            "mode": self.mode,
            "deck": self.deck,
            "cycle_rounds": self.schedule.cycle_rounds,
            "rounds_each": self.schedule.rounds_each,
            "standings": {**self.standings.to_dict(), "played": self.standings.played()},
        }

    # -- the rotation, for one table ------------------------------------------------------------
    def seating(self, table: int, round_no: int) -> tuple[str, ...]:
        """Who sits at `table` (from 0) in round `round_no`, by seat, clockwise."""
        return self.schedule.table_names(self.schedule.stage_of(round_no), table)

    def stage_rounds(self, round_no: int) -> tuple[int, int]:
        """The first and last round of the stage `round_no` is in (the same seating)."""
        cycle = (round_no - 1) // self.schedule.cycle_rounds
        rounds = self.schedule.rounds_of(self.schedule.stage_of(round_no), cycle)
        return rounds[0], rounds[-1]

    def span(self, round_no: int) -> tuple[int, int]:
        """The rounds a game starting at `round_no` plays: from it to its stage's last."""
        return round_no, self.stage_rounds(round_no)[1]

    def next_round(self, table: int) -> int:
        """The round `table` plays next: the one after the last it has recorded."""
        done = [r["round"] for r in self.standings.rounds if r["table"] == table]
        return max(done, default=0) + 1

    def recorded(self, table: int) -> dict[int, dict[str, int]]:
        """The rounds `table` has recorded: round number -> each player's points."""
        return {r["round"]: dict(r["points"]) for r in self.standings.rounds if r["table"] == table}

    def check_table(self, table: int) -> None:
        """InputError unless `table` (from 0) is one of the night's."""
        if not 0 <= table < self.schedule.tables:
            raise InputError(
                _("--table {table}: this night has tables 1 to {tables}").format(
                    table=table + 1, tables=self.schedule.tables
                )
            )

    # -- writing -------------------------------------------------------------------------------
    def record_game(self, table: int, span: tuple[int, int], rounds: TableRounds) -> bool:
        """Make `table`'s rounds `span[0]` to `span[1]` what its game has (`rounds`: round ->
        points), whatever another table has written meanwhile: under the night's lock the
        file is read again, those rounds replaced, and the file written whole. True when the
        file changed. OSError (the file as it was) when it cannot be written; InputError when
        the file is no longer a night."""
        first, last = span
        with self._locked():
            fresh = NightBook.load(self.path)
            mine = {
                r["round"]: r["points"]
                for r in fresh.standings.rounds
                if r["table"] == table and first <= r["round"] <= last
            }
            wanted = {int(k): dict(v) for k, v in rounds.items()}
            self.standings = fresh.standings
            if mine == wanted:
                return False
            fresh.standings.rounds = [
                r
                for r in fresh.standings.rounds
                if not (r["table"] == table and first <= r["round"] <= last)
            ]
            for round_no in sorted(wanted):
                fresh.standings.record(round_no, table, wanted[round_no])
            fresh._write()
            self.standings = fresh.standings
            return True

    def refresh(self) -> bool:
        """Read the file again (another table may have recorded rounds); True when the
        standings changed. An unreadable file leaves the standings as they were (InputError)."""
        fresh = NightBook.load(self.path)
        changed = fresh.standings.rounds != self.standings.rounds
        self.standings = fresh.standings
        return changed

    def follow(self, stop: threading.Event, changed: Callable[[], None]) -> None:
        """Call `changed()` whenever another table records rounds (the file changed and its
        standings with it), until `stop`: a table's page shows every table's rounds."""
        seen = _stamp(self.path)
        while not stop.wait(LOOK_S):
            now = _stamp(self.path)
            if now == seen:
                continue
            seen = now
            try:
                if self.refresh():
                    changed()
            except UnoError:
                continue  # a file being edited by hand, say: the standings as they were

    def _write(self) -> None:
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n"
        write_atomic(self.path, text, check=_loads)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The night's lock (`FILE.lock`) for one read-change-write; OSError when it cannot be
        had (a folder that cannot be written) or another holds it for LOCK_WAIT_S."""
        lock = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            _flock(fd, lock)
            yield
        finally:
            os.close(fd)  # (closing lets the lock go)


def _flock(fd: int, lock: Path) -> None:
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise OSError(
                    0,
                    _("another table has held the night's lock for {s:.0f} s").format(
                        s=LOCK_WAIT_S
                    ),
                    str(lock),
                ) from None
            time.sleep(0.01)


def _stamp(path: Path) -> tuple[int, int] | None:
    """When a file last changed, and its size (None: not there now)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _loads(path: str) -> None:
    """A night file about to be written must load (InputError otherwise: nothing written)."""
    NightBook.load(Path(path))


def _order(entry: Mapping[str, Any]) -> tuple[int, int]:
    return entry["round"], entry["table"]


def night_error(exc: Exception) -> str:
    """What to say when the night file could not be written (OSError, or a file that is no
    longer a night)."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return message_of(exc) if isinstance(exc, UnoError) else str(exc)
