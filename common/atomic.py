"""How a command writes a file it makes (a CSV, a plot, a rewritten config): whole or not at
all. Standard library only.

The new content goes to a temporary file beside the old one, is flushed to the disk, and only
then takes the old one's name (a rename, which the file system does in one step), keeping its
mode. A full SD card, a read-only remount, a file size limit or a crash halfway leave the old
file as it was (or no file), never half of a new one; the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    check: Callable[[str], None] | None = None,
) -> None:
    """Write `data` (text is UTF-8) to `path` whole, or leave `path` as it was and raise
    OSError naming `path` (never the temporary file). `check(temporary_path)` runs on the
    written copy before it replaces `path`: what it raises (a file that would not load) leaves
    `path` as it was too. A new file gets the mode a plain `open` would give it (0666 less the
    umask), a replaced one keeps its own."""
    target = Path(path)
    try:
        _write(target, data, check)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None


def _write(target: Path, data: str | bytes, check: Callable[[str], None] | None) -> None:
    folder = target.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        if check is not None:
            check(tmp)
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself, on the disk
        folder_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(folder_fd)
        finally:
            os.close(folder_fd)


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """This process's umask, read without changing it (`os.umask` sets it, for every thread):
    Linux says it in /proc; elsewhere the usual 022."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022
