"""Group commit: the journal commits without an fsync, `sync()` makes everything durable with
one fsync of the write-ahead log, and the link never writes an event or a reply to the port
before a `sync()` covered it."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.journal import JournalError, MemoryJournal, SqliteJournal
from tests.firmware.linkhelp import Box
from wire import protocol as p


def _wal_fsyncs(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[int]:
    """Record every os.fsync of the journal's -wal file (and still do it)."""
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        wal = os.stat(path.with_name(path.name + "-wal"))
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) == (wal.st_dev, wal.st_ino):
            calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


def test_appends_wait_for_one_sync_that_covers_them_all(tmp_path, monkeypatch):
    path = tmp_path / "j.db"
    with SqliteJournal(path) as j:
        fsyncs = _wal_fsyncs(monkeypatch, path)
        for n in range(5):
            j.append("press", n, {"press_id": n + 1, "source": "button"})
        assert fsyncs == []  # no fsync per event
        assert j.durable_seq < j.last_seq == 5
        assert j.sync() == 5
        assert j.durable_seq == 5
        assert len(fsyncs) == 1  # one fsync for the whole batch
        assert j.sync() == 5
        assert len(fsyncs) == 1  # nothing new committed: nothing to flush
        j.put_reply("c1", p.reply_ok("c1"))
        j.sync()
        assert len(fsyncs) == 2  # a stored reply needs the disk too


def test_a_reopened_journal_syncs_before_trusting_what_a_killed_process_left(tmp_path):
    path = tmp_path / "j.db"
    with SqliteJournal(path) as j:
        j.append("press", 0, {"press_id": 1, "source": "button"})
    with SqliteJournal(path) as again:
        # the old commits may still be only in the page cache: not durable until synced
        assert again.last_seq == 1 and again.durable_seq == 0
        assert again.sync() == 1


def test_without_a_log_file_to_fsync_sync_falls_back_to_a_full_commit(tmp_path, monkeypatch):
    with SqliteJournal(tmp_path / "j.db") as j:
        j.append("press", 0, {"press_id": 1, "source": "button"})
        monkeypatch.setattr(j, "_open_wal", lambda: None)
        assert j.sync() == 1 == j.durable_seq
        assert j.last_seq == 1 and j.events_after(0)[0]["press_id"] == 1


def test_sync_after_close_is_a_journal_error(tmp_path):
    j = SqliteJournal(tmp_path / "j.db")
    j.append("press", 0, {"press_id": 1, "source": "button"})
    j.close()
    with pytest.raises(JournalError, match="closed"):
        j.sync()


def test_memory_journal_is_always_durable():
    j = MemoryJournal()
    j.append("press", 0, {"press_id": 1, "source": "button"})
    assert j.durable_seq == j.sync() == 1


class RecordingJournal:
    """A SqliteJournal whose sync and put_reply calls go into a shared, ordered log; `fail`
    makes that many syncs raise first (a disk error)."""

    def __init__(self, inner: SqliteJournal, log: list[tuple[str, Any]], lock: Any) -> None:
        self._inner = inner
        self._log = log
        self._log_lock = lock
        self.fail = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def sync(self) -> int:
        if self.fail > 0:
            self.fail -= 1
            raise JournalError("disk on fire")
        durable = self._inner.sync()
        with self._log_lock:
            self._log.append(("sync", durable))
        return durable

    def put_reply(self, cmd_id: str, reply: dict, key: str | None = None) -> None:
        self._inner.put_reply(cmd_id, reply, key)
        with self._log_lock:
            self._log.append(("stored", cmd_id))


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[tuple[Box, RecordingJournal, list[tuple[str, Any]]]]:
    log: list[tuple[str, Any]] = []
    lock = threading.Lock()
    journal = RecordingJournal(SqliteJournal(tmp_path / "j.db"), log, lock)
    box = Box(journal)
    port = box.link._port
    assert port is not None
    real_write = port.write
    decoder = p.FrameDecoder()

    def write(data: bytes) -> None:
        real_write(data)
        with lock:
            for item in decoder.feed(data):
                if isinstance(item, p.Frame):
                    log.append(("wrote", item.message))

    port.write = write  # type: ignore[method-assign]
    try:
        yield box, journal, log
    finally:
        box.close()
        journal._inner.close()


def _check_order(log: list[tuple[str, Any]]) -> tuple[int, int]:
    """Fail if an event or a stored reply reached the port before a sync covered it; returns
    (events written, stored replies written)."""
    durable = 0
    stored_at: dict[str, int] = {}  # command id -> log index of its put_reply
    last_sync = -1
    events = replies = 0
    for index, (what, value) in enumerate(log):
        if what == "sync":
            durable, last_sync = max(durable, value), index
        elif what == "stored":
            stored_at[value] = index
        elif value["type"] == "event":
            assert value["seq"] <= durable, f"event {value['seq']} sent, durable only {durable}"
            events += 1
        elif value["type"] == "reply" and value["id"] in stored_at:
            assert last_sync > stored_at[value["id"]], f"reply {value['id']} sent before a sync"
            replies += 1
    return events, replies


def test_no_event_or_reply_reaches_the_port_before_a_sync_covered_it(recorded):
    box, _journal, log = recorded
    for round_ in range(4):
        box.emit_presses(7)
        box.host.command("press", cmd_id=f"p{round_}")
        box.host.command("status", cmd_id=f"s{round_}")
    last = box.journal.last_seq
    assert last == 32  # the whole window: no ack is needed for all of it to go out
    box.settle()
    assert _check_order(list(log))[0] == last
    # a nak rewinds the window: resent events are old, already durable, and still checked
    box.host.send(p.nak(3))
    box.settle()
    events, replies = _check_order(list(log))
    assert events == last + (last - 2)  # everything once, and again from seq 3
    assert replies >= 4  # every stored (press) reply went out, each after a sync; status is a
    # query, answered afresh and never stored


def test_a_failing_sync_keeps_events_and_replies_off_the_wire_until_it_works(recorded):
    box, journal, log = recorded
    journal.fail = 2
    box.emit_presses(3)
    reply = box.host.command("press", cmd_id="after-failure")  # arrives once a sync works
    assert reply["ok"] and reply["press_id"] == 4
    box.settle()
    assert journal.fail == 0
    events, replies = _check_order(list(log))
    assert events == 4 and replies >= 1
    assert box.link.counters["frames_out"] >= 5
