"""A box that misbehaves on purpose, for the host client's tests (tests/engine/test_client.py):
the box side of the documented wire protocol over a pty, with knobs to lose replies, lose,
duplicate or garble frames, go silent, send an intact but invalid reply, forget to resend until
a new hello, and unplug.

Why it stays beside the real daemon: the daemon on mock pins (``tests/e2e/conftest.serving_box``,
used by ``launcher send`` and the watch tests) does none of these things, and these tests also
read the box's side of the link (the hellos it got, what the host acked, how often a command ran).
Everything else about a box is the daemon's to show: host tools are tested against it.

It speaks through `wire.protocol` and keeps its events in memory. The port is a symlink to the
current pty (like a udev /dev/serial/by-id link), so `unplug()` can give the host a new pty at
the same path.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.wait import wait_until
from wire import protocol

RESEND_S = 0.25


class FakeBox:
    """The box side of the link on a pty, driven by a thread. Use as a context manager."""

    def __init__(self, link: Path, *, stream: str = "s-test", fires: list[int] | None = None):
        self.link = Path(link)
        self.stream = stream
        self.boot = "b-1"
        self.events: list[dict[str, Any]] = []  # the journal: events[i] has seq i + 1
        self.acked = 0
        self.replies: dict[str, dict[str, Any]] = {}
        self.executed: dict[str, int] = {}  # command id -> times run
        self.received: list[dict[str, Any]] = []  # every valid frame from the host
        self.hellos: list[dict[str, Any]] = []
        self.errors: list[protocol.FrameErrorInfo] = []
        self.fires = list(fires or [2])  # ejected per press, cycled
        self.next_press = 1
        # misbehaviour knobs
        self.drop_replies = 0  # swallow this many command replies (after running the command)
        self.mute = False  # answer nothing at all
        self.duplicate_events = False  # send every event frame twice
        self.skip_first_send: set[int] = set()  # seqs whose first transmission is lost
        self.garble_first_send: set[int] = set()  # seqs whose first transmission has a bad byte
        self.lost_until_hello: set[int] = set()  # seqs not resent by timer or nak, only hello
        self.blurt_before_hello = False  # send unacked events ahead of the hello reply
        self.on_ack: Callable[[int], None] | None = None
        self._sent_once: set[int] = set()
        self._inflight_at: dict[int, float] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._master: int | None = None
        self._slave: int | None = None
        self._decoder = protocol.FrameDecoder()
        self._thread = threading.Thread(target=self._run, name="fakebox", daemon=True)
        self._plug()

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> FakeBox:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self._unplug()

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no newline translation before the host configures it
        self._master, self._slave = master, slave
        tmp = self.link.with_suffix(".new")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(os.ttyname(slave))
        tmp.replace(self.link)
        self._decoder = protocol.FrameDecoder()

    def _unplug(self) -> None:
        with self._lock:
            _close(self._slave, self._master)
            self._master = self._slave = None

    def unplug(self) -> None:
        """Pull the cable: the host's pty dies; a new one appears at the same link path.

        The new one first: the link must never name a pty that is gone, whose number the next
        pty made on the machine (another test's box) gets, to be shared with a host reopening
        the link (tests/e2e/chaos.py does the same)."""
        with self._lock:
            old = (self._slave, self._master)
            self._plug()
            _close(*old)
            self._inflight_at.clear()  # resend everything unacked on the new line

    # -- box behaviour -----------------------------------------------------------------------

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Journal an event and send it."""
        with self._lock:
            event = {
                "v": 1,
                "type": "event",
                "seq": len(self.events) + 1,
                "boot": self.boot,
                "stream": self.stream,
                "t_ms": len(self.events),
                "kind": kind,
                **fields,
            }
            self.events.append(event)
            self._send_event(event)
            return event

    def _send_event(self, event: dict[str, Any], *, replay: bool = False) -> None:
        seq = event["seq"]
        if seq in self.lost_until_hello and not replay:
            return  # a box whose window has gone wrong: only a handshake brings these back
        self._inflight_at[seq] = time.monotonic()
        first = seq not in self._sent_once
        self._sent_once.add(seq)
        if first and seq in self.skip_first_send:
            return
        line = protocol.encode(event)
        if first and seq in self.garble_first_send:
            line = line[:5] + bytes([line[5] ^ 0x01]) + line[6:]
        self._write(line)
        if self.duplicate_events:
            self._write(line)

    def _write(self, line: bytes) -> None:
        with self._lock:
            if self._master is None or self.mute:
                return
            with contextlib.suppress(OSError):
                os.write(self._master, line)

    def _execute(self, msg: dict[str, Any]) -> dict[str, Any]:
        op, cmd_id = msg["op"], msg["id"]
        self.executed[cmd_id] = self.executed.get(cmd_id, 0) + 1
        if op == "status":
            return protocol.reply_ok(cmd_id, state="idle", hopper=50)
        if op == "press":
            press_id = self.next_press
            self.next_press += 1
            ejected = self.fires[(press_id - 1) % len(self.fires)]
            self.emit("press", press_id=press_id, source="host")
            self.emit(
                "fire",
                press_id=press_id,
                source="host",
                planned=ejected,
                ejected=ejected,
                reason="fired" if ejected else "dry",
            )
            return protocol.reply_ok(cmd_id, press_id=press_id)
        if op == "selftest":
            # a reply whose own "ok" collides with the envelope's: intact, yet invalid
            return {"v": 1, "type": "reply", "id": cmd_id, "ok": False, "checks": []}
        if op == "clear":
            return protocol.reply_error(cmd_id, protocol.JAMMED, "nothing to clear: box is idle")
        return protocol.reply_error(cmd_id, protocol.UNKNOWN_OP, f"fake box has no {op}")

    def _on_frame(self, msg: dict[str, Any]) -> None:
        self.received.append(msg)
        kind = msg["type"]
        if kind in ("ack", "nak") and msg.get("stream", self.stream) != self.stream:
            return  # about another journal's events (like the daemon's link)
        if kind == "ack":
            self.acked = max(self.acked, msg["seq"])
            for seq in [s for s in self._inflight_at if s <= self.acked]:
                del self._inflight_at[seq]
            if self.on_ack is not None:
                self.on_ack(msg["seq"])
        elif kind == "nak":
            for event in self.events[msg["seq"] - 1 :]:
                self._send_event(event)
        elif kind == "cmd" and msg["op"] == "hello":
            self.hellos.append(msg)
            if self.blurt_before_hello:
                # the daemon's writer does not wait for a hello: unacked events may come first
                for event in self.events[self.acked :]:
                    self._write(protocol.encode(event))
            # like the daemon's link: a host on our stream resumes after its seq, any other host
            # (first contact, an old stream) gets what no host has acked yet
            on_stream = msg.get("stream") == self.stream
            after = min(msg.get("seq", 0), len(self.events)) if on_stream else self.acked
            self.acked = max(self.acked, after)
            reply = protocol.reply_ok(
                msg["id"],
                stream=self.stream,
                boot=self.boot,
                seq=len(self.events),
                acked=self.acked,
            )
            self._write(protocol.encode(reply))
            for event in self.events[after:]:
                self._send_event(event, replay=True)
        elif kind == "cmd":
            reply = self.replies.get(msg["id"])
            if reply is None:
                reply = self.replies[msg["id"]] = self._execute(msg)
            if self.drop_replies > 0:
                self.drop_replies -= 1
                return
            self._write(protocol.encode(reply))

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                master = self._master
            if master is None:
                time.sleep(0.01)
                continue
            try:
                ready, _, _ = select.select([master], [], [], 0.02)
                data = os.read(master, 4096) if ready else b""
            except OSError:
                data = b""
            with self._lock:
                if master != self._master:
                    continue
                for item in self._decoder.feed(data):
                    if isinstance(item, protocol.FrameErrorInfo):
                        self.errors.append(item)
                    elif not self.mute:
                        self._on_frame(item.message)
                now = time.monotonic()
                for seq, sent in sorted(self._inflight_at.items()):
                    if now - sent >= RESEND_S and seq > self.acked:
                        self._send_event(self.events[seq - 1])

    def wait(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Poll `predicate` (box-side state) until true or `timeout`; False when it never was."""

        def holds() -> bool:
            with self._lock:
                return bool(predicate())

        try:
            return wait_until(holds, timeout)
        except AssertionError:
            return False


def _close(*fds: int | None) -> None:
    for fd in fds:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
