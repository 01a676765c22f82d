"""The games a table has finished: one JSON line each, in a file beside its state file.

Starting a new game at the table (the web page's **New game**) first adds the last game's
results here, so that a game night keeps every game's scores: `table.json` keeps the game being
played, `table.games.jsonl` the ones before it. Each line is one game::

    {"format": 1, "ended": "2026-12-04T21:40:11+00:00", "players": ["Ann", "Bob"],
     "deck": "attack", "mode": "target", "target": 500, "scores": [512, 130],
     "winners": [0], "rounds": [{"round": 1, "winner": 0, "gained": [...], ...}, ...]}

A line is appended and flushed to the disk (fsync) before the new game replaces the old in the
state file: a crash between the two leaves the old game in both, never in neither.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "append_game", "game_record", "history_path", "keep_game"]

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
    """Add `record` to the history beside `state`, on the disk when this returns; the file.
    OSError (nothing written, or a line the reader skips) when it cannot be."""
    path = history_path(state)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def keep_game(state: Path | None, summary: dict[str, Any]) -> str | None:
    """Keep a game's results (the referee's summary) in the history beside `state` before a
    new game replaces it: what to say of it (None: no state file, or no round scored, so
    nothing to keep). OSError when it cannot be written (then nothing is)."""
    from i18n import _

    if state is None or not summary["rounds"]:
        return None
    try:
        kept = append_game(state, game_record(summary))
    except OSError as exc:
        raise OSError(
            exc.errno,
            _("the last game could not be kept in {file}: {problem}").format(
                file=history_path(state).name, problem=exc.strerror or str(exc)
            ),
        ) from exc
    return _("the last game is kept in {file}").format(file=kept.name)
