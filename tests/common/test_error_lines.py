"""A command's error line (common.commandline.one_line, the one place both command lines print
one): whatever value was given, the line is one line of printable text, and a value pasted by
mistake is not quoted back whole. An option that would do nothing is refused, not ignored.

Before: `unoattack deck --deck $'a\\nb\\x1b[2J'` printed two lines and cleared the terminal;
`--code`, `--bots`, `--mode`, `config check`, `sound check` and others quoted a 3,000-character
value whole; a file name too long for the system was exit 1 (`cannot use ...: File name too
long`); `demo --http 0.0.0.0:8500` without --web played in the terminal while nobody could
join, and `schedule --seed 5` without --sim ignored the seed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.commandline import one_line
from engine.cli import main as unoattack
from firmware.cli import main as launcher
from tests.conftest import run_main

ODD = "a\nb\x1b[2Jc\r\x0c\u2028d"
LONG = "x" * 3000

# Every kind of value a command quotes back in its refusal.
QUOTED = [
    (unoattack, ["deck", "--deck", "{}"]),
    (unoattack, ["score", "{}"]),
    (unoattack, ["sim", "--bots", "{}"]),
    (unoattack, ["sim", "--mode", "{}"]),
    (unoattack, ["sim", "--option", "{}"]),
    (unoattack, ["serve", "--port", "mock", "--players", "Ann,Bob", "--code", "{}"]),
    (unoattack, ["serve", "--port", "mock", "--players", "Ann,Bob", "--http", "{}"]),
    (unoattack, ["watch", "--port", "{}"]),
    (unoattack, ["--lang", "{}", "deck"]),
    (launcher, ["config", "check", "{}"]),
    (launcher, ["sound", "check", "{}"]),
    (launcher, ["send", "/dev/null", "{}"]),
    (launcher, ["diagram", "{}"]),
]


@pytest.mark.parametrize("value", [ODD, LONG], ids=["controls", "long"])
@pytest.mark.parametrize(("main", "argv"), QUOTED)
def test_a_refusal_quoting_any_value_is_one_printable_line(
    capsys, monkeypatch, tmp_path, main, argv, value
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_main(main, [a.format(value) for a in argv], capsys)
    assert code in (2, 78), err[-300:]
    assert err.count("\n") == 1 and err.endswith("\n"), err[-300:]
    assert all(c.isprintable() for c in err[:-1]), repr(err[:300])
    assert len(err) < 400 and "Traceback" not in err


def test_a_file_name_too_long_for_the_system_is_a_usage_error(capsys, tmp_path) -> None:
    code, _out, err = run_main(launcher, ["sound", "check", str(tmp_path / LONG)], capsys)
    assert code == 78 or code == 2, err
    code, _out, err = run_main(unoattack, ["deck", "--deck", LONG + ".toml"], capsys)
    assert code == 2 and "ile name too long" in err and err.count("\n") == 1, err[-300:]


@given(st.text())
def test_one_line_is_one_printable_line_with_no_long_word(text: str) -> None:
    line = one_line(text)
    assert all(c.isprintable() for c in line)
    assert all(len(word) <= 200 for word in line.split())
    if text.isprintable() and all(len(w) <= 200 for w in text.split(" ")):
        assert line == text  # an ordinary line is left as it is


@pytest.mark.parametrize(
    ("argv", "option", "needed"),
    [
        (["demo", "--http", "0.0.0.0:8500"], "--http", "--web"),
        (["demo", "--code", "481516"], "--code", "--web"),
        (["demo", "--pace", "2"], "--pace", "--web"),
        (["demo", "--wait-pages", "3"], "--wait-pages", "--web"),
        (["demo", "--allow-host", "table.lan"], "--allow-host", "--web"),
        (["schedule", "--players", "4", "--seed", "5"], "--seed", "--sim"),
        (["schedule", "--players", "4", "--cycles", "2"], "--cycles", "--sim"),
        (["schedule", "--players", "4", "--deck", "classic"], "--deck", "--sim or --night"),
        (["schedule", "--players", "4", "--mode", "lowest"], "--mode", "--sim or --night"),
        (["schedule", "--players", "4", "--bots", "random"], "--bots", "--sim"),
        (
            ["schedule", "--players", "4", "--option", "stacking=true"],
            "--option",
            "--sim or --night",
        ),
    ],
)
def test_an_option_that_would_do_nothing_is_refused(capsys, argv, option, needed) -> None:
    code, out, err = run_main(unoattack, argv, capsys)
    assert code == 2 and out == "", err
    assert err == f"unoattack: {option} goes with {needed}: add {needed}\n"
