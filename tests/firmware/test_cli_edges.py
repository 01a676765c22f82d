"""`launcher` tried as a new user would (issue 10): `--version`, a PC without GPIO, a config
saved by Notepad, burst weights beyond `[limits] max_burst`, `model fit --write-config` into a
new file or a smaller box, `send` ranges that are the box's own, and a repeatable bench."""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from common import jam
from common.errors import ConfigError, LauncherError
from common.jam import JamParams, describe
from firmware import config as config_mod
from firmware.cli import main
from firmware.link import Link
from tests import configs
from tests.conftest import DEFAULT_CONFIG, ROOT, run_main
from tests.firmware.conftest import write_config

DOC_BENCH = ROOT / "docs" / "bench.md"


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    return run_main(main, argv, capsys)


def _with_limit(path: Path, max_burst: int) -> Path:
    """The documented default config with `[limits] max_burst` changed in place (as a user
    edits it; the rest, comments included, as shipped)."""
    return configs.write_config(path, {"limits.max_burst": max_burst})


# -- --version --------------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["firmware.cli", "engine.cli"])
def test_both_commands_have_a_version(module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", module, "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    prog = "launcher" if module.startswith("firmware") else "unoattack"
    assert proc.returncode == 0 and proc.stderr == ""
    assert re.fullmatch(rf"{prog} \S+ \(Python 3\.\d+\.\d+\)\n", proc.stdout), proc.stdout


def test_a_stdout_that_cannot_show_every_character_is_not_a_traceback() -> None:
    # `launcher bench` prints "60 ± 10 ms"; on an ASCII-only stdout that ended in a
    # UnicodeEncodeError halfway through the summary.
    proc = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "bench", "--mock", "--presses", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "ascii"},
    )
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert "feed interval 60 ? 10 ms" in proc.stdout


# -- no GPIO library: one line, no gpiozero warnings -----------------------------------------


def test_real_pins_off_a_pi_are_one_line_without_fallback_warnings() -> None:
    from firmware.pins import make_factory

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            factory = make_factory(mock=False)
        except LauncherError as exc:
            message = str(exc)
        else:  # pragma: no cover - only on a Pi with its GPIO libraries
            factory.close()
            pytest.skip("this machine has a GPIO library")
    assert caught == []  # gpiozero's PinFactoryFallback warnings were 8 lines on stderr
    assert "\n" not in message
    assert message.startswith("no GPIO library could drive the pins (lgpio: ")
    assert message.endswith("on a Raspberry Pi install the 'pi' extra, anywhere else use --mock")


def test_launcher_run_off_a_pi_prints_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    if proc.returncode == 0:  # pragma: no cover - a Pi
        pytest.skip("this machine has a GPIO library")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "no GPIO library could drive the pins" in proc.stderr


# -- a config written by Notepad (BOM) or PowerShell (UTF-16) ---------------------------------


@pytest.mark.parametrize(
    ("encoding", "mark"),
    [
        ("utf-8", codecs.BOM_UTF8),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
    ],
)
def test_a_config_with_a_byte_order_mark_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str, mark: bytes
) -> None:
    path = tmp_path / "box.toml"
    path.write_bytes(mark + DEFAULT_CONFIG.read_text(encoding="utf-8").encode(encoding))
    code, out, err = _run(capsys, ["config", "check", str(path)])
    assert (code, err) == (0, "")
    assert out.startswith(f"{path}: OK")
    assert config_mod.load(path) == dataclasses.replace(
        config_mod.load(DEFAULT_CONFIG), path=str(path)
    )


def test_fit_reads_and_rewrites_a_config_with_a_bom(tmp_path: Path) -> None:
    cfg = tmp_path / "box.toml"
    cfg.write_bytes(codecs.BOM_UTF8 + DEFAULT_CONFIG.read_bytes())
    counts = tmp_path / "counts.txt"
    counts.write_bytes(codecs.BOM_UTF8 + b"0 0 3 0 5 0 0 2 0 4 0 0 0 6\n")
    assert main(["model", "fit", str(counts), "--write-config", str(cfg)]) == 0
    assert config_mod.load(cfg).jam.mode == "hazard"


def test_a_file_in_another_encoding_is_still_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "box.toml"
    path.write_bytes(
        DEFAULT_CONFIG.read_text(encoding="utf-8").replace("#", "# é").encode("latin-1")
    )
    code, _, err = _run(capsys, ["config", "check", str(path)])
    assert code == 78 and err.count("\n") == 1
    assert "not a text file: TOML must be UTF-8" in err


# -- burst weights and [limits] max_burst: one rule -------------------------------------------


