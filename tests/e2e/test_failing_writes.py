"""Every file a command makes, written when the disk refuses: a full SD card, a file size
limit, a read-only remount (here a real failing write: the kernel's file size limit,
RLIMIT_FSIZE, on the command's process). The command says so in one line, and what an earlier
run wrote is still there, whole: a half-written file never replaces a good one, nor does a
temporary file's name reach the user.

Before, `launcher bench --csv` and `unoattack sweep --csv` truncated the earlier file and left
the first 4 KB of the new one (`launcher model fit` read it without a word), and `launcher
model fit --write-config` on a read-only folder named its own temporary file."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.e2e.conftest import FAST
from tests.firmware.conftest import write_config

LIMIT = 4096  # bytes any file of the command may grow to


def _limited(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` whose files cannot grow past LIMIT bytes (Python ignores
    SIGXFSZ: the write fails with EFBIG, as a full disk fails it with ENOSPC)."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "LANGUAGE": "en"},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT)),
    )


def _run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_bench_csv_that_cannot_be_written_leaves_the_earlier_one_whole(tmp_path: Path) -> None:
    config = str(write_config(tmp_path / "box.toml", FAST))
    bench = ["firmware.cli", "bench", "--mock", "--config", config, "--csv", "rows.csv"]
    _run(*bench, "--presses", "3", cwd=tmp_path)
    earlier = (tmp_path / "rows.csv").read_bytes()
    assert len(earlier) < LIMIT
    done = _limited(*bench, "--presses", "60", "--seed", "2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == "launcher: cannot write rows.csv: File too large"
    assert "bench: 60 presses" in done.stdout and "rows written" not in done.stdout
    assert (tmp_path / "rows.csv").read_bytes() == earlier
    assert _leftovers(tmp_path) == []


def test_a_sweep_csv_that_cannot_be_written_leaves_the_earlier_one_whole(tmp_path: Path) -> None:
    sweep = ["engine.cli", "sweep", "--games", "4", "--workers", "1", "--csv", "rows.csv"]
    _run(*sweep, "--vary", "players=3", cwd=tmp_path)
    earlier = (tmp_path / "rows.csv").read_bytes()
    grid = ["--vary", "players=2,3,4,5,6", "--vary", "jam.base=0.1,0.2,0.3,0.4"]
    done = _limited(*sweep, *grid, cwd=tmp_path)
    assert len(earlier) < LIMIT < 20 * len(earlier.splitlines()[1])  # 20 rows do not fit
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == "unoattack: cannot write rows.csv: File too large"
    assert "20 settings" in done.stdout and "rows written" not in done.stdout  # the report
    assert (tmp_path / "rows.csv").read_bytes() == earlier
    assert _leftovers(tmp_path) == []


def test_a_config_that_cannot_be_rewritten_is_named_not_a_temporary_file(tmp_path: Path) -> None:
    config = tmp_path / "my.toml"
    config.write_text((ROOT / "hardware" / "launcher.toml").read_text())
    assert config.stat().st_size > LIMIT
    fast = str(write_config(tmp_path / "fast.toml", FAST))
    bench = ["firmware.cli", "bench", "--mock", "--config", fast, "--presses", "20"]
    _run(*bench, "--csv", "rows.csv", cwd=tmp_path)
    earlier = config.read_bytes()
    done = _limited(
        "firmware.cli", "model", "fit", "rows.csv", "--write-config", "my.toml", cwd=tmp_path
    )
    assert done.returncode == 1
    assert done.stderr.strip() == "launcher: cannot use my.toml: file too large", done.stderr
    assert config.read_bytes() == earlier and _leftovers(tmp_path) == []
