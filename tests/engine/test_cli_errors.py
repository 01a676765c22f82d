"""The `unoattack` command line under a careless user: every mistake found by the UX sweep ends
in one stderr line naming the problem and what is allowed, exit 2 for bad input, nothing lost
and no traceback. One regression case per problem that was fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine import scenario, sim
from engine.cli import main
from tests.conftest import run_main

ROOT = Path(__file__).resolve().parents[2]
BINARY = bytes(range(128, 256)) * 3  # not UTF-8 anywhere


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """The kinds of path a careless user passes: a directory, binary junk, a plain file..."""
    (tmp_path / "adir").mkdir()
    (tmp_path / "junk.bin").write_bytes(BINARY)
    (tmp_path / "junk.toml").write_bytes(BINARY)
    (tmp_path / "notes.txt").write_text("precious notes\n")
    # A scenario that is fine except that its deck file is binary junk.
    (tmp_path / "junkdeck.toml").write_text('deck = "junk.toml"\nplayers = 2\n')
    return {p.name.split(".")[0]: str(p) for p in tmp_path.iterdir()}


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `unoattack ARGV`."""
    return run_main(main, argv, capsys)


def _one_line(err: str) -> None:
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err


# (argv with {name} placeholders for the files fixture, exit code, text the message must hold)
CASES: list[tuple[list[str], int, str]] = [
    # no command at all: name the commands, not the slot
    ([], 2, "give a command: deck, score, sim, sweep, scenario, demo, table, watch"),
    # scenario: a binary file, or a scenario whose deck file is binary
    (["scenario", "{junk}"], 2, "{junk}: not a text file: a scenario is UTF-8 TOML"),
    (["scenario", "{junkdeck}"], 2, "deck: {adir}/../junk.toml"),
    # sim: numbers that are not numbers, and more games than any run should ask for
    (["sim", "--games", "abc"], 2, "--games: expected a whole number, got 'abc'"),
    (["sim", "--players", "four"], 2, "--players: expected a whole number, got 'four'"),
    (["sim", "--games", "99999999999"], 2, "--games 99999999999: from 1 to 10000000"),
    # watch: a file or a directory is not a serial port; an unknown URL is the user's mistake
    (["watch", "--port", "{notes}"], 2, "is a regular file, not a serial port"),
    (["watch", "--port", "{adir}"], 2, "is a directory, not a serial port"),
    (["watch", "--port", "garbage://x"], 2, "BAD_PORT: port 'garbage://x' has an unknown URL"),
    (["watch", "--port", "/dev/nonexistent-uno"], 1, "no serial port at /dev/nonexistent-uno"),
    (["watch", "--port", "loop://", "--timeout", "nan"], 2, "--timeout: expected seconds above"),
    (["--bogus"], 2, "unknown option '--bogus'; see unoattack --help"),
    (["sim", "--bogus"], 2, "unknown option '--bogus'; see unoattack sim --help"),
    (["watch", "--port", "loop://", "--count", "x"], 2, "--count: expected a whole number"),
]


@pytest.mark.parametrize(("argv", "code", "message"), CASES)
def test_mistakes_give_one_line_and_the_right_code(
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    got, _, err = _run(capsys, [a.format(**files) for a in argv])
    assert got == code
    _one_line(err)
    expected = message.format(**files)
    if "/../" in expected:  # the deck path is named as the scenario wrote it, next to it
        expected = "deck: " + str(Path(files["junkdeck"]).parent / "junk.toml")
    assert expected in err


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (FileNotFoundError(2, "No such file or directory", "d/t.json.tmp"), 2, "cannot use d/t"),
        (IsADirectoryError(21, "Is a directory", "adir"), 2, "cannot use adir: is a directory"),
        (UnicodeDecodeError("utf-8", b"\xe8", 0, 1, "invalid"), 2, "not UTF-8 text"),
        (OSError(28, "No space left on device", "out"), 1, "cannot use out: no space left"),
    ],
)
def test_an_os_error_a_command_let_through_is_still_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    exc: BaseException,
    code: int,
    message: str,
) -> None:
    def boom(*_args: object, **_kwargs: object) -> tuple[dict, int]:
        raise exc

    monkeypatch.setattr(scenario, "run_file", boom)
    got, _, err = _run(capsys, ["scenario", files["notes"]])
    assert got == code
    _one_line(err)
    assert message in err


# -- Ctrl-C keeps what was done ---------------------------------------------------------------


