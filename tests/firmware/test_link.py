"""The box side of the serial link over a real pty and over socket:// (firmware/link.py).

The daemon is a fake (tests/firmware/linkhelp.py) so these tests pin the link alone; the clock
is injected so resend timers only run out when a test moves the clock."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from common.errors import UsageError
from firmware import link as link_mod
from firmware.journal import MemoryJournal, SqliteJournal
from firmware.link import Link
from tests.firmware.linkhelp import Box, FakeClock, FakeDaemon, Host
from tests.wait import wait_until
from wire import protocol as p


@pytest.fixture
def box() -> Iterator[Box]:
    b = Box()
    try:
        yield b
    finally:
        b.close()


def seqs(frames: list[dict]) -> list[int]:
    return [f["seq"] for f in frames if f["type"] == "event"]


def test_hello_reports_stream_boot_position_and_state(box: Box):
    reply = box.host.command("hello", stream=None, seq=0)
    assert reply["ok"] is True
    assert reply["stream"] == box.journal.stream
    assert reply["boot"] == box.journal.boot
    assert (reply["seq"], reply["acked"], reply["state"]) == (0, 0, "idle")
    assert reply["journal_recovered"] is None


def test_press_reply_then_event_and_the_ack_reaches_the_journal(box: Box):
    reply = box.host.command("press")
    assert reply == {"v": 1, "type": "reply", "id": reply["id"], "ok": True, "press_id": 1}
    event = box.host.next(lambda m: m["type"] == "event")
    assert (event["kind"], event["press_id"], event["seq"]) == ("press", 1, 1)
    box.host.send(p.ack(1))
    wait_until(lambda: box.journal.acked == 1)


def test_a_repeated_command_id_gets_the_stored_reply_and_runs_once(box: Box):
    first = box.host.command("press", cmd_id="same")
    second = box.host.command("press", cmd_id="same")
    assert first == second
    assert box.daemon.count("press") == 1
    assert box.link.counters["dup_cmds"] == 1


def test_a_duplicate_while_the_command_runs_is_not_executed_twice(box: Box):
    box.daemon.hold = True
    box.host.send(p.cmd("slow", "lock"))
    wait_until(lambda: box.daemon.count("lock") == 1)
    box.host.send(p.cmd("slow", "lock"))
    wait_until(lambda: box.link.counters["dup_cmds"] == 1)
    box.daemon.release()
    reply, _ = box.host.until_reply("slow")
    assert reply["ok"] is True
    # exactly one reply: the next reply on the wire is the sync's, not a second "slow"
    assert all(f.get("id") != "slow" for f in box.settle())
    assert box.daemon.count("lock") == 1


def test_unacked_events_are_resent_with_a_doubling_timeout(box: Box):
    box.emit_presses(3)
    box.host.next(lambda m: m.get("seq") == 3)
    assert seqs(box.settle()) == []
    box.advance(0.25)
    assert seqs(box.settle()) == [1, 2, 3]
    assert box.link.counters["resent"] == 3
    box.advance(0.25)  # timer is now 0.5 s: nothing yet
    assert seqs(box.settle()) == []
    box.advance(0.25)
    assert seqs(box.settle()) == [1, 2, 3]
    box.host.send(p.ack(3))
    wait_until(lambda: box.journal.acked == 3)
    box.advance(10)
    assert seqs(box.settle()) == []


def test_resend_timeout_stops_doubling_at_five_seconds(box: Box):
    box.emit_presses(1)
    box.host.next(lambda m: m.get("seq") == 1)
    for timeout in (0.25, 0.5, 1, 2, 4, 5, 5):
        box.advance(timeout - 0.01)
        assert seqs(box.settle()) == [], f"resent before {timeout} s"
        box.advance(0.01)
        assert seqs(box.settle()) == [1], f"not resent after {timeout} s"


def test_an_ack_resets_the_timeout_to_a_quarter_second(box: Box):
    box.emit_presses(1)
    box.host.next(lambda m: m.get("seq") == 1)
    box.advance(0.25)
    assert seqs(box.settle()) == [1]
    box.advance(0.5)
    assert seqs(box.settle()) == [1]
    box.host.send(p.ack(1))
    box.host.sync()  # the ack is handled before the status that follows it
    box.emit_presses(1)
    box.host.next(lambda m: m.get("seq") == 2)
    box.advance(0.25)
    assert seqs(box.settle()) == [2]


def test_at_most_32_events_are_in_flight(box: Box):
    box.emit_presses(40)
    box.host.next(lambda m: m.get("seq") == 32)
    assert seqs(box.settle()) == []
    box.host.send(p.ack(32))
    late = [box.host.next(lambda m: m["type"] == "event")["seq"] for _ in range(8)]
    assert late == list(range(33, 41))


def test_a_nak_resends_from_the_gap_and_acks_what_is_before_it(box: Box):
    box.emit_presses(5)
    box.host.next(lambda m: m.get("seq") == 5)
    box.host.send(p.nak(3))
    assert seqs(box.settle()) == [3, 4, 5]
    assert box.journal.acked == 2
    # the host naks again for every later event it sees: one rewind per gap is enough
    box.host.send(p.nak(3))
    assert seqs(box.settle()) == []


def test_hello_on_our_stream_acks_the_host_position_and_replays_after_it(box: Box):
    box.emit_presses(5)
    box.host.next(lambda m: m.get("seq") == 5)
    reply = box.host.command("hello", stream=box.journal.stream, seq=3)
    assert (reply["seq"], reply["acked"]) == (5, 3)
    assert seqs(box.settle()) == [4, 5]
    assert box.journal.acked == 3


def test_hello_on_another_stream_replays_from_the_last_acked(box: Box):
    box.emit_presses(5)
    box.host.next(lambda m: m.get("seq") == 5)
    box.host.send(p.ack(2))
    wait_until(lambda: box.journal.acked == 2)
    box.host.command("hello", stream="some-other-box", seq=100)
    assert seqs(box.settle()) == [3, 4, 5]
    assert box.journal.acked == 2


def test_hello_from_a_host_behind_our_acked_mark_replays_what_it_lacks(box: Box):
    box.emit_presses(5)
    box.host.send(p.ack(5))
    wait_until(lambda: box.journal.acked == 5)
    box.host.command("hello", stream=box.journal.stream, seq=1)
    assert seqs(box.settle()) == [2, 3, 4, 5]
    assert box.journal.acked == 5


def test_acks_for_another_stream_are_ignored(box: Box):
    box.emit_presses(2)
    box.host.next(lambda m: m.get("seq") == 2)
    box.host.send(p.ack(2, stream="not-ours"))
    box.settle()
    assert box.journal.acked == 0
    assert box.link.counters["dropped"] == 1


@pytest.mark.parametrize(
    ("line", "code", "counter"),
    [
        (b'{"v":1,"type":"ack","seq":1}*00000000\n', p.BAD_CRC, "bad_crc"),
        (b"#" * 700 + b"\n", p.LINE_TOO_LONG, "too_long"),
        (b"hello box\n", p.BAD_FRAME, "bad_frame"),
        (
            p.encode({"v": 2, "type": "cmd", "id": "v2", "op": "status"}),
            p.VERSION_ERROR,
            "bad_frame",
        ),
        (p.encode({"v": 1, "type": "cmd", "id": "u", "op": "fly"}), p.UNKNOWN_OP, "bad_frame"),
    ],
)
def test_bad_frames_are_answered_with_an_error_and_counted(box: Box, line, code, counter):
    box.host.write(line)
    reply = box.host.next(lambda m: m["type"] == "reply" and not m["ok"])
    assert reply["error"]["code"] == code
    expected_id = {"VERSION": "v2", "UNKNOWN_OP": "u"}.get(code)
    assert reply["id"] == expected_id
    counters = box.link.counters
    assert counters[counter] == 1
    assert counters["dropped"] == 1
    assert box.daemon.executed == []


def test_events_and_replies_sent_to_the_box_are_dropped_without_an_answer(box: Box):
    box.host.send(p.reply_ok("x"))
    box.host.send(
        {"v": 1, "type": "event", "seq": 1, "boot": "b", "stream": "s", "t_ms": 0, "kind": "jam"}
    )
    assert [f for f in box.settle() if f["type"] == "reply"] == []
    assert box.link.counters["dropped"] == 2


def test_model_set_naming_a_safety_limit_never_reaches_the_daemon(box: Box):
    reply = box.host.command("model.set", params={"ejector_max_on_ms": 60_000})
    assert reply["error"]["code"] == p.BAD_ARG
    assert box.daemon.executed == []


def test_a_handler_that_raises_answers_internal_and_the_link_keeps_running(box: Box, caplog):
    box.daemon.raise_on.add("selftest")
    with caplog.at_level(logging.ERROR):
        reply = box.host.command("selftest")
    assert reply["error"]["code"] == p.INTERNAL
    assert "boom in selftest" in caplog.text
    assert box.host.command("status")["ok"] is True
    assert box.link.counters["internal"] == 1


def test_a_daemon_reply_that_is_not_a_reply_becomes_internal(box: Box):
    box.daemon.garbage.add("clear")
    reply = box.host.command("clear")
    assert reply["error"]["code"] == p.INTERNAL
    assert box.host.command("status")["ok"] is True


def test_status_reply_carries_the_link_counters(box: Box):
    box.host.write(b"noise\n")
    reply = box.host.command("status")
    assert reply["state"] == "idle"
    assert reply["link"]["dropped"] == 1
    assert reply["link"]["frames_in"] >= 0


def test_unknown_url_scheme_is_a_usage_error():
    journal = MemoryJournal()
    link = Link("nonsense://x", FakeDaemon(journal), journal)
    with pytest.raises(UsageError, match="nonsense"):
        link.start()
    link.stop()


def test_stop_is_idempotent(box: Box):
    box.link.stop()
    box.link.stop()


def test_a_restart_on_the_same_sqlite_journal_replays_unacked_events(tmp_path: Path):
    path = tmp_path / "journal.db"
    first = Box(SqliteJournal(path))
    try:
        first.emit_presses(4)
        first.host.next(lambda m: m.get("seq") == 4)
        first.host.send(p.ack(2))
        wait_until(lambda: first.journal.acked == 2)
        stream = first.journal.stream
        stored = first.host.command("press", cmd_id="before-restart")
    finally:
        first.close()
        first.journal.close()
    second = Box(SqliteJournal(path))
    try:
        assert second.journal.stream == stream
        second.host.send(p.cmd("again", "hello", stream=stream, seq=2))
        reply, before = second.host.until_reply("again")
        assert (reply["seq"], reply["acked"]) == (5, 2)
        # the unacked events come on their own at start and again after the hello: the host
        # gets 3, 4, 5 (some perhaps twice) and nothing it acked
        got = seqs(before + second.settle())
        assert set(got) == {3, 4, 5}
        assert got[-3:] == [3, 4, 5] or got[:3] == [3, 4, 5]
        # the command id answered before the restart is not run again
        assert second.host.command("press", cmd_id="before-restart") == stored
        assert second.daemon.count("press") == 0
    finally:
        second.close()
        second.journal.close()


# -- socket:// : a port that vanishes and comes back --------------------------------------------


class Server:
    """A TCP listener standing in for a serial adapter that can be unplugged."""

    def __init__(self) -> None:
        self.listener = self._listen(0)
        self.port = self.listener.getsockname()[1]
        self.conn: socket.socket | None = None
        self.decoder = p.FrameDecoder()
        self.pending: list[dict] = []

    @staticmethod
    def _listen(port: int) -> socket.socket:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(1)
        s.settimeout(10)
        return s

    def accept(self) -> None:
        self.conn, _ = self.listener.accept()
        self.conn.settimeout(10)
        self.decoder = p.FrameDecoder()
        self.pending = []

    def unplug(self) -> None:
        assert self.conn is not None
        self.conn.close()
        self.listener.close()

    def plug(self) -> None:
        self.listener = self._listen(self.port)
        self.accept()

    def command(self, op: str, cmd_id: str, timeout: float = 30, **args) -> tuple[dict, list[dict]]:
        """Send a command and return (its reply, the frames that came before the reply).

        Like any host (docs/protocol.md) it resends the same line while no reply comes: the
        link's port open flushes input that arrived before the open finished, so a command sent
        the instant the connection is accepted can be lost. Frames that arrive after the reply
        in the same read are kept for the next call."""
        assert self.conn is not None
        line = p.encode(p.cmd(cmd_id, op, **args))
        self.conn.sendall(line)
        seen: list[dict] = []
        deadline = time.monotonic() + timeout
        retry = 0.25
        while True:
            while self.pending:
                message = self.pending.pop(0)
                if message.get("type") == "reply" and message.get("id") == cmd_id:
                    return message, seen
                seen.append(message)
            assert time.monotonic() < deadline, f"no reply to {cmd_id}; saw {seen[-5:]}"
            self.conn.settimeout(retry)
            try:
                data = self.conn.recv(4096)
            except TimeoutError:
                self.conn.sendall(line)  # the same id: the link answers it once
                retry = min(retry * 2, 2.0)
                continue
            assert data, "link closed the connection"
            for item in self.decoder.feed(data):
                assert isinstance(item, p.Frame)
                self.pending.append(item.message)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.listener.close()


def test_a_vanished_port_is_reopened_with_back_off_and_logged_once(caplog):
    server = Server()
    journal = MemoryJournal()
    daemon = FakeDaemon(journal)
    link = Link(f"socket://127.0.0.1:{server.port}", daemon, journal, clock=FakeClock())
    caplog.set_level(logging.INFO, logger="firmware.link")
    try:
        link.start()
        server.accept()
        reply, _ = server.command("hello", "h1")
        assert reply["stream"] == journal.stream
        daemon.emit("press", {"press_id": 1})
        server.unplug()
        wait_until(lambda: link.counters["open_failures"] >= 3)
        daemon.emit("press", {"press_id": 2})  # happens while unplugged
        server.plug()
        reply, seen = server.command("hello", "h2", stream=journal.stream, seq=0)
        assert reply["ok"] is True
        assert link.counters["reopens"] >= 1
        # everything unacked arrives on the new connection
        events = [m for m in seen if m["type"] == "event"]
        for n in range(100):  # each status round trip lets the writer send what is due
            if {e["seq"] for e in events} == {1, 2}:
                break
            _, more = server.command("status", f"s{n}")
            events += [m for m in more if m["type"] == "event"]
        assert {e["seq"] for e in events} == {1, 2}
        unavailable = [r for r in caplog.records if "unavailable" in r.getMessage()]
        assert len(unavailable) == 1, "one log line per outage, not one per try"
        assert any("open again" in r.getMessage() for r in caplog.records)
    finally:
        link.stop()
        server.close()


def test_a_host_that_stops_reading_costs_write_timeouts_not_the_link():
    journal = MemoryJournal()
    daemon = FakeDaemon(journal)
    link = Link("pty", daemon, journal, clock=FakeClock(), write_timeout=0.05)
    link.start()
    try:
        # a host that writes commands but never reads: the pty fills up and writes time out
        mute = serial.Serial(link.port_path, timeout=0.05)
        n = 0
        while link.counters["write_timeouts"] == 0:
            mute.write(p.encode(p.cmd(f"mute{n}", "status")))
            n += 1
            assert n < 20_000, "the pty never filled up"
        mute.close()
        # the link is still there for the next host, and answers it (after the stale replies,
        # some of them cut short by the timeouts: the host side skips those)
        host = Host(link.port_path, strict=False)
        try:
            host.send(p.cmd("after", "status"))
            reply, _ = host.until_reply("after", timeout=30)
            assert reply["ok"] is True
        finally:
            host.close()
        assert link.counters["internal"] == 0
    finally:
        link.stop()


def test_a_host_asking_for_events_the_journal_pruned_gets_what_is_left(monkeypatch):
    from firmware import journal as journal_mod

    monkeypatch.setattr(journal_mod, "KEEP_ACKED_EVENTS", 2)
    box = Box()
    try:
        box.emit_presses(6)
        box.host.next(lambda m: m.get("seq") == 6)
        box.host.send(p.ack(6))
        wait_until(lambda: box.journal.acked == 6)
        box.host.command("hello", stream=box.journal.stream, seq=0)
        assert seqs(box.settle()) == [5, 6]  # 1-4 are gone; the link does not stall on them
        box.emit_presses(1)
        assert box.host.next(lambda m: m["type"] == "event")["seq"] == 7
    finally:
        box.close()


def test_a_recovered_journal_is_reported_in_hello_and_status(tmp_path: Path):
    path = tmp_path / "journal.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 500)  # a damaged SQLite file
    box = Box(SqliteJournal(path))
    try:
        moved = box.journal.recovered
        assert moved and Path(moved).exists()
        assert box.host.command("hello")["journal_recovered"] == moved
        assert box.host.command("status")["journal_recovered"] == moved
    finally:
        box.close()
        box.journal.close()


def test_a_port_absent_at_start_is_opened_when_it_appears():
    server = Server()
    server.listener.close()  # nothing listens yet: like a USB adapter not plugged in
    journal = MemoryJournal()
    link = Link(f"socket://127.0.0.1:{server.port}", FakeDaemon(journal), journal)
    try:
        link.start()  # does not fail: the port is retried in the background
        wait_until(lambda: link.counters["open_failures"] >= 2)
        server.plug()
        reply, _ = server.command("hello", "h1")
        assert reply["stream"] == journal.stream
    finally:
        link.stop()
        server.close()


# -- protocol edges: naks below the acked mark, lines the box must not answer, strict numbers
# and names, reused ids, fresh queries, the hello reply before its replay, a host that never reads


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


def test_half_a_surrogate_pair_in_a_command_is_a_bad_frame_not_internal(tmp_path: Path, caplog):
    """A command whose id was `"\\ud800"` (valid JSON, no text) reached the SQLite journal's
    lookup, which cannot store it: INTERNAL and a traceback in the box's log."""
    box = Box(SqliteJournal(tmp_path / "journal.db"))
    try:
        with caplog.at_level(logging.ERROR):
            for body in (
                rb'{"v":1,"type":"cmd","id":"\ud800","op":"press"}',
                rb'{"v":1,"type":"cmd","id":"s","op":"settings.set","settings":{"\udfff":1}}',
            ):
                box.host.write(body_line(body))
                reply = box.host.next(lambda m: m["type"] == "reply")
                assert (reply["id"], reply["error"]["code"]) == (None, p.BAD_FRAME), reply
            assert box.host.command("status")["ok"] is True
        assert "Traceback" not in caplog.text and box.link.counters["internal"] == 0
        assert box.daemon.executed == [("status", {})]
    finally:
        box.close()
        box.journal.close()


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


