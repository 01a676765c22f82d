"""What the table saves: a move is saved and answered, or refused in one line and undone; and
nothing is saved that the state file's loader would refuse (a restart must find the game)."""

from __future__ import annotations

import errno
import io
import os
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import engine.table.session
import engine.table.state_file
from engine.errors import InputError
from engine.table.referee import Referee
from engine.table.session import TableSession
from engine.table.state_file import load_state

PLAYERS = ["Ann", "Bob", "Cat"]


def session(tmp_path: Path, **kw: Any) -> tuple[TableSession, io.StringIO]:
    out = io.StringIO()
    s = TableSession(Referee(PLAYERS), state_path=tmp_path / "s.json", out=out, **kw)
    s.start()
    return s, out


class SaveFails:
    """The state file's temporary file fails at the next save with `error` (the SD card
    full, no descriptor left, a read-only remount), then works again."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, error: int) -> None:
        import tempfile

        self.error = error
        self.armed = False
        self._real = tempfile.mkstemp
        monkeypatch.setattr(
            engine.table.state_file, "tempfile", types.SimpleNamespace(mkstemp=self.mkstemp)
        )

    def mkstemp(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            self.armed = False
            raise OSError(self.error, os.strerror(self.error))
        return self._real(*args, **kwargs)


def test_hand_corrections_adding_up_to_more_than_the_deck_are_refused(tmp_path: Path) -> None:
    """They were acknowledged and saved, then the restart failed (exit 2) and the serve unit
    left the table down."""
    s, _out = session(tmp_path)
    s.handle_line("R5")
    s.handle_line("hand Ann 90")
    s.handle_line("hand Bob 90")
    assert s.refusal == (
        "Bob cannot hold 90: the other hands hold 97 and one card is turned up, of the "
        "attack deck's 112; at most 14"
    )
    assert s.ref.hand == [90, 7, 7]
    assert load_state(tmp_path / "s.json").referee.hand == [90, 7, 7]


@given(st.lists(st.tuples(st.sampled_from(PLAYERS), st.integers(0, 250)), max_size=12))
def test_whatever_is_corrected_the_state_file_loads(corrections: list[tuple[str, int]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        s, _out = session(Path(tmp))
        s.handle_line("R5")
        for name, count in corrections:
            s.handle_line(f"hand {name} {count}")
            saved = load_state(Path(tmp) / "s.json")  # a restart finds the game
            assert saved.referee.to_dict() == s.ref.to_dict()
            assert sum(s.ref.hand) < s.ref.deck.total


def test_a_box_event_that_could_not_be_loaded_again_is_said_not_saved(tmp_path: Path) -> None:
    """Whatever path leads to it: the save reads what it writes with the loader."""
    s, out = session(tmp_path)
    s.handle_line("R5")
    s.handle_line("fired 2")  # (no box: `fired N`; a stray then follows Bob's hit)
    s.boxsync.last_hitter = 1
    saved = (tmp_path / "s.json").read_bytes()
    s.handle_event({"stream": "s1", "seq": 9, "kind": "stray", "count": 500, "hopper": 0})
    said = out.getvalue().splitlines()[-1]
    assert said.startswith("box event not saved: that would leave a game that cannot be loaded")
    assert said.endswith("; the box replays it after a restart")
    assert (tmp_path / "s.json").read_bytes() == saved
    s.handle_line("hand Bob 9")  # the table corrects the count: saved again
    assert load_state(tmp_path / "s.json").referee.hand == [7, 9, 7]


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EMFILE, errno.EROFS])
def test_a_line_that_cannot_be_saved_is_refused_and_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int
) -> None:
    s, out = session(tmp_path)
    saving = SaveFails(monkeypatch, error)
    s.handle_line("R5")
    before, undo, saved = s.ref.to_dict(), list(s.history), (tmp_path / "s.json").read_bytes()
    out.truncate(0)
    out.seek(0)
    saving.armed = True
    s.handle_line("R7")
    assert out.getvalue() == (
        f"! cannot save the game in {tmp_path / 's.json'}: {os.strerror(error)}: not done, "
        "nothing changed\n"
    )  # and nothing said of the move before it
    assert s.ref.to_dict() == before and s.history == undo
    assert (tmp_path / "s.json").read_bytes() == saved
    s.handle_line("R7")  # saved this time: made once
    assert load_state(tmp_path / "s.json").referee.to_dict() == s.ref.to_dict()
    s.handle_line("undo")
    assert s.ref.to_dict() == before


def test_a_write_failing_below_the_save_is_refused_and_undone_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wherever the write fails (here the whole atomic write, as a read-only remount makes
    it), the move is refused and undone, and a box event says it was not saved."""
    s, _out = session(tmp_path)
    s.handle_line("R5")
    before = s.ref.to_dict()

    def read_only(path: Path, data: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(engine.table.state_file, "write_json_atomic", read_only)
    s.handle_line("R7")
    assert s.refusal == (
        f"cannot save the game in {tmp_path / 's.json'}: Read-only file system: not done, "
        "nothing changed"
    )
    assert s.ref.to_dict() == before
    s.handle_line("hit")
    assert s.ref.to_dict() == before and s.refused_lines == 2


def test_stopping_when_the_game_cannot_be_saved_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s, out = session(tmp_path)
    saving = SaveFails(monkeypatch, errno.ENOSPC)
    saving.armed = True
    s.goodbye()
    assert out.getvalue().splitlines()[-1] == (
        f"cannot save the game in {tmp_path / 's.json'}: No space left on device"
    )


@pytest.mark.parametrize("line", ["hand Bob ²", "fired ²", "load ²", "BDA ²", "hand Bob ٣"])
def test_digits_that_are_no_count_are_refused_not_crashed_on(tmp_path: Path, line: str) -> None:
    """`str.isdigit` takes "²", which `int` refuses: every typed count is read in one place."""
    s, out = session(tmp_path)
    s.handle_line("R5")
    s.handle_line(line)
    assert s.refusal is not None and out.getvalue().splitlines()[-1].startswith("! ")


def test_a_state_file_that_cannot_be_read_is_said_as_every_file_is(tmp_path: Path) -> None:
    # one wording for a file that cannot be read (common/textfile.py), the state file's too
    with pytest.raises(InputError) as missing:
        load_state(tmp_path / "gone.json")
    assert str(missing.value) == f"{tmp_path / 'gone.json'}: cannot read this file: " + (
        os.strerror(errno.ENOENT)
    )
    with pytest.raises(InputError, match=r": cannot read this file: Is a directory$"):
        load_state(tmp_path)
