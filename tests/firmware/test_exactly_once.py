"""Replies the daemon gives are valid frames, and a host command's effect and its stored reply are
one journal transaction: a crash between them cannot make a retried command id run twice."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from firmware.journal import JournalError, MemoryJournal, SqliteJournal
from firmware.link import Link
from tests.firmware.linkhelp import Host
from wire import protocol as p


def run(box: Any, op: str, cmd_id: str | None = None, **args: Any) -> dict:
    """The reply to ``op`` exactly as the link frames it."""
    done = threading.Event()
    got: dict[str, dict] = {}

    def reply(result: dict) -> None:
        got["r"] = result
        done.set()

    box.daemon.submit(op, args, reply, cmd_id=cmd_id)
    assert done.wait(5), f"no reply to {op}"
    return {"v": p.VERSION, "type": "reply", "id": cmd_id or "x", **got["r"]}


def test_a_failed_selftest_is_a_valid_fault_reply_with_its_checks(make_box):
    box = make_box()
    box.plant.stick_sensor(True)
    reply = run(box, "selftest")
    p.validate(reply)  # a verdict merged as `ok` would have broken the envelope
    p.decode(p.encode(reply))
    assert reply["ok"] is False and reply["error"]["code"] == "FAULT"
    assert reply["passed"] is False
    assert {c["name"]: c["ok"] for c in reply["checks"]}["sensor_clear"] is False


def test_a_passed_selftest_names_its_verdict_passed(make_box):
    box = make_box()
    reply = run(box, "selftest")
    p.validate(reply)
    assert reply["ok"] is True and reply["passed"] is True
    assert all(c["ok"] for c in reply["checks"])


CASES: list[tuple[str, dict]] = [
    ("status", {}),
    ("press", {}),
    ("dispense", {"count": 2}),
    ("dispense", {"count": 0}),
    ("lock", {}),
    ("press", {}),
    ("unlock", {}),
    ("aim", {"seat": 0}),
    ("load", {"count": 3}),
    ("load", {}),
    ("load", {"total": 40}),
    ("clear", {}),
    ("reset", {}),
    ("model.get", {}),
    ("model.set", {"params": {"base": 0.5}}),
    ("model.set", {"params": {"nope": 1}}),
    ("model.set", {}),
    ("selftest", {}),
    ("fly", {}),
]


def test_every_reply_the_daemon_gives_is_a_valid_frame(make_box):
    box = make_box()
    for n, (op, args) in enumerate(CASES):
        reply = run(box, op, f"c{n}", **args)
        p.validate(reply)
        assert p.decode(p.encode(reply)) == reply, op
    box.plant.stick_sensor(True)  # a failing self-test, then a latched fault
    for op in ("selftest", "status", "press", "dispense", "clear", "reset"):
        reply = run(box, op, f"f-{op}", **({"count": 1} if op == "dispense" else {}))
        p.validate(reply)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_append_with_a_reply_stores_both_or_neither(kind, tmp_path: Path):
    journal: Any = MemoryJournal() if kind == "memory" else SqliteJournal(tmp_path / "j.db")
    reply = p.reply_ok("c1", press_id=1)
    event = journal.append("press", 0, {"press_id": 1, "source": "host"}, reply=("c1", reply))
    assert journal.get_reply("c1") == reply and event["seq"] == journal.last_seq == 1
    if kind == "sqlite":
        # a reply that cannot be stored rolls the event back with it
        with pytest.raises((TypeError, JournalError)):
            journal.append("press", 0, {"press_id": 2}, reply=("c2", {"bad": object()}))
        assert journal.last_seq == 1 and len(journal.events_after(0)) == 1
        assert journal.get_reply("c2") is None
        journal.close()
        again = SqliteJournal(tmp_path / "j.db")
        assert again.get_reply("c1") == reply and again.last_seq == 1
        again.close()


@pytest.mark.parametrize(("op", "args"), [("press", {}), ("dispense", {"count": 2})])
def test_a_command_retried_after_a_crash_gets_its_stored_reply_and_fires_once(
    make_box, tmp_path: Path, op: str, args: dict
):
    path = tmp_path / "journal.db"
    journal = SqliteJournal(path)
    first = make_box(journal=journal)
    # The crash window: the daemon ran the command, but the link never got to store its reply
    # (the reply callback goes nowhere, as if the process died right after the effect).
    ran = threading.Event()
    first.daemon.submit(op, args, lambda r: ran.set(), cmd_id="retry-me")
    assert ran.wait(5)
    (fire,) = first.wait_fires(1)
    assert fire["ejected"] > 0
    first.daemon.stop()
    journal.close()

    journal = SqliteJournal(path)
    second = make_box(journal=journal)
    link = Link("pty", second.daemon, journal)
    link.start()
    host = Host(link.port_path)
    try:
        reply = host.command(op, cmd_id="retry-me", **args)
        assert reply["ok"] is True and reply["press_id"] == fire["press_id"]
        host.sync()
        assert second.presses() == [] and second.fires() == []
        assert second.plant.ejected_total == 0  # not fired a second time
        presses = [e for e in journal.events_after(0, 1000) if e["kind"] == "press"]
        assert [e["press_id"] for e in presses] == [fire["press_id"]]
    finally:
        host.close()
        link.stop()
        second.daemon.stop()
        journal.close()
