"""The referee's prompt on a real terminal (a pty): readline editing and history, messages
printed above a line being typed, a word on quit that the game is saved, and the box locked."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.table.state_file import load_state
from tests.ctrl_c import interrupt

ROOT = Path(__file__).resolve().parents[2]


class Terminal:
    """A child process on a pty: type into it, wait for what it prints."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        master, slave = os.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "INPUTRC": "/dev/null"}
        env.pop("PYTHONSTARTUP", None)
        self.proc = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True
        )
        self.master = master
        self.slave = slave  # kept open until the child is gone (reads on master would EIO)
        self.screen = b""

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def expect(self, pattern: str, timeout: float = 30.0) -> re.Match[bytes]:
        rx = re.compile(pattern.encode())
        deadline = time.monotonic() + timeout
        while True:
            found = rx.search(self.screen)
            if found:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} on screen:\n{self.screen[-1500:]!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    self.screen += os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    time.sleep(0.05)

    def close(self) -> int:
        try:
            code = self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
            os.close(self.master)
            os.close(self.slave)
        return code


@pytest.mark.timeout(120)
def test_the_prompt_edits_recalls_history_and_says_the_game_is_saved(tmp_path: Path) -> None:
    term = Terminal(
        [
            sys.executable,
            "-m",
            "engine.cli",
            "table",
            "--port",
            "none",
            "--players",
            "Ann,Bob,Cat",
            "--state",
            "t.json",
        ],
        tmp_path,
    )
    try:
        term.expect(r"Ann deals: card turned up> ")
        term.type("R5\r")
        term.expect(r"Bob \(7\) on R5 red> ")
        term.type("R7x\x7f\r")  # a typo, rubbed out with backspace
        term.expect(r"Bob plays R7")
        term.expect(r"Cat \(7\) on R7 red> ")
        term.type("status\r")
        term.expect(r"round 1 \(play\)")
        term.type("\x1b[A\r")  # arrow up: the last line again
        term.screen = term.screen.split(b"round 1 (play)", 1)[1]
        term.expect(r"round 1 \(play\)")
        term.type("quit\r")
        term.expect(r"game saved in t\.json; run the same command again to resume")
    finally:
        code = term.close()
    assert code == 0
    assert "status" in (tmp_path / "t.json.history").read_text()


CHILD = textwrap.dedent(
    """
    import sys, threading
    from engine.table.console import Console

    console = Console(sys.stdin, sys.stdout)
    assert console.tty
    class Spy:  # which threads call into readline's C library (it is not thread-safe)
        def __init__(self, lib):
            self.lib, self.callers = lib, set()
        def __getattr__(self, name):
            def call(*args):
                self.callers.add(threading.current_thread().name)
                return getattr(self.lib, name)(*args)
            return call
    console._lib = spy = Spy(console._lib)
    def notice():
        with open(sys.argv[1], "rb") as cue:  # a FIFO: the test says when the notice comes
            cue.read(1)
        console.show(["box: button live for Bob"], "new prompt> ")
    threading.Thread(target=notice, name="notice", daemon=True).start()
    line = console.read("old prompt> ")
    console.show([f"got {line!r}"])
    console.show([f"readline called from {sorted(spy.callers)}"])
    console.close()
    """
)


@pytest.mark.timeout(120)
def test_a_message_is_printed_above_the_line_being_typed(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    cue = tmp_path / "cue"
    os.mkfifo(cue)
    term = Terminal([sys.executable, str(script), str(cue)], tmp_path)
    try:
        term.expect(r"old prompt> ")
        term.type("R7 un")
        term.expect(r"old prompt> R7 un")
        cue.write_bytes(b"!")  # now, however long the typing took (no timer to race)
        # The notice comes while "R7 un" is being typed: it is printed on a line of its own,
        # then the prompt (the new one) is drawn again with the text typed so far.
        term.expect(r"\x1b\[2Kbox: button live for Bob\r?\n(.*\r)?new prompt> R7 un", timeout=60)
        term.type("o\r")
        term.expect(r"got 'R7 uno'")
        # drawn by the thread that reads, between two keys, never by the notice's own thread
        term.expect(r"readline called from \['MainThread'\]")
    finally:
        assert term.close() == 0


@pytest.mark.timeout(180)
@pytest.mark.parametrize("presses", [1, 2, 3])
def test_ctrl_c_at_the_prompt_saves_and_exits_130_however_many(
    tmp_path: Path, presses: int
) -> None:
    """Ctrl-C pressed again while the referee saves and locks the button (issue 21): the save
    is not cut short, and the exit is 130, not a death by SIGINT."""
    state = tmp_path / "t.json"
    argv = ["-m", "engine.cli", "table", "--port", "none", "--players", "Ann,Bob"]
    done = interrupt(
        [*argv, "--state", str(state)],
        running=b"card turned up> ",
        signals=presses,
        interactive=True,
    )
    assert (done.code, done.left) == (130, []), done.terminal[-1500:]
    assert "Traceback" not in done.terminal
    assert f"game saved in {state}" in done.terminal
    assert load_state(state).referee.players == ["Ann", "Bob"]
