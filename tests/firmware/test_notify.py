"""The systemd notify protocol against a real datagram socket standing in for systemd."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware import notify


@pytest.fixture
def notify_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A bound AF_UNIX datagram socket at a short path, exported as NOTIFY_SOCKET."""
    # Unix socket paths are limited to 107 bytes; pytest's tmp_path can be longer.
    with tempfile.TemporaryDirectory(prefix="ntf", dir="/tmp") as tmp:
        path = Path(tmp) / "notify"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(str(path))
        sock.settimeout(5)
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        try:
            yield sock
        finally:
            sock.close()


def _received(sock: socket.socket) -> list[str]:
    return sock.recv(4096).decode().split("\n")


def test_ready_sends_ready_and_status(notify_socket: socket.socket) -> None:
    assert notify.ready("idle, hopper 112")
    assert _received(notify_socket) == ["READY=1", "STATUS=idle, hopper 112"]


def test_each_call_is_one_datagram_in_order(notify_socket: socket.socket) -> None:
    assert notify.ready()
    assert notify.status("ejecting")
    assert notify.watchdog()
    assert notify.extend_timeout(2.5)
    assert notify.stopping("outputs off")
    assert _received(notify_socket) == ["READY=1"]
    assert _received(notify_socket) == ["STATUS=ejecting"]
    assert _received(notify_socket) == ["WATCHDOG=1"]
    assert _received(notify_socket) == ["EXTEND_TIMEOUT_USEC=2500000"]
    assert _received(notify_socket) == ["STOPPING=1", "STATUS=outputs off"]


def test_status_newlines_cannot_inject_assignments(notify_socket: socket.socket) -> None:
    assert notify.status("jammed\nREADY=1")
    assert _received(notify_socket) == ["STATUS=jammed READY=1"]


def test_abstract_namespace_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"launcher-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert notify.watchdog()
        assert sock.recv(4096) == b"WATCHDOG=1"


def test_without_notify_socket_everything_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert not notify.ready("x")
    assert not notify.watchdog()
    assert not notify.stopping()


def test_unsupported_address_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", "vsock:2:1234")
    assert not notify.ready()


def test_vanished_socket_returns_false_without_raising(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "gone"))
    assert not notify.watchdog()


@pytest.mark.parametrize(
    ("usec", "pid", "expected"),
    [
        ("5000000", None, 5.0),
        ("2500000", "SELF", 2.5),
        ("5000000", "1", None),  # armed for another process (we inherited the environment)
        ("0", None, None),
        ("junk", None, None),
        (None, None, None),
        ("5000000", "junk", None),
    ],
)
def test_watchdog_interval(
    monkeypatch: pytest.MonkeyPatch, usec: str | None, pid: str | None, expected: float | None
) -> None:
    for key, value in (("WATCHDOG_USEC", usec), ("WATCHDOG_PID", pid)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, str(os.getpid()) if value == "SELF" else value)
    assert notify.watchdog_interval() == expected


def _launcher() -> list[str]:
    exe = Path(sys.executable).parent / "launcher"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "firmware.cli"]


def test_daemon_reports_ready_pings_watchdog_and_stopping(notify_socket: socket.socket) -> None:
    """`launcher run` under a (fake) systemd: READY once started, WATCHDOG from the loop at
    least twice per WatchdogSec, STOPPING on SIGTERM, exit 0."""
    env = {**os.environ, "WATCHDOG_USEC": "400000"}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen(
        [*_launcher(), "run", "--mock", "--port", "none"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        seen: list[str] = []
        # A start (imports, config, self-test) on a machine loaded by two CPU hogs took over 5 s:
        # the first datagram gets a minute (the loop pings every 0.2 s after it).
        notify_socket.settimeout(60)
        while "READY=1" not in seen:
            seen = _received(notify_socket)
        notify_socket.settimeout(30)  # a failure still ends, a busy machine still passes
        assert seen[1].startswith("STATUS=idle")
        pings = 0
        while pings < 2:  # the loop keeps pinging after READY (WatchdogSec 0.4 s here)
            seen = _received(notify_socket)
            pings += seen == ["WATCHDOG=1"]
        proc.send_signal(signal.SIGTERM)
        while "STOPPING=1" not in seen:
            seen.extend(_received(notify_socket))
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_daemon_with_a_bad_config_exits_78_without_ready(
    notify_socket: socket.socket, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[pins]\nbutton = 17\n")
    proc = subprocess.run(
        [*_launcher(), "run", "--mock", "--port", "none", "--config", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 78
    assert proc.stderr.strip().startswith(f"launcher: {bad}: [pins] ejector_forward = (missing)")
    notify_socket.settimeout(0)
    with pytest.raises(BlockingIOError):
        notify_socket.recv(4096)
