"""Event journal: seq, acks, press ids, in-flight press, stored replies, restarts, corruption."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.errors import UsageError
from firmware import journal as journal_mod
from firmware.journal import SQLITE_MAGIC, JournalError, MemoryJournal, SqliteJournal
from wire import protocol


@pytest.fixture(params=["memory", "sqlite"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    j = MemoryJournal() if request.param == "memory" else SqliteJournal(tmp_path / "j.db")
    try:
        yield j
    finally:
        j.close()


def test_both_journals_are_the_journal_the_daemon_and_the_link_ask_for(journal):
    # Every member of the Journal protocol, with its signature (mypy checks the types: the
    # daemon's default journal and `launcher run`'s are typed Journal).
    import inspect

    members = {name for name in vars(journal_mod.Journal) if not name.startswith("_")}
    assert {"append", "sync", "durable_seq", "path", "lost", "recovered"} <= members
    for name in members:
        assert hasattr(journal, name), name
        wanted = getattr(journal_mod.Journal, name)
        if inspect.isfunction(wanted):
            assert inspect.signature(getattr(journal, name)) == inspect.signature(
                wanted.__get__(journal)
            ), name
    assert journal.path is None if isinstance(journal, MemoryJournal) else journal.path.exists()


def test_append_assigns_consecutive_seq_and_returns_a_valid_event(journal):
    first = journal.append("press", 5, {"press_id": 1, "source": "button"})
    second = journal.append("state", 6, {"from": "idle", "to": "spinup", "why": "press"})
    assert (first["seq"], second["seq"]) == (1, 2)
    assert first["stream"] == journal.stream
    assert first["boot"] == journal.boot
    assert first["kind"] == "press" and first["t_ms"] == 5
    protocol.validate(first)  # a complete, valid wire event
    assert journal.last_seq == 2


def test_events_after_returns_oldest_first_with_a_limit(journal):
    for n in range(10):
        journal.append("press", n, {"press_id": n + 1})
    assert [e["seq"] for e in journal.events_after(3, limit=4)] == [4, 5, 6, 7]
    assert [e["seq"] for e in journal.events_after(8)] == [9, 10]
    assert journal.events_after(10) == []


def test_ack_is_cumulative_never_backwards_and_never_past_the_newest(journal):
    for n in range(5):
        journal.append("press", n, {"press_id": n + 1})
    journal.ack(3)
    journal.ack(2)
    assert journal.acked == 3
    journal.ack(99)
    assert journal.acked == 5


def test_press_ids_increase(journal):
    ids = [journal.next_press_id() for _ in range(5)]
    assert ids == sorted(set(ids)) and ids[0] >= 1


def test_a_press_event_opens_its_press_and_its_fire_closes_it(journal):
    journal.append("press", 1, {"press_id": 4, "source": "host"})
    journal.append("press", 2, {"press_id": 5, "source": "button"})
    journal.update_press(4, planned=3, ejected=1, card_ms=[40])
    assert journal.open_presses() == [
        {"press_id": 4, "source": "host", "planned": 3, "ejected": 1, "card_ms": [40]},
        {"press_id": 5, "source": "button"},
    ]
    journal.append("fire", 9, {"press_id": 4, "planned": 3, "ejected": 3, "reason": "fired"})
    assert [p["press_id"] for p in journal.open_presses()] == [5]
    journal.update_press(4, ejected=9)  # closed: nothing to update
    assert [p["press_id"] for p in journal.open_presses()] == [5]


def test_replies_are_stored_by_command_id(journal):
    assert journal.get_reply("a") is None
    journal.put_reply("a", {"type": "reply", "id": "a", "ok": True, "state": "idle"})
    assert journal.get_reply("a")["state"] == "idle"


def test_stored_replies_are_bounded(journal, monkeypatch):
    monkeypatch.setattr(journal_mod, "KEEP_REPLIES", 5)
    for n in range(8):
        journal.put_reply(f"id{n}", {"ok": True, "n": n})
    assert journal.get_reply("id2") is None
    assert journal.get_reply("id3") == {"ok": True, "n": 3}
    assert journal.get_reply("id7") == {"ok": True, "n": 7}


def test_old_acked_events_are_pruned_but_unacked_ones_never(journal, monkeypatch):
    monkeypatch.setattr(journal_mod, "KEEP_ACKED_EVENTS", 3)
    for n in range(10):
        journal.append("press", n, {"press_id": n + 1})
    journal.ack(6)
    assert [e["seq"] for e in journal.events_after(0)] == [4, 5, 6, 7, 8, 9, 10]


def test_envelope_fields_cannot_be_overridden(journal):
    with pytest.raises(ValueError, match="'seq' is set by the journal"):
        journal.append("press", 0, {"seq": 5, "press_id": 1})
    assert journal.last_seq == 0


def test_an_event_too_long_for_one_frame_is_refused_before_it_is_stored(journal):
    with pytest.raises(ValueError, match="at most 512"):
        journal.append("fault", 0, {"output": "x", "why": "w" * 600})
    assert journal.last_seq == 0


def test_concurrent_appends_and_acks_keep_seq_unique_and_contiguous(journal):
    def appender(tag: int) -> None:
        for n in range(50):
            journal.append("press", n, {"press_id": tag * 1000 + n})

    def acker() -> None:
        for _ in range(50):
            journal.ack(journal.last_seq)
            journal.events_after(max(journal.acked - 5, 0))

    threads = [threading.Thread(target=appender, args=(t,)) for t in range(3)]
    threads.append(threading.Thread(target=acker))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    events = journal.events_after(0, limit=1000)
    assert [e["seq"] for e in events] == list(range(1, 151))
    assert len({e["press_id"] for e in events}) == 150


# -- SQLite only -----------------------------------------------------------------------------


def test_sqlite_uses_wal_and_leaves_the_fsync_to_sync(tmp_path: Path):
    with SqliteJournal(tmp_path / "j.db") as j:
        j.append("press", 0, {"press_id": j.next_press_id()})
        j.ack(1)
        db = j._conn()
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL: sync() fsyncs
        assert db.execute("PRAGMA application_id").fetchone()[0] == journal_mod.APPLICATION_ID


def test_sqlite_state_survives_a_restart_with_a_new_boot(tmp_path: Path):
    path = tmp_path / "j.db"
    with SqliteJournal(path) as j:
        stream, boot = j.stream, j.boot
        pid = j.next_press_id()
        j.append("press", 1, {"press_id": pid})
        j.append("press", 2, {"press_id": j.next_press_id()})
        j.ack(1)
        j.update_press(2, planned=4, ejected=2)
        j.put_reply("c1", {"ok": True, "press_id": 2})
    with SqliteJournal(path) as j:
        assert j.stream == stream
        assert j.boot != boot
        assert (j.last_seq, j.acked) == (2, 1)
        assert j.next_press_id() == 3
        assert j.open_presses() == [
            {"press_id": 1, "source": "button"},
            {"press_id": 2, "source": "button", "planned": 4, "ejected": 2},
        ]
        assert j.get_reply("c1") == {"ok": True, "press_id": 2}
        assert [e["seq"] for e in j.events_after(1)] == [2]
        assert j.append("press", 3, {"press_id": 3})["seq"] == 3


def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path: Path):
    path = tmp_path / "notes.txt"
    text = b"this is not a database, it is a shopping list\n" * 200
    path.write_bytes(text)
    with pytest.raises(UsageError, match=r"is not a launcher journal \(not an SQLite file\)"):
        SqliteJournal(path)
    assert path.read_bytes() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_directory_is_refused_and_left_alone(tmp_path: Path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "keep").write_text("mine")
    with pytest.raises(UsageError, match="is a directory"):
        SqliteJournal(tmp_path / "d")
    assert (tmp_path / "d" / "keep").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_an_empty_file_becomes_a_new_journal(tmp_path: Path):
    path = tmp_path / "j.db"
    path.touch()
    with SqliteJournal(path) as j:
        assert j.recovered is None and j.append("press", 0, {"press_id": 1})["seq"] == 1


def test_a_damaged_sqlite_file_is_moved_aside_and_reported(tmp_path: Path, caplog):
    path = tmp_path / "j.db"
    path.write_bytes(SQLITE_MAGIC + b"then a torn write, not pages\n" * 200)
    with SqliteJournal(path) as j:
        assert j.recovered is not None
        moved = Path(j.recovered)
        assert moved.name.startswith("j.db.corrupt-")
        assert moved.read_bytes().startswith(SQLITE_MAGIC + b"then a torn write")
        assert j.last_seq == 0
        assert j.append("press", 0, {"press_id": 1})["seq"] == 1
    assert "moved it to" in caplog.text
    # the new journal opens cleanly next time, with nothing to report
    with SqliteJournal(path) as j:
        assert j.recovered is None
        assert j.last_seq == 1


@pytest.mark.parametrize("schema", ["99", "²", "9" * 5000])
def test_a_journal_of_an_unknown_schema_is_refused_not_moved(tmp_path: Path, schema: str):
    """(A schema of "²", edited in by hand, passed isdigit and failed int: a traceback.)"""
    path = tmp_path / "j.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);")
    db.execute("INSERT INTO meta VALUES ('stream', 'x'), ('schema', ?)", (schema,))
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(UsageError, match=f"holds schema '{schema[:5]}"):
        SqliteJournal(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.db"]


def test_a_corrupted_page_is_detected(tmp_path: Path):
    path = tmp_path / "j.db"
    with SqliteJournal(path) as j:
        for n in range(300):
            j.append("press", n, {"press_id": n, "source": "button"})
    data = bytearray(path.read_bytes())
    assert len(data) > 8192
    data[4096:8192] = b"\xa5" * 4096  # scribble over a b-tree page
    path.write_bytes(bytes(data))
    with SqliteJournal(path) as j:
        assert j.recovered is not None
        assert j.last_seq == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_an_unreadable_file_is_refused_not_moved(tmp_path: Path):
    path = tmp_path / "j.db"
    SqliteJournal(path).close()
    path.chmod(0)
    with pytest.raises(UsageError, match="readable and writable"):
        SqliteJournal(path)
    assert path.exists()


def test_a_journal_in_a_folder_that_does_not_exist_is_refused(tmp_path: Path):
    with pytest.raises(UsageError, match=r"folder .*missing-dir does not exist; create it"):
        SqliteJournal(tmp_path / "missing-dir" / "j.db")
    assert list(tmp_path.iterdir()) == []


def test_closed_journal_raises_journal_error(tmp_path: Path):
    j = SqliteJournal(tmp_path / "j.db")
    j.close()
    j.close()  # idempotent
    with pytest.raises(JournalError, match="closed"):
        j.append("press", 0, {"press_id": 1})
