"""End-to-end fixtures: a real `launcher run --mock --port pty` daemon as a child process.

`launcher_box` is a factory: ``box = launcher_box(plant={"feed_interval_ms": 5})`` writes a
config (the default `hardware/launcher.toml` with the given keys replaced), starts the daemon
with its own journal and plant-state files, reads the ``PORT /dev/pts/N`` line and returns a
`BoxProcess`. Every daemon it started is killed at teardown, whatever the test did.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.configs import merge, write_config

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0  # seconds for a daemon to print its PORT line (2 busy cores, cold imports)

# Timings that keep a burst to a few milliseconds; a test adds what it needs on top.
_PLANT = {"hopper": 10000, "feed_interval_ms": 4, "feed_jitter_ms": 1, "beam_ms": 1, "spinup_ms": 0}
FAST: dict[str, dict[str, Any]] = {
    "ejector": {"soft_start_ms": 0, "flywheel_spinup_ms": 0, "retract_ms": 0},
    "patterns": {"enabled": False},  # suspense pauses would dwarf these bursts
    "timing": {
        "cooldown_ms": 0,
        # A jam only when the plant really stops: the daemon's own thread feeding the mock
        # plant may be late by far more than a feed slot on a busy machine.
        "card_timeout_ms": 2000,
        # A motor burst counts on for settle_ms after the feed stops (a coasting card). The
        # default 100 ms would dwarf these bursts; one feed slot (interval + jitter + beam)
        # still catches the next card of a coasting roller.
        "settle_ms": _PLANT["feed_interval_ms"] + _PLANT["feed_jitter_ms"] + _PLANT["beam_ms"],
    },
    "plant": dict(_PLANT),
}

# A fast solenoid ejector: one card per 2 ms pulse, exactly. (A feed motor this fast can overrun
# by a card when a loaded machine is late to stop it: a real card that belongs to no press.) The
# pulse's safety cap is the widest allowed, so only a loop stalled for a second trips it.
SOLENOID: dict[str, dict[str, Any]] = {
    "ejector": {"kind": "solenoid", "pulse_ms": 2, "recovery_ms": 2},
    "pins": {"ejector_backward": None, "ejector_enable": None},
    "limits": {"solenoid_duty_max": 0.9, "solenoid_max_on_ms": 1000},
}


class BoxProcess:
    """One `launcher run --mock --port pty` daemon: start, kill -9, restart on the same journal
    and plant state, stop. `port` is the pty of the current run. With ``console`` it also reads
    ops from its stdin (`console()`), so a test can drive the box while a host holds the port."""

    def __init__(self, workdir: Path, config: Path, *, console: bool = False) -> None:
        self.workdir = workdir
        self.config = config
        self.with_console = console
        self.journal = workdir / "journal.sqlite"
        self.plant_state = workdir / "plant.json"
        self.log = workdir / "daemon.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: str | None = None
        self.starts = 0
        self._drain: threading.Thread | None = None

    def start(self, timeout: float = START_TIMEOUT) -> str:
        """Start the daemon and return its pty path (the first stdout line, `PORT <path>`)."""
        assert self.proc is None or self.proc.poll() is not None, "daemon already running"
        self.starts += 1
        argv = [
            sys.executable,
            "-m",
            "firmware.cli",
            "run",
            "--mock",
            "--config",
            str(self.config),
            "--port",
            "pty",
            "--journal",
            str(self.journal),
            "--plant-state",
            str(self.plant_state),
            *(["--console"] if self.with_console else []),
        ]
        with self.log.open("ab") as log:
            log.write(f"--- start {self.starts}: {' '.join(argv)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                argv,
                cwd=ROOT,
                stdin=subprocess.PIPE if self.with_console else None,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        line = self._first_line(timeout)
        match = re.fullmatch(r"PORT (\S+)", line)
        if match is None:
            self.kill()
            raise AssertionError(f"first stdout line of launcher run was {line!r}\n{self.tail()}")
        self.port = match.group(1)
        # keep reading stdout so a chatty daemon never blocks on a full pipe
        stdout = self.proc.stdout
        self._drain = threading.Thread(target=lambda: stdout.read(), daemon=True)
        self._drain.start()
        return self.port

    def _first_line(self, timeout: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        data = b""
        deadline = time.monotonic() + timeout
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise AssertionError(f"no PORT line within {timeout:g} s\n{self.tail()}")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1)  # byte by byte: leave the rest for the drain thread
            if not chunk:
                code = self.proc.wait()
                raise AssertionError(f"launcher run exited with {code} before PORT\n{self.tail()}")
            data += chunk
        return data.decode(errors="replace").strip()

    def console(self, line: str) -> None:
        """Send one op (``load 20``, ``lock``) to the daemon's ``--console``, beside the link;
        its reply and events go to the drained stdout."""
        assert self.proc is not None and self.proc.stdin is not None, "started with console=True"
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def kill9(self) -> None:
        """`kill -9` the daemon: no cleanup, no outputs turned off, half-written state."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def restart(self, timeout: float = START_TIMEOUT) -> str:
        """Start again on the same config, journal and plant state; returns the new pty path."""
        return self.start(timeout)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM and wait; SIGKILL if it does not go. Returns the exit code."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        """SIGKILL if still running (teardown)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)

    def plant(self) -> dict[str, Any]:
        """The plant's persisted state: `hopper` and `ejected_total` (the cards really out)."""
        try:
            return json.loads(self.plant_state.read_text())
        except FileNotFoundError:
            return {"hopper": None, "ejected_total": 0}

    def tail(self, lines: int = 30) -> str:
        """The end of the daemon's stderr log, for assertion messages."""
        try:
            text = self.log.read_text(errors="replace")
        except FileNotFoundError:
            return "(no daemon log)"
        return "daemon log:\n" + "\n".join(text.splitlines()[-lines:])


def pattern_box(work: Path, pattern: list[int], *, console: bool = False) -> BoxProcess:
    """A `BoxProcess` in `work` on the `FAST` config whose presses fire `pattern` (repeated);
    not started yet (the benchmarks use it too)."""
    changes = merge(FAST, {"jam": {"mode": "pattern", "pattern": pattern}})
    return BoxProcess(work, write_config(work / "launcher.toml", changes), console=console)


@contextlib.contextmanager
def serving_box(work: Path, pattern: list[int]) -> Iterator[BoxProcess]:
    """A started `pattern_box` with a console, for host tools to talk to (share one per module:
    its start costs a process); stopped on exit."""
    box = pattern_box(work, pattern, console=True)
    box.start()
    try:
        yield box
    finally:
        box.stop()
        box.kill()


@pytest.fixture
def launcher_box(tmp_path: Path) -> Iterator[Callable[..., BoxProcess]]:
    """Factory fixture: ``launcher_box(**changes)`` -> a started `BoxProcess` on a config made
    of `FAST` plus `changes` (``plant={...}, jam={...}`` ...). Killed at teardown."""
    started: list[BoxProcess] = []

    def make(*, start: bool = True, **changes: Mapping[str, Any]) -> BoxProcess:
        workdir = tmp_path / f"box{len(started)}"
        workdir.mkdir()
        config = write_config(workdir / "launcher.toml", merge(FAST, changes))
        box = BoxProcess(workdir, config)
        started.append(box)
        if start:
            box.start()
        return box

    try:
        yield make
    finally:
        for box in started:
            box.kill()
