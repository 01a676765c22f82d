"""The games a table has finished: one JSON line each, in a file beside its state file.

Starting a new game at the table (the web page's **New game**) first adds the last game's
results here, so that a game night keeps every game's scores: `table.json` keeps the game being
played, `table.games.jsonl` the ones before it. Each line is one game::

    {"format": 1, "ended": "2026-12-04T21:40:11+00:00", "players": ["Ann", "Bob"],
     "deck": "attack", "mode": "target", "target": 500, "scores": [512, 130],
     "winners": [0], "rounds": [{"round": 1, "winner": 0, "gained": [...], ...}, ...]}

A line is appended and flushed to the disk (fsync) before the new game replaces the old in the
state file: a crash between the two leaves the old game in both, never in neither; and a game
already the file's last line is not added again (the new game tried again after its state file
could not be written, or after such a crash).

In chips mode the chips add up over the games kept ("多盤累計，以籌碼多少論勝負": over many
games, the chips decide): `night_chips` totals each player's chips won or lost over them.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT",
    "append_game",
    "game_record",
    "history_path",
    "keep_game",
    "kept_games",
    "night_chips",
]

FORMAT = 1


def history_path(state: Path) -> Path:
    """The history file beside the state file `state` (`table.json` -> `table.games.jsonl`)."""
    return state.with_name(f"{state.stem}.games.jsonl")


def game_record(summary: dict[str, Any], ended: datetime | None = None) -> dict[str, Any]:
    """One game's line: from the referee's `summary()` (players, deck, mode, target, scores,
    the winners and losers so far, the chips of chips mode, the rounds), with when it ended."""
    when = (ended or datetime.now(UTC)).isoformat(timespec="seconds")
    return {
        "format": FORMAT,
        "ended": when,
        "players": list(summary["players"]),
        "deck": summary["deck"],
        "mode": summary["mode"],
        "target": summary["target"],
        "scores": list(summary["scores"]),
        "winners": list(summary["game_winners"]),
        "losers": list(summary["game_losers"]),  # knockout, chips, losing and teams name them
        "chips": summary["chips"],  # chips mode: the ledger at the end; else None
        "rounds": list(summary["rounds"]),
    }


def append_game(state: Path, record: dict[str, Any]) -> Path:
    """Add `record` to the history beside `state`, on the disk when this returns, unless the
    same game (all but when it ended) is its last line already; the file. OSError (nothing
    written, or a line the reader skips) when it cannot be."""
    path = history_path(state)
    games = kept_games(state)
    if games and _same_game(games[-1], record):
        return path
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def kept_games(state: Path | None) -> list[dict[str, Any]]:
    """The games kept beside `state`, oldest first (a line that cannot be read, half written
    by a crash, is left out). OSError when the file exists but cannot be read."""
    if state is None:
        return []
    path = history_path(state)
    if not path.exists():
        return []
    games = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                game = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(game, dict) and game.get("format") == FORMAT:
                games.append(game)
    return games


def night_chips(state: Path | None, summary: dict[str, Any]) -> dict[str, int] | None:
    """Chips mode: each player's chips won (or lost: negative) over the chips games kept
    beside `state` and the game being played (`summary`, the referee's), by name; None in
    other modes. A history that cannot be read counts for nothing."""
    if summary["mode"] != "chips":
        return None
    try:
        games = kept_games(state)
    except OSError:
        games = []
    totals = dict.fromkeys(summary["players"], 0)
    for game in [*games, summary]:
        if game.get("mode") != "chips" or not isinstance(game.get("scores"), list):
            continue
        for name, won in zip(game.get("players", []), game["scores"], strict=False):
            if isinstance(name, str) and isinstance(won, int) and not isinstance(won, bool):
                totals[name] = totals.get(name, 0) + won
    return totals


def keep_game(state: Path | None, summary: dict[str, Any]) -> Path | None:
    """Keep a game's results (the referee's summary) in the history beside `state` before a
    new game replaces it: the file (None: no state file, or no round scored, so nothing to
    keep). OSError, worded for the table, when it cannot be written (then nothing is)."""
    from i18n import _

    if state is None or not summary["rounds"]:
        return None
    try:
        return append_game(state, game_record(summary))
    except OSError as exc:
        raise OSError(
            exc.errno,
            _("the last game could not be kept in {file}: {problem}").format(
                file=history_path(state).name, problem=exc.strerror or str(exc)
            ),
        ) from exc


def _same_game(kept: dict[str, Any], record: dict[str, Any]) -> bool:
    return {k: v for k, v in kept.items() if k != "ended"} == {
        k: v for k, v in record.items() if k != "ended"
    }
