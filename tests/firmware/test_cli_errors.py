"""The `launcher` command line under a careless user: every mistake found by the UX sweep ends in
one stderr line naming the problem and what is allowed, exit 2 (usage) or 78 (config), nothing
lost and no traceback. One regression case per problem that was fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from firmware import bench, jam_cli
from firmware.cli import main
from tests.firmware.conftest import FAST, write_config

ROOT = Path(__file__).resolve().parents[2]
COUNTS = "1\n0\n3\n0\n0\n2\n1\n0\n4\n0\n2\n"
BINARY = bytes(range(128, 256)) * 3  # not UTF-8 anywhere


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The kinds of path a careless user passes: a directory, binary junk, an empty file..."""
    (tmp_path / "adir").mkdir()
    (tmp_path / "junk.bin").write_bytes(BINARY)
    (tmp_path / "empty.toml").write_text("")
    (tmp_path / "counts.txt").write_text(COUNTS)
    (tmp_path / "notes.txt").write_text("precious notes\n")
    return {p.name.split(".")[0]: p for p in tmp_path.iterdir()}


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    """Exit code and stderr of `launcher ARGV` (argparse's own errors exit via SystemExit)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    return code, err


def _one_line(err: str) -> None:
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err


# -- argument and file mistakes ---------------------------------------------------------------

# (argv with {name} placeholders for the files fixture, exit code, text the message must hold)
CASES: list[tuple[list[str], int, str]] = [
    # no command at all: name the commands, not the slot
    ([], 2, "give a command: run, config, model, diagram, send, bench"),
    # an unknown option is named as one, not reported as a missing command
    (["--bogus"], 2, "unknown option '--bogus'; see launcher --help"),
    (["model", "--bogus"], 2, "unknown option '--bogus'; see launcher model --help"),
    (["run", "--bogus"], 2, "unknown option '--bogus'; see launcher run --help"),
    (
        ["config", "check", "--bogus"],
        2,
        "unknown option '--bogus'; see launcher config check --help",
    ),
    (["send", "loop://", "status", "--bogus"], 2, "unknown option '--bogus'; see launcher send"),
    (["diagram", "extra"], 2, "unexpected argument 'extra'; see launcher diagram --help"),
    (["model"], 2, "give an action: show, sample, fit (or --help)"),
    (["config"], 2, "give an action: check (or --help)"),
    # model fit --write-config: a directory, a binary file, a config that does not load
    (["model", "fit", "{counts}", "--write-config", "{adir}"], 2, "is a directory"),
    (["model", "fit", "{counts}", "--write-config", "{junk}"], 78, "not a text file"),
    (
        ["model", "fit", "{counts}", "--write-config", "{empty}"],
        78,
        "empty.toml: [pins] button = (missing): required; not rewritten",
    ),
    # bench: where the results go is checked before the run, not after it
    (["bench", "--mock", "--csv", "{adir}"], 2, "--csv {adir}: is a directory; give a file name"),
    # ... and a file that is not an earlier bench CSV is not overwritten (a typo for the config)
    (["bench", "--mock", "--csv", "{notes}"], 2, "--csv {notes}: exists and is not a bench CSV"),
    # send: a file or a directory is not a serial port; a missing device is an unplugged box
    (["send", "{notes}", "status"], 2, "is a regular file, not a serial port"),
    (["send", "{adir}", "status"], 2, "is a directory, not a serial port"),
    (["send", "/dev/nonexistent-uno", "status"], 1, "no serial port at /dev/nonexistent-uno"),
    (["send", "loop://", "status", "--state", "{adir}"], 2, "--state {adir}: is a directory"),
    (["send", "loop://", "status", "--state", "{notes}"], 2, "not a host state file"),
    (["send", "loop://", "status", "--state", "/nonexistent/s.db"], 2, "does not exist"),
    (["send", "loop://", "status", "--timeout", "nan"], 2, "--timeout: expected seconds above 0"),
    (["send", "loop://", "status", "--wait", "inf"], 2, "--wait: expected seconds above 0"),
    (["send", "loop://", "status", "--wait", "0"], 2, "--wait: expected seconds above 0"),
    (["send", "loop://", "status", "--timeout", "x"], 2, "--timeout: expected seconds above 0"),
]


@pytest.mark.parametrize(("argv", "code", "message"), CASES)
def test_mistakes_give_one_line_and_the_right_code(
    capsys: pytest.CaptureFixture[str],
    files: dict[str, Path],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    names = {name: str(path) for name, path in files.items()}
    got, err = _run(capsys, [a.format(**names) for a in argv])
    assert got == code
    _one_line(err)
    assert message.format(**names) in err
    assert ".launcher-" not in err  # never our temporary file's name


def test_write_config_leaves_a_file_it_cannot_use_untouched(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    before = files["junk"].read_bytes()
    code, _ = _run(
        capsys, ["model", "fit", str(files["counts"]), "--write-config", str(files["junk"])]
    )
    assert code == 78
    assert files["junk"].read_bytes() == before
    assert not list(files["junk"].parent.glob(".launcher-*"))


def test_bench_csv_never_overwrites_a_file_it_did_not_write(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    code, _ = _run(capsys, ["bench", "--mock", "--presses", "1", "--csv", str(files["notes"])])
    assert code == 2
    assert files["notes"].read_text() == "precious notes\n"
    config = write_config(tmp_path / "fast.toml", FAST)
    rows = tmp_path / "rows.csv"
    for _ in range(2):  # its own CSV is rewritten by the next run
        assert (
            main(["bench", "--mock", "--config", str(config), "--presses", "1", "--csv", str(rows)])
            == 0
        )
    assert jam_cli.read_counts(str(rows)) == [3]


def test_plot_without_an_image_suffix_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    pytest.importorskip("matplotlib")
    # matplotlib would have written `adir.png` next to the directory the user named.
    for target in (files["adir"], files["adir"].parent / "plot"):
        code, err = _run(capsys, ["bench", "--mock", "--plot", str(target)])
        assert code == 2
        _one_line(err)
        assert "name the image file with one of .png, .svg, .pdf" in err
    assert not list(files["adir"].parent.glob("*.png"))


# -- the last line of defence in firmware/cli.py ----------------------------------------------


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (IsADirectoryError(21, "Is a directory", "some/dir"), 2, "cannot use some/dir: is a dir"),
        (FileNotFoundError(2, "No such file or directory", "x.tmp"), 2, "cannot use x.tmp: no su"),
        (UnicodeDecodeError("utf-8", b"\xe8", 0, 1, "invalid"), 2, "not UTF-8 text"),
        (OSError(28, "No space left on device", "out.csv"), 1, "cannot use out.csv: no space"),
    ],
)
def test_an_os_error_a_command_let_through_is_still_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, Path],
    exc: BaseException,
    code: int,
    message: str,
) -> None:
    def boom(*_args: object, **_kwargs: object) -> list[int]:
        raise exc

    monkeypatch.setattr(jam_cli, "read_counts", boom)
    got, err = _run(capsys, ["model", "fit", str(files["counts"])])
    assert got == code
    _one_line(err)
    assert message in err


# -- Ctrl-C keeps what was done ---------------------------------------------------------------


def _interrupt_on(call: int) -> Callable[..., None]:
    """A Progress.update that lets `call - 1` presses through, then acts like Ctrl-C."""
    calls = {"n": 0}

    def update(self: bench.Progress, done: int, cards: int, *, force: bool = False) -> None:
        calls["n"] += 1
        if calls["n"] == call and not force:
            raise KeyboardInterrupt

    return update


def test_ctrl_c_during_bench_still_writes_the_rows_and_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "fast.toml", FAST)
    rows = tmp_path / "rows.csv"
    monkeypatch.setattr(bench.Progress, "update", _interrupt_on(3))
    code = main(
        [
            *("bench", "--mock", "--config", str(config), "--presses", "50"),
            *("--json", "--csv", str(rows)),
        ]
    )
    captured = capsys.readouterr()
    assert code == 130
    assert captured.err == ""
    data = json.loads(captured.out)
    assert data["summary"]["stopped"] == bench.INTERRUPTED
    assert len(data["presses"]) == 3  # the press in flight when Ctrl-C came is recorded too
    assert jam_cli.read_counts(str(rows)) == [p["ejected"] for p in data["presses"]]


# -- through a real process: no traceback reaches the terminal -------------------------------


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["model", "fit", "{counts}", "--write-config", "{junk}"], 78),
        (["send", "{adir}", "status"], 2),
        ([], 2),
    ],
)
def test_no_traceback_from_the_console_script(
    files: dict[str, Path], argv: list[str], code: int
) -> None:
    names = {name: str(path) for name, path in files.items()}
    proc = subprocess.run(
        [sys.executable, "-m", "firmware.cli", *(a.format(**names) for a in argv)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == code
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
