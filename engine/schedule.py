"""Seat rotation over a game night (seed 001 玩家位置變化), and the standings that total it.

The sheet: "如果有四個玩家參與此遊戲，玩牌時其他三人可以輪流坐在您的對家，
每換一次對家就玩四局，這樣玩一個輪迴下來共可玩 12 局 ... 如果有八個玩家，您可以拆成兩桌，
也是某個玩家分別與另外七人輪流成為對家，每換一次對家就玩四局，這樣玩一個輪迴下來有28局，
然後總計分數，產生冠軍" (with four players each of the other three sits opposite you in turn,
four rounds each: twelve rounds a cycle; with eight, two tables, each player opposite each of
the other seven in turn: 28 rounds; then the totals make the champion).

So a night of N players is N - 1 *stages*; in each stage every player has one partner sitting
opposite (the stages' pairs are a 1-factorisation of the complete graph on the players: each pair
sits opposite exactly once a cycle), and each stage lasts `ROUNDS_EACH` rounds. The pairs of a
stage are shared out over the tables, a table of 2k seats taking k pairs, each pair at seats i and
i + k (opposite); which pairs share a table is chosen so that every two players also share tables
as evenly as can be found (with 8 players: every two players meet at a table in exactly 3 of the 7
stages). With N a power of two the stage of "difference" d pairs x with x XOR d; otherwise the
circle method (one player fixed, the others turning).

The standings record each round's points per player, whatever table it was played at, and rank
the players by their totals (lowest first in the modes where points count against you).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import InputError
from engine.scoring import LOWER_WINS
from i18n import _

__all__ = [
    "MAX_NIGHT_PLAYERS",
    "NIGHT_MODES",
    "ROUNDS_EACH",
    "Schedule",
    "Stage",
    "Standings",
    "check_night_mode",
    "default_tables",
    "rotation",
]

# Scoring modes a night's rounds may be scored in: the points systems (seed 001: "前提：必須採用
# 計分制", a points system first), each round scored on its own.
NIGHT_MODES: tuple[str, ...] = ("teams", "target", "lowest")
ROUNDS_EACH = 4  # "每換一次對家就玩四局": four rounds with each partner opposite
MIN_TABLE, MAX_TABLE = 4, 10  # seats at one table: two opposite pairs at least, the deck's most
MAX_NIGHT_PLAYERS = 16  # four tables of four (the table-sharing search stays instant)


@dataclass(frozen=True, slots=True)
class Stage:
    """`ROUNDS_EACH` rounds with the same partners opposite: `tables[t]` lists table t's players
    by seat, clockwise from seat 0; at a table of 2k seats seat s faces seat s + k."""

    index: int  # 0-based, within a cycle
    tables: tuple[tuple[int, ...], ...]

    def opposite(self, player: int) -> int:
        """The player sitting opposite `player` in this stage."""
        for seats in self.tables:
            if player in seats:
                half = len(seats) // 2
                return seats[(seats.index(player) + half) % len(seats)]
        raise ValueError(f"player {player} is not seated")

    def table_of(self, player: int) -> tuple[int, int]:
        """(table, seat) of `player` in this stage."""
        for t, seats in enumerate(self.tables):
            if player in seats:
                return t, seats.index(player)
        raise ValueError(f"player {player} is not seated")


@dataclass(frozen=True)
class Schedule:
    """A night's rotation: `players` (numbered 0..N-1; `names` for show), `stages` (one cycle),
    `rounds_each` rounds per stage. Round numbers count from 1 over the whole night; the
    rotation starts again after `cycle_rounds`."""

    players: int
    tables: int
    stages: tuple[Stage, ...]
    names: tuple[str, ...]
    rounds_each: int = ROUNDS_EACH

    @property
    def seats(self) -> int:
        """Seats at each table."""
        return self.players // self.tables

    @property
    def cycle_rounds(self) -> int:
        """Rounds in one cycle: every player opposite every other for `rounds_each` rounds."""
        return len(self.stages) * self.rounds_each

    def stage_of(self, round_no: int) -> Stage:
        """The stage round `round_no` (from 1, over any number of cycles) is played in."""
        if round_no < 1:
            raise ValueError("rounds count from 1")
        return self.stages[((round_no - 1) // self.rounds_each) % len(self.stages)]

    def rounds_of(self, stage: Stage, cycle: int = 0) -> range:
        """The round numbers (from 1) of `stage` in cycle `cycle` (from 0)."""
        first = cycle * self.cycle_rounds + stage.index * self.rounds_each + 1
        return range(first, first + self.rounds_each)

    def table_names(self, stage: Stage, table: int) -> tuple[str, ...]:
        """The names at `table` in `stage`, by seat."""
        return tuple(self.names[p] for p in stage.tables[table])

    def to_dict(self) -> dict[str, Any]:
        """The rotation as plain data (`unoattack schedule --json`)."""
        return {
            "players": self.players,
            "names": list(self.names),
            "tables": self.tables,
            "seats": self.seats,
            "rounds_each": self.rounds_each,
            "cycle_rounds": self.cycle_rounds,
            "stages": [
                {
                    "stage": stage.index + 1,
                    "rounds": [self.rounds_of(stage)[0], self.rounds_of(stage)[-1]],
                    "tables": [list(self.table_names(stage, t)) for t in range(self.tables)],
                    "opposite": [
                        [self.names[p], self.names[stage.opposite(p)]]
                        for seats in stage.tables
                        for p in seats[: len(seats) // 2]
                    ],
                }
                for stage in self.stages
            ],
        }


def check_night_mode(mode: str) -> None:
    """InputError unless a night's rounds can be scored in `mode` (NIGHT_MODES)."""
    if mode not in NIGHT_MODES:
        raise InputError(
            _("--mode {mode}: a night is scored in {modes}").format(
                mode=mode, modes=", ".join(NIGHT_MODES)
            )
        )


