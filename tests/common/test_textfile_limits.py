"""Every file a person gives, read through common/textfile.py: a number longer than `int`
reads (5,000 digits), a file bigger than any real one (`/dev/zero` given by mistake), a CSV
field over the csv module's limit. Each is one line naming the file, with the reader's exit
code; never a ValueError, csv.Error or MemoryError traceback, never a read that fills memory.

Before: `a = 999...` (5,000 digits) in a deck, scenario, sweep or config file and `{"v": 999...}`
in a state file were ValueError tracebacks; `/dev/zero` as any of them read until MemoryError
(or the kernel's OOM killer); a recording with a 10 MB line was a csv.Error traceback; a
plant-state or settings JSON nested too deep was a RecursionError (they read with `json.loads`)."""

from __future__ import annotations

import contextlib
import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common import textfile
from common.errors import UsageError
from engine.cli import main as unoattack
from firmware import plant
from firmware.cli import main as launcher
from firmware.settings import SettingsStore
from tests.conftest import run_main

LONG = "9" * 5000

# (command line, exit code) of every reader of a person's file; FILE is the file.
READERS = [
    (unoattack, ["table", "--port", "none", "--players", "Ann,Bob", "--state", "FILE"], 2),
    (unoattack, ["deck", "--deck", "FILE"], 2),
    (unoattack, ["scenario", "FILE"], 2),
    (unoattack, ["sweep", "FILE", "--games", "1", "--workers", "1"], 2),
    (launcher, ["config", "check", "FILE"], 78),
    (launcher, ["model", "fit", "FILE"], 2),
]


def _run(capsys, monkeypatch, tmp_path: Path, main, argv: list[str], text: str):
    (tmp_path / "FILE").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_main(main, argv, capsys)
    assert "Traceback" not in err and err.count("\n") == 1 and "FILE" in err, err[-400:]
    assert len(err) < 300, err[:400]
    return code, err


@pytest.mark.parametrize(("main", "argv", "code"), READERS)
def test_a_number_too_long_to_read_is_one_line(capsys, monkeypatch, tmp_path, main, argv, code):
    is_json = "--state" in argv
    text = '{"referee": ' + LONG + "}" if is_json else f"a = {LONG}\n"
    if argv[0] == "model":
        text = f"ejected\n1\n{LONG}\n"  # a count: "not a whole number of cards"
    got, err = _run(capsys, monkeypatch, tmp_path, main, argv, text)
    assert got == code, err
    assert argv[0] == "model" or "a number of more than 4300 digits" in err, err


@pytest.mark.parametrize(("main", "argv", "code"), READERS)
def test_a_file_bigger_than_any_real_one_is_refused_unread(
    capsys, monkeypatch, tmp_path, main, argv, code
):
    monkeypatch.setattr(textfile, "MOST_BYTES", 100_000)  # (the packaged config is under it)
    got, err = _run(capsys, monkeypatch, tmp_path, main, argv, "#\n" * 60_000)
    assert got == code and "larger than 100,000 bytes, the most a file given here may hold" in err


def test_dev_zero_is_read_no_further_than_the_limit() -> None:
    with pytest.raises(OSError, match="larger than 64 MB") as info:
        textfile.read_bytes("/dev/zero")
    assert info.value.filename == "/dev/zero"


@pytest.mark.parametrize(
    "text", ["ejected\n" + "x" * 200_000 + "\n", "x" * 200_000 + ",ejected\n1\n"]
)
def test_a_csv_field_over_the_csv_limit_is_one_line(capsys, monkeypatch, tmp_path, text) -> None:
    got, err = _run(capsys, monkeypatch, tmp_path, launcher, ["model", "fit", "FILE"], text)
    assert got == 2 and "not a CSV row (field larger than field limit" in err


@pytest.mark.parametrize("text", ['{"hopper": ' + LONG + "}", "[" * 100_000 + "]" * 100_000])
def test_a_plant_state_that_cannot_be_parsed_is_a_usage_error(tmp_path, text) -> None:
    path = tmp_path / "plant.json"
    path.write_text(text)
    with pytest.raises(UsageError, match="is not a plant-state JSON"):
        plant.read_state(path)


def test_a_settings_file_nested_too_deep_is_moved_aside(tmp_path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"format": ' * 100_000 + "1" + "}" * 100_000)
    kept = SettingsStore(path)
    assert kept.problem is not None and "nested too deep" in kept.problem
    assert (tmp_path / "settings.json.bad").exists() and kept.jam == {}


# Pieces of TOML and JSON a parser meets, deep nesting and long numbers among them.
_PIECES = st.sampled_from(
    ["a", " = ", "[", "]", "{", "}", ",", '"', "x", "\n", "1", LONG, "-", ".", "e", ":", "[" * 2000]
)


@settings(max_examples=200, deadline=None)
@given(st.tuples(st.sampled_from(["", "a = "]), st.lists(_PIECES, max_size=12)))
def test_parse_toml_returns_or_raises_only_its_decode_error(doc: tuple[str, list[str]]) -> None:
    text = doc[0] + "".join(doc[1])
    with contextlib.suppress(tomllib.TOMLDecodeError):
        assert isinstance(textfile.parse_toml(text), dict)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_parse_json_returns_or_raises_only_its_decode_error(text: str) -> None:
    with contextlib.suppress(json.JSONDecodeError):
        textfile.parse_json(text)
