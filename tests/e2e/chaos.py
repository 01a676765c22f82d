"""A chaos link: a relay between the daemon's pty and a second pty the host opens, that garbles
the line on purpose (seeded).

Host side: the relay owns a fresh pty and points a symlink (`link`) at its slave, the way udev
keeps /dev/serial/by-id stable; `unplug_host()` closes that pty (the host's reads fail) and makes a
new one behind the same link. Box side: the relay opens the daemon's pty path; when the daemon
dies the relay drops whatever the host sends until `attach_box(new_path)`.

Per line, in each direction: drop it, send it twice, flip one bit, or split it into two writes
with a pause between. Counters say how much of each happened.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import select
import threading
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Chaos:
    """Per-line probabilities of each kind of damage."""

    drop: float = 0.003
    duplicate: float = 0.003
    flip: float = 0.003
    split: float = 0.05


@dataclass
class Counters:
    """What the relay did to the lines of one direction."""

    lines: int = 0
    dropped: int = 0
    duplicated: int = 0
    flipped: int = 0
    split: int = 0
    lost_while_down: int = 0  # bytes thrown away because the other side was gone

    def summary(self) -> str:
        return (
            f"{self.lines} lines: {self.dropped} dropped, {self.duplicated} duplicated,"
            f" {self.flipped} bit-flipped, {self.split} split, {self.lost_while_down} bytes lost"
            " while unplugged"
        )


@dataclass
class _Side:
    fd: int | None = None
    keep: int | None = None  # our own slave fd on the host pty, so the master never sees EIO
    pending: bytearray = field(default_factory=bytearray)


class ChaosRelay:
    """Relay between the daemon's pty (`box_port`) and a host-facing pty at `link`."""

    def __init__(self, box_port: str, link: Path, *, seed: int, chaos: Chaos | None = None):
        self.link = Path(link)
        self.chaos = chaos or Chaos()
        self.rng = random.Random(seed)
        self.to_host = Counters()
        self.to_box = Counters()
        self.host_unplugs = 0
        self.box_attaches = 0
        self._lock = threading.Lock()
        self._box = _Side()
        self._host = _Side()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-relay", daemon=True)
        self._plug_host()
        self.attach_box(box_port)

    # -- control (any thread) ------------------------------------------------------------------

    def start(self) -> ChaosRelay:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        with self._lock:
            self._close_box()
            self._close_host()

    def __enter__(self) -> ChaosRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def attach_box(self, port: str) -> None:
        """Connect the box side to the daemon's (new) pty."""
        fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(fd)
        with self._lock:
            self._close_box()
            self._box = _Side(fd=fd)
            self.box_attaches += 1

    def unplug_host(self) -> None:
        """Pull the host's cable: its pty vanishes and a new one appears behind `link`.

        The new one first: `link` must never name a pty that is gone, whose number the next
        pty made on the machine (another test's box) gets. A host reopening `link` then would
        share that stranger's line, each reader taking some of the other's bytes."""
        with self._lock:
            old = self._host
            self._plug_host()
            self._close_side(old)
            self.host_unplugs += 1

    # -- internals (lock held) -----------------------------------------------------------------

    def _plug_host(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        tmp = self.link.with_name(self.link.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(os.ttyname(slave))
        tmp.replace(self.link)
        self._host = _Side(fd=master, keep=slave)

    def _close_host(self) -> None:
        self._close_side(self._host)
        self._host = _Side()

    @staticmethod
    def _close_side(side: _Side) -> None:
        for fd in (side.fd, side.keep):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _close_box(self) -> None:
        if self._box.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._box.fd)
        self._box = _Side()

    # -- relay thread --------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                fds = [fd for fd in (self._box.fd, self._host.fd) if fd is not None]
            if not fds:
                self._stop.wait(0.01)
                continue
            try:
                ready, _, _ = select.select(fds, [], [], 0.02)
            except (OSError, ValueError):
                continue  # a side was swapped under us
            with self._lock:
                for fd in ready:
                    if fd == self._box.fd:
                        self._pump(self._box, self._host, self.to_host, box_side=True)
                    elif fd == self._host.fd:
                        self._pump(self._host, self._box, self.to_box, box_side=False)

    def _pump(self, src: _Side, dst: _Side, counters: Counters, *, box_side: bool) -> None:
        assert src.fd is not None
        try:
            data = os.read(src.fd, 4096)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            data = b""
        if not data:
            if box_side:  # the daemon died: its pty is gone until attach_box()
                self._close_box()
            return
        src.pending += data
        while True:
            newline = src.pending.find(b"\n")
            if newline < 0:
                if len(src.pending) > 2048:  # noise without newlines: pass it on as is
                    self._send(dst, bytes(src.pending), counters)
                    src.pending.clear()
                return
            line = bytes(src.pending[: newline + 1])
            del src.pending[: newline + 1]
            self._damage(line, dst, counters)

    def _damage(self, line: bytes, dst: _Side, counters: Counters) -> None:
        counters.lines += 1
        chaos, rng = self.chaos, self.rng
        if rng.random() < chaos.drop:
            counters.dropped += 1
            return
        if rng.random() < chaos.flip:
            counters.flipped += 1
            at = rng.randrange(len(line))
            line = line[:at] + bytes([line[at] ^ (1 << rng.randrange(8))]) + line[at + 1 :]
        copies = 1
        if rng.random() < chaos.duplicate:
            counters.duplicated += 1
            copies = 2
        for _ in range(copies):
            if len(line) > 2 and rng.random() < chaos.split:
                counters.split += 1
                cut = rng.randrange(1, len(line) - 1)
                self._send(dst, line[:cut], counters)
                time.sleep(0.002)  # let the reader see half a frame
                self._send(dst, line[cut:], counters)
            else:
                self._send(dst, line, counters)

    def _send(self, dst: _Side, data: bytes, counters: Counters) -> None:
        if dst.fd is None:
            counters.lost_while_down += len(data)
            return
        view = memoryview(data)
        deadline = time.monotonic() + 1.0
        while view:
            try:
                view = view[os.write(dst.fd, view) :]
            except BlockingIOError:
                if time.monotonic() > deadline:  # nobody reads: like a UART overrun
                    counters.lost_while_down += len(view)
                    return
                select.select([], [dst.fd], [], 0.01)
            except OSError:
                counters.lost_while_down += len(view)
                return
