"""`launcher send PORT OP [ARGS]` against the fake box of tests/engine/fakebox.py."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.cli import main
from tests.engine.fakebox import FakeBox

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def box(tmp_path: Path):
    with FakeBox(tmp_path / "ttyBOX", fires=[3]) as fake:
        yield fake


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["send", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["spin"], "unknown operation 'spin'; allowed: status, press"),
        (["dispense"], "dispense takes COUNT, got 0 arguments"),
        (["dispense", "three"], "COUNT must be a whole number, got 'three'"),
        (["aim", "one"], "aim: SEAT must be a whole number, got 'one'"),
        (["status", "now"], "status takes no arguments"),
        (["status", "--total"], "--total only goes with load"),
    ],
)
def test_bad_op_or_args_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, str(tmp_path / "no-port"), *argv)
    assert code == 2
    assert out == ""
    assert needle in err and err.count("\n") == 1


def test_unreachable_box_is_one_line_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, str(tmp_path / "no-port"), "status", "--timeout", "1")
    assert code == 1
    assert "UNREACHABLE" in err and "no-port" in err and err.count("\n") == 1


def test_port_url_pyserial_does_not_know_is_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "nosuch://box", "status")
    assert code == 2
    assert err.startswith("launcher send: BAD_PORT: ") and err.count("\n") == 1


def test_status_prints_the_reply(capsys: pytest.CaptureFixture[str], box: FakeBox) -> None:
    code, out, _ = run(capsys, str(box.link), "status")
    assert code == 0
    assert out == 'state="idle" hopper=50\n'


def test_press_waits_for_and_prints_the_fire_result(
    capsys: pytest.CaptureFixture[str], box: FakeBox
) -> None:
    code, out, _ = run(capsys, str(box.link), "press")
    assert code == 0
    assert out == "press 1: fired 3 of 3 cards\n"


def test_dispense_json(capsys: pytest.CaptureFixture[str], box: FakeBox) -> None:
    code, out, _ = run(capsys, str(box.link), "dispense", "5", "--json")
    assert code == 0
    fire = json.loads(out)
    assert (fire["kind"], fire["ejected"], fire["source"]) == ("fire", 5, "dispense")


def test_refused_command_is_exit_1_with_the_code(
    capsys: pytest.CaptureFixture[str], box: FakeBox
) -> None:
    code, _, err = run(capsys, str(box.link), "clear")
    assert code == 1
    assert err.startswith("launcher send: JAMMED: ") and err.count("\n") == 1


def test_watch_prints_one_line_per_event_until_ctrl_c_exit_130(box: FakeBox) -> None:
    box.emit("refill", hopper=20, added=20)
    box.emit("state", **{"from": "idle", "to": "locked", "why": "host"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "send", str(box.link), "watch"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "refill" in first and "20 cards added, hopper 20" in first
    assert "state" in second and "idle -> locked (host)" in second
    assert code == 130  # Ctrl-C, as for every command (README); a closed pipe is 0
