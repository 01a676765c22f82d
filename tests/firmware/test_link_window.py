"""The link's delivery window under a nak that lands mid-batch: the rewind must be honoured, never
mistaken for events gone from the journal (which would mark the lost event as held by the host)."""

from __future__ import annotations

import threading
from typing import Any

from firmware.journal import MemoryJournal
from firmware.link import Link
from tests.firmware.linkhelp import FakeClock, FakeDaemon
from wire import protocol as p


class RecordingPort:
    """A port that keeps the seq of every event frame written to it."""

    def __init__(self) -> None:
        self.seqs: list[int] = []

    def read(self) -> bytes:
        return b""

    def write(self, data: bytes) -> None:
        for line in data.splitlines():
            if line.strip():
                message = p.decode(line)
                if message["type"] == "event":
                    self.seqs.append(message["seq"])

    def close(self) -> None:
        pass


class HookLock:
    """The link's lock, with a hook run just before each acquisition (to land a frame from the
    host at an exact point of the writer's batch)."""

    def __init__(self, lock: Any, hook: Any) -> None:
        self._lock, self._hook = lock, hook

    def __enter__(self) -> Any:
        self._hook()
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> Any:
        return self._lock.__exit__(*exc)


def test_a_nak_during_a_resend_batch_rewinds_instead_of_skipping_the_lost_event():
    journal = MemoryJournal()
    for n in range(14):
        journal.append("press", 0, {"press_id": n + 1, "source": "button"})
    journal.ack(11)
    clock = FakeClock()
    link = Link("unused", FakeDaemon(journal), journal, clock=clock)  # not started: no threads
    port = RecordingPort()
    link._send_events(port)  # 12, 13, 14 go out; 12 is lost on the line
    assert port.seqs == [12, 13, 14]

    # The resend timer runs out: the writer resends 12, 13, 14 as one batch. Right after 12 is
    # out, the host's nak for 12 (it saw 13 first, the last time) is handled by the reader.
    armed = threading.Event()
    armed.set()

    def hook() -> None:
        if armed.is_set() and link._next == 13 and port.seqs[-1] == 12:
            armed.clear()
            link._on_nak(p.nak(12, stream=journal.stream))

    link._lock = HookLock(link._lock, hook)  # type: ignore[assignment]
    clock.t += 10
    link._send_events(port)
    assert not armed.is_set(), "the nak was not injected"
    assert link._host_has == 11, "the link believes the host holds 12, which it never acked"

    # The next writer step resends from 12: the gap closes.
    port.seqs.clear()
    link._send_events(port)
    assert port.seqs[:1] == [12]
