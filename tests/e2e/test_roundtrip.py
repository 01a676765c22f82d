"""Every command of the protocol, from the host client and from `launcher send`, over a real pty
to a `launcher run --mock` daemon subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from firmware import config as config_mod
from tests.configs import write_config
from tests.e2e.conftest import FAST, ROOT, SOLENOID, BoxProcess
from wire.client import BoxClient, BoxError


@pytest.fixture
def box(launcher_box: Callable[..., BoxProcess]) -> BoxProcess:
    return launcher_box(jam={"mode": "pattern", "pattern": [0, 2, 3], "seed": 3}, **SOLENOID)


def test_every_command_round_trips(box: BoxProcess, tmp_path: Path) -> None:
    with BoxClient(box.port, state_path=tmp_path / "host.sqlite", timeout=10) as client:
        assert client.box["stream"] and client.box["boot"]
        status = client.status()
        assert status["state"] == "idle" and status["queue"] == 0
        hopper = status["hopper"]

        fires = [client.wait_fire(client.press(), timeout=10) for _ in range(3)]
        assert [(f["reason"], f["ejected"]) for f in fires] == [
            ("dry", 0),
            ("fired", 2),
            ("fired", 3),
        ]
        fire = client.wait_fire(client.dispense(4), timeout=10)
        assert (fire["source"], fire["planned"], fire["ejected"]) == ("dispense", 4, 4)
        assert client.status()["hopper"] == hopper - 9

        assert client.lock()["state"] == "locked"
        refused = client.wait_fire(client.press(), timeout=10)
        assert (refused["reason"], refused["ejected"]) == ("locked", 0)
        assert client.unlock()["state"] == "idle"

        assert client.aim(2)["seat"] == 2
        assert client.load(count=5)["hopper"] == hopper - 9 + 5
        assert client.load(total=50)["hopper"] == 50

        params = client.model_get()
        assert params["mode"] == "pattern" and list(params["pattern"]) == [0, 2, 3]
        assert client.model_set(mode="fixed", count=2)["count"] == 2
        fire = client.wait_fire(client.press(), timeout=10)
        assert fire["ejected"] == 2

        selftest = client.selftest()
        assert selftest["passed"] and {c["name"] for c in selftest["checks"]} >= {"outputs_off"}

        with pytest.raises(BoxError) as info:
            client.dispense(999)
        assert info.value.code == "BAD_ARG"
        with pytest.raises(BoxError) as info:
            client.model_set(ejector_max_on_ms=99999)  # safety limits are not the link's
        assert info.value.code == "BAD_ARG"
        for op in (client.clear, client.reset):
            try:
                op()  # nothing latched: the box may refuse, but it must answer
            except BoxError as exc:
                assert exc.code in {"BAD_ARG", "BUSY", "JAMMED", "EMPTY", "FAULT"}

        seqs = [e["seq"] for e in client.events(timeout=0.5)]
        assert seqs == sorted(set(seqs))
        # Duplicates are allowed: on a busy machine the box's resend timer (0.25 s) may run out
        # before an ack arrives, and the host drops the resent copy. Garbled frames are not.
        assert client.stats.bad_frames == 0
        assert client.stats.delivered == client.position.seq - client.stats.skipped


def send(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "firmware.cli", "send", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_launcher_send_talks_to_the_daemon(box: BoxProcess) -> None:
    done = send(box.port, "status", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "idle"
    done = send(box.port, "dispense", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("press ") and ": fired 3 of 3 cards" in done.stdout
    done = send(box.port, "dispense", "999")
    assert done.returncode == 2 and done.stderr.startswith("launcher send: BAD_ARG: ")
    box.stop()
    done = send(box.port, "status", "--timeout", "1")
    assert done.returncode == 1 and done.stderr.count("\n") == 1


def test_the_fast_config_settles_a_motor_burst_in_one_feed_slot(tmp_path: Path) -> None:
    cfg = config_mod.load(write_config(tmp_path / "fast.toml", FAST))
    slot = cfg.plant.feed_interval_ms + cfg.plant.feed_jitter_ms + cfg.plant.beam_ms
    assert cfg.timing.settle_ms == slot  # not the default 100 ms on every motor burst
    assert cfg.timing.settle_ms >= 2 * cfg.plant.beam_ms


def test_a_client_never_reopens_a_pty_that_died_with_its_box(box: BoxProcess) -> None:
    # A pty's number goes to the next pty made on the machine (another box, another test's box):
    # reopening the old path would reach a stranger, so the client stops with one line.
    old_port = box.port
    with BoxClient(old_port, timeout=10) as client:
        assert client.status()["state"] == "idle"
        box.stop()
        with pytest.raises(BoxError) as gone:
            client.command("status")
        assert gone.value.code == "UNREACHABLE" and "is gone" in str(gone.value)
        list(client.events())  # what came before the end, then the stream ends
        with pytest.raises(BoxError, match="is gone"):
            client.raise_if_gone()
        assert client.stats.reconnects == 0
