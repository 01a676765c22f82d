"""BoxClient, the host side of the link, against a fake box on a real pty (tests/engine/fakebox.py)
and over pyserial's loop:// URL."""

from __future__ import annotations

import logging
import os
import select
import sqlite3
from pathlib import Path

import pytest

from tests.engine.fakebox import FakeBox
from tests.wait import wait_until
from wire import client as client_module
from wire import protocol
from wire.client import BoxClient, BoxError


@pytest.fixture
def box(tmp_path: Path):
    with FakeBox(tmp_path / "ttyBOX", fires=[0, 3, 1]) as fake:
        yield fake


# How long a test waits for an answer it expects: long, because a busy machine can be slow and a
# healthy answer comes in milliseconds anyway. Tests of the timeout itself give their own.
PATIENT = 20.0


def collect(client: BoxClient, n: int, timeout: float = PATIENT) -> list[dict]:
    """The next `n` events (fewer only if they stop coming)."""
    got = []
    for event in client.events(timeout=timeout):
        got.append(event)
        if len(got) == n:
            break
    return got


def test_hello_carries_position_and_status_round_trips(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        assert client.status() == {"state": "idle", "hopper": 50}
        assert client.connected
    assert box.hellos[0]["stream"] is None and box.hellos[0]["seq"] == 0


def test_press_fire_result_arrives_once_and_in_order(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        ids = [client.press() for _ in range(3)]
        fire = client.wait_fire(ids[1], timeout=PATIENT)
        assert (fire["press_id"], fire["ejected"], fire["reason"]) == (ids[1], 3, "fired")
        events = collect(client, 5)
        # the fire taken by wait_fire is not handed out a second time
        assert [e["seq"] for e in events] == [1, 2, 3, 5, 6]
        assert [e["kind"] for e in events] == ["press", "fire", "press", "press", "fire"]
        assert list(client.events(timeout=0.2)) == []
        assert box.wait(lambda: box.acked == 6)
        assert client.stats.delivered == 6


def test_lost_reply_is_resent_with_same_id_and_runs_once(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        box.drop_replies = 2
        press_id = client.press()
        assert press_id == 1
        assert client.stats.retries >= 2
        press_cmds = [m for m in box.received if m.get("op") == "press"]
        assert len({m["id"] for m in press_cmds}) == 1 and len(press_cmds) >= 3
        assert box.executed[press_cmds[0]["id"]] == 1
        assert client.wait_fire(press_id, timeout=PATIENT)["press_id"] == 1


def test_refused_command_raises_box_error_with_code(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        with pytest.raises(BoxError) as info:
            client.clear()
        assert info.value.code == protocol.JAMMED
        assert "nothing to clear" in str(info.value)


def test_duplicate_events_are_dropped_and_reacked(box: FakeBox) -> None:
    box.duplicate_events = True
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        for _ in range(4):
            client.press()
        events = collect(client, 8)
        assert [e["seq"] for e in events] == list(range(1, 9))
        assert list(client.events(timeout=0.3)) == []
        assert client.stats.duplicates >= 8
        assert box.wait(lambda: box.acked == 8)


def test_gap_is_nakked_and_filled_in_order(box: FakeBox) -> None:
    box.skip_first_send = {2, 5}
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        for _ in range(3):
            client.press()
        events = collect(client, 6)
        assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6]
        assert client.stats.naks >= 1
        naks = [m["seq"] for m in box.received if m["type"] == "nak"]
        assert naks and set(naks) <= {2, 5}


def test_garbled_frame_is_counted_and_recovered(box: FakeBox) -> None:
    box.garble_first_send = {1, 3}
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        client.press()
        client.press()
        assert [e["seq"] for e in collect(client, 4)] == [1, 2, 3, 4]
        assert client.stats.bad_frames == 2


def test_unplugged_port_is_reopened_and_nothing_is_lost(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        first = client.press()
        box.unplug()
        # events made while the host is away are replayed after the new hello
        box.emit("state", **{"from": "idle", "to": "locked"})
        second = client.press()
        assert second == first + 1
        kinds = [e["kind"] for e in collect(client, 5)]
        assert kinds == ["press", "fire", "state", "press", "fire"]
        assert client.stats.reconnects >= 1
        assert len(box.hellos) >= 2


def test_host_restart_resumes_after_last_acked_event(box: FakeBox, tmp_path: Path) -> None:
    state = tmp_path / "host.sqlite"
    with BoxClient(str(box.link), state_path=state, timeout=PATIENT) as client:
        client.press()
        assert [e["seq"] for e in collect(client, 2)] == [1, 2]
        assert box.wait(lambda: box.acked == 2)
    box.emit("state", **{"from": "idle", "to": "locked"})  # happens while no host listens
    with BoxClient(str(box.link), state_path=state, timeout=PATIENT) as client:
        assert [e["seq"] for e in collect(client, 1)] == [3]
        assert list(client.events(timeout=0.3)) == []
    assert box.hellos[-1]["stream"] == "s-test" and box.hellos[-1]["seq"] == 2


def test_position_is_on_disk_before_the_ack(box: FakeBox, tmp_path: Path) -> None:
    state = tmp_path / "host.sqlite"
    on_disk_at_ack: list[tuple[int, int]] = []

    def check(seq: int) -> None:
        db = sqlite3.connect(state)
        try:
            on_disk_at_ack.append((seq, db.execute("SELECT seq FROM position").fetchone()[0]))
        finally:
            db.close()

    box.on_ack = check
    with BoxClient(str(box.link), state_path=state, timeout=PATIENT) as client:
        for _ in range(3):
            client.press()
        collect(client, 6)
        assert box.wait(lambda: box.acked == 6)
    assert on_disk_at_ack and all(disk >= acked for acked, disk in on_disk_at_ack)


def test_new_box_stream_is_read_from_the_start(box: FakeBox, tmp_path: Path) -> None:
    state = tmp_path / "host.sqlite"
    with BoxClient(str(box.link), state_path=state, timeout=PATIENT) as client:
        client.press()
        collect(client, 2)
    # the box's journal was replaced: a new stream whose seqs start again at 1
    box.stream, box.events, box.acked = "s-new", [], 0
    box._sent_once.clear()
    box.emit("refill", hopper=20, added=20)
    with BoxClient(str(box.link), state_path=state, timeout=PATIENT) as client:
        events = collect(client, 1)
        assert [(e["stream"], e["seq"]) for e in events] == [("s-new", 1)]


def test_second_client_cannot_open_the_port(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT):
        other = BoxClient(str(box.link), timeout=1)
        with pytest.raises(BoxError) as info:
            other.connect()
        assert info.value.code == "UNREACHABLE"


def test_missing_port_is_unreachable(tmp_path: Path) -> None:
    with pytest.raises(BoxError) as info:
        BoxClient(str(tmp_path / "nope"), timeout=1).connect()
    assert info.value.code == "UNREACHABLE"
    assert "nope" in info.value.message


def test_silent_box_times_out(box: FakeBox) -> None:
    box.mute = True
    with pytest.raises(BoxError) as info:
        BoxClient(str(box.link), timeout=0.5).connect()
    assert info.value.code == "TIMEOUT"


def test_command_times_out_when_replies_stop(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:  # the hello is answered
        box.mute = True
        client.timeout = 2.0  # resends at 0.25, 0.75 and 1.75 s: one is enough however late
        with pytest.raises(BoxError) as info:
            client.status()
        assert info.value.code == "TIMEOUT"
        assert client.stats.retries >= 1


def test_loop_url_echo_is_not_mistaken_for_a_box() -> None:
    # loop:// hands our own frames back: a cmd is not a reply, so nothing answers hello
    client = BoxClient("loop://", timeout=0.4)
    with pytest.raises(BoxError) as info:
        client.connect()
    assert info.value.code == "TIMEOUT"
    assert client.stats.bad_frames == 0


def test_closed_client_refuses_to_reconnect(box: FakeBox) -> None:
    client = BoxClient(str(box.link), timeout=PATIENT)
    client.connect()
    client.close()
    client.close()  # idempotent
    with pytest.raises(BoxError) as info:
        client.status()
    assert info.value.code == "CLOSED"


def test_fresh_host_starts_after_what_another_host_acked(box: FakeBox) -> None:
    for n in range(4):
        box.emit("refill", hopper=10 + n, added=1)
    box.acked = 2  # an earlier host holds events 1 and 2
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        assert [e["seq"] for e in collect(client, 2)] == [3, 4]
        assert list(client.events(timeout=0.3)) == []
        assert client.stats.gaps == 0


def test_events_before_the_hello_reply_are_left_to_the_replay(box: FakeBox) -> None:
    for n in range(3):
        box.emit("refill", hopper=10 + n, added=1)
    box.blurt_before_hello = True
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        assert [e["seq"] for e in collect(client, 3)] == [1, 2, 3]
        assert list(client.events(timeout=0.3)) == []
        assert client.stats.early == 3
        # (a duplicate may come: the fake box resends after 0.25 s without an ack, and a busy
        # machine can make the host that slow; each event is still delivered once)
        assert client.stats.delivered == 3


def test_intact_but_invalid_reply_fails_the_command_at_once(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=30) as client:
        with pytest.raises(BoxError) as info:
            client.selftest()
        assert info.value.code == "BAD_REPLY"
        assert "a failed reply needs an error object" in info.value.message
        # At once: BAD_REPLY, not the TIMEOUT of a client that resends until the box answers
        # well (it never would). How many resends went out before the reply came is the
        # machine's speed (the first after 0.25 s), so it is not counted here.
        assert client.stats.bad_frames >= 1


def test_gap_naks_cannot_fill_is_recovered_by_a_new_hello(
    box: FakeBox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gap's hello comes after RESYNC_S of unanswered naks (2 s): sooner here, still after
    # the first nak and its repeat time (NAK_REPEAT_S), so the test waits on it, not on 2 s.
    monkeypatch.setattr(client_module, "RESYNC_S", client_module.NAK_REPEAT_S)
    box.lost_until_hello = {2}
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        client.press()
        client.press()
        assert [e["seq"] for e in collect(client, 4, timeout=10)] == [1, 2, 3, 4]
        assert client.stats.resyncs >= 1 and client.stats.naks >= 1
        assert len(box.hellos) >= 2


def test_new_stream_while_connected_starts_at_the_boxs_acked_mark(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        client.press()
        assert len(collect(client, 2)) == 2
        assert box.wait(lambda: box.acked == 2)
        # the box's journal is replaced under a port that stays open
        box.stream, box.events, box.acked = "s-new", [], 0
        box._sent_once.clear()
        box.emit("refill", hopper=20, added=20)
        box.emit("refill", hopper=25, added=5)
        events = collect(client, 2)
        assert [(e["stream"], e["seq"]) for e in events] == [("s-new", 1), ("s-new", 2)]
        assert client.position.stream == "s-new" and len(box.hellos) == 2


def test_event_from_a_new_boot_makes_the_host_greet_the_box_again(box: FakeBox) -> None:
    with BoxClient(str(box.link), timeout=PATIENT) as client:
        client.press()
        assert len(collect(client, 2)) == 2
        box.boot = "b-2"  # restarted, same journal, port kept open
        box.emit("hello", name="box")
        assert [e["seq"] for e in collect(client, 1)] == [3]
        assert box.wait(lambda: len(box.hellos) == 2)
        assert box.wait(lambda: client.box.get("boot") == "b-2")
        assert list(client.events(timeout=0.3)) == []


def test_open_errors_are_one_clean_line(box: FakeBox, tmp_path: Path) -> None:
    missing = tmp_path / "ttyNONE"
    with pytest.raises(BoxError) as info:
        BoxClient(str(missing), timeout=1).connect()
    assert info.value.code == "UNREACHABLE"
    assert info.value.message.startswith(f"no serial port at {missing}")
    assert str(info.value).count(str(missing)) == 1 and "Errno" not in str(info.value)

    regular = tmp_path / "notes.txt"
    regular.write_text("hello\n", encoding="utf-8")
    with pytest.raises(BoxError) as info:
        BoxClient(str(regular), timeout=1).connect()
    assert info.value.code == "BAD_PORT"
    assert "not a serial port" in info.value.message and "ioctl" not in str(info.value)
    assert "\n" not in str(info.value)

    with BoxClient(str(box.link), timeout=PATIENT), pytest.raises(BoxError) as info:
        BoxClient(str(box.link), timeout=1).connect()
    assert info.value.code == "UNREACHABLE"
    assert "in use by another program" in info.value.message
    assert str(info.value).count(str(box.link)) == 1 and "Errno" not in str(info.value)


def _point(link: Path, target: Path | str) -> None:
    """Make `link` name `target` anew (written and renamed, as a box makes its link)."""
    fresh = link.with_name(link.name + ".new")
    fresh.symlink_to(target)
    fresh.replace(link)


def test_a_link_left_by_a_dead_box_is_not_followed_to_the_pty_that_took_its_number(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A box killed without a word leaves its link naming its pty's number, which the next pty
    # made on the machine may get: a host reopening the link would share that stranger's line
    # (seen under emulation: another test's referee, its box gone, reached the crash-point
    # test's box, took replies and half frames, and locked it). The kernel picks pty numbers, so
    # `number` stands in for the name /dev/pts/N: the test points it at the stranger's pty, as
    # the kernel's reuse of the number does, before the box's own pty goes.
    number, link = tmp_path / "pts-7", tmp_path / "ttyBOX"
    stranger, stranger_slave = os.openpty()

    def stranger_heard() -> bool:
        return bool(select.select([stranger], [], [], 0)[0])

    try:
        with FakeBox(number) as first:
            _point(link, number)  # the box's link, naming its pty's number
            with BoxClient(str(link), timeout=PATIENT) as client:
                assert client.status()["state"] == "idle"
                _point(number, os.ttyname(stranger_slave))  # the number is another pty's now
                with caplog.at_level(logging.INFO, logger="wire.client"):
                    first.close()  # killed: its pty goes, its link stays
                    # the client's first reopen: on the stranger's line (a hello), or it waits
                    wait_until(
                        lambda: stranger_heard() or "names a pty that is gone" in caplog.text,
                        what="the client to reopen the link or to wait",
                    )
                assert not stranger_heard(), "the client reached the pty that took the number"
                with FakeBox(tmp_path / "pts-8"):
                    _point(link, tmp_path / "pts-8")  # the box again: it makes its link anew
                    assert client.status()["state"] == "idle"
                assert client.stats.reconnects == 1
        assert not stranger_heard()
    finally:
        os.close(stranger)
        os.close(stranger_slave)
