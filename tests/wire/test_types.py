"""mypy, run by the suite: every path in pyproject's ``[tool.mypy] files`` but
those ``exclude`` names (not clean yet) has no type error.

One list of checked paths (pyproject.toml): a module leaves `exclude` once mypy is clean on it, and
from then on this test keeps it clean. What the checked paths import is read for its types
without its own errors being reported (``follow_imports = "silent"``). One mypy run, with its
cache in ``.mypy_cache`` (git-ignored), so a second run takes a second or two.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def checked(path: str) -> bool:
    """Whether mypy checks `path`: it is under one of `files` and no `exclude` matches it."""
    inside = any(path == f or path.startswith(f.rstrip("/") + "/") for f in CONFIG["files"])
    return inside and not any(re.search(pattern, path) for pattern in CONFIG.get("exclude", []))


def test_the_checked_paths_exist_and_hold_the_shared_packages() -> None:
    files = CONFIG["files"]
    assert all((ROOT / path).exists() for path in files), files
    excluded = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "engine").rglob("*.py")
        if not checked(path.relative_to(ROOT).as_posix())
    ]
    assert excluded and len(excluded) == len(CONFIG["exclude"])  # each names one module
    # what both sides share, the box, the rules core and the table are checked whole
    # (issue 22: wire/, the rules core, the cards' effects, the blind round and the table)
    held = ["common/errors.py", "wire/ops.py", "i18n/__init__.py", "firmware/daemon.py"]
    held += ["engine/game.py", "engine/effects.py", "engine/blind.py", "engine/narrate.py"]
    held += [p.relative_to(ROOT).as_posix() for p in (ROOT / "engine" / "table").glob("*.py")]
    assert [path for path in held if not checked(path)] == []


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
