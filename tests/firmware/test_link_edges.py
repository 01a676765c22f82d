"""Protocol edges of the box side (docs/protocol.md): naks below the acked mark, lines the box
must not answer, strict numbers and names, reused ids, fresh queries, the hello reply before
its replay, and a bounded reply queue for a host that writes but does not read."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
import serial

from firmware import link as link_mod
from firmware import protocol as p
from firmware.journal import MemoryJournal
from firmware.link import Link
from tests.firmware.linkhelp import Box, FakeClock, FakeDaemon, Host


@pytest.fixture
def box() -> Iterator[Box]:
    b = Box()
    try:
        yield b
    finally:
        b.close()


def seqs(frames: list[dict]) -> list[int]:
    return [f["seq"] for f in frames if f["type"] == "event"]


def wait_until(predicate: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def body_line(body: bytes) -> bytes:
    return body + b"*" + p.crc_hex(body).encode() + b"\n"


@pytest.mark.parametrize(("nak", "resent"), [(5, [5]), (2, [2, 3, 4, 5]), (0, [1, 2, 3, 4, 5])])
def test_a_nak_at_or_below_the_acked_mark_resends_from_there(box: Box, nak, resent):
    box.emit_presses(5)
    box.host.next(lambda m: m.get("seq") == 5)
    box.host.send(p.ack(5))
    wait_until(lambda: box.journal.acked == 5)
    box.settle()
    box.host.send(p.nak(nak))
    assert seqs(box.settle()) == resent
    assert box.journal.acked == 5  # the persisted mark never goes back


@pytest.mark.parametrize(
    "body",
    [
        b'{"v":1,"type":"event"}',
        b'{"v":1,"type":"event","seq":"x","kind":"fire"}',
        b'{"v":1,"type":"reply"}',
        b'{"v":1,"type":"reply","id":"a","ok":false}',
        b'{"v":2,"type":"event"}',
    ],
)
def test_an_incomplete_event_or_reply_from_the_host_is_dropped_unanswered(box: Box, body):
    box.host.write(body_line(body))
    assert [f for f in box.settle() if f["type"] == "reply" and f["id"] is None] == []
    assert box.link.counters["dropped"] == 1 and box.link.counters["bad_frame"] == 1


@pytest.mark.parametrize("version", [b"1.0", b"1e0", b"true", b'"1"'])
def test_a_version_that_only_equals_one_is_refused(box: Box, version):
    box.host.write(body_line(b'{"v":' + version + b',"type":"cmd","id":"v","op":"status"}'))
    reply = box.host.next(lambda m: m["type"] == "reply")
    assert (reply["id"], reply["error"]["code"]) == ("v", p.VERSION_ERROR)
    assert box.daemon.executed == []


def test_a_name_given_twice_in_one_object_is_refused(box: Box):
    box.host.write(body_line(b'{"v":1,"type":"cmd","id":"d","op":"status","op":"press"}'))
    reply = box.host.next(lambda m: m["type"] == "reply")
    assert reply["error"]["code"] == p.BAD_FRAME and "appears twice" in reply["error"]["message"]
    assert box.daemon.executed == []


def test_an_id_reused_for_another_command_is_refused_not_answered_with_the_first(box: Box):
    first = box.host.command("press", cmd_id="c1")
    assert first["ok"] and box.host.command("press", cmd_id="c1") == first  # a true retry
    other = box.host.command("lock", cmd_id="c1")
    assert other["ok"] is False and other["error"]["code"] == p.BAD_ARG
    assert "already used for another command" in other["error"]["message"]
    again = box.host.command("dispense", cmd_id="c1", count=2)
    assert again["error"]["code"] == p.BAD_ARG
    assert box.daemon.count("press") == 1 and box.daemon.count("lock") == 0


@pytest.mark.parametrize("op", ["status", "model.get", "selftest"])
def test_a_repeated_query_is_answered_afresh(box: Box, op):
    box.host.command(op, cmd_id="q1")
    box.daemon.state = "locked"
    reply = box.host.command(op, cmd_id="q1")
    assert reply["ok"] and box.daemon.count(op) == 2
    if op == "status":
        assert reply["state"] == "locked"  # not the stale first answer
    assert box.journal.get_reply("q1") is None


def test_a_repeated_hello_id_replays_again(box: Box):
    box.emit_presses(3)
    box.settle()
    for _ in range(2):
        reply = box.host.command("hello", cmd_id="h", stream=box.journal.stream, seq=1)
        assert reply["seq"] == 3
        assert seqs(box.settle()) == [2, 3]


def test_the_hello_reply_comes_before_every_event_of_its_replay(box: Box):
    box.emit_presses(20)
    box.host.send(p.cmd("h1", "hello", stream=box.journal.stream, seq=0))
    frames = []
    while not frames or not (frames[-1]["type"] == "reply" and frames[-1]["id"] == "h1"):
        frames.append(box.host.next())
    after = box.settle()
    assert seqs(after)[:20] == list(range(1, 21))  # the replay, whole, after the reply
    reply = frames[-1]
    assert reply["oldest"] == 1 and reply["acked"] == 0


def test_hello_names_the_oldest_event_still_held(monkeypatch):
    from firmware import journal as journal_mod

    monkeypatch.setattr(journal_mod, "KEEP_ACKED_EVENTS", 2)
    box = Box()
    try:
        box.emit_presses(6)
        box.host.send(p.ack(6))
        wait_until(lambda: box.journal.acked == 6)
        reply = box.host.command("hello", stream=box.journal.stream, seq=1)
        assert (reply["oldest"], reply["seq"]) == (5, 6)  # 2-4 are gone for good
    finally:
        box.close()


def test_a_host_that_writes_but_never_reads_cannot_grow_the_reply_queue(monkeypatch):
    """A broken TX wire: every retry of every command used to queue one more reply."""
    monkeypatch.setattr(link_mod, "MAX_OUT_QUEUE", 16)
    journal = MemoryJournal()
    daemon = FakeDaemon(journal)
    link = Link("pty", daemon, journal, clock=FakeClock(), write_timeout=0.05)
    link.start()
    try:
        mute = serial.Serial(link.port_path, timeout=0.05, write_timeout=5)
        sent = 0
        while link.counters["write_timeouts"] == 0:  # until the pty is full: the wire is cut
            mute.write(p.encode(p.cmd(f"fill{sent}", "status")))
            sent += 1
            assert sent < 20_000, "the pty never filled up"
        for round_ in range(30):
            for n in range(10):  # ten commands, each retried thirty times
                mute.write(p.encode(p.cmd(f"c{n}", "lock")))
                sent += 1
            mute.write(p.encode(p.cmd(f"s{round_}", "status")))  # and new ones all along
            sent += 1
            wait_until(lambda n=sent: link.counters["frames_in"] >= n, timeout=30)
            with link._lock:
                queued = [cmd_id for cmd_id, _ in link._out]
            assert len(queued) <= 16 and len(set(queued)) == len(queued)
        assert daemon.count("lock") == 10  # each command ran once
        assert link.counters["replies_dropped"] > 0
        mute.close()
        # A host that reads again gets every answer by retrying: stored, or asked afresh.
        host = Host(link.port_path, strict=False)
        try:
            for cmd_id in ("c0", "c9"):
                host.send(p.cmd(cmd_id, "lock"))
                reply, _ = host.until_reply(cmd_id, timeout=30)
                assert reply["ok"] is True
        finally:
            host.close()
        assert daemon.count("lock") == 10
    finally:
        link.stop()
