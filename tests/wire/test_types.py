"""mypy, run by the suite: every path in pyproject's ``[tool.mypy] files`` has no type error.

One list of checked paths (pyproject.toml): a module joins it once mypy is clean on it, and
from then on this test keeps it clean. What the checked paths import is read for its types
without its own errors being reported (``follow_imports = "silent"``). One mypy run, with its
cache in ``.mypy_cache`` (git-ignored), so a second run takes a second or two.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_the_checked_paths_exist_and_hold_the_shared_packages() -> None:
    files = CONFIG["files"]
    assert all((ROOT / path).exists() for path in files), files
    # what both sides share, and the box, are checked whole
    assert {"wire", "i18n", "firmware"} <= set(files)


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
