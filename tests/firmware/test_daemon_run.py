"""`launcher run` as a process: signals, exit codes, the console, the pty port, the pins lock."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.errors import LauncherError
from firmware.pins import claim_pins
from firmware.run import _parse_console
from tests.conftest import ROOT
from tests.firmware.conftest import write_config
from tests.wait import WAIT, read_lines, wait_until


class LauncherProcess(subprocess.Popen[str]):
    """``launcher ARGS`` as a process, its stdin and stdout piped. Its stderr goes to a file,
    never to a pipe: a pipe nobody reads while the test reads stdout stops a chatty daemon once
    it holds 64 KiB, and the test with it. Its stdout's JSON lines are read with a deadline
    (``read_until``, ``read_to_end``): a daemon that goes quiet fails the test, saying what it
    printed, instead of hanging it."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        fd, path = tempfile.mkstemp(prefix="launcher-stderr-")
        try:
            # Two opens of one file: the child's appends (O_APPEND) never move where this
            # process reads from. Nameless at once: nothing to clean up.
            self._err_w = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in __del__)
            self._err_r = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
        finally:
            os.close(fd)
            os.unlink(path)
        super().__init__(
            argv,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err_w,
            text=True,
            env=env,
        )
        self.seen: list[dict] = []  # the JSON lines read so far, in order
        self._lines: queue.Queue[str] | None = None

    @property
    def err(self) -> str:
        """Everything it wrote on stderr so far."""
        self._err_r.seek(0)
        return self._err_r.read()

    def line(self, timeout: float = WAIT) -> str:
        """The next line on stdout, as it is (``""`` once stdout has ended)."""
        return self._line(time.monotonic() + timeout, timeout)

    def read_until(self, predicate: Callable[[dict], object], timeout: float = WAIT) -> dict:
        """The next JSON line on stdout that ``predicate`` accepts (those before it: ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            item = self._next(deadline, timeout)
            if item is None:
                raise AssertionError(f"stdout ended first (exit {self.poll()}){self._said()}")
            if predicate(item):
                return item

    def read_to_end(self, timeout: float = WAIT) -> list[dict]:
        """The JSON lines left on stdout until it ends (the process exited)."""
        deadline, start = time.monotonic() + timeout, len(self.seen)
        while self._next(deadline, timeout) is not None:
            pass
        return self.seen[start:]

    def _line(self, deadline: float, timeout: float) -> str:
        if self._lines is None:
            self._lines = read_lines(self.stdout)
        try:
            return self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"nothing more within {timeout:g} s{self._said()}") from None

    def _next(self, deadline: float, timeout: float) -> dict | None:
        line = self._line(deadline, timeout)
        if not line:
            return None
        self.seen.append(json.loads(line))
        return self.seen[-1]

    def _said(self) -> str:
        return f"; last lines {self.seen[-5:]}; stderr: {self.err[-2000:]}"

    def __del__(self) -> None:
        for stream in (self._err_w, self._err_r):
            stream.close()
        super().__del__()


def _launcher(*args: str, env: dict | None = None, module: str = "firmware.cli") -> LauncherProcess:
    """``launcher ARGS`` as a process (``module``: tests.simchip runs it on the simulated
    chip)."""
    return LauncherProcess([sys.executable, "-m", module, *args], {**os.environ, **(env or {})})


def _wait_file(path: Path, predicate, timeout: float = 10.0) -> None:
    """Wait for the plant's state file to satisfy ``predicate`` (it is rewritten per card)."""

    def matches() -> bool:
        with contextlib.suppress(OSError, ValueError):
            return bool(predicate(json.loads(path.read_text())))
        return False

    wait_until(matches, timeout, what=f"{path} matching")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_mid_burst_turns_every_output_off_and_exits_0(tmp_path, stop):
    """SIGHUP (the terminal or SSH session the daemon ran in closed) killed it with the
    ejector running, the outputs as they were."""
    config = write_config(
        tmp_path / "slow.toml",
        {"jam.count": 12, "plant.feed_interval_ms": 80, "plant.beam_ms": 5},
    )
    state = tmp_path / "plant.json"
    proc = _launcher(
        "run", "--mock", "--port", "none", "--console", "--config", str(config),
        "--plant-state", str(state),
    )  # fmt: skip
    try:
        proc.stdin.write("press\n")
        proc.stdin.flush()
        proc.read_until(lambda e: e.get("kind") == "state" and e.get("to") == "ejecting")
        _wait_file(state, lambda data: data["ejected_total"] >= 1)  # mid-burst, cards out
        proc.send_signal(stop)
        fire = proc.read_until(lambda e: e.get("kind") == "fire")
        exit_line = proc.read_until(lambda e: e.get("type") == "exit")
        code = proc.wait(10)
    finally:
        proc.kill()
    stderr = proc.err
    assert code == 0, stderr
    assert fire["reason"] == "stopping" and 1 <= fire["ejected"] < 12
    outputs = exit_line["outputs"]
    assert {"ejector_forward", "ejector_backward", "ejector_enable", "flywheel"} <= set(outputs)
    assert all(value == 0 for value in outputs.values()), outputs
    assert "outputs at exit: " in stderr and "ejector_forward=0" in stderr
    assert "Traceback" not in stderr
    saved = json.loads(state.read_text())
    assert saved["ejected_total"] == fire["ejected"]
    assert saved["hopper"] == 60 - fire["ejected"]


