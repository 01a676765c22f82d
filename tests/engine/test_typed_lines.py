"""A line typed at the table (the keyboard, a pipe, a phone: all reach `handle_line`) that can be
no move: a control character, a byte that is not UTF-8, a word of 100,000 characters. Each is
one refusal line that names the problem and quotes at most 20 characters; the game is as it was.
And a player's name is at most `MAX_NAME` characters (it is shown on every line).

Before: an escape sequence piped in (`\\x1b[2J`) was echoed to the terminal by the refusal
(it cleared the screen), a form feed broke the refusal's one line, and `catch AAAA...` quoted
all 100,000 characters back; `--players` took a name of 100,000 characters."""

from __future__ import annotations

import io
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cli import main as unoattack
from engine.table.commands import MAX_LINE
from engine.table.referee import MAX_NAME, Referee
from engine.table.session import TableSession
from tests.conftest import run_main


def _session() -> tuple[TableSession, io.StringIO]:
    out = io.StringIO()
    return TableSession(Referee(["Ann", "Bob", "Cat"]), out=out), out


def _said(out: io.StringIO, start: int) -> list[str]:
    return out.getvalue()[start:].splitlines()


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("R5\x1b[2J", "control character U+001B"),
        ("catch Ann\x0cBob", "control character U+000C"),
        ("R5 \u2028 G", "control character U+2028"),
        ("R\x00", "control character U+0000"),
        ("R5 \udcff", "not UTF-8 text"),
        (
            "catch " + "A" * 100,
            "`AAAAAAAAAAAAAAAAAAAA...` is 100 characters long: a card, a command",
        ),
        ("hand Ann " + "R5 " * 70, f"a line of 218 characters: a line is at most {MAX_LINE}"),
    ],
)
def test_a_line_that_can_be_no_move_is_one_plain_refusal(line: str, reason: str) -> None:
    session, out = _session()
    session.handle_line("R5")  # Ann deals R5
    before = session.ref.to_dict()
    start = len(out.getvalue())
    assert session.handle_line(line) is True
    said = _said(out, start)
    assert said[0].startswith("! ") and reason in said[0], said
    assert len(said[0]) < 160 and all(c.isprintable() for c in said[0])
    assert session.ref.to_dict() == before and session.refused_lines == 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.text(string.printable, max_size=60))
def test_whatever_is_typed_the_session_answers_in_printable_lines(line: str) -> None:
    """(A parser of typed lines: it may refuse, never raise, and never echo a control.)"""
    session, out = _session()
    session.handle_line("R5")
    start = len(out.getvalue())
    session.handle_line(line)
    for said in _said(out, start):
        assert all(c.isprintable() or c == "\t" for c in said), repr(said)


def test_a_player_name_is_at_most_max_name_characters(capsys, tmp_path) -> None:
    name = "B" * (MAX_NAME + 1)
    argv = ["table", "--port", "none", "--players", f"Ann,{name}", "--state", "s.json"]
    code, _out, err = run_main(unoattack, argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"player name `{'B' * 20}...`: at most {MAX_NAME} characters" in err
    Referee(["Ann", "B" * MAX_NAME])  # the longest allowed
