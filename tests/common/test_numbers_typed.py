"""Every number of both command lines, typed as nobody means a number: digits of other scripts
("٥", "５", "²"), `1_000`, a space, `+5`, `nan`, `1e3`, a hundred thousand digits. Each is one
line naming the option and quoting at most 40 characters of what was given, exit 2, before
anything starts (no port opened, no game played).

Before, `int` and `float` read "٥" and "５" as 5 (`--target ٥٠٠` was a game to 500;
`launcher send PORT dispense ٥` went to the port), a plain `int` option answered in argparse's
words, and a refusal quoted all 100,000 digits back."""

from __future__ import annotations

import io
import json

import pytest

from engine.cli import main as unoattack
from firmware.cli import main as launcher
from tests.conftest import run_main

NOT_NUMBERS = ["٥", "５", "²", "1_000", " 5", "+5", "nan", "inf", "1e3", "", "9" * 100_000]

# (command line, option): every option that takes a number, with what else it needs.
WHOLE = [
    (unoattack, ["sim", "--workers", "1"], "--games"),
    (unoattack, ["sim", "--workers", "1"], "--seed"),
    (unoattack, ["sim", "--workers", "1"], "--players"),
    (unoattack, ["sweep", "--workers", "1"], "--games"),
    (unoattack, ["demo"], "--players"),
    (unoattack, ["demo"], "--target"),
    (unoattack, ["demo", "--web"], "--wait-pages"),
    (unoattack, ["schedule", "--sim"], "--players"),
    (unoattack, ["watch", "--port", "/dev/nosuch"], "--count"),
    (unoattack, ["table", "--port", "none", "--players", "Ann,Bob"], "--target"),
    (unoattack, ["serve", "--port", "mock", "--players", "Ann,Bob"], "--target"),
    (unoattack, ["serve", "--port", "mock", "--players", "Ann,Bob"], "--seed"),
    (launcher, ["bench", "--mock"], "--presses"),
    (launcher, ["model", "sample", "--seed", "1"], "--presses"),
]
DECIMAL = [
    (unoattack, ["demo"], "--speed", "expected a number"),
    (unoattack, ["demo", "--web"], "--pace", "expected a number"),
    (
        unoattack,
        ["serve", "--port", "mock", "--players", "Ann,Bob"],
        "--speed",
        "expected a number",
    ),
    (unoattack, ["watch", "--port", "/dev/nosuch"], "--timeout", "expected seconds above 0"),
    (launcher, ["send", "--wait", "1"], "--timeout", "expected seconds above 0"),
]


def _refused(capsys: pytest.CaptureFixture[str], main, argv: list[str], words: str) -> None:
    code, out, err = run_main(main, argv, capsys)
    assert (code, out) == (2, ""), err[:300]
    assert err.count("\n") == 1 and words in err, err[:300]
    assert len(err) < 300  # at most 40 characters of what was given


@pytest.mark.parametrize("typed", NOT_NUMBERS, ids=lambda t: ascii(t[:8]))
@pytest.mark.parametrize(("main", "argv", "option"), WHOLE, ids=lambda v: str(v)[:20])
def test_a_whole_number_is_ascii_digits(capsys, main, argv, option, typed: str) -> None:
    _refused(capsys, main, [*argv, f"{option}={typed}"], f"{option}: expected a whole number")


@pytest.mark.parametrize("typed", NOT_NUMBERS, ids=lambda t: ascii(t[:8]))
@pytest.mark.parametrize(("main", "argv", "option", "words"), DECIMAL, ids=lambda v: str(v)[:20])
def test_a_decimal_number_is_ascii_digits_and_a_point(
    capsys, main, argv, option, words: str, typed: str
) -> None:
    if main is launcher:
        argv = [*argv, "/dev/nosuch", "status"]
    _refused(capsys, main, [*argv, f"{option}={typed}"], f"{option}: {words}")


@pytest.mark.parametrize("op", ["dispense", "aim", "load"])
@pytest.mark.parametrize("typed", NOT_NUMBERS, ids=lambda t: ascii(t[:8]))
def test_a_count_sent_to_the_box_is_ascii_digits(capsys, op: str, typed: str) -> None:
    """(`dispense ٥` went to the port: `no serial port ... is the box plugged in?`)"""
    code, out, err = run_main(launcher, ["send", "/dev/nosuch", op, typed], capsys)
    assert (code, out) == (2, ""), err[:300]
    assert "must be a whole number" in err and "UNREACHABLE" not in err and len(err) < 300


