"""The box killed at every write of a session, then restarted on what the crash left.

A child process (tests/firmware/crashbox.py) runs one session: a host `press` with a button
press queued behind it, a `dispense 3`, a `load count=2`. It dies at write number N: inside a
journal transaction (before its COMMIT) or right after it, or at the plant's load. For every N
the box is restarted on the same journal and plant state, the host sends its three commands
again with the same ids (as a host that got no reply, or lost it, must), and then:

- every press in the journal has exactly one fire (none lost, none doubled, ids never reused);
- each command had its effect once: one host press, one dispense, one load of two cards;
- the cards the box reports (fires and strays) are the cards the plant ejected, but for at most
  the one card whose beam crossing the crash cut off before the box could record it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware import config as config_mod
from firmware.daemon import Daemon
from firmware.journal import SqliteJournal
from firmware.link import Link
from firmware.pins import make_factory
from firmware.plant import Plant, read_state
from tests.conftest import ROOT
from tests.firmware import crashbox
from tests.firmware.conftest import SOLENOID, write_config
from tests.firmware.linkhelp import Host, stall_report

PARTS = 4  # the crash points are shared out over this many tests (both xdist workers get some)
HOPPER = 60
CONFIG = {
    **SOLENOID,
    "jam.mode": "fixed",
    "jam.count": 2,
    "plant.hopper": HOPPER,
    "pins.hopper_empty": None,  # no hopper switch: the count alone says what is in
}


pytestmark = pytest.mark.slow  # run first: see tests/conftest.py


@pytest.fixture(scope="module")
def forkserver() -> Iterator[subprocess.Popen[str]]:
    """The fork server of tests/firmware/crashbox.py (the firmware imported once)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.firmware.crashbox"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    yield server
    assert server.stdin is not None
    server.stdin.close()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def crash_session(server: subprocess.Popen[str], work: Path, n: int, mode: str) -> int:
    """Run the child session in `work`, dying at write `n`; returns its exit code."""
    config = write_config(work / "launcher.toml", CONFIG)
    args = [str(config), str(work / "journal.db"), str(work / "plant.json"), n, mode]
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps([*args, str(work / "writes")]) + "\n")
    server.stdin.flush()
    line = server.stdout.readline()  # the session has waits of its own (30 s each)
    assert line, "the crash fork server died"
    error = work / "error.txt"  # what crashbox wrote when the session failed
    assert not error.exists(), f"the session crashing at write {n} failed:\n{error.read_text()}"
    return int(line)


@pytest.fixture(scope="module")
def writes(forkserver: subprocess.Popen[str], tmp_path_factory: pytest.TempPathFactory) -> int:
    """How many writes a whole session makes (a run that does not crash)."""
    work = tmp_path_factory.mktemp("clean")
    assert crash_session(forkserver, work, 0, "after") == 0
    count = int((work / "writes").read_text())
    assert count > 20  # boot, presses, cards, fires, the load: every step writes
    return count


def recover_and_check(work: Path) -> None:
    """Restart on what the crash left, repeat the host's commands, check the invariants."""
    cfg = config_mod.load(work / "launcher.toml")
    factory = make_factory(mock=True)
    plant = Plant(cfg.plant, factory, cfg.pins, state_path=work / "plant.json", kind="solenoid")
    journal = SqliteJournal(work / "journal.db")
    daemon = Daemon(cfg, factory=factory, journal=journal, plant=plant)
    link = host = None
    try:
        daemon.start()
        link = Link("pty", daemon, journal)
        link.start()
        host = Host(link.port_path)
        replies = {}
        for cmd_id, op, args in crashbox.SCRIPT:
            try:
                replies[cmd_id] = host.command(op, cmd_id=cmd_id, **args)
            except AssertionError as exc:  # with what the box and the link hold
                report = crashbox.box_report(daemon, plant) + stall_report(link)
                raise AssertionError(f"{exc}\n{report}") from None
            assert replies[cmd_id]["ok"], replies[cmd_id]

        def events() -> list[dict]:
            return journal.events_after(0, 100_000)

        def settled() -> bool:
            kinds = [e["kind"] for e in events()]
            return kinds.count("press") == kinds.count("fire") and daemon.state == "idle"

        done = threading.Event()
        daemon.subscribe(lambda e: done.set() if settled() else None)
        if not settled() and not done.wait(30):
            raise AssertionError(
                "the retried commands never got their fire results\n"
                + crashbox.box_report(daemon, plant)
            )
        assert plant.wait_quiet(10)
        daemon.call(lambda: None)  # every card the plant moved has reached the loop
        all_events = events()
    finally:
        if host is not None:
            host.close()
        if link is not None:
            link.stop()
        daemon.stop()
        journal.close()

    presses = [e for e in all_events if e["kind"] == "press"]
    fires = [e for e in all_events if e["kind"] == "fire"]
    press_ids = [e["press_id"] for e in presses]
    assert len(set(press_ids)) == len(press_ids), f"a press id was reused: {press_ids}"
    assert sorted(f["press_id"] for f in fires) == sorted(press_ids), "one fire per press"
    by_source = {s: [e["press_id"] for e in presses if e["source"] == s] for s in ("host",)}
    assert by_source["host"] == [replies["c-press"]["press_id"]], "the host's press ran once"
    dispenses = [e["press_id"] for e in presses if e["source"] == "dispense"]
    assert dispenses == [replies["c-disp"]["press_id"]], "the dispense ran once"
    refills = [e for e in all_events if e["kind"] == "refill"]
    assert len(refills) == 1 and refills[0]["added"] in (2, 0)
    state = read_state(work / "plant.json")
    assert state is not None
    assert state["hopper"] == HOPPER + 2 - state["ejected_total"], "the load went in once"
    reported = sum(f["ejected"] for f in fires) + sum(
        e["count"] for e in all_events if e["kind"] == "stray"
    )
    assert reported <= state["ejected_total"] <= reported + 1, (reported, state)


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("part", range(PARTS))
def test_a_crash_at_any_write_loses_no_fire_and_repeats_no_command(
    forkserver: subprocess.Popen[str], writes: int, tmp_path: Path, part: int, mode: str
) -> None:
    crashed = 0
    for n in range(part + 1, writes + 1, PARTS):
        work = tmp_path / f"n{n}"
        work.mkdir()
        code = crash_session(forkserver, work, n, mode)
        assert code in (crashbox.CRASHED, 0), f"the session crashing at write {n} exited {code}"
        crashed += code == crashbox.CRASHED
        try:
            recover_and_check(work)
        except AssertionError as exc:
            raise AssertionError(f"after a crash at write {n} ({mode}): {exc}") from exc
    assert crashed >= (writes // PARTS) - 2  # (a session may make a write or two fewer)
