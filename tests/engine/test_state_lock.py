"""One referee per game, with real processes: a second `unoattack table` or `serve` on the
same state file refuses to start, naming the process that holds it; a holder that was killed
blocks nobody; a holder that stops lets the next one in."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.table.state_file import load_state
from engine.table.state_lock import describe_command, lock_path
from tests.conftest import run_unoattack

pytestmark = pytest.mark.timeout(300)
TABLE = ["table", "--port", "none", "--players", "Ann,Bob,Cat", "--state", "game.json"]
SERVE = ["serve", "--port", "none", "--players", "Ann,Bob,Cat", "--state", "game.json"]
WAIT_S = 120.0  # for a child to start on a loaded machine (it is waited for, never timed)


unoattack = run_unoattack


@contextlib.contextmanager
def holder(*args: str, cwd: Path) -> Iterator[subprocess.Popen[str]]:
    """`unoattack ARGS` running (its input kept open), once it holds the game's lock."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.cli", *args],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lock = lock_path(cwd / "game.json")
    try:
        deadline = time.monotonic() + WAIT_S
        while not _held_by(lock, proc.pid):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the first referee did not start"
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdin, proc.stderr):
            if stream is not None:
                stream.close()


def _held_by(lock: Path, pid: int) -> bool:
    try:
        return lock.read_text().startswith(f"{pid} ")
    except OSError:
        return False


def test_a_second_referee_on_the_same_game_refuses_to_start(tmp_path: Path) -> None:
    """Two servers (or `table` and `serve`) on one state file overwrote each other's
    acknowledged moves without a word."""
    with holder(*TABLE, cwd=tmp_path) as first:
        assert first.stdin is not None
        first.stdin.write("R5\n")
        first.stdin.flush()
        for second in (TABLE, SERVE, [*TABLE, "--new"]):
            done = unoattack(*second, cwd=tmp_path, stdin="R7\n")
            assert done.returncode == 1, done.stderr
            line = done.stderr.strip()
            assert "\n" not in line and "Traceback" not in line, done.stderr
            assert f"game.json is in use: process {first.pid} (" in line, line
            assert "table --port none --players Ann,Bob,Cat --state game.json" in line, line
        mistake = unoattack(*TABLE, "--new", "--option", "nosuch=1", cwd=tmp_path)
        assert mistake.returncode == 2 and "nosuch" in mistake.stderr  # usage errors first
        first.stdin.close()  # the end of its input: it stops, the game saved
        assert first.wait(WAIT_S) == 0
    assert load_state(tmp_path / "game.json").referee.top == "R5"  # nobody else wrote it
    assert not lock_path(tmp_path / "game.json").exists()  # let go: the next one starts
    done = unoattack(*TABLE, cwd=tmp_path, stdin="R7\n")
    assert done.returncode == 0, done.stderr
    assert load_state(tmp_path / "game.json").referee.top == "R7"


@pytest.mark.slow
def test_a_killed_referee_blocks_nobody_and_serve_holds_the_game_too(tmp_path: Path) -> None:
    with holder(*TABLE, cwd=tmp_path) as first:
        os.kill(first.pid, signal.SIGKILL)
        first.wait(WAIT_S)
    assert lock_path(tmp_path / "game.json").exists()  # left behind by the killed process
    with holder(*SERVE, "--http", "127.0.0.1:0", cwd=tmp_path) as server:
        done = unoattack(*TABLE, cwd=tmp_path, stdin="status\n")
        assert done.returncode == 1 and f"process {server.pid} (" in done.stderr
        assert "serve --port none" in done.stderr, done.stderr


def test_the_join_code_is_not_written_into_the_lock_file() -> None:
    shown = describe_command(["/venv/bin/unoattack", "serve", "--code", "293507", "--code=1"])
    assert shown == "unoattack serve --code ... --code=..."
