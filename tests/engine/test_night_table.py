"""A game night at real tables (seed 001 玩家位置變化): `unoattack schedule --night FILE` writes
it, each table runs `unoattack table --night FILE --table T --port none` (a table without a box
takes part like one with a box), seats the players the rotation puts there round by round, and
records every round it scores in FILE; `unoattack standings FILE` totals each player over every
table.

The sheet: "如果有八個玩家，您可以拆成兩桌，也是某個玩家分別與另外七人輪流成為對家，每換一次對家
就玩四局 ... 要把每局的分數記錄下來，玩個幾個輪迴，便可依累計分數產生冠軍" (with eight players,
two tables, each player opposite each of the other seven in turn, four rounds each ... record
every round's scores; after a few cycles the totals make the champion).
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.errors import InputError
from engine.game_history import history_path
from engine.night_book import NightBook
from engine.schedule import rotation

NAMES = "Ann,Bob,Cat,Dan,Eve,Fay,Gus,Hal"


# One round at a table of four seated A B C D clockwise, A dealing: B goes out on R7 (the three
# others set to one card first); then the hands left are entered in turn: 1, 2 and 3 points.
def one_round(a: str, b: str, c: str, d: str) -> str:
    return f"R5\nhand {a} 1\nhand {c} 1\nhand {d} 1\nhand {b} 1\nR7\nR1\nG2\nB3\n"


def night(tmp_path: Path, *extra: str) -> Path:
    path = tmp_path / "night.json"
    assert main(["schedule", "--players", "8", "--names", NAMES, "--night", str(path), *extra]) == 0
    return path


def table(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    path: Path,
    number: int,
    script: str,
    *extra: str,
) -> tuple[int, dict[str, Any], str]:
    """`unoattack table --night PATH --table N --port none --json` on `script`."""
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    capsys.readouterr()
    argv = ["table", "--port", "none", "--night", str(path), "--table", str(number), "--json"]
    code = main([*argv, *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def standings(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["standings", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_two_tables_record_one_night_and_the_standings_total_every_player(
    monkeypatch, capsys, tmp_path
):
    """ "要把每局的分數記錄下來 ... 便可依累計分數產生冠軍": every round at either table counts
    in one standings."""
    path = night(tmp_path)
    schedule = rotation(8, 2, NAMES.split(","))
    first = schedule.table_names(schedule.stages[0], 0)
    assert first == ("Ann", "Cat", "Bob", "Dan")  # Ann opposite Bob, Cat opposite Dan

    code, view, said = table(monkeypatch, capsys, path, 1, one_round(*first) * 4)
    assert code == 0, said
    assert "table 1, rounds 1-4: Ann, Cat, Bob, Dan clockwise (Ann opposite Bob" in said
    # Each opposite pair a team, scoring its own members' cards: Cat out, Ann 1 + Bob 3 = 4 ...
    assert view["mode"] == "teams" and view["team_of"] == [0, 1, 0, 1]
    assert view["phase"] == "over" and view["round"] == 4
    assert "next at table 1, rounds 5-8: seat Ann, Eve, Cat, Gus clockwise" in said
    # Eve and Gus sat at table 2 for rounds 1-4, which has not played them yet.
    assert "Eve & Gus are still playing at table 2: wait for them before `next`" in said
    assert view["night"]["next"] == {
        "rounds": [5, 8],
        "players": ["Ann", "Eve", "Cat", "Gus"],
        "elsewhere": {"Eve": 2, "Gus": 2},
    }
    recorded = standings(capsys, path)
    totals = recorded["standings"]["totals"]
    gained = [r["gained"] for r in view["rounds"]]
    for seat, name in enumerate(first):
        assert totals[name] == sum(g[seat] for g in gained)
    assert recorded["standings"]["played"] == {
        **dict.fromkeys(NAMES.split(","), 0),
        **{n: 4 for n in first},
    }

    # Table 2, without a box too, plays two rounds of its own seating: one standings.
    second = schedule.table_names(schedule.stages[0], 1)
    code, view2, said = table(monkeypatch, capsys, path, 2, one_round(*second) * 2)
    assert code == 0, said
    assert view2["players"] == list(second) and view2["round"] == 3
    recorded = standings(capsys, path)
    played = recorded["standings"]["played"]
    assert all(played[n] == 4 for n in first) and all(played[n] == 2 for n in second)
    assert recorded["tables"][0]["next_round"] == 5 and recorded["tables"][1]["next_round"] == 3
    assert sum(recorded["standings"]["totals"].values()) == sum(
        sum(r["gained"]) for r in view["rounds"] + view2["rounds"]
    )
    capsys.readouterr()
    assert main(["standings", str(path)]) == 0
    text = capsys.readouterr().out
    assert "table 2: round 3 next (rounds 1-4: Eve Gus Fay Hal)" in text
    assert "leading:" in text  # not everyone has played as many rounds: no champion yet


def test_next_seats_the_rotations_next_stage_and_keeps_the_last_game(monkeypatch, capsys, tmp_path):
    """ "每換一次對家就玩四局": after four rounds the partners change."""
    path = night(tmp_path)
    code, view, said = table(monkeypatch, capsys, path, 1, one_round("Ann", "Cat", "Bob", "Dan"))
    assert code == 0
    # Mid-stage, `next` is refused: the night's rounds are not the table's to skip.
    code, view, said = table(monkeypatch, capsys, path, 1, "next\n")
    assert code == 1 and "rounds 1-4 are being played: `next` once they are over" in said
    code, view, said = table(
        monkeypatch, capsys, path, 1, one_round("Ann", "Cat", "Bob", "Dan") * 3 + "next\n"
    )
    assert code == 0, said
    assert view["players"] == ["Ann", "Eve", "Cat", "Gus"] and view["round"] == 5
    assert view["phase"] == "deal" and view["team_of"] == [0, 1, 0, 1]
    assert "the last game is kept in night.table1.games.jsonl" in said
    assert "table 1, rounds 5-8: Ann, Eve, Cat, Gus clockwise (Ann opposite Cat" in said
    kept = history_path(tmp_path / "night.table1.json").read_text().splitlines()
    assert len(kept) == 1 and json.loads(kept[0])["players"] == ["Ann", "Cat", "Bob", "Dan"]
    # The new stage resumes from its state file like any game.
    code, view, said = table(monkeypatch, capsys, path, 1, "status\n")
    assert code == 0 and view["players"] == ["Ann", "Eve", "Cat", "Gus"]
    assert "round 5 (deal) of rounds 5-8, teams mode" in said


def test_undoing_a_rounds_score_takes_it_out_of_the_night(monkeypatch, capsys, tmp_path):
    path = night(tmp_path)
    code, view, _said = table(monkeypatch, capsys, path, 1, one_round("Ann", "Cat", "Bob", "Dan"))
    assert standings(capsys, path)["standings"]["played"]["Ann"] == 1
    code, view, _said = table(monkeypatch, capsys, path, 1, "undo\n")
    assert code == 0 and view["phase"] == "score"
    recorded = standings(capsys, path)
    assert recorded["standings"]["rounds"] == [] and recorded["tables"][0]["next_round"] == 1


def test_a_night_that_cannot_be_written_is_said_and_written_with_the_next_save(
    monkeypatch, capsys, tmp_path
):
    """The table's own game is saved whatever happens to the night file; the round the night
    missed is recorded with the next save (here: the next start of the table)."""
    path = night(tmp_path)
    real = NightBook.record_game

    def full_disk(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(NightBook, "record_game", full_disk)
    code, view, said = table(monkeypatch, capsys, path, 1, one_round("Ann", "Cat", "Bob", "Dan"))
    assert code == 0 and len(view["rounds"]) == 1
    assert "the night's standings could not be written: No space left on device" in said
    assert standings(capsys, path)["standings"]["rounds"] == []
    monkeypatch.setattr(NightBook, "record_game", real)
    code, view, said = table(monkeypatch, capsys, path, 1, "")
    assert code == 0
    assert standings(capsys, path)["standings"]["played"]["Ann"] == 1


def test_two_tables_writing_at_once_lose_no_round(tmp_path):
    """Each write takes the night's lock, reads the file again and changes its own table's
    rounds only: two tables recording at the same moment both keep theirs."""
    path = night_file(tmp_path)
    books = [NightBook.load(path), NightBook.load(path)]
    start = threading.Barrier(2)
    problems: list[BaseException] = []

    def record(table: int) -> None:
        try:
            start.wait()
            book = books[table]
            names = book.seating(table, 1)
            rounds: dict[int, dict[str, int]] = {}
            for round_no in range(1, 5):
                rounds[round_no] = dict.fromkeys(names, round_no)
                book.record_game(table, (1, 4), rounds)
        except BaseException as exc:  # (reported below)
            problems.append(exc)

    threads = [threading.Thread(target=record, args=(t,)) for t in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
    final = NightBook.load(path)
    assert final.next_round(0) == 5 and final.next_round(1) == 5
    assert all(n == 4 for n in final.standings.played().values())


def night_file(tmp_path: Path) -> Path:
    path = tmp_path / "night.json"
    NightBook.create(path, rotation(8, 2, NAMES.split(",")))
    return path


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--players", "Ann,Bob"], "--players: a table of a night plays the night's players"),
        (["--mode", "target"], "--mode: a table of a night plays the night's players"),
        (["--option", "stacking=true"], "--option: a table of a night plays"),
        (["--table", "3"], "--table 3: this night has tables 1 to 2"),
    ],
)
def test_a_nights_table_refuses_what_the_night_decides(
    monkeypatch, capsys, tmp_path, args, problem
):
    path = night(tmp_path)
    argv = ["table", "--port", "none", "--night", str(path)]
    if "--table" not in args:
        argv += ["--table", "1"]
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    capsys.readouterr()
    assert main([*argv, *args]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1


def test_a_saved_game_resumes_only_as_its_table_of_its_night(monkeypatch, capsys, tmp_path):
    path = night(tmp_path)
    state = tmp_path / "t1.json"
    code, _view, _said = table(monkeypatch, capsys, path, 1, "", "--state", str(state))
    assert code == 0
    for argv, problem in [
        (
            ["--night", str(path), "--table", "2", "--state", str(state)],
            "holds table 1 of the nigh",  # (a long path: the line is shortened in the middle)
        ),
        (
            ["--players", "Ann,Bob", "--state", str(state)],
            "holds table 1 of the night",
        ),
        (["--night", str(path)], "--night FILE and --table T go together"),
    ]:
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        capsys.readouterr()
        assert main(["table", "--port", "none", *argv]) == 2, argv
        assert problem in capsys.readouterr().err


def test_a_night_file_is_checked_field_by_field(capsys, tmp_path):
    path = night_file(tmp_path)
    data = json.loads(path.read_text())
    data["rounds"] = [{"round": 1, "table": 0, "points": {"Ann": 3, "Eve": 1}}]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="round 1 at table 1 must give points to Ann, Bob"):
        NightBook.load(path)
    path.write_text('{"kind": "something else"}')
    with pytest.raises(InputError, match="not a night file"):
        NightBook.load(path)
    capsys.readouterr()
    assert main(["standings", str(path)]) == 2
    assert "not a night file" in capsys.readouterr().err


def test_a_night_needs_names_a_table_takes_and_is_never_written_over(capsys, tmp_path):
    path = tmp_path / "n.json"
    for argv, problem in [
        (["--players", "8"], "a night at the tables needs the players' names"),
        (["--players", "4", "--names", "Ann,Bob,Cat,next"], "is a colour or a command"),
        (
            ["--players", "4", "--names", "Ann,Bob,Cat,Dan", "--mode", "chips"],
            "a night is scored in",
        ),
        (["--players", "4", "--sim", "--night", str(path)], "one of the two"),
        (["--players", "4", "--mode", "lowest"], "--mode goes with --sim or --night"),
    ]:
        capsys.readouterr()
        assert (
            main(
                [
                    "schedule",
                    *argv,
                    *(
                        ["--night", str(path)]
                        if "--night" not in argv and "lowest" not in argv
                        else []
                    ),
                ]
            )
            == 2
        ), argv
        assert problem in capsys.readouterr().err
    assert not path.exists()
    night(tmp_path)
    capsys.readouterr()
    assert (
        main(
            [
                "schedule",
                "--players",
                "8",
                "--names",
                NAMES,
                "--night",
                str(tmp_path / "night.json"),
            ]
        )
        == 2
    )
    assert "exists: it may hold a night's rounds" in capsys.readouterr().err


def test_the_night_is_scored_as_written(monkeypatch, capsys, tmp_path):
    """A night scored `lowest`: each player their own cards, lowest total first."""
    path = night(tmp_path, "--mode", "lowest")
    code, view, _said = table(monkeypatch, capsys, path, 1, one_round("Ann", "Cat", "Bob", "Dan"))
    assert code == 0 and view["mode"] == "lowest"
    totals = standings(capsys, path)["standings"]["totals"]
    assert {n: totals[n] for n in ("Ann", "Cat", "Bob", "Dan")} == {
        "Ann": 1,
        "Cat": 0,
        "Bob": 2,
        "Dan": 3,
    }


@pytest.mark.parametrize(("mode", "seed"), [("teams", 1), ("target", 2), ("lowest", 3)])
def test_a_simulated_night_refereed_at_its_tables_records_the_same_standings(tmp_path, mode, seed):
    """The simulator vs the referee over a whole night: every round `schedule --sim` plays is
    told, move by move, to the referee of its table's night game (engine/follow.py, as a table
    would say it); the night the tables record must be the simulator's standings, round by
    round, and each table's game must end with its stage and seat the rotation's next players."""
    from engine.follow import Follower
    from engine.night import play_night
    from engine.table.night_table import NightTable

    schedule = rotation(8, 2, NAMES.split(","))
    path = tmp_path / "night.json"
    NightBook.create(path, schedule, mode=mode)
    tables = [NightTable(NightBook.load(path), t) for t in (0, 1)]
    games: list[Any] = [None, None]
    ended: list[tuple[int, int]] = []

    def watch(t: int, round_no: int, rnd: Any) -> Any:
        night_table = tables[t]
        ref = games[t]
        if ref is None or ref.phase == "over":
            ref = games[t] = night_table.referee(after=ref)
        assert ref.round_no == round_no and ref.phase == "deal"
        assert tuple(ref.players) == schedule.table_names(schedule.stage_of(round_no), t)
        follower = Follower(rnd, lambda change: change(ref))

        def apply(act: Any) -> None:
            facts = follower.facts()
            rnd.apply(act)
            follower.moved(act, facts)
            if rnd.over:
                follower.finish()
                night_table.record(ref)
                if ref.phase == "over":
                    ended.append((t, round_no))

        return apply

    simulated = play_night(schedule, seed=seed, mode=mode, watch=watch)
    recorded = NightBook.load(path).standings
    key = lambda r: (r["round"], r["table"])  # noqa: E731
    assert sorted(recorded.rounds, key=key) == sorted(simulated.standings.rounds, key=key)
    assert recorded.totals() == simulated.standings.totals()
    assert len(recorded.rounds) == 2 * schedule.cycle_rounds
    # each stage's game ended with its fourth round, at both tables
    assert ended == [(t, last) for last in range(4, 29, 4) for t in (0, 1)]
