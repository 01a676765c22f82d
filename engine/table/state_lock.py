"""One referee per game: the writer's lock on a table state file.

`unoattack table` and `unoattack serve` hold `FILE.lock` (beside the state file `FILE`) locked
for as long as they run, and write their process id and command into it. A second one on the
same state file refuses to start with one line naming that process, instead of overwriting
the first one's acknowledged moves without a word.

The lock is the kernel's (`flock`): it ends with the process, however the process ends, so a
lock file left behind by a process that was killed blocks nobody (the next one takes it over).
A process that stops removes the file; one that finds the file removed (or replaced) under the
lock it just took tries again, so two can never both believe they hold it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from engine.errors import UnoError
from i18n import _

__all__ = ["StateBusy", "StateLock", "holding", "lock_path"]

SECRET_OPTIONS = ("--code",)  # never written into the lock file (others may read it)
READ_TRIES = 20  # a holder that has just taken the lock writes its name at once


class StateBusy(UnoError):
    """Another process referees the game in this state file (exit 1)."""


def lock_path(state: Path) -> Path:
    """The lock file of a state file: `FILE.lock` beside it."""
    state = Path(state)
    return state.with_name(state.name + ".lock")


def describe_command(argv: Sequence[str]) -> str:
    """`argv` as one shell line, the program by its name, secrets (the join code) hidden."""
    shown: list[str] = [Path(argv[0]).name if argv else "?"]
    hide = False
    for word in argv[1:]:
        if hide:
            shown.append("...")
            hide = False
        elif word in SECRET_OPTIONS:
            shown.append(word)
            hide = True
        elif word.startswith(tuple(f"{o}=" for o in SECRET_OPTIONS)):
            shown.append(word.split("=", 1)[0] + "=...")
        else:
            shown.append(word)
    return shlex.join(shown)[:300]


class StateLock:
    """The lock on one state file: `acquire()` (StateBusy when another process holds it),
    `release()`; a context manager."""

    def __init__(self, state: Path, *, argv: Sequence[str] | None = None) -> None:
        self.state = Path(state)
        self.path = lock_path(self.state)
        self.command = describe_command(sys.argv if argv is None else argv)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, and write this process's id and command into the lock file."""
        while self._fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise StateBusy(self._busy(holder)) from None
            except BaseException:
                os.close(fd)
                raise
            if not _still_there(fd, self.path):
                os.close(fd)  # its holder removed it as we opened it: take the new one
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {self.command}\n".encode(), 0)
            self._fd = fd

    def release(self) -> None:
        """Remove the lock file and let go (the next process starts afresh)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            if _still_there(fd, self.path):
                self.path.unlink()
        os.close(fd)

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _busy(self, holder: tuple[int, str] | None) -> str:
        if holder is None:
            return _(
                "{path} is in use by another process (see {lock}); one referee per game: stop "
                "it first, or give another --state FILE"
            ).format(path=self.state, lock=self.path)
        pid, command = holder
        return _(
            "{path} is in use: process {pid} ({command}) referees that game; one referee per "
            "game: stop it first, or give another --state FILE"
        ).format(path=self.state, pid=pid, command=command)


@contextlib.contextmanager
def holding(state: Path) -> Iterator[StateLock]:
    """Hold the lock on `state` for the block (StateBusy, exit 1, when another process
    does)."""
    with StateLock(state) as lock:
        yield lock


def _still_there(fd: int, path: Path) -> bool:
    """True when `path` is still the file open as `fd`."""
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)


def _read_holder(fd: int) -> tuple[int, str] | None:
    """The pid and command the holder wrote; None when it wrote nothing readable."""
    for _try in range(READ_TRIES):
        text = os.pread(fd, 1024, 0).decode("utf-8", "replace").strip()
        pid, _sep, command = text.partition(" ")
        if pid.isascii() and pid.isdigit() and command:
            return int(pid), command
        time.sleep(0.01)  # it took the lock a moment ago and is writing its name now
    return None
