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


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads thread states in /proc")
def test_ctrl_c_taken_by_a_reader_thread_still_ends_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any thread of the process may take the SIGINT a terminal sends, and Python's handler runs
    only in the main thread: a reader thread that takes it just flags the handler. The run loop
    must still end (130, the game saved), not wait on its queue until a line comes. Here the
    signal goes to the stdin reader once the loop sleeps waiting for the first line."""
    import io
    import queue
    import signal
    import threading
    from types import SimpleNamespace
    from typing import Any

    from engine.table import cli as table
    from engine.table.console import Console
    from engine.table.referee import Referee
    from engine.table.session import TableSession
    from tests.wait import WAIT, wait_until

    queues: list[queue.Queue[Any]] = []
    getting = threading.Event()

    class Items(queue.Queue[Any]):  # the loop's queue, watched
        def __init__(self) -> None:
            super().__init__()
            queues.append(self)

        def get(self, block: bool = True, timeout: float | None = None) -> Any:
            getting.set()
            return super().get(block, timeout)

    monkeypatch.setattr(table, "queue", SimpleNamespace(Queue=Items, Empty=queue.Empty))
    main = threading.main_thread().native_id

    def main_sleeps_in_the_wait() -> bool:
        state = Path(f"/proc/self/task/{main}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state == "S" and bool(queues[0].not_empty._waiters)  # type: ignore[attr-defined]

    ended, rescued = threading.Event(), threading.Event()

    def ctrl_c_to_the_reader() -> None:
        getting.wait(WAIT)
        wait_until(main_sleeps_in_the_wait, what="the loop waiting for a line")
        reader = next(t for t in threading.enumerate() if t.name == "table-stdin")
        assert reader.ident is not None
        signal.pthread_kill(reader.ident, signal.SIGINT)
        if not ended.wait(WAIT):  # a safety net: the loop never saw the Ctrl-C
            rescued.set()
            queues[0].put(("eof", None))

    read_fd, write_fd = os.pipe()  # nothing is ever typed: the reader blocks in its read
    out = io.StringIO()
    session = TableSession(Referee(["Ann", "Bob"]), state_path=tmp_path / "t.json", out=out)
    sender = threading.Thread(target=ctrl_c_to_the_reader, daemon=True)
    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    handlers = {sig: signal.getsignal(sig) for sig in stops}
    with os.fdopen(read_fd) as stdin:
        sender.start()
        try:
            code = table.run(session, Console(stdin, out, tty=False))
        finally:
            ended.set()
            os.close(write_fd)
            sender.join(WAIT)
            # The command ignores the stop signals from its Ctrl-C on (it only exits after);
            # this process goes on, and the commands later tests start must not inherit that.
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    assert not rescued.is_set(), "the Ctrl-C was only seen when a line came"
    assert code == 130
    assert "game saved in" in out.getvalue()
    assert load_state(tmp_path / "t.json").referee.players == ["Ann", "Bob"]
