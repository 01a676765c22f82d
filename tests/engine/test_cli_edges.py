"""The long-running commands tried as a new user would (issue 10): Ctrl-C is exit 130 for every
one of them (README), a reader that leaves the pipe (`| head -1`) is a quiet exit 0, and files
saved with a byte-order mark read like any other."""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import linecache
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from tests.conftest import ROOT
from tests.ctrl_c import interrupt
from tests.e2e.conftest import BoxProcess, serving_box
from tests.wait import read_lines

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoxProcess]:
    """A real daemon on mock pins, one for the module (the watches only read it)."""
    with serving_box(tmp_path_factory.mktemp("box"), [1]) as running:
        yield running


WATCHERS = {
    "unoattack watch": ["-m", "engine.cli", "watch", "--port"],
    "launcher send watch": ["-m", "firmware.cli", "send"],
}


@contextlib.contextmanager
def _started(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    """`python ARGS` with its stdout and stderr piped; killed if the test leaves it running."""
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _watch(which: str, port: str | None) -> list[str]:
    tail = ["watch"] if which == "launcher send watch" else []
    return [*WATCHERS[which], str(port), *tail]


@pytest.mark.parametrize("which", list(WATCHERS))
def test_ctrl_c_ends_a_watch_with_130(box: BoxProcess, which: str) -> None:
    with _started(*_watch(which, box.port)) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        lines = read_lines(proc.stdout)
        box.console("load 20")  # an event while the watch holds the port
        seen = [lines.get(timeout=30)]
        while b" refill " not in seen[-1]:
            seen.append(lines.get(timeout=30))
            assert seen[-1], f"watch ended early: {seen}"
        proc.send_signal(signal.SIGINT)
        assert (proc.wait(timeout=30), proc.stderr.read()) == (130, b"")


@pytest.mark.parametrize("which", list(WATCHERS))
def test_three_ctrl_c_to_the_group_still_end_a_watch_with_130(box: BoxProcess, which: str) -> None:
    """Ctrl-C pressed again while the watch closes its port (issue 21): exit 130, not a death
    by SIGINT, no traceback, nothing left running."""
    seen = threading.Event()

    def loads() -> None:  # events for the watch to print, until it is seen printing them
        while not seen.wait(0.2):
            box.console("load 20")

    feeder = threading.Thread(target=loads, daemon=True)
    feeder.start()
    try:
        done = interrupt(
            _watch(which, box.port),
            running=b" refill ",
            signals=3,
            interactive=True,
            when_running=lambda pid: seen.set(),
        )
    finally:
        seen.set()
        feeder.join()
    assert (done.code, done.left) == (130, []), done.terminal[-600:]
    assert "Traceback" not in done.terminal


@pytest.mark.parametrize("which", list(WATCHERS))
def test_a_reader_leaving_the_pipe_ends_a_quiet_watch_with_0(box: BoxProcess, which: str) -> None:
    with _started(*_watch(which, box.port)) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        box.console("load 1")  # at least one line, whatever earlier hosts acked
        assert proc.stdout.readline()  # `| head -1` has its line ...
        proc.stdout.close()  # ... and leaves, while the box is quiet
        assert (proc.wait(timeout=30), proc.stderr.read()) == (0, b"")


def test_demo_piped_into_head_exits_0_quietly() -> None:
    with _started("-m", "engine.cli", "demo", "--players", "2", "--target", "50") as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith(b"UNO Attack demo: 2 players")
        proc.stdout.close()
        assert (proc.wait(timeout=120), proc.stderr.read()) == (0, b"")


def test_a_scenario_and_a_deck_saved_with_a_bom_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deck = tmp_path / "mini.toml"
    deck.write_bytes(
        codecs.BOM_UTF8 + b'name = "mini"\n[cards]\nR1 = 20\nB2 = 20\n[points]\nR1 = 1\nB2 = 2\n'
    )
    assert main(["deck", "--deck", str(deck), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deck"] == "mini"
    scenario = tmp_path / "s.toml"
    scenario.write_bytes(codecs.BOM_UTF8 + (EXAMPLES / "attack-hit-two.toml").read_bytes())
    plain = main(["scenario", str(EXAMPLES / "attack-hit-two.toml")])
    expected = capsys.readouterr().out
    assert main(["scenario", str(scenario)]) == plain
    assert capsys.readouterr().out == expected


def _stop_signal_at(where: str, *, after: threading.Event) -> Callable[..., Any]:
    """A trace function that, once `after` is set, delivers SIGINT's handler (CtrlC's) at the
    line `where` of `threading`'s Condition.wait: the one line where a KeyboardInterrupt leaves
    the condition's lock released under a `with` block that releases it again."""
    import threading as threading_module

    done: list[bool] = []

    def trace(frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code.co_name != "wait" or code.co_filename != threading_module.__file__:
            return trace
        if event == "line" and not done and after.is_set():
            line = linecache.getline(code.co_filename, frame.f_lineno).strip()
            if line == where:
                done.append(True)
                handler = signal.getsignal(signal.SIGINT)
                assert callable(handler)
                handler(signal.SIGINT, frame)  # as if Ctrl-C came right here
        return trace

    trace.done = done  # type: ignore[attr-defined]
    return trace


@pytest.mark.parametrize("which", list(WATCHERS))
@pytest.mark.parametrize("where", ["gotit = False", "waiter.acquire()"])
def test_a_stop_signal_at_the_most_fragile_line_of_a_wait_still_ends_a_watch_with_130(
    box: BoxProcess, where: str, which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cause of a watch that once ended with "cannot release un-acquired lock" (exit 1)
    under load: a KeyboardInterrupt raised by the signal handler inside `threading`'s own wait,
    just after it released the lock. Now a stop signal only sets the client's `halt`, and its
    waits stop at a safe point: the signal is delivered here at exactly that line."""
    import argparse

    from engine.watch import run_watch

    printed = threading.Event()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            if " refill " in text:
                printed.set()
            return super().write(text)

    args = argparse.Namespace(port=box.port, json=False, count=0, replay=False, timeout=5.0)
    feeder_stop = threading.Event()

    def loads() -> None:  # events for the watch, until it has printed one
        while not feeder_stop.wait(0.2) and not printed.is_set():
            box.console("load 20")

    feeder = threading.Thread(target=loads, daemon=True)
    feeder.start()
    trace = _stop_signal_at(where, after=printed)
    if which == "launcher send watch":
        from firmware.cli import main as launcher

        monkeypatch.setattr("sys.stdout", Out())
        watch = lambda: launcher(["send", str(box.port), "watch"])  # noqa: E731
    else:
        watch = lambda: run_watch(args, Out())  # noqa: E731
    sys.settrace(trace)
    try:
        code = watch()
    finally:
        sys.settrace(None)
        feeder_stop.set()
        feeder.join()
    assert trace.done == [True]  # type: ignore[attr-defined]  # the signal came where meant
    assert code == 130


def test_a_stop_signal_at_the_most_fragile_line_of_a_wait_ends_the_demo_with_130(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same for `unoattack demo`, whose game waits on the mock box at every press: the stop
    signal lands in `threading`'s wait just after it released its lock, and the demo still
    stops the box and ends with 130."""
    printed = threading.Event()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            if " plays " in text:
                printed.set()
            return super().write(text)

    out = Out()
    monkeypatch.setattr("sys.stdout", out)
    trace = _stop_signal_at("gotit = False", after=printed)
    sys.settrace(trace)
    try:
        code = main(["demo", "--players", "2", "--seed", "3", "--speed", "20"])
    finally:
        sys.settrace(None)
    assert trace.done == [True]  # type: ignore[attr-defined]
    assert code == 130 and "interrupted: stopping the box" in out.getvalue()
