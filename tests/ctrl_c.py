"""Ctrl-C as a terminal sends it: SIGINTs to the whole process group of a real command (the
command and every worker it started), once it has shown on its terminal that it is running.

The command runs in a session of its own with stderr on a pseudo-terminal, so its progress bar
is drawn there (a bar is drawn only on a terminal) and tells the test that the run is under way:
the test waits on that output, never on a sleep. What comes back is the exit code, what the
command printed, and every process of its group still alive after it ended (psutil)."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from tests.wait import wait_until

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "LANGUAGE": "en"}
# Safety nets only: on a healthy machine the command ends within a second of the signal.
STARTED_S = 120.0
ENDED_S = 60.0


@dataclass
class Interrupted:
    """What a command did after the Ctrl-Cs: `code` None if it never ended (killed then)."""

    code: int | None
    stdout: str
    terminal: str  # its stderr, as the terminal showed it
    left: list[str]  # processes of its group alive after it ended: "pid name status"


def _group(pgid: int) -> list[psutil.Process]:
    """The live processes of process group `pgid` (zombies have ended: not counted)."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


class _Terminal:
    """The reading end of the command's pseudo-terminal, drained by a thread (a full terminal
    would block the command's writes)."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.text = b""
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 1.0)
                if not ready:
                    continue
                chunk = os.read(self.master, 65536)
            except OSError:  # the command closed its end (EIO on Linux)
                chunk = b""
            with self.changed:
                self.text += chunk
                self.changed.notify_all()
            if not chunk:
                return

    def wait_for(self, needle: bytes, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while needle not in self.text:
                left = deadline - time.monotonic()
                if left <= 0 or not self.thread.is_alive():
                    raise AssertionError(
                        f"{needle!r} never shown; the terminal had {self.text[-400:]!r}"
                    )
                self.changed.wait(left)


def interrupt(
    argv: Sequence[str],
    *,
    running: bytes,
    signals: int = 2,
    gap_s: float = 0.05,
    cwd: Path = ROOT,
    interactive: bool = False,
    when_running: Callable[[int], object] | None = None,
    stop: signal.Signals = signal.SIGINT,
) -> Interrupted:
    """Run `python ARGV`, wait until its terminal shows `running`, press Ctrl-C `signals` times
    `gap_s` apart (SIGINT to its process group, as a terminal does), and wait for it to end.
    `interactive`: its stdin and stdout are the terminal too, as a person's at a prompt
    (`stdout` is then empty);
    `when_running(pid)` is called before the first Ctrl-C;
    `stop`: another signal instead: SIGTERM to the command alone, as `kill` and `timeout` send
    it; SIGHUP to its group, as a terminal that closes does."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, *argv],
        cwd=cwd,
        env=ENV,
        stdin=slave if interactive else subprocess.DEVNULL,
        stdout=slave if interactive else subprocess.PIPE,
        stderr=slave,
        start_new_session=True,  # its own process group, like a job of an interactive shell
    )
    os.close(slave)
    pgid = proc.pid
    terminal = _Terminal(master)
    stdout = b""
    try:
        terminal.wait_for(running, STARTED_S)
        if when_running is not None:
            when_running(proc.pid)
        for press in range(signals):
            if press:
                time.sleep(gap_s)  # the gap between two presses, not a wait for the command
            if stop == signal.SIGTERM:
                os.kill(proc.pid, stop)
            else:
                os.killpg(pgid, stop)
        try:
            stdout = proc.communicate(timeout=ENDED_S)[0] or b""
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:
            # A worker still ending gets a moment (waited for, not slept); one alive after it
            # was left behind.
            with contextlib.suppress(AssertionError):
                wait_until(lambda: not _group(pgid), 10.0, what="the group emptying")
        left = [f"{p.pid} {p.name()} {p.status()}" for p in _group(pgid)]
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        terminal.thread.join(5)  # the terminal's text, to its end now every writer is gone
        os.close(master)
    return Interrupted(code, stdout.decode(), terminal.text.decode(errors="replace"), left)
