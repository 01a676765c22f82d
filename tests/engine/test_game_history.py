"""The games a table has finished, one JSON line each beside the state file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.game_history import FORMAT, append_game, game_record, history_path


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