class _FlakyPort:
    """A port whose first ``fail`` writes time out (the other end does not take the bytes)."""

    def __init__(self, fail: int) -> None:
        self.fail = fail
        self.lines: list[dict] = []

    def write(self, data: bytes) -> None:
        if self.fail > 0:
            self.fail -= 1
            raise link_mod._WriteTimeout("injected")
        decoder = p.FrameDecoder()
        self.lines += [f.message for f in decoder.feed(data) if isinstance(f, p.Frame)]

    def read(self) -> bytes:
        return b""

    def close(self) -> None:
        pass


def _stepped_link(fail: int) -> tuple[MemoryJournal, FakeDaemon, Link, _FlakyPort]:
    """A link that is not started (the test steps its writer) on a `_FlakyPort`, with three
    press events journaled."""
    journal = MemoryJournal()
    daemon = FakeDaemon(journal)
    for press_id in (1, 2, 3):
        daemon.emit("press", {"press_id": press_id, "source": "button"})
    link = Link("pty", daemon, journal, clock=FakeClock())
    port = _FlakyPort(fail=fail)
    link._port = port
    return journal, daemon, link, port


def test_a_hello_reply_the_port_did_not_take_still_goes_before_its_replay():
    # The writer is stepped by hand; the fault is the first write (the hello reply) timing out.
    journal, _, link, port = _stepped_link(fail=1)
    link._hello("h", {"stream": journal.stream, "seq": 1})
    for _ in range(3):
        link._write_step()
    kinds = [(m["type"], m.get("id") or m.get("seq")) for m in port.lines]
    assert kinds == [("reply", "h"), ("event", 2), ("event", 3)]


def test_a_hello_landing_while_the_writer_is_mid_step_still_has_its_reply_first():
    # The reader thread's hello lands after the writer flushed this step's (empty) replies and
    # before it sends events: injected at exactly that point, with the writer stepped by hand.
    journal, daemon, link, port = _stepped_link(fail=0)
    link._hello("h1", {"stream": journal.stream, "seq": 1})
    link._write_step()
    assert [m.get("id") or m.get("seq") for m in port.lines] == ["h1", 2, 3]
    port.lines.clear()
    daemon.emit("press", {"press_id": 4, "source": "button"})  # due: the step will run
    flush = link._flush_replies

    def flush_then_hello(p: object) -> bool:
        sent = flush(p)
        link._hello("h2", {"stream": journal.stream, "seq": 1})  # the host asks again
        return sent

    link._flush_replies = flush_then_hello  # type: ignore[method-assign]
    link._write_step()
    link._flush_replies = flush  # type: ignore[method-assign]
    for _ in range(2):
        link._write_step()
    assert [m.get("id") or m.get("seq") for m in port.lines] == ["h2", 2, 3, 4]
