"""The seat rotation of a game night (seed 001 玩家位置變化) and its standings.

"如果有四個玩家參與此遊戲，玩牌時其他三人可以輪流坐在您的對家，每換一次對家就玩四局，這樣玩一個輪迴
下來共可玩 12 局" (four players: each of the other three sits opposite you in turn, four rounds
each, twelve rounds a cycle); "如果有八個玩家，您可以拆成兩桌，也是某個玩家分別與另外七人輪流成為
對家，每換一次對家就玩四局，這樣玩一個輪迴下來有28局" (eight players at two tables, each opposite
each of the other seven in turn, four rounds each: 28 rounds a cycle).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cli import main as unoattack
from engine.errors import InputError
from engine.night import play_night
from engine.schedule import MAX_NIGHT_PLAYERS, Schedule, Standings, default_tables, rotation

SUPPORTED = [
    (n, t)
    for n in range(4, MAX_NIGHT_PLAYERS + 1, 2)
    for t in range(1, n // 4 + 1)
    if n % t == 0 and (n // t) % 2 == 0 and 4 <= n // t <= 10
]


def opposite_pairs(schedule: Schedule) -> Counter[frozenset[int]]:
    """How many stages each two players sit opposite in."""
    seen: Counter[frozenset[int]] = Counter()
    for stage in schedule.stages:
        for seats in stage.tables:
            half = len(seats) // 2
            for i in range(half):
                seen[frozenset((seats[i], seats[i + half]))] += 1
    return seen


def met_at_tables(schedule: Schedule) -> Counter[frozenset[int]]:
    met: Counter[frozenset[int]] = Counter()
    for stage in schedule.stages:
        for seats in stage.tables:
            met.update(frozenset(p) for p in itertools.combinations(seats, 2))
    return met


def test_four_players_each_other_opposite_in_turn_twelve_rounds() -> None:
    s = rotation(4)
    assert (s.tables, s.seats, len(s.stages), s.rounds_each, s.cycle_rounds) == (1, 4, 3, 4, 12)
    for player in range(4):
        partners = [stage.opposite(player) for stage in s.stages]
        assert sorted(partners) == sorted(set(range(4)) - {player})


def test_eight_players_two_tables_each_opposite_each_of_the_seven_28_rounds() -> None:
    s = rotation(8)
    assert (s.tables, s.seats, len(s.stages), s.cycle_rounds) == (2, 4, 7, 28)
    for player in range(8):
        partners = [stage.opposite(player) for stage in s.stages]
        assert sorted(partners) == sorted(set(range(8)) - {player})
    # And every two players share a table in exactly 3 of the 7 stages (as partners once, as
    # opponents twice).
    assert set(met_at_tables(s).values()) == {3}


@pytest.mark.parametrize(("players", "tables"), SUPPORTED)
def test_every_supported_night_seats_everyone_and_pairs_each_two_once(
    players: int, tables: int
) -> None:
    s = rotation(players, tables)
    assert len(s.stages) == players - 1 and s.cycle_rounds == 4 * (players - 1)
    for stage in s.stages:
        seated = [p for seats in stage.tables for p in seats]
        assert sorted(seated) == list(range(players))  # everyone plays every round, once
        assert all(len(seats) == players // tables for seats in stage.tables)
    pairs = opposite_pairs(s)
    assert len(pairs) == players * (players - 1) // 2 and set(pairs.values()) == {1}
    # Sharing tables is spread: nobody meets another more than twice as often as the average.
    met = met_at_tables(s)
    average = (players // tables - 1) * (players - 1) / (players - 1)
    assert max(met.values()) <= 2 * average


def test_the_rounds_follow_the_stages_and_the_cycle_repeats() -> None:
    s = rotation(4)
    assert [s.stage_of(r).index for r in (1, 4, 5, 8, 9, 12, 13, 25)] == [0, 0, 1, 1, 2, 2, 0, 0]
    assert list(s.rounds_of(s.stages[1], cycle=1)) == [17, 18, 19, 20]
    t, seat = s.stages[0].table_of(3)
    assert s.stages[0].tables[t][seat] == 3


@pytest.mark.parametrize(
    ("players", "tables", "message"),
    [
        (7, None, "7 players: a seat rotation needs an even number"),
        (2, None, "2 players: a seat rotation needs an even number of players from 4"),
        (18, None, "from 4 to 16"),
        (14, None, "14 players cannot share tables of an even number of 4 to 10 seats"),
        (8, 3, "8 players cannot share 3 tables"),
        (12, 6, "12 players cannot share 6 tables"),
        (12, 1, "12 players cannot share 1 tables"),
    ],
)
def test_unsupported_nights_are_one_line_errors(
    players: int, tables: int | None, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        rotation(players, tables)


def test_default_tables_are_the_sheets() -> None:
    assert [default_tables(n) for n in (4, 6, 8, 10, 12, 14, 16)] == [1, 1, 2, 1, 3, None, 4]


def test_names_one_per_player() -> None:
    s = rotation(4, names=["Ann", "Bob", "Cy", "Di"])
    assert s.table_names(s.stages[0], 0) == ("Ann", "Cy", "Bob", "Di")
    with pytest.raises(InputError, match="3 names for 4 players"):
        rotation(4, names=["Ann", "Bob", "Cy"])
    with pytest.raises(InputError, match="`Ann` is used twice"):
        rotation(4, names=["Ann", "Bob", "Cy", "ann"])


# -- standings: "要把每局的分數記錄下來，玩個幾個輪迴，便可依累計分數產生冠軍了" --------


def test_standings_total_each_player_over_tables_and_rank_by_the_mode() -> None:
    st_ = Standings(("A", "B", "C", "D"), "teams")
    st_.record(1, 0, {"A": 10, "B": 3})
    st_.record(1, 1, {"C": 7, "D": 3})
    st_.record(2, 0, {"A": 0, "C": 5})
    assert st_.totals() == {"A": 10, "B": 3, "C": 12, "D": 3}
    # Teams points count against a player: lowest first, equal totals share a place.
    assert st_.ranking() == [(1, "B", 3), (1, "D", 3), (3, "A", 10), (4, "C", 12)]
    assert st_.champions() == ("B", "D")
    scored = Standings(("A", "B"), "target")
    scored.record(1, 0, {"A": 40, "B": 0})
    assert scored.champions() == ("A",)
    with pytest.raises(InputError, match="round 1 at table 1 is recorded already"):
        scored.record(1, 0, {"A": 1})
    with pytest.raises(InputError, match="`Z` is not a player"):
        scored.record(2, 0, {"Z": 1})
    again = Standings.from_dict(json.loads(json.dumps(st_.to_dict())))
    assert again.ranking() == st_.ranking()


@given(
    st.lists(
        st.tuples(st.integers(1, 30), st.integers(0, 1), st.integers(0, 200)),
        max_size=30,
        unique_by=lambda e: e[:2],
    )
)
def test_standings_totals_are_the_sums_of_what_was_recorded(entries: list[Any]) -> None:
    names = ("A", "B", "C")
    st_ = Standings(names, "lowest")
    expected = dict.fromkeys(names, 0)
    for i, (round_no, table, points) in enumerate(entries):
        name = names[i % 3]
        st_.record(round_no, table, {name: points})
        expected[name] += points
    assert st_.totals() == expected
    ranking = st_.ranking()
    assert [t for _p, _n, t in ranking] == sorted(expected.values())


# -- the night simulated, and the command ----------------------------------------------------


def test_a_simulated_night_plays_every_round_at_every_table() -> None:
    s = rotation(8)
    night = play_night(s, cycles=1, seed=4)
    assert night.rounds == 2 * 28
    assert set(night.standings.played().values()) == {28}
    # Teams: each opposite pair scores the same every round.
    for entry in night.standings.rounds:
        stage = s.stage_of(entry["round"])
        for player in stage.tables[entry["table"]]:
            partner = stage.opposite(player)
            assert entry["points"][str(player + 1)] == entry["points"][str(partner + 1)]
    again = play_night(s, cycles=1, seed=4)
    assert again.standings.to_dict() == night.standings.to_dict()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = unoattack(["schedule", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_schedule_prints_the_rotation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--players", "8")
    assert code == 0
    assert "8 players at 2 tables of 4" in out and "28 rounds a cycle" in out
    assert "25-28" in out
    code, out, _ = run_cli(capsys, "--players", "8", "--json")
    data = json.loads(out)["schedule"]
    assert data["cycle_rounds"] == 28 and len(data["stages"]) == 7


def test_schedule_sim_prints_the_standings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "--players", "4", "--names", "Ann,Bob,Cy,Di", "--sim", "--mode", "target"
    )
    assert code == 0 and "champion:" in out and "Ann" in out
    code, out, _ = run_cli(capsys, "--players", "4", "--sim", "--json", "--seed", "2")
    night = json.loads(out)["night"]
    assert night["rounds"] == 12 and night["standings"]["champions"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--players", "5"], "5 players: a seat rotation needs an even number"),
        (["--players", "8", "--tables", "4"], "8 players cannot share 4 tables"),
        (["--players", "4", "--sim", "--mode", "chips"], "a night is scored in teams"),
        (["--players", "4", "--sim", "--cycles", "0"], "--cycles 0: from 1 to 100"),
        (["--players", "4", "--sim", "--bots", "a,b"], "unknown bot `a`"),
        (["--players", "4", "--names", "A,B"], "2 names for 4 players"),
    ],
)
def test_schedule_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
