"""A file nested deeper than the parser recurses (`[[[[...`) is a mistake in it like any other:
one line naming the file and the usage or config exit code, never a RecursionError traceback
(the web table's JSON messages have their own limit: tests/engine/web/test_lan_probes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main as unoattack
from firmware.cli import main as launcher
from tests.conftest import run_main

DEPTH = 100_000


@pytest.mark.parametrize(
    ("main", "argv", "code"),
    [
        (unoattack, ["table", "--port", "none", "--players", "Ann,Bob", "--state", "deep.json"], 2),
        (unoattack, ["deck", "--deck", "deep.toml"], 2),
        (unoattack, ["scenario", "deep.toml"], 2),
        (unoattack, ["sweep", "deep.toml", "--games", "1"], 2),
        (launcher, ["config", "check", "deep.toml"], 78),
    ],
)
def test_a_file_nested_too_deep_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    main: object,
    argv: list[str],
    code: int,
) -> None:
    (tmp_path / "deep.json").write_text("[" * DEPTH + "]" * DEPTH)
    (tmp_path / "deep.toml").write_text('name = "x"\na = ' + "[" * DEPTH + "]" * DEPTH + "\n")
    monkeypatch.chdir(tmp_path)
    got, _out, err = run_main(main, argv, capsys)  # type: ignore[arg-type]
    assert got == code, err
    assert err.count("\n") == 1 and "deep." in err and "nested too deep" in err, err
