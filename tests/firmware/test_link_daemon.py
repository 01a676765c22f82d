"""The link with the real daemon on mock pins: in process over a pty, and `launcher run --port pty`
as a subprocess."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.journal import SqliteJournal
from firmware.link import Link
from tests.firmware.conftest import write_config
from tests.firmware.linkhelp import Host
from tests.firmware.test_daemon_run import _launcher
from wire import protocol as p


@pytest.fixture
def wired(make_box: Callable[..., Any], tmp_path: Path) -> Iterator[tuple[Any, Host]]:
    journal = SqliteJournal(tmp_path / "journal.db")
    box = make_box(journal=journal)
    link = Link("pty", box.daemon, journal)
    link.start()
    host = Host(link.port_path)
    try:
        yield box, host
    finally:
        host.close()
        link.stop()


def fire_for(host: Host, press_id: int) -> dict:
    return host.next(
        lambda m: m["type"] == "event" and m["kind"] == "fire" and m["press_id"] == press_id
    )


def test_hello_replays_the_boot_events_and_acks_reach_the_journal(wired):
    box, host = wired
    reply = host.command("hello", stream=None, seq=0)
    assert reply["state"] == "idle"
    assert reply["stream"] == box.daemon.journal.stream
    hello = host.next(lambda m: m["type"] == "event" and m["kind"] == "hello")
    assert hello["ejector"] == "motor"
    host.send(p.ack(reply["seq"], stream=reply["stream"]))
    host.sync()  # the reader handled the ack before it read the status command
    assert box.daemon.journal.acked == reply["seq"]


def test_press_and_dispense_over_the_wire_fire_the_plant(wired):
    box, host = wired
    host.command("hello")
    before = box.plant.ejected_total
    press = host.command("press")
    assert press["ok"] is True
    fire = fire_for(host, press["press_id"])
    assert (fire["reason"], fire["ejected"]) == ("fired", 3)  # jam.mode fixed, count 3
    dispense = host.command("dispense", count=2)
    fire = fire_for(host, dispense["press_id"])
    assert fire["ejected"] == 2
    assert box.plant.ejected_total - before == 5


def test_every_reply_of_the_real_daemon_fits_in_a_frame(wired):
    box, host = wired
    for op, args in [
        ("status", {}),
        ("model.get", {}),
        ("model.set", {"params": {"base": 0.5}}),
        ("selftest", {}),
        ("lock", {}),
        ("unlock", {}),
        ("load", {"total": 40}),
        ("clear", {}),
        ("reset", {}),
    ]:
        reply = host.command(op, **args)
        assert reply["ok"] is True, (op, reply)
    status = host.command("status")
    assert status["state"] == box.daemon.state
    assert set(status["link"]) == {
        "frames_in",
        "frames_out",
        "bad_crc",
        "dropped",
        "resent",
        "dup_cmds",
    }


def test_safety_limits_cannot_be_raised_over_the_wire(wired):
    box, host = wired
    reply = host.command("model.set", params={"ejector_max_on_ms": 60_000})
    assert reply["error"]["code"] == p.BAD_ARG
    reply = host.command("model.set", params={"max_burst": 99})
    assert reply["error"]["code"] == p.BAD_ARG
    assert host.command("model.get")["params"]["max_burst"] <= box.config.limits.max_burst
    reply = host.command("dispense", count=box.config.limits.max_burst + 1)
    assert reply["error"]["code"] == p.BAD_ARG


def test_a_repeated_press_id_fires_once(wired):
    box, host = wired
    first = host.command("press", cmd_id="only-once")
    fire_for(host, first["press_id"])
    assert host.command("press", cmd_id="only-once") == first
    host.sync()
    assert len(box.presses()) == 1


def test_a_resend_read_as_the_first_copy_finishes_runs_the_press_once(
    mock_factory: Any, make_config: Callable[..., Any], tmp_path: Path
):
    # A press the box is slow to answer is resent by the host (or doubled by the wire), and the
    # copy reaches the reader while the first runs. The fault injected at what was the worst
    # point: the journal has just said "nothing stored for this id" to the copy when the daemon
    # finishes the first (journals the press with its reply, answers, forgets the id). The
    # reader's handler and the daemon's loop are stepped by hand; no thread, no timing.
    from firmware.daemon import Daemon
    from firmware.loop import FakeClock

    journal = SqliteJournal(tmp_path / "journal.db")
    no_switches = {"pins.door": None, "pins.hopper_empty": None}  # no plant drives them
    config = make_config(no_switches)
    daemon = Daemon(config, factory=mock_factory, journal=journal, clock=FakeClock())
    daemon.start(thread=False)
    link = Link("pty", daemon, journal)  # not started: the test is its reader
    try:
        press = p.cmd("slow", "press")
        link._on_cmd(press)  # submitted: queued on the loop, not run yet
        lookup = journal.lookup

        def lookup_then_finish(cmd_id: str) -> Any:
            found = lookup(cmd_id)
            daemon.loop.run_pending()  # the first copy runs and is answered
            return found

        journal.lookup = lookup_then_finish  # type: ignore[method-assign]
        link._on_cmd(press)
        journal.lookup = lookup  # type: ignore[method-assign]
        daemon.loop.run_pending()
        presses = [e["press_id"] for e in journal.events_after(0, 100) if e["kind"] == "press"]
        assert presses == [1], "one press command ran twice"
        # (run twice, the second press's reply replaced the first: every later resend got
        # press 2, while press 1 fired for nobody, as issue 21 saw it: 104 for 103)
        assert journal.get_reply("slow")["press_id"] == 1
        assert [reply["press_id"] for _, reply in link._out] == [1]  # one answer, the first
        assert link.counters["dup_cmds"] == 1
    finally:
        daemon.stop()
        journal.close()


def test_launcher_run_with_a_pty_port_serves_a_host(tmp_path: Path):
    config = write_config(tmp_path / "launcher.toml")
    journal = tmp_path / "journal.db"
    proc = _launcher(
        "run", "--mock", "--port", "pty", "--config", str(config), "--journal", str(journal)
    )
    host = None
    try:
        first = proc.line()
        assert first.startswith("PORT /dev/"), first
        host = Host(first.split()[1])
        reply = host.command("hello", stream=None, seq=0)
        assert reply["state"] == "idle"
        press = host.command("press")
        fire = fire_for(host, press["press_id"])
        assert fire["ejected"] == 3
    finally:
        if host is not None:
            host.close()
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0, proc.err


def test_the_host_takes_strays_from_the_boxs_stray_events(make_box, tmp_path):
    """A card that leaves the box behind its burst is a `stray` event; the host's launcher gives
    it to the hitter from that event (not from hopper arithmetic)."""
    from engine.box import BoxLauncher
    from wire.client import BoxClient

    journal = SqliteJournal(tmp_path / "journal.db")
    box = make_box({"timing.cooldown_ms": 3000, "jam.count": 2}, journal=journal)

    def card_after_the_fire(event: dict) -> None:
        if event["kind"] == "fire" and event["ejected"]:
            box.plant.push_card()  # during the cooldown: no burst is counting

    box.daemon.subscribe(card_after_the_fire)
    link = Link("pty", box.daemon, journal)
    link.start()
    try:
        with BoxClient(link.port_path, timeout=10.0) as client:
            launcher = BoxLauncher(client, aim=False)
            launcher.reload(20)
            assert launcher.hit(0, 20) == 3
            assert launcher.strays == 1
            (stray,) = [e for e in box.daemon.events if e["kind"] == "stray"]
            assert stray["after_press_id"] == launcher.fires[0]["press_id"]
    finally:
        link.stop()