@pytest.mark.parametrize(
    ("main", "argv"),
    [
        (unoattack, ["sim", "--games", "2", "--workers", "1", "--seed", "-3"]),
        (unoattack, ["sim", "--games", "2", "--workers", "1", "--seed", "0"]),
        (launcher, ["model", "sample", "--presses", "3", "--seed", "7"]),
    ],
)
def test_plain_numbers_still_are_numbers(capsys, main, argv: list[str]) -> None:
    code, _out, err = run_main(main, argv, capsys)
    assert code == 0, err


def test_a_count_too_long_for_a_frame_is_refused_before_the_port(capsys) -> None:
    """(It opened the port first: `no serial port`, or with a box `BAD_ARG` after the fact.)"""
    code, out, err = run_main(launcher, ["send", "/dev/nosuch", "dispense", "9" * 600], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("launcher send: BAD_ARG: dispense does not fit in one frame"), err


@pytest.mark.parametrize("typed", ["²", "٥", "9" * 5000, "٠.٥", "1_0"], ids=ascii)
@pytest.mark.parametrize(
    "argv",
    [
        ["sim", "--games", "2", "--workers", "1", "--option", "stacking={}"],
        ["schedule", "--players", "8", "--sim", "--option", "stacking={}"],
        ["sweep", "--games", "2", "--workers", "1", "--vary", "players={}"],
        ["sweep", "--games", "2", "--workers", "1", "--set", "jam.base={}"],
    ],
    ids=["sim-option", "schedule-option", "sweep-vary", "sweep-set"],
)
def test_a_number_in_a_name_value_pair_is_ascii_digits(capsys, argv: list[str], typed: str) -> None:
    """(`--option stacking=²` passed `isdigit`, then failed `int`: a ValueError traceback.)"""
    code, _out, err = run_main(unoattack, [a.format(typed) for a in argv], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err[-500:]


@pytest.mark.parametrize(
    "text", ["1\n2\n" + "9" * 5000 + "\n", "1\n٥\n3\n", "row,press_id,ejected\npress,1,٥\n"]
)
def test_a_count_in_a_recording_is_ascii_digits(capsys, tmp_path, text: str) -> None:
    """`launcher model fit FILE`: a count of 5,000 digits was a ValueError traceback, and "٥"
    (which `\\d` matches) a count of 5."""
    recording = tmp_path / "counts.txt"
    recording.write_text(text, encoding="utf-8")
    code, _out, err = run_main(launcher, ["model", "fit", str(recording)], capsys)
    assert code == 2 and err.count("\n") == 1, err[-400:]
    assert "is not a whole number of cards (0-12)" in err and len(err) < 300


@pytest.mark.parametrize("port", ["²", "9" * 5000])
def test_a_dask_port_is_ascii_digits(capsys, port: str) -> None:
    """(`--executor dask://host:²` passed isdigit and failed int: a traceback.)"""
    code, _out, err = run_main(unoattack, ["sim", "--executor", f"dask://h:{port}"], capsys)
    assert code == 2 and err.count("\n") == 1 and "use local or dask://HOST:PORT" in err


@pytest.mark.parametrize("seat", ["²", "9" * 5000])
def test_a_seat_in_a_state_file_is_ascii_digits(capsys, monkeypatch, tmp_path, seat: str) -> None:
    """A state file whose `hands_left` named seat "²" (`isdigit`, then `int` failed): a
    ValueError traceback instead of the loader's one line."""
    state = tmp_path / "table.json"
    table = ["table", "--port", "none", "--players", "Ann,Bob", "--state", str(state)]
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # the end of input ends the table
    assert run_main(unoattack, table, capsys)[0] == 0  # a game saved
    data = json.loads(state.read_text())
    data["referee"]["hands_left"] = {seat: []}
    state.write_text(json.dumps(data))
    code, _out, err = run_main(unoattack, table, capsys)
    assert code == 2 and err.count("\n") == 1 and "`hands_left` must be seats as keys" in err