def default_tables(players: int) -> int | None:
    """Tables of four when the players make them (the sheet's 4 at one table, 8 at two), else
    the fewest tables of an even number of seats that share them out; None if none do."""
    if players % 4 == 0:
        return players // 4
    for tables in range(1, players // MIN_TABLE + 1):
        if _fits(players, tables):
            return tables
    return None


def _fits(players: int, tables: int) -> bool:
    if tables < 1 or players % tables:
        return False
    seats = players // tables
    return seats % 2 == 0 and MIN_TABLE <= seats <= MAX_TABLE


def rotation(players: int, tables: int | None = None, names: Sequence[str] = ()) -> Schedule:
    """The seat rotation of `players` at `tables` tables (default: `default_tables`).

    InputError (one line) unless the players are an even number from 4 to MAX_NIGHT_PLAYERS (each
    needs a partner opposite) and share out over the tables as an even number of 4 to 10 seats
    each; or when `names` are given and are not one per player, or repeat.
    """
    if players % 2 or not MIN_TABLE <= players <= MAX_NIGHT_PLAYERS:
        raise InputError(
            _(
                "{players} players: a seat rotation needs an even number of players from {low} "
                "to {high} (each sits opposite each other in turn)"
            ).format(players=players, low=MIN_TABLE, high=MAX_NIGHT_PLAYERS)
        )
    if tables is None:
        tables = default_tables(players)
        if tables is None:
            raise InputError(
                _(
                    "{players} players cannot share tables of an even number of {low} to {high} "
                    "seats each"
                ).format(players=players, low=MIN_TABLE, high=MAX_TABLE)
            )
    if not _fits(players, tables):
        raise InputError(
            _(
                "{players} players cannot share {tables} tables: each table seats an even "
                "number of {low} to {high} players"
            ).format(players=players, tables=tables, low=MIN_TABLE, high=MAX_TABLE)
        )
    if names:
        if len(names) != players:
            raise InputError(
                _("{count} names for {players} players: give one name per player").format(
                    count=len(names), players=players
                )
            )
        seen = Counter(n.lower() for n in names)
        twice = next((n for n in names if seen[n.lower()] > 1), None)
        if twice is not None:
            raise InputError(_("player name `{name}` is used twice").format(name=twice))
    shown = tuple(names) if names else tuple(str(p + 1) for p in range(players))
    stages = tuple(
        Stage(i, tuple(_seated(group) for group in groups))
        for i, groups in enumerate(_share_out(_pairings(players), tables))
    )
    return Schedule(players, tables, stages, shown)


def _pairings(players: int) -> list[list[tuple[int, int]]]:
    """A 1-factorisation: players - 1 perfect matchings, every pair in exactly one."""
    if players & (players - 1) == 0:
        # A power of two: stage d pairs x with x XOR d (with 8 players these share out over two
        # tables so that every two players meet at a table equally often).
        return [[(x, x ^ d) for x in range(players) if x < x ^ d] for d in range(1, players)]
    # The circle method: the last player stays, the others turn one place a stage.
    m = players - 1
    return [
        [(r, m), *(((r + k) % m, (r - k) % m) for k in range(1, players // 2))] for r in range(m)
    ]


def _share_out(
    stages: list[list[tuple[int, int]]], tables: int
) -> list[list[tuple[tuple[int, int], ...]]]:
    """Each stage's pairs shared out over the tables: of every way to group them, the one that
    keeps how often each two players share a table most even (local search: each stage in turn
    takes its best grouping given the others, until none changes; deterministic)."""
    size = len(stages[0]) // tables
    ways = [list(_groupings(tuple(pairs), size)) for pairs in stages]
    choice = [0] * len(stages)
    together: Counter[tuple[int, int]] = Counter()
    for i, options in enumerate(ways):
        together.update(_met(options[choice[i]]))
    if tables > 1:
        changed = True
        while changed:
            changed = False
            for i, options in enumerate(ways):
                together.subtract(_met(options[choice[i]]))
                # Adding one meeting to a count c raises the sum of squares by 2c + 1: the
                # grouping whose meetings have met least keeps the counts most even.
                best = min(
                    range(len(options)),
                    key=lambda j: (sum(together[m] for m in _met(options[j])), j),
                )
                changed |= best != choice[i]
                choice[i] = best
                together.update(_met(options[best]))
    return [ways[i][choice[i]] for i in range(len(stages))]


def _met(groups: Sequence[tuple[tuple[int, int], ...]]) -> list[tuple[int, int]]:
    """Every two players at the same table in a grouping."""
    met: list[tuple[int, int]] = []
    for group in groups:
        at = sorted(p for pair in group for p in pair)
        met.extend(itertools.combinations(at, 2))
    return met


def _groupings(
    pairs: tuple[tuple[int, int], ...], size: int
) -> Iterator[list[tuple[tuple[int, int], ...]]]:
    """Every way to cut `pairs` into groups of `size` (groups unordered)."""
    if not pairs:
        yield []
        return
    first, rest = pairs[0], pairs[1:]
    for others in itertools.combinations(rest, size - 1):
        left = tuple(p for p in rest if p not in others)
        for tail in _groupings(left, size):
            yield [(first, *others), *tail]


def _seated(group: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """A table's seats: pair i at seats i and i + k (opposite)."""
    return tuple(a for a, _b in group) + tuple(b for _a, b in group)


# -- standings ------------------------------------------------------------------------------


@dataclass
class Standings:
    """Each round's points per player over a night, whatever table it was played at
    ("要把每局的分數記錄下來，玩個幾個輪迴，便可依累計分數產生冠軍": record every round's
    scores; after a few cycles the totals make the champion). `mode` is the scoring mode the
    tables play: where points count against a player (LOWER_WINS) the lowest total ranks first.
    """

    names: tuple[str, ...]
    mode: str = "teams"
    rounds: list[dict[str, Any]] = field(default_factory=list)

    def record(self, round_no: int, table: int, points: Mapping[str, int]) -> None:
        """Round `round_no` at `table` gave each player there `points` (a round is recorded
        once per table; every name must be a player's)."""
        for entry in self.rounds:
            if entry["round"] == round_no and entry["table"] == table:
                raise InputError(
                    _("round {round} at table {table} is recorded already").format(
                        round=round_no, table=table + 1
                    )
                )
        unknown = [n for n in points if n not in self.names]
        if unknown:
            raise InputError(_("`{name}` is not a player of this night").format(name=unknown[0]))
        self.rounds.append({"round": round_no, "table": table, "points": dict(points)})

    def totals(self) -> dict[str, int]:
        """Each player's total so far."""
        totals = dict.fromkeys(self.names, 0)
        for entry in self.rounds:
            for name, pts in entry["points"].items():
                totals[name] += pts
        return totals

    def played(self) -> dict[str, int]:
        """Rounds each player has played."""
        count = dict.fromkeys(self.names, 0)
        for entry in self.rounds:
            for name in entry["points"]:
                count[name] += 1
        return count

    def ranking(self) -> list[tuple[int, str, int]]:
        """(place, name, total), best first; equal totals share a place."""
        totals = self.totals()
        sign = 1 if self.mode in LOWER_WINS else -1
        order = sorted(self.names, key=lambda n: (sign * totals[n], self.names.index(n)))
        ranked: list[tuple[int, str, int]] = []
        for i, name in enumerate(order):
            place = ranked[-1][0] if ranked and totals[name] == ranked[-1][2] else i + 1
            ranked.append((place, name, totals[name]))
        return ranked

    def champions(self) -> tuple[str, ...]:
        """The players in first place ("產生冠軍"); none before a round is recorded."""
        if not self.rounds:
            return ()
        return tuple(name for place, name, _total in self.ranking() if place == 1)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a standings file; `unoattack schedule --sim --json`)."""
        return {
            "names": list(self.names),
            "mode": self.mode,
            "rounds": [dict(r) for r in self.rounds],
            "totals": self.totals(),
            "ranking": [{"place": p, "name": n, "total": t} for p, n, t in self.ranking()],
            "champions": list(self.champions()),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Standings:
        """The standings `to_dict` wrote."""
        standings = cls(tuple(data["names"]), str(data.get("mode", "teams")))
        for entry in data.get("rounds", ()):
            standings.record(int(entry["round"]), int(entry["table"]), entry["points"])
        return standings
