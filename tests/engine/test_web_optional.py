"""`unoattack --help` and every subcommand's `--help` work without the web extra installed: the
web page's options live in engine/web/options.py, and the server is imported only by a command
that serves (the packaging test finds it too, in minutes; this in a second)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
WEB_EXTRA = ("starlette", "uvicorn", "h11", "websockets", "segno", "anyio", "wsproto")
HIDE = f"import sys\nfor name in {WEB_EXTRA!r}:\n    sys.modules[name] = None\n"


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_without_the_web_extra(command: str | None) -> None:
    argv = ["--help"] if command is None else [command, "--help"]
    code = HIDE + f"from engine.cli import main\nsys.exit(main({argv!r}))\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "usage: unoattack" in proc.stdout
    assert proc.stderr == ""
