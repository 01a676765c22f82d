"""mypy, run by the suite: every path in pyproject's ``[tool.mypy] files`` (every package of
the box and the host, whole) has no type error.

One list of checked paths (pyproject.toml), and this test keeps them clean. What the checked
paths import from elsewhere is read for its types without its own errors being reported
(``follow_imports = "silent"``). One mypy run, with its
cache in ``.mypy_cache`` (git-ignored), so a second run takes a second or two.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_the_checked_paths_are_every_package_whole() -> None:
    # what both sides share, the box, the rules core, the table, the web page: all of it
    # (issue 22 asked for wire/, the rules core, the cards' effects, the blind round and the
    # table at least)
    assert sorted(CONFIG["files"]) == ["common", "engine", "firmware", "i18n", "wire"]
    assert "exclude" not in CONFIG and all((ROOT / path).is_dir() for path in CONFIG["files"])


@pytest.mark.slow  # minutes without its cache (a fresh clone; an emulated Pi): run first
def test_mypy_is_clean_on_the_checked_paths() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-color-output"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 0 and not errors, done.stdout + done.stderr