def test_sigint_when_idle_exits_0(tmp_path):
    proc = _launcher("run", "--mock", "--port", "none", "--console",
                     "--config", str(write_config(tmp_path / "c.toml")))  # fmt: skip
    try:
        proc.stdin.write("status\n")
        proc.stdin.flush()
        reply = proc.read_until(lambda e: e.get("type") == "reply")
        assert reply["ok"] and reply["state"] == "idle"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
    finally:
        proc.kill()


@pytest.mark.parametrize(
    ("given", "answered"),
    [
        (None, []),  # </dev/null
        ("", []),  # a pipe closed at once
        ("status\n", ["status"]),  # printf 'status\n' |
        ("press\nstatus\n\xff\n", ["press", "status", "\ufffd"]),  # a stray byte: an unknown op
    ],
)
def test_the_end_of_the_console_input_stops_it_cleanly(tmp_path, given, answered):
    """The console's input ends (issue 21: it never ended): every op read is answered, then
    the daemon stops as on SIGTERM: outputs off, the exit line, exit 0."""
    config = str(write_config(tmp_path / "c.toml"))
    argv = [sys.executable, "-m", "firmware.cli", "run", "--mock", "--console", "--config", config]
    # A safety net only: it ends within a second when it works, and never when it does not.
    done = subprocess.run(
        argv,
        cwd=ROOT,
        input=None if given is None else given.encode("latin-1"),
        stdin=subprocess.DEVNULL if given is None else None,
        capture_output=True,
        timeout=60,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    replies = {item["op"]: item["ok"] for item in lines if item.get("type") == "reply"}
    assert list(replies) == answered
    assert all(replies[op] for op in answered if op.isascii())
    exit_line = lines[-1]
    assert exit_line["type"] == "exit" and all(v == 0 for v in exit_line["outputs"].values())
    assert "end of the console's input: stopping" in stderr and "Traceback" not in stderr


def test_plant_state_survives_a_restart(tmp_path):
    config = str(write_config(tmp_path / "c.toml", {"jam.count": 2}))
    state = tmp_path / "plant.json"
    expected_hopper = 60
    for _ in range(2):
        proc = _launcher("run", "--mock", "--console", "--config", config,
                         "--plant-state", str(state))  # fmt: skip
        try:
            hello = proc.read_until(lambda e: e.get("kind") == "hello")
            assert hello["hopper"] == expected_hopper  # what the last run left in the hopper
            proc.stdin.write("press\n")
            proc.stdin.flush()
            assert proc.read_until(lambda e: e.get("kind") == "fire")["ejected"] == 2
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0
        finally:
            proc.kill()
        saved = json.loads(state.read_text())
        assert saved["hopper"] + saved["ejected_total"] == 60
        expected_hopper = saved["hopper"]
    assert saved["ejected_total"] >= 4


def test_a_bad_config_exits_78_with_one_line(tmp_path):
    bad = write_config(tmp_path / "bad.toml", {"limits.ejector_max_on_ms": -5})
    proc = _launcher("run", "--mock", "--config", str(bad))
    out, _ = proc.communicate(timeout=20)
    err = proc.err
    assert proc.returncode == 78
    assert len(err.strip().splitlines()) == 1 and "ejector_max_on_ms" in err
    assert out == ""


def test_plant_state_without_mock_is_a_usage_error(tmp_path):
    proc = _launcher("run", "--plant-state", str(tmp_path / "p.json"),
                     "--config", str(write_config(tmp_path / "c.toml")))  # fmt: skip
    proc.communicate(timeout=20)
    assert proc.returncode == 2 and "--plant-state" in proc.err


def test_port_pty_prints_the_port_first(tmp_path):
    pytest.importorskip("firmware.link")
    proc = _launcher("run", "--mock", "--port", "pty",
                     "--config", str(write_config(tmp_path / "c.toml")))  # fmt: skip
    try:
        first = proc.line()
        assert first.startswith("PORT /dev/")
        assert Path(first.split(" ", 1)[1].strip()).exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_ready_is_sent_to_notify_socket(tmp_path):
    address = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(20)
    proc = _launcher("run", "--mock", "--config", str(write_config(tmp_path / "c.toml")),
                     env={"NOTIFY_SOCKET": address})  # fmt: skip
    try:
        message = sock.recv(4096).decode()
        assert "READY=1" in message.splitlines()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert "STOPPING=1" in sock.recv(4096).decode()
    finally:
        proc.kill()
        sock.close()


def test_the_pins_lock_is_exclusive(tmp_path):
    path = tmp_path / "pins.lock"
    with claim_pins(path) as held:
        assert held.held
        with pytest.raises(
            LauncherError, match=rf"pins are held by a running launcher \(pid {os.getpid()}\)"
        ):
            claim_pins(path)
    with claim_pins(path) as again:  # released: free again
        assert again.held


def test_the_loop_pings_the_watchdog_while_healthy(tmp_path):
    address = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(20)
    proc = _launcher("run", "--config", str(write_config(tmp_path / "c.toml")),
                     env={"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "200000",
                          "GPIOZERO_PIN_FACTORY": "mock"})  # fmt: skip
    try:
        messages = []
        while sum("WATCHDOG=1" in m for m in messages) < 3:
            messages.append(sock.recv(4096).decode())
        assert any("READY=1" in m for m in messages)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        sock.close()


def test_gpiozero_pin_factory_mock_means_mock_pins_and_plant(tmp_path):
    proc = _launcher("run", "--console", "--config", str(write_config(tmp_path / "c.toml")),
                     env={"GPIOZERO_PIN_FACTORY": "mock"})  # fmt: skip
    try:
        hello = proc.read_until(lambda e: e.get("kind") == "hello")
        assert hello["hopper"] == 60  # the plant's hopper: mock pins with the plant
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_a_burst_of_signals_still_exits_0(tmp_path):
    # A handler that took a lock (Event.set) could deadlock when a second signal landed inside
    # the first handler; the handler now only sets a flag.
    proc = _launcher("run", "--mock", "--console",
                     "--config", str(write_config(tmp_path / "c.toml")))  # fmt: skip
    try:
        proc.read_until(lambda e: e.get("kind") == "hello")
        for _ in range(200):
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()


_CONSOLE_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        '"op"',
        ":",
        ",",
        '"press"',
        "dispense",
        " ",
        "=",
        "1",
        "9" * 5000,
        "[" * 3000,
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_CONSOLE_PIECES, min_size=1, max_size=8).map("".join))
def test_a_console_line_is_an_op_or_the_error_the_console_answers(line: str) -> None:
    """(A line nested too deep, `{"op":[[[...` or `dispense [[[...`, was a RecursionError that
    killed the console's reader: no reply, and the daemon ran on after its input ended.)"""
    if not line.strip():
        return
    with contextlib.suppress(ValueError, KeyError):  # what `_console` answers with BAD_FRAME
        op, args = _parse_console(line)
        assert isinstance(op, str) and isinstance(args, dict)


def test_a_line_nested_too_deep_is_answered_and_the_console_reads_on(tmp_path) -> None:
    config = str(write_config(tmp_path / "c.toml"))
    argv = [sys.executable, "-m", "firmware.cli", "run", "--mock", "--console", "--config", config]
    given = '{"op":' + "[" * 50_000 + "]" * 50_000 + "}\nstatus\n"
    done = subprocess.run(argv, cwd=ROOT, input=given.encode(), capture_output=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr.decode()
    replies = [json.loads(x) for x in done.stdout.decode().splitlines()]
    replies = [r for r in replies if r.get("type") == "reply"]
    assert replies[0]["error"] == {
        "code": "BAD_FRAME",
        "message": "nested too deep: line 1 column 1 (char 0)",
    }
    assert replies[1]["op"] == "status" and replies[1]["ok"]
