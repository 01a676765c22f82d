"""A person's file that cannot be read is one line in the same words from every command that
reads one (common/textfile.cannot_read), in the reader's language."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import i18n
from common.textfile import cannot_read
from engine.cli import main as unoattack
from firmware.cli import main as launcher
from tests.conftest import run_main

# Every command line that reads a file a person names: (main, arguments, exit code).
READERS: list[tuple[Callable[[list[str]], int], list[str], int]] = [
    (launcher, ["config", "check", "{file}"], 78),
    (launcher, ["model", "fit", "{file}"], 2),
    (unoattack, ["deck", "--deck", "{file}"], 2),
    (unoattack, ["sim", "--games", "1", "--deck", "{file}"], 2),
    (unoattack, ["scenario", "{file}"], 2),
    (unoattack, ["sweep", "{file}"], 2),
    (unoattack, ["sweep", "--games", "1", "--set", "config={file}"], 78),
]


@pytest.mark.parametrize("code", ["en", "th", "cy"])
@pytest.mark.parametrize(
    ("main", "argv", "exit_code"), READERS, ids=[" ".join(r[1][:2]) for r in READERS]
)
def test_a_file_that_cannot_be_read_is_the_same_line_everywhere(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    main: Callable[[list[str]], int],
    argv: list[str],
    exit_code: int,
    code: str,
) -> None:
    folder = tmp_path / "mine.toml"  # a folder where a file was meant: no reader can read it
    folder.mkdir()
    args = ["--lang", code, *(a.format(file=folder) for a in argv)]
    try:
        got, out, err = run_main(main, args, capsys)
    finally:
        i18n.use("en")
    said = cannot_read(folder, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
    assert (got, out) == (exit_code, "")
    assert err.count("\n") == 1 and err.rstrip("\n").endswith(said.render(i18n.language(code)))


def test_the_line_is_english_for_a_log_and_names_the_reason() -> None:
    said = cannot_read(Path("box.toml"), PermissionError(errno.EACCES, "Permission denied"))
    assert str(said) == "box.toml: cannot read this file: Permission denied"
    assert said.render(i18n.language("ro")) == (
        "box.toml: fișierul nu poate fi citit: Permission denied"
    )
