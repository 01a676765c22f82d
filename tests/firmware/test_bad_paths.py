"""`launcher run` refuses paths it must not use (one line, exit 2) and never renames or
overwrites a user's file; a damaged journal is moved aside and reported in the `hello` event."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from firmware import protocol as p
from firmware.journal import SQLITE_MAGIC, SqliteJournal
from firmware.plant import read_state
from tests.conftest import ROOT
from tests.firmware.conftest import write_config

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