def test_ctrl_c_during_sim_reports_the_whole_games_played(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sim._play_game
    calls = {"n": 0}

    def third_game_interrupted(*args: object, **kwargs: object) -> sim.SimStats:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # Ctrl-C in the middle of game 3
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sim, "_play_game", third_game_interrupted)
    # One worker: the games run in this process, where the injected Ctrl-C is raised (with a
    # pool, Ctrl-C reaches the parent: tests/engine/test_sim_workers.py).
    argv = ["sim", "--players", "2", "--games", "1000", "--target", "100", "--workers", "1"]
    code, out, err = _run(capsys, [*argv, "--json"])
    assert code == 130
    assert err == ""
    data = json.loads(out)
    assert data["interrupted"] is True
    assert data["games"] == 2
    assert sum(data["wins"]) == 2  # whole games only: one winner each
    assert sum(data["round_wins"]) == data["rounds"]


def test_the_games_of_an_interrupted_run_match_an_uninterrupted_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ["--players", "2", "--target", "100", "--seed", "5"]
    parse = sim.settings_from_args
    from engine.cli import build_parser

    whole = sim.run_sim(parse(build_parser("sim").parse_args(["sim", *args, "--games", "2"])))
    seen = {"n": 0}

    def stop_after_two(done: int, total: int) -> None:
        seen["n"] = done
        if done == 2:
            raise KeyboardInterrupt

    cut = sim.run_sim(
        parse(build_parser("sim").parse_args(["sim", *args, "--games", "50"])),
        progress=stop_after_two,
    )
    assert cut.interrupted and not whole.interrupted
    assert cut.games == whole.games == 2
    keep = ("games", "rounds", "turns", "actions", "wins", "round_wins", "points", "hits")
    assert {k: getattr(cut, k) for k in keep} == {k: getattr(whole, k) for k in keep}


def test_interrupted_table_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    data = {
        "games": 2,
        "rounds": 5,
        "players": 2,
        "deck": "attack",
        "mode": "target",
        "target": 100,
        "seed": 0,
        "bots": ["heuristic", "heuristic"],
        "wins": [1, 1],
        "round_wins": [3, 2],
        "points_scored": [120, 130],
        "mean_rounds_per_game": 2.5,
        "mean_turns_per_round": 10.0,
        "hits": 4,
        "dry_hits": 2,
        "cards_fired": 5,
        "elapsed_s": 0.1,
        "interrupted": True,
    }
    assert sim.format_table(data, asked=50).endswith("interrupted by Ctrl-C after 2 of 50 games")


# -- a closed pipe ends a quiet watch ---------------------------------------------------------


@pytest.mark.parametrize("first_signal_lost", [False, True])
def test_watch_ends_when_the_reader_of_its_pipe_leaves(first_signal_lost: bool) -> None:
    # A box that sends nothing: the main thread waits the way BoxClient.events() does. A signal
    # that lands just before the main thread blocks is acted on only when the wait ends; that
    # race is injected by dropping the first signal the watch sends.
    lose = (
        "import signal\n"
        "_kill, _sent = signal.pthread_kill, []\n"
        "def _lossy(tid, sig):\n"
        "    _sent.append(sig)\n"
        "    if len(_sent) > 1:\n"
        "        _kill(tid, sig)\n"
        "signal.pthread_kill = _lossy\n"
        if first_signal_lost
        else ""
    )
    program = lose + textwrap.dedent(
        """
        import sys, threading
        from engine.watch import stop_when_reader_goes
        print("watching", flush=True)
        try:
            with stop_when_reader_goes(sys.stdout):
                threading.Event().wait(60)
        except KeyboardInterrupt:
            sys.exit(0)  # as run_watch: the reader leaving ends the watch like Ctrl-C
        sys.exit(4)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    watcher = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    assert watcher.stdout is not None and watcher.stderr is not None
    assert watcher.stdout.readline() == b"watching\n"
    watcher.stdout.close()  # `| head -1` has its line and leaves
    assert watcher.wait(timeout=30) == 0
    assert watcher.stderr.read() == b""


# -- through a real process: no traceback reaches the terminal -------------------------------


@pytest.mark.parametrize(
    ("argv", "code"), [(["scenario", "{junk}"], 2), (["watch", "--port", "{adir}"], 2), ([], 2)]
)
def test_no_traceback_from_the_console_script(
    files: dict[str, str], argv: list[str], code: int
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine.cli", *(a.format(**files) for a in argv)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == code
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
