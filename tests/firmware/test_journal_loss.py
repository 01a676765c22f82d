"""A journal that went backwards is never reused silently.

Each case starts from what `kill -9` leaves on disk (the files copied while the journal is
open: database, -wal, -shm and the mark), damages it the way an SD card or a person would, and
opens it again. Every case must end reported (`lost`, the `hello` event, the hello reply) and
logged, on a new stream whose press ids never repeat one the host may hold.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from common.errors import UsageError
from firmware.journal import SqliteJournal
from tests.firmware.linkhelp import Box
from wire import protocol as p

EVENTS = 300  # enough for a write-ahead log of many pages


def killed(tmp_path: Path, events: int = EVENTS, acked: int = 0) -> tuple[Path, str, int, int]:
    """A journal with `events` press events, synced (so its mark is up to date), as `kill -9`
    leaves it: returns (path, stream, newest seq, newest press id)."""
    live = tmp_path / "live" / "journal.db"
    live.parent.mkdir()
    j = SqliteJournal(live)
    for _ in range(events):
        j.append("press", 0, {"press_id": j.next_press_id(), "source": "button"})
    if acked:
        j.ack(acked)
    j.sync()
    copy = tmp_path / "journal.db"
    for suffix in ("", "-wal", "-shm", "-mark"):
        if live.with_name(live.name + suffix).exists():
            shutil.copy(live.with_name(live.name + suffix), copy.with_name(copy.name + suffix))
    stream, last, press = j.stream, j.last_seq, j._press_id
    j.close()
    return copy, stream, last, press


def side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def scribble_over_the_log(path: Path) -> None:
    """4 KB of noise over the second frame of the write-ahead log: SQLite takes the bad
    checksum for the end of the log and drops every commit from there on, without an error."""
    with side(path, "-wal").open("r+b") as f:
        f.seek(32 + 24 + 4096)  # header, then one frame (24-byte frame header + one page)
        f.write(b"\xa5" * 4096)


def reopened(path: Path, stream: str, press: int, caplog: pytest.LogCaptureFixture) -> str:
    """Open the damaged journal; check the loss is reported, logged, on a new stream, and that
    new press ids start above every old one. Returns the report."""
    with caplog.at_level(logging.ERROR, logger="firmware.journal"):
        j = SqliteJournal(path)
    try:
        assert j.lost is not None, "the journal went back silently"
        assert j.lost in caplog.text
        assert j.stream != stream
        assert j.next_press_id() > press
        # a second start does not report it again: the new journal is whole
        report = j.lost
    finally:
        j.close()
    with SqliteJournal(path) as again:
        assert again.lost is None and again.recovered is None
    return report


def test_a_damaged_log_is_found_by_its_mark(tmp_path: Path, caplog) -> None:
    path, stream, last, press = killed(tmp_path)
    scribble_over_the_log(path)
    report = reopened(path, stream, press, caplog)
    assert f"went back from seq {last}" in report
    moved = [x for x in tmp_path.iterdir() if ".corrupt-" in x.name]
    assert any(x.name.endswith("-wal") for x in moved), "the evidence is kept, moved aside"


def test_a_log_deleted_after_a_kill_is_found_by_its_mark(tmp_path: Path, caplog) -> None:
    path, stream, _last, press = killed(tmp_path)
    side(path, "-wal").unlink()
    side(path, "-shm").unlink()
    reopened(path, stream, press, caplog)


def test_a_journal_emptied_to_zero_bytes_is_reported(tmp_path: Path, caplog) -> None:
    path, stream, last, press = killed(tmp_path)
    path.write_bytes(b"")
    report = reopened(path, stream, press, caplog)
    assert f"had reached seq {last}" in report


def test_a_deleted_journal_is_reported_while_its_mark_remains(tmp_path: Path, caplog) -> None:
    path, stream, _last, press = killed(tmp_path)
    for suffix in ("", "-wal", "-shm"):
        side(path, suffix).unlink()
    assert "lost (deleted or emptied)" in reopened(path, stream, press, caplog)


def test_a_journal_replaced_by_another_is_reported(tmp_path: Path, caplog) -> None:
    path, _stream, _last, _press = killed(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    SqliteJournal(other / "j.db").close()
    for suffix in ("", "-wal", "-shm"):
        if side(path, suffix).exists():
            side(path, suffix).unlink()
    shutil.copy(other / "j.db", path)
    with caplog.at_level(logging.ERROR, logger="firmware.journal"), SqliteJournal(path) as j:
        assert j.lost is not None and "not the journal last used here" in j.lost
        assert j.lost in caplog.text


def test_an_intact_journal_reopens_without_a_report(tmp_path: Path) -> None:
    path, stream, last, press = killed(tmp_path)
    with SqliteJournal(path) as j:
        assert (j.lost, j.recovered, j.stream, j.last_seq) == (None, None, stream, last)
        assert j.next_press_id() == press + 1


def test_a_host_beyond_the_newest_seq_is_proof_of_loss_when_the_mark_is_gone_too(
    tmp_path: Path, caplog
) -> None:
    """The mark cannot help when it went with the log; the host's hello still tells."""
    path, stream, last, _press = killed(tmp_path, acked=EVENTS)
    scribble_over_the_log(path)
    side(path, "-mark").unlink()
    journal = SqliteJournal(path)
    assert journal.lost is None and journal.stream == stream  # nothing to compare with
    kept = journal.last_seq
    assert kept < last
    box = Box(journal)
    try:
        box.daemon.emit("hello", {"name": "box"})  # this boot's first event
        with caplog.at_level(logging.ERROR, logger="firmware.journal"):
            reply = box.host.command("hello", stream=stream, seq=last)
        assert reply["stream"] != stream and reply["journal_lost"]
        assert f"holds seq {last} of stream {stream[:8]}" in reply["journal_lost"]
        assert reply["journal_lost"] in caplog.text
        assert (reply["seq"], reply["acked"]) == (1, 0)
        # this boot's events go on in the new stream, from 1: nothing is numbered twice
        hello = box.host.next(lambda m: m["type"] == "event")
        assert (hello["stream"], hello["seq"], hello["kind"]) == (reply["stream"], 1, "hello")
        assert hello["journal_lost"] == reply["journal_lost"]
        p.validate(hello)
        status = box.host.command("status")
        assert status["journal_lost"] == reply["journal_lost"]
    finally:
        box.close()
        journal.close()
    with SqliteJournal(path) as again:  # the new stream is the journal now, and it is whole
        assert again.lost is None and again.stream == reply["stream"]


