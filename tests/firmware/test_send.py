"""`launcher send PORT OP [ARGS]` against a real daemon on mock pins (one per module; a test
that changes its state puts it back)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.send import OPS as SEND_OPS
from tests.e2e.conftest import BoxProcess, serving_box
from tests.wait import read_lines
from wire import ops

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoxProcess]:
    with serving_box(tmp_path_factory.mktemp("box"), [3]) as running:
        yield running


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
        # issue 21: a number no box takes, refused before a port is opened (the op table's check)
        (["dispense", "-1"], "dispense: COUNT must be at least 1, got -1"),
        (["load", "-1"], "load: COUNT must be from 1 to 10000, got -1"),
        (["aim", "-1"], "aim: SEAT must be at least 0, got -1"),
        (["load", "-1", "--total"], "load: COUNT must be from 0 to 10000, got -1"),
    ],
)
def test_bad_op_or_args_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, str(tmp_path / "no-port"), *argv)
    assert code == 2
    assert out == ""
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("op", "name"), [(op, name) for op, (names, _) in SEND_OPS.items() for name in names]
)
def test_every_number_no_box_takes_is_a_usage_error_before_the_port(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, op: str, name: str
) -> None:
    """From the op table, for every argument a command line gives: below its least (and above
    its most, where the table has one) is exit 2, one line, and no port is looked for."""
    least, most = ops.OPS[op].arg(name).bounds
    assert least is not None, f"{op} {name}: a whole number with no least"
    for value in (least - 1, *(() if most is None else (most + 1,))):
        code, out, err = run(capsys, str(tmp_path / "no-port"), op, str(value))
        assert (code, out, err.count("\n")) == (2, "", 1), err
        assert err.startswith(f"launcher send: {op}: {name.upper()} must be ") and "port" not in err


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


def test_status_prints_the_reply(capsys: pytest.CaptureFixture[str], box: BoxProcess) -> None:
    code, out, _ = run(capsys, str(box.port), "status")
    assert code == 0
    assert out.startswith('state="idle" ') and re.search(r" hopper=\d+ ", out)
    assert out.count("\n") == 1


def test_press_waits_for_and_prints_the_fire_result(
    capsys: pytest.CaptureFixture[str], box: BoxProcess
) -> None:
    code, out, _ = run(capsys, str(box.port), "press")
    assert code == 0
    assert re.fullmatch(r"press \d+: fired 3 of 3 cards \(dry streak 0, hopper \d+\)\n", out)


def test_dispense_json(capsys: pytest.CaptureFixture[str], box: BoxProcess) -> None:
    code, out, _ = run(capsys, str(box.port), "dispense", "5", "--json")
    assert code == 0
    fire = json.loads(out)
    assert (fire["kind"], fire["ejected"], fire["source"]) == ("fire", 5, "dispense")


def test_refused_command_is_exit_1_with_the_code(
    capsys: pytest.CaptureFixture[str], box: BoxProcess
) -> None:
    port = str(box.port)
    assert run(capsys, port, "load", "0", "--total")[0] == 0
    try:
        run(capsys, port, "press")  # refused for the empty hopper: the box latches empty
        code, _, err = run(capsys, port, "dispense", "1")
    finally:
        assert run(capsys, port, "load", "10000", "--total")[0] == 0  # as the module found it
    assert code == 1
    assert err.startswith("launcher send: EMPTY: ") and err.count("\n") == 1


def test_watch_prints_one_line_per_event_until_ctrl_c_exit_130(box: BoxProcess) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "send", str(box.port), "watch"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = read_lines(proc.stdout)
        # The watch holds the port: the box is driven through its console meanwhile.
        box.console("load 20")
        box.console("lock")
        seen: list[str] = []
        while not any("idle -> locked (host lock)" in line for line in seen):
            seen.append(lines.get(timeout=30))
            assert seen[-1], f"watch ended early: {seen}"
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=10)
    finally:
        box.console("unlock")
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # An earlier test's refill (`load 10000 --total`) may come first: `send` leaves before the
    # box hears its event acked, so the box replays it to the next host (seen under emulation).
    refills = [line for line in seen if " refill " in line]
    assert any(re.search(r" 20 cards added, hopper \d+", line) for line in refills), refills
    assert all(re.match(r"#\d+ +\d+\.\d{3}s  \w+ +\S", line) for line in seen)  # one a line
    assert code == 130  # Ctrl-C, as for every command (README); a closed pipe is 0