def test_config_check_refuses_more_burst_weights_than_max_burst(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _with_limit(tmp_path / "six.toml", 6)
    code, _, err = _run(capsys, ["config", "check", str(path)])
    assert code == 78 and err.count("\n") == 1
    assert "[jam] burst_weights = [0, 1, 3, 4, 4, 3, 2, 2, 1, 1, 0.5, 0.5]: has 12 weights" in err
    assert "[limits] max_burst = 6: give at most 6" in err


def test_weights_a_file_does_not_use_are_folded_at_the_limit(tmp_path: Path) -> None:
    # Left out, or in another mode: the box holds as many weights as it may fire cards, with
    # the distribution the cap gives (weights of 6 to 12 cards all on 6).
    left_out = write_config(
        tmp_path / "a.toml",
        {"limits.max_burst": 6, "jam.mode": "hazard", "jam.burst_weights": None},
    )
    fixed = write_config(tmp_path / "b.toml", {"limits.max_burst": 6})  # fixed mode (FAST)
    folded = (0, 1, 3, 4, 4, 3 + 2 + 2 + 1 + 1 + 0.5 + 0.5)
    for path in (left_out, fixed):
        assert config_mod.load(path).jam.burst_weights == folded
    capped = JamParams(max_burst=6)  # the old way: 12 weights, capped when drawn
    assert describe(config_mod.load(left_out).jam)["burst"] == pytest.approx(
        describe(capped)["burst"]
    )


def test_model_set_refuses_weights_past_the_limit(make_box: Callable[..., Any]) -> None:
    box = make_box({"limits.max_burst": 6})
    reply = box.command("model.set", params={"mode": "hazard", "burst_weights": [1] * 7})
    assert reply["error"]["code"] == "BAD_ARG"
    assert "has 7 weights" in reply["error"]["message"]
    assert box.command("model.set", params={"mode": "hazard"})["ok"]  # its own weights fit


def test_the_jam_models_burst_bound_is_the_configs(tmp_path: Path) -> None:
    over = write_config(tmp_path / "c.toml", {"limits.max_burst": jam.MAX_BURST_LIMIT + 1})
    with pytest.raises(ConfigError, match=f"from 1 to {jam.MAX_BURST_LIMIT}"):
        config_mod.load(over)
    with pytest.raises(ValueError, match=f"between 1 and {jam.MAX_BURST_LIMIT}"):
        JamParams(max_burst=jam.MAX_BURST_LIMIT + 1).validate()


# -- model fit --write-config -----------------------------------------------------------------


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    counts = jam.sample(JamParams(seed=4), 400, seed=4)
    path = tmp_path / "rec.txt"
    path.write_text("\n".join(map(str, counts)) + "\n")
    return path


def test_fit_into_a_smaller_box_fits_its_limit_or_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recording: Path
) -> None:
    six = _with_limit(tmp_path / "six.toml", 6)
    before = six.read_text()
    code, _, err = _run(capsys, ["model", "fit", str(recording), "--write-config", str(six)])
    # the recording has bursts of up to 12 cards: a box of 6 never fires them
    assert code == 2 and err.count("\n") == 1
    assert "cards is more than max_burst (6)" in err
    code, _, err = _run(
        capsys, ["model", "fit", str(recording), "--write-config", str(six), "--max-burst", "12"]
    )
    assert code == 2
    assert f"--max-burst must be from 1 to [limits] max_burst = 6 of {six}, got 12" in err
    assert six.read_text() == before
    small = tmp_path / "small.txt"
    small.write_text(" ".join(str(min(int(c), 6)) for c in recording.read_text().split()))
    code, _, err = _run(capsys, ["model", "fit", str(small), "--write-config", str(six)])
    assert (code, err) == (0, "")
    fitted = config_mod.load(six).jam
    assert len(fitted.burst_weights) <= 6 and fitted.max_burst == 6


def test_fit_without_a_config_takes_the_default_configs_limit(
    capsys: pytest.CaptureFixture[str], recording: Path
) -> None:
    code, _, err = _run(capsys, ["model", "fit", str(recording), "--max-burst", "13"])
    assert code == 2
    assert "--max-burst must be from 1 to [limits] max_burst = 12 of the default config" in err


