"""The games a table has finished, one JSON line each beside the state file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.game_history import (
    FORMAT,
    append_game,
    game_record,
    history_path,
    kept_games,
    night_chips,
)


def test_the_history_file_is_beside_the_state_file() -> None:
    assert history_path(Path("/srv/uno/table.json")) == Path("/srv/uno/table.games.jsonl")
    assert history_path(Path("night")) == Path("night.games.jsonl")


def test_a_record_is_the_games_results_and_lines_are_appended(tmp_path: Path) -> None:
    summary = {
        "players": ["Ann", "Bob"],
        "deck": "attack",
        "mode": "target",
        "target": 300,
        "scores": [0, 310],
        "game_winners": [1],
        "game_losers": [],
        "chips": None,
        "rounds": [{"round": 1, "winner": 1, "gained": [0, 310]}],
        "hands": [7, 0],  # the rest of a summary is not kept
    }
    ended = datetime(2026, 12, 4, 21, 40, 11, tzinfo=UTC)
    record = game_record(summary, ended)
    assert record == {
        "format": FORMAT,
        "ended": "2026-12-04T21:40:11+00:00",
        "players": ["Ann", "Bob"],
        "deck": "attack",
        "mode": "target",
        "target": 300,
        "scores": [0, 310],
        "winners": [1],
        "losers": [],
        "chips": None,
        "rounds": [{"round": 1, "winner": 1, "gained": [0, 310]}],
    }
    state = tmp_path / "table.json"
    first = append_game(state, record)
    second = append_game(state, {**record, "players": ["Ánn", "Bob"]})
    assert first == second == tmp_path / "table.games.jsonl"
    lines = first.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [record, {**record, "players": ["Ánn", "Bob"]}]
    assert "Ánn" in lines[1]  # people's names as they are written, not escaped


def test_a_history_that_cannot_be_written_is_an_oserror(tmp_path: Path) -> None:
    (tmp_path / "table.games.jsonl").mkdir()
    with pytest.raises(OSError):
        append_game(tmp_path / "table.json", {"format": FORMAT})


def summary_of(scores: list[int], mode: str = "chips", players=("Ann", "Bob", "Cat")) -> dict:
    return {
        "players": list(players),
        "deck": "attack",
        "mode": mode,
        "target": 20,
        "scores": scores,
        "game_winners": [0],
        "game_losers": [1],
        "chips": [20 + s for s in scores],
        "rounds": [{"round": 1, "winner": 0, "gained": scores}],
    }


def test_a_game_already_kept_last_is_not_kept_twice(tmp_path: Path) -> None:
    """The new game tried again after its state file could not be written (or after a crash
    between the two files) does not add the last game a second time."""
    state = tmp_path / "table.json"
    first = datetime(2026, 12, 4, 21, 0, tzinfo=UTC)
    later = datetime(2026, 12, 4, 21, 5, tzinfo=UTC)
    append_game(state, game_record(summary_of([20, -20, 0]), first))
    append_game(state, game_record(summary_of([20, -20, 0]), later))
    assert len(kept_games(state)) == 1
    append_game(state, game_record(summary_of([5, -5, 0]), later))
    append_game(state, game_record(summary_of([20, -20, 0]), later))  # not last: a new game
    assert len(kept_games(state)) == 3


def test_chips_add_up_over_the_games_kept(tmp_path: Path) -> None:
    """籌碼制: "多盤累計，以籌碼多少論勝負" (over many games, the chips decide)."""
    state = tmp_path / "table.json"
    append_game(state, game_record(summary_of([20, -20, 0])))
    append_game(state, game_record(summary_of([3, 4], "target", ("Ann", "Bob"))))  # not chips
    history_path(state).open("a").write('{"half a line')  # a crash mid-write: left out
    now = summary_of([-5, 10, -5])
    assert night_chips(state, now) == {"Ann": 15, "Bob": -10, "Cat": -5}
    assert night_chips(state, summary_of([1, 2], "target", ("Ann", "Bob"))) is None
    assert night_chips(None, now) == {"Ann": -5, "Bob": 10, "Cat": -5}
