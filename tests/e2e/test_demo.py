"""`unoattack demo` end to end: a whole seeded game through the daemon on a real pty."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from engine.demo import color_wanted
from engine.mockbox import MockBox, demo_config
from tests.ctrl_c import interrupt
from tests.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
PRESS = re.compile(r"press (\d+) -> (dry|(\d+) cards?)( \+(\d+) slipped out)?")
CONSERVATION = re.compile(r"conservation: launcher pile (\d+) = box hopper (\d+)")
# docs/demo.md's transcript: the command, and its output with `...` where the middle is cut
DEMO_DOC = ROOT / "docs" / "demo.md"
TRANSCRIPT = re.compile(r"Real output of `unoattack (demo [^`]*)`[^`]*?:\n\n```\n(.*?)\n```", re.S)
SUMMARY = re.compile(r"The last line is the summary as JSON:\n\n```\n(.*?)\n```", re.S)
# What the seed does not fix: the pty's name, the time taken, the box's pid, and the box's
# state changes between two presses (how far a burst's cooldown got is the machine's pace).
UNSTEADY = [
    (re.compile(r"/dev/pts/\d+"), "/dev/pts/N"),
    (re.compile(r"\d+\.\d s;"), "T s;"),
    (re.compile(r'"(box_pid|elapsed_s)":[\d.]+'), r'"\1":N'),
    (re.compile(r"  box [a-z>]+$"), ""),
]


class PtyRun:
    """A command with stdin/stdout/stderr on a fresh pty, like a person at a terminal."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        master, slave = pty.openpty()
        self.master = master
        self.proc = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, close_fds=True, env=env
        )
        os.close(slave)
        self.buf = b""

    def read_until(self, pattern: str, timeout: float) -> str:
        """Read output until `pattern` (a regex) appears or the program ends."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while not rx.search(self.text()):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} within {timeout} s:\n{self.text()[-2000:]}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # EIO: the program closed the pty
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"ended without {pattern!r}:\n{self.text()[-2000:]}")
                self.buf += chunk
        return self.text()

    def finish(self, timeout: float) -> tuple[int, str]:
        """Read to the end; the exit code and the whole output (colours removed)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.proc.kill()
                raise AssertionError(f"still running after {timeout} s:\n{self.text()[-2000:]}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self.buf += chunk
            elif self.proc.poll() is not None:
                break
        os.close(self.master)
        return self.proc.wait(timeout=10), self.text()

    def text(self) -> str:
        return ANSI.sub("", self.buf.decode(errors="replace")).replace("\r\n", "\n")


def demo_args(*extra: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli", "demo", *extra]


def steady(line: str) -> str:
    """A transcript line without what the seed does not fix (`UNSTEADY`)."""
    for pattern, instead in UNSTEADY:
        line = pattern.sub(instead, line)
    return line


def documented_demo() -> tuple[list[str], list[list[str]], str]:
    """docs/demo.md's demo: its arguments, its transcript in pieces (cut at `...`), and the
    JSON summary it shows."""
    text = DEMO_DOC.read_text(encoding="utf-8")
    found, summary = TRANSCRIPT.search(text), SUMMARY.search(text)
    assert found and summary, "docs/demo.md: no `Real output of ...` or JSON summary block"
    pieces: list[list[str]] = [[]]
    for line in found.group(2).splitlines():
        if line == "...":
            pieces.append([])
        else:
            pieces[-1].append(steady(line))
    return found.group(1).split()[1:], pieces, steady(summary.group(1))


def check_documented(out: str) -> None:
    """docs/demo.md shows the real output: each piece of its transcript, in order, the first
    at the start, the last just before the summary, which is the last line."""
    _args, pieces, summary = documented_demo()
    lines = [steady(line) for line in out.strip().splitlines()]
    assert lines[-1] == summary, f"docs/demo.md's summary is stale; the real one:\n{lines[-1]}"
    lines = lines[:-1]
    at = 0
    for i, piece in enumerate(pieces):
        if i == 0:
            where = 0 if lines[: len(piece)] == piece else -1
        elif i == len(pieces) - 1:
            where = len(lines) - len(piece) if lines[len(lines) - len(piece) :] == piece else -1
        else:
            where = next(
                (k for k in range(at, len(lines)) if lines[k : k + len(piece)] == piece), -1
            )
        real = "\n".join(out.strip().splitlines()[:-1])
        assert where >= at, f"docs/demo.md's transcript piece {i + 1} is stale; the real:\n{real}"
        at = where + len(piece)


def gone(pid: int) -> bool:
    """True when no process with `pid` exists any more (a zombie counts as still there)."""
    try:
        psutil.Process(pid)
    except psutil.NoSuchProcess:
        return True
    return False


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    try:
        psutil.Process(pid).wait(timeout)
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        return False
    return gone(pid)


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_a_whole_seeded_game_through_the_box():
    # A game to 200 points: three rounds, a reload between each two, in some 30 presses (the
    # default target, 500, plays longer, proving nothing more).
    args = ["--players", "2", "--seed", "1", "--speed", "50", "--target", "200", "--json"]
    assert documented_demo()[0] == args  # docs/demo.md shows this very game
    run = PtyRun(demo_args(*args))
    code, out = run.finish(timeout=80)
    assert code == 0, out[-3000:]
    check_documented(out)
    summary = json.loads(out.strip().splitlines()[-1])

    # The game ends with a winner at or above the target.
    assert summary["target"] == 200
    winner = summary["winner"]
    assert summary["scores"][winner] >= 200
    assert f"{summary['winner_name']} wins with {summary['scores'][winner]} points" in out

    # Cards are conserved: after every round the engine's pile equals the plant's hopper.
    checks = CONSERVATION.findall(out)
    assert len(checks) == summary["rounds"] >= 2 and summary["reloads"] >= 1
    assert all(pile == hopper for pile, hopper in checks)
    assert summary["conserved"] and all(c["ok"] for c in summary["conservation"])

    # Every press has exactly one fire result, and the output shows each press once.
    presses = [int(m.group(1)) for m in PRESS.finditer(out)]
    assert len(presses) == summary["presses"] == summary["fire_results"]
    assert len(set(presses)) == len(presses) == summary["unique_fire_press_ids"]
    assert presses == sorted(presses)
    fired = sum(int(m.group(3) or 0) + int(m.group(5) or 0) for m in PRESS.finditer(out))
    assert fired == summary["cards_fired"] > 0
    dry = sum(1 for m in PRESS.finditer(out) if m.group(2) == "dry")
    assert dry == summary["dry_presses"]

    # No process is left behind: the box child was stopped and reaped.
    assert summary["box_exit"] == 0
    assert gone(summary["box_pid"])
    # the transcript's sounds: the mock box's recording sink, one press cue per press
    sounds = summary["sounds"]
    assert sounds["press"] == summary["presses"] and sounds["ready"] == 1
    assert f"the box's sounds ({sum(sounds.values())}): press " in out


def _box_child(demo_pid: int, timeout: float = 20.0) -> psutil.Process:
    parent = psutil.Process(demo_pid)

    def box_child() -> psutil.Process | None:
        found = [c for c in parent.children() if "firmware.cli" in " ".join(c.cmdline())]
        return found[0] if found else None

    return wait_until(box_child, timeout, what="the demo's box child", poll=0.05)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_ctrl_c_stops_the_box_child():
    run = PtyRun(demo_args("--players", "3", "--seed", "2", "--speed", "1"))
    run.read_until(r"Round 1", timeout=30)
    child = _box_child(run.proc.pid)
    run.read_until(r"press \d+ ->", timeout=30)
    os.kill(run.proc.pid, signal.SIGINT)
    code, out = run.finish(timeout=30)
    assert code == 130, out[-2000:]
    assert "interrupted: stopping the box" in out
    assert "Traceback" not in out
    assert wait_gone(child.pid)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_three_ctrl_c_still_stop_the_box_child_without_a_traceback():
    """Ctrl-C pressed again while the demo stops its box (issue 21): the stop is not cut short,
    no traceback, exit 130, nothing left running."""
    children: list[psutil.Process] = []
    argv = demo_args("--players", "3", "--seed", "2", "--speed", "1")[1:]
    done = interrupt(
        argv,
        running=b" -> ",  # a press and its fire result: the game is under way
        signals=3,
        interactive=True,
        when_running=lambda pid: children.append(_box_child(pid)),
    )
    assert (done.code, done.left) == (130, []), done.terminal[-2000:]
    assert "interrupted: stopping the box" in done.terminal
    assert "Traceback" not in done.terminal
    assert wait_gone(children[0].pid)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_the_box_child_dies_with_a_killed_demo():
    run = PtyRun(demo_args("--players", "3", "--seed", "2", "--speed", "1"))
    run.read_until(r"Round 1", timeout=30)
    child = _box_child(run.proc.pid)
    os.kill(run.proc.pid, signal.SIGKILL)
    run.finish(timeout=30)
    assert wait_gone(child.pid)


def test_speed_shortens_timings_but_leaves_limits(default_config_path):
    text = default_config_path.read_text()
    fast = demo_config(text, speed=10, players=3, seed=5)
    import tomllib

    slow_cfg, fast_cfg = tomllib.loads(text), tomllib.loads(fast)
    assert fast_cfg["limits"] == slow_cfg["limits"]
    assert fast_cfg["timing"]["cooldown_ms"] == slow_cfg["timing"]["cooldown_ms"] // 10
    # the retraction after each burst too, still on (it would be off at 0)
    assert fast_cfg["ejector"]["retract_ms"] == slow_cfg["ejector"]["retract_ms"] // 10
    assert (
        tomllib.loads(demo_config(text, speed=1000, players=3, seed=5))["ejector"]["retract_ms"]
        == 1
    )
    assert fast_cfg["plant"]["feed_interval_ms"] >= 12
    assert fast_cfg["box"]["seats"] == 3 and len(fast_cfg["servo"]["seat_angles"]) == 3
    assert fast_cfg["jam"]["seed"] != 0
    # suspense pauses shorten with the rest (never lengthen: a whir keeps inside its limit)
    assert fast_cfg["patterns"]["time_scale"] == 0.1
    assert (
        tomllib.loads(demo_config(text, speed=0.5, players=3, seed=5))["patterns"]["time_scale"]
        == 1.0
    )
    # settle_ms is scaled too, but still covers a coasting roller's next card: one feed
    # interval (plus jitter) and a beam time.
    plant = fast_cfg["plant"]
    settle = fast_cfg["timing"]["settle_ms"]
    assert settle < slow_cfg["timing"]["settle_ms"]
    assert settle >= plant["feed_interval_ms"] + plant["feed_jitter_ms"] + plant["beam_ms"]
    assert demo_config(text, speed=1, players=3, seed=5).count("settle_ms = 100") == 1
    # The daemon accepts it: `launcher config check` exits 0.
    box = MockBox(fast)
    try:
        check = subprocess.run(
            [sys.executable, "-m", "firmware.cli", "config", "check", str(box.config_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        box.cleanup()
    assert check.returncode == 0, check.stderr


def test_a_game_goes_to_500_points_unless_told():
    from engine.cli import build_parser

    assert build_parser("demo").parse_args(["demo"]).target == 500


def test_bad_arguments_are_one_line_usage_errors():
    for extra, word in ((["--players", "1"], "--players"), (["--deck", "clasic"], "clasic")):
        res = subprocess.run(
            demo_args(*extra), capture_output=True, text=True, cwd=ROOT, timeout=60
        )
        assert res.returncode == 2
        assert word in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_colour_only_on_a_terminal_that_shows_it(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert color_wanted(Tty()) and not color_wanted(io.StringIO())
    monkeypatch.setenv("TERM", "dumb")
    assert not color_wanted(Tty())
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not color_wanted(Tty())


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_a_classic_game_dispenses_every_draw_and_conserves_cards():
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "dumb"}
    # Seed 5 plays two rounds in 19 dispenses (seed 3 needed 70 for the same two rounds).
    args = ["--deck", "classic", "--players", "2", "--seed", "5", "--speed", "100"]
    run = PtyRun(demo_args(*args, "--target", "100", "--json"), env=env)
    code, out = run.finish(timeout=80)
    assert code == 0, out[-3000:]
    assert b"\x1b[" not in run.buf  # TERM=dumb: a real pty, yet no colour escape codes
    summary = json.loads(out.strip().splitlines()[-1])
    winner = summary["winner"]
    assert summary["target"] == 100 and summary["scores"][winner] >= 100
    # Every draw is a dispense (no hits in classic), and each is one press with one result.
    assert summary["hits"] == 0 and summary["dry_presses"] == 0
    draws = PRESS.findall(out)
    assert len(draws) == summary["presses"] == summary["fire_results"] > 0
    assert re.search(r"(Ann|Bob): press \d+ -> 1 card\b", out)  # a draw, for the drawer
    assert sum(int(n or 0) + int(s or 0) for _, _, n, _, s in draws) == summary["cards_fired"]
    checks = CONSERVATION.findall(out)
    assert len(checks) == summary["rounds"] >= 1
    assert all(pile == hopper for pile, hopper in checks) and summary["conserved"]
    assert summary["box_exit"] == 0 and gone(summary["box_pid"])