def test_an_ack_or_nak_beyond_the_newest_seq_on_our_stream_starts_a_new_stream() -> None:
    box = Box()
    try:
        box.emit_presses(3)
        old = box.journal.stream
        box.host.send(p.ack(9, old))
        box.settle()
        assert box.journal.stream != old and box.journal.lost
        # this run's events go on in the new stream, numbered afresh
        events = box.journal.events_after(0)
        assert [(e["seq"], e["stream"]) for e in events] == [
            (n, box.journal.stream) for n in (1, 2, 3)
        ]
        box.host.send(p.nak(3, box.journal.stream))  # the new stream is ours: no loss
        box.settle()
        assert box.journal.last_seq == 3
    finally:
        box.close()


def test_another_programs_sqlite_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "photos.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT);")
    db.execute("INSERT INTO photos(name) VALUES ('beach')")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(UsageError, match=r"another program's SQLite database \(tables: photos\)"):
        SqliteJournal(path)
    assert path.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["photos.db"]


def test_a_read_only_folder_is_refused_and_nothing_is_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _stream, _last, _press = killed(tmp_path)
    names = sorted(x.name for x in tmp_path.iterdir())
    tmp_path.chmod(0o555)
    if os.geteuid() == 0:  # root writes anywhere: the folder is read-only to the box's user
        real = os.access
        monkeypatch.setattr(
            os,
            "access",
            lambda p, mode: not (Path(p) == tmp_path and mode & os.W_OK) and real(p, mode),
        )
    try:
        with pytest.raises(UsageError, match="is not writable by this user"):
            SqliteJournal(path)
    finally:
        tmp_path.chmod(0o755)
    assert sorted(x.name for x in tmp_path.iterdir()) == names


def test_the_hello_event_tells_a_person_what_was_lost(make_box, tmp_path: Path) -> None:
    path, _stream, last, press = killed(tmp_path)
    scribble_over_the_log(path)
    journal = SqliteJournal(path)
    box = make_box(journal=journal)
    hello = box.wait_kind("hello")
    assert hello["seq"] == 1 and f"went back from seq {last}" in journal.lost
    # (cut at the front when a long config path leaves too little room in one frame)
    assert journal.lost.endswith(hello["journal_lost"].removeprefix("..."))
    assert hello["journal_recovered"] == journal.recovered
    p.validate(hello)
    box.daemon.press()
    (fire,) = box.wait_fires(1)
    assert fire["press_id"] > press  # never an id the host may still hold
    box.daemon.stop()
    journal.close()
