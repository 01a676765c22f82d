"""`launcher run` refuses paths it must not use (one line, exit 2) and never renames or
overwrites a user's file; a damaged journal is moved aside and reported in the `hello` event."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.errors import UsageError
from firmware.journal import SQLITE_MAGIC, SqliteJournal
from firmware.plant import read_state
from tests.conftest import ROOT
from tests.firmware.conftest import write_config
from wire import protocol as p

NOTES = "shopping: milk, eggs\nthis file is mine\n"


def launcher_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    config = write_config(tmp_path / "launcher.toml")
    return subprocess.run(
        [sys.executable, "-m", "firmware.cli", "run", "--mock", "--config", str(config), *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    """The one error line of a run that exited 2 at once."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines  # the error alone: no INFO lines, no traceback
    for word in words:
        assert word in lines[0]
    return lines[0]


def test_plant_state_that_is_someone_elses_file_is_refused_not_overwritten(tmp_path: Path):
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES)
    refused(launcher_run(tmp_path, "--plant-state", str(notes)), "notes.txt", "plant-state JSON")
    assert notes.read_text() == NOTES


@pytest.mark.parametrize("name", ["dir", "notes.txt"])
def test_journal_that_is_a_directory_or_not_sqlite_is_refused_not_moved(tmp_path: Path, name):
    work = tmp_path / "work"
    work.mkdir()
    target = work / name
    if name == "dir":
        target.mkdir()
        (target / "keep").write_text(NOTES)
        want = "is a directory"
    else:
        target.write_text(NOTES)
        want = "is not a launcher journal (not an SQLite file)"
    before = sorted(x.name for x in work.iterdir())
    refused(launcher_run(tmp_path, "--journal", str(target)), str(target), want)
    assert sorted(x.name for x in work.iterdir()) == before  # nothing renamed
    assert (target / "keep" if name == "dir" else target).read_text() == NOTES


def test_another_programs_sqlite_database_is_refused_in_one_line_and_untouched(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    target = work / "photos.db"
    db = sqlite3.connect(target)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    db.commit()
    db.close()
    before = target.read_bytes()
    refused(launcher_run(tmp_path, "--journal", str(target)), "another program's SQLite database")
    assert target.read_bytes() == before
    assert sorted(x.name for x in work.iterdir()) == ["photos.db"]


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_port_that_can_never_be_a_serial_device_is_refused_at_once(tmp_path: Path, kind):
    port = tmp_path / "port"
    if kind == "dir":
        port.mkdir()
    else:
        port.write_text(NOTES)
    refused(launcher_run(tmp_path, "--port", str(port)), str(port), "serial device")


def test_an_unknown_port_url_prints_the_error_alone(tmp_path: Path):
    refused(launcher_run(tmp_path, "--port", "garbage://x"), "garbage", "pty")


def test_plant_state_reader_accepts_absent_empty_and_its_own_files(tmp_path: Path):
    path = tmp_path / "plant.json"
    assert read_state(path) is None
    path.write_text("")
    assert read_state(path) is None
    path.write_text('{"hopper": 7, "ejected_total": 3}')
    assert read_state(path) == {"hopper": 7, "ejected_total": 3, "loads": []}


def test_a_damaged_journal_is_reported_in_the_hello_event(make_box, tmp_path: Path):
    path = tmp_path / "journal.db"
    path.write_bytes(SQLITE_MAGIC + b"torn" * 500)
    journal = SqliteJournal(path)
    box = make_box(journal=journal)
    hello = box.wait_kind("hello")
    assert hello["journal_recovered"] == journal.recovered
    assert Path(hello["journal_recovered"]).name.startswith("journal.db.corrupt-")
    p.validate(hello)
    box.daemon.stop()
    journal.close()


@contextlib.contextmanager
def small_filesystem(where: Path, size: str = "256k") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` (root only; skips the test where mounts are not
    allowed): a disk that can really fill up, or be made read-only."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_journal_in_a_folder_that_does_not_exist_is_refused(tmp_path: Path):
    journal = tmp_path / "nowhere" / "journal.db"
    refused(launcher_run(tmp_path, "--journal", str(journal)), "does not exist", "create it")
    assert not journal.parent.exists()


def test_a_journal_in_a_read_only_folder_is_refused_and_not_moved(tmp_path: Path):
    folder = tmp_path / "box"
    if os.geteuid() == 0:
        with small_filesystem(folder) as fs:
            SqliteJournal(fs / "journal.db").close()
            subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
            names = sorted(x.name for x in fs.iterdir())
            refused(launcher_run(tmp_path, "--journal", str(fs / "journal.db")), "not writable")
            assert sorted(x.name for x in fs.iterdir()) == names
        return
    folder.mkdir()
    SqliteJournal(folder / "journal.db").close()
    names = sorted(x.name for x in folder.iterdir())
    folder.chmod(0o555)
    try:
        refused(launcher_run(tmp_path, "--journal", str(folder / "journal.db")), "not writable")
    finally:
        folder.chmod(0o755)
    assert sorted(x.name for x in folder.iterdir()) == names


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_side_files_of_another_user_are_refused_in_one_line(tmp_path: Path, monkeypatch, suffix):
    path = tmp_path / "journal.db"
    SqliteJournal(path).close()
    side = path.with_name(path.name + suffix)
    side.write_bytes(b"")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != side and real(p, mode))
    with pytest.raises(UsageError, match=f"journal.db{suffix} is not readable and writable"):
        SqliteJournal(path)
    assert side.exists() and path.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_side_files_of_another_user_make_launcher_run_say_one_line(tmp_path: Path):
    path = tmp_path / "journal.db"
    SqliteJournal(path).close()
    side = path.with_name(path.name + "-wal")
    side.write_bytes(b"")
    side.chmod(0)
    refused(launcher_run(tmp_path, "--journal", str(path)), "-wal is not readable and writable")


def test_a_full_disk_at_start_is_one_line_and_leaves_nothing(tmp_path: Path):
    with small_filesystem(tmp_path / "disk") as fs:
        (fs / "fill").write_bytes(b"\0" * 256 * 1024)  # every byte of it
        proc = launcher_run(tmp_path, "--journal", str(fs / "journal.db"))
        assert proc.returncode == 1, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert "the disk is full" in line and "free some space" in line
        assert sorted(x.name for x in fs.iterdir()) == ["fill"]


def test_a_disk_that_fills_while_running_stops_the_box_with_outputs_off(make_box, tmp_path):
    journal = SqliteJournal(tmp_path / "journal.db")
    box = make_box({"jam.count": 1}, journal=journal)
    db = journal._conn()
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count={pages}")  # no page more: the next growth fails FULL
    try:
        for _ in range(400):
            if box.daemon.failure is not None:
                break
            box.daemon.press()
            box.daemon.call(lambda: None) if box.daemon.loop.alive else None
        assert box.daemon.failure is not None and "the disk is full" in str(box.daemon.failure)
        box.daemon.loop.stop()
        assert not box.daemon.loop.alive
        assert box.power_outputs_off()
    finally:
        box.daemon.stop()
        journal.close()