def test_write_config_to_a_new_file_starts_from_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recording: Path
) -> None:
    new = tmp_path / "mybox.toml"
    code, out, err = _run(capsys, ["model", "fit", str(recording), "--write-config", str(new)])
    assert (code, err) == (0, "")
    assert f"wrote the fitted [jam] values into {new} (a new file, from the default config)" in out
    cfg = config_mod.load(new)
    assert cfg.pins == config_mod.load(DEFAULT_CONFIG).pins
    assert cfg.jam.base != JamParams.base  # the fitted values, not the defaults
    assert new.stat().st_mode & 0o777 == 0o644
    code, _, err = _run(
        capsys, ["model", "fit", str(recording), "--write-config", str(tmp_path / "no" / "x.toml")]
    )
    assert code == 2 and "folder" in err and "does not exist" in err


# -- send: the box names its own limits -------------------------------------------------------


@pytest.fixture
def wired_port(make_box: Callable[..., Any]) -> Iterator[Callable[[dict[str, Any]], str]]:
    links: list[Link] = []

    def wire(overrides: dict[str, Any]) -> str:
        box = make_box(overrides)
        link = Link("pty", box.daemon, box.daemon.journal)
        link.start()
        links.append(link)
        assert link.port_path is not None
        return link.port_path

    yield wire
    for link in links:
        link.stop()


@pytest.mark.parametrize(
    ("limit", "args", "needle"),
    [
        (12, ["dispense", "13"], "count must be from 1 to 12, got 13"),
        (12, ["dispense", "100000"], "count must be from 1 to 12, got 100000"),
        (6, ["dispense", "7"], "count must be from 1 to 6, got 7"),
        (12, ["aim", "4"], "seat must be from 0 to 3, got 4"),
        # (what no box takes, `dispense 0`, `aim -1`, `load 0`, is refused before the port is
        # opened, by the op table's check: tests/firmware/test_send.py)
        # too long for one frame: the box could only answer LINE_TOO_LONG, without an id
        (12, ["dispense", "9" * 600], "dispense does not fit in one frame (frame is 6"),
    ],
)
def test_send_reports_the_limit_of_the_box_it_talks_to(
    capsys: pytest.CaptureFixture[str],
    wired_port: Callable[[dict[str, Any]], str],
    limit: int,
    args: list[str],
    needle: str,
) -> None:
    port = wired_port({"limits.max_burst": limit})
    code, _, err = _run(capsys, ["send", port, *args])
    assert code == 2, err
    assert err.startswith(f"launcher send: BAD_ARG: {needle}") and err.count("\n") == 1


# -- bench --seed: the documented run can be repeated ------------------------------------------


def _doc_run() -> tuple[list[str], dict[int, int], int]:
    """The documented example: its command line, cards-per-press histogram and dry presses."""
    text = DOC_BENCH.read_text(encoding="utf-8")
    example = text[text.index("## Example (mock pins, default config)") :]
    command = re.search(r"^\$ launcher (bench .*)$", example, re.M)
    assert command is not None
    block = example[example.index("cards per press") : example.index("rows written")]
    hist = {int(k): int(n) for k, n in re.findall(r"^\s+(\d+)\s+(\d+)", block, re.M)}
    dry = int(re.search(r"^reasons: dry (\d+)", example, re.M).group(1))  # type: ignore[union-attr]
    return command.group(1).split(), hist, dry


def test_the_documented_bench_run_is_reproduced_by_its_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, hist, dry = _doc_run()
    assert "--seed" in argv and "--mock" in argv
    seed = argv[argv.index("--seed") + 1]
    presses = argv[argv.index("--presses") + 1]
    # The default config's jam model and hopper, with a fast plant: only the timings change,
    # and the model's plan is what the seed fixes.
    fast = write_config(
        tmp_path / "fast.toml",
        {
            "jam.mode": "hazard",
            "jam.count": 1,
            "jam.seed": 0,
            "plant.hopper": 112,
            "plant.feed_interval_ms": 4,
            "plant.feed_jitter_ms": 1,
            "plant.beam_ms": 1,
            "plant.spinup_ms": 0,
            "timing.card_timeout_ms": 2000,
            "timing.settle_ms": 5,
        },
    )
    assert config_mod.load(fast).jam == config_mod.load(DEFAULT_CONFIG).jam
    code, out, _ = _run(
        capsys,
        ["bench", "--mock", "--config", str(fast), "--presses", presses, "--seed", seed, "--json"],
    )
    assert code == 0
    data = json.loads(out)
    planned = [p["planned"] for p in data["presses"]]
    assert data["summary"]["seed"] == int(seed)
    assert planned.count(0) == dry
    got = {k: planned.count(k) for k in range(max(hist) + 1)}
    assert got == hist


def test_bench_seed_is_checked_like_every_seed(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, ["bench", "--mock", "--seed", "-1"])
    assert code == 2 and "--seed: expected a whole number from 0 to 9223372036854775807" in err
