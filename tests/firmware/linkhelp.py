"""Test helpers for the serial link: a fake daemon and a minimal host over a real port."""

from __future__ import annotations

import itertools
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import serial

from firmware.journal import MemoryJournal
from firmware.link import Link
from wire import protocol as p

# How long a test waits for a frame it expects. Generous: an fsync on a disk that other test
# runs keep busy can take seconds; a healthy frame comes in milliseconds, and a test that
# expects none waits for a later frame instead (settle), never for this to run out.
WAIT = 30.0


def stall_report(link: Link) -> str:
    """What a link that left a command unanswered holds, and where every thread of this process
    is: the evidence a wait that ran out should carry (a stall seen once in many runs cannot be
    rerun under a debugger)."""
    with link._lock:
        held = {
            "out": [cmd_id for cmd_id, _ in link._out],
            "pending": sorted(link._pending),
            "host_has": link._host_has,
            "next": link._next,
            "epoch": link._epoch,
            "port_broken": link._port_broken,
            "counters": dict(link._counters),
        }
    names = {t.ident: t.name for t in threading.enumerate()}
    stacks = [
        f"--- thread {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame))
        for ident, frame in sys._current_frames().items()
    ]
    return f"link {held}\n" + "\n".join(stacks)


class FakeDaemon:
    """The daemon interface the link needs (subscribe, submit, state), with a scriptable loop:
    `press` journals a press event, `hold` keeps replies back until `release()`, ops in
    `raise_on` raise inside submit, ops in `garbage` reply with something that is not a reply."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal
        self.state = "idle"
        self.subscribers: list[Callable[[dict], None]] = []
        self.executed: list[tuple[str, dict]] = []
        self.raise_on: set[str] = set()
        self.garbage: set[str] = set()
        self.hold = False
        self._held: list[tuple[Callable[[dict], None], dict]] = []
        self._lock = threading.Lock()

    def subscribe(self, fn: Callable[[dict], None]) -> None:
        self.subscribers.append(fn)

    def emit(self, kind: str, fields: dict) -> dict:
        event = self.journal.append(kind, 0, fields)
        for fn in self.subscribers:
            fn(event)
        return event

    def submit(
        self, op: str, args: dict, reply: Callable[[dict], None], *, cmd_id: str | None = None
    ) -> None:
        if op in self.raise_on:
            raise RuntimeError(f"boom in {op}")
        with self._lock:
            self.executed.append((op, dict(args)))
        if op in self.garbage:
            reply("not a dict")  # type: ignore[arg-type]
            return
        if op == "press":
            press_id = self.journal.next_press_id()
            self.emit("press", {"press_id": press_id, "source": "host"})
            result = {"ok": True, "press_id": press_id}
        elif op == "status":
            result = {"ok": True, "state": self.state, "hopper": 10}
        else:
            result = {"ok": True, "state": self.state}
        if self.hold:
            self._held.append((reply, result))
        else:
            reply(result)

    def release(self) -> None:
        self.hold = False
        held, self._held = self._held, []
        for reply, result in held:
            reply(result)

    def count(self, op: str) -> int:
        with self._lock:
            return sum(1 for o, _ in self.executed if o == op)


class Host:
    """A bare-bones host on the other end of the link: writes frames, and a reader thread
    decodes everything the box sends into a queue."""

    def __init__(self, url: str, *, strict: bool = True) -> None:
        self.strict = strict  # a bad frame from the box fails the test
        self.port = serial.serial_for_url(url, timeout=0.05, write_timeout=5)
        self.decoder = p.FrameDecoder()
        self.items: queue.Queue[p.Frame | p.FrameErrorInfo] = queue.Queue()
        self._ids = itertools.count(1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.port.read(max(1, self.port.in_waiting))
            except (OSError, serial.SerialException, TypeError, AttributeError):
                return
            for item in self.decoder.feed(data):
                if self.strict or isinstance(item, p.Frame):
                    self.items.put(item)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.port.close()

    def send(self, message: dict) -> None:
        self.write(p.encode(message))

    def write(self, data: bytes) -> None:
        self.port.write(data)
        self.port.flush()

    def next(
        self, predicate: Callable[[dict], bool] = lambda m: True, timeout: float = WAIT
    ) -> dict:
        """The next frame matching `predicate` (others are discarded)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no matching frame from the box in time")
            try:
                item = self.items.get(timeout=left)
            except queue.Empty:
                continue
            assert isinstance(item, p.Frame), f"the box sent a bad frame: {item}"
            if predicate(item.message):
                return item.message

    def until_reply(self, cmd_id: str, timeout: float = WAIT) -> tuple[dict, list[dict]]:
        """Collect frames up to the reply to `cmd_id`; returns (reply, frames before it)."""
        before: list[dict] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply to {cmd_id} in time; saw {before[-5:]}")
            try:
                item = self.items.get(timeout=left)
            except queue.Empty:
                continue
            assert isinstance(item, p.Frame), f"the box sent a bad frame: {item}"
            message = item.message
            if message["type"] == "reply" and message["id"] == cmd_id:
                return message, before
            before.append(message)

    def command(self, op: str, cmd_id: str | None = None, **args: Any) -> dict:
        cmd_id = cmd_id or f"h{next(self._ids)}"
        self.send(p.cmd(cmd_id, op, **args))
        reply, _ = self.until_reply(cmd_id)
        return reply

    def sync(self) -> list[dict]:
        """Frames the box sent before it answered a fresh status command."""
        cmd_id = f"sync{next(self._ids)}"
        self.send(p.cmd(cmd_id, "status"))
        return self.until_reply(cmd_id)[1]


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Box:
    """A link on a pty with a fake daemon, a fake clock and a host attached."""

    def __init__(self, journal=None, **link_args) -> None:
        self.journal = journal or MemoryJournal()
        self.daemon = FakeDaemon(self.journal)
        self.clock = FakeClock()
        self.link = Link("pty", self.daemon, self.journal, clock=self.clock, **link_args)
        self.link.start()
        assert self.link.port_path and self.link.port_path.startswith("/dev/")
        self.host = Host(self.link.port_path)

    def emit_presses(self, n: int) -> None:
        for _ in range(n):
            self.daemon.emit(
                "press", {"press_id": self.journal.next_press_id(), "source": "button"}
            )

    def advance(self, seconds: float) -> None:
        self.clock.t += seconds
        self.link.poke()

    def settle(self) -> list[dict]:
        """Everything the box sent up to two status round trips from now: whatever a writer
        step already due sends, it sends before the second reply."""
        return self.host.sync() + self.host.sync()

    def close(self) -> None:
        self.host.close()
        self.link.stop()
