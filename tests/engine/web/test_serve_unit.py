"""The systemd unit of `unoattack serve`: it verifies clean, is hardened, and its command line
is one `unoattack serve` accepts."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import build_parser
from tests.units import unit_settings

ROOT = Path(__file__).resolve().parents[3]
UNIT = ROOT / "systemd" / "unoattack-serve.service"
EXPOSURE_MAX = 2.0  # 1.4 today; a network service, it must be allowed to listen
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def settings() -> dict[str, list[str]]:
    return unit_settings(UNIT)


def checkable(tmp_path: Path) -> Path:
    """The unit with ExecStart on this venv's `unoattack` (/opt/launcher exists on a Pi only)."""
    unoattack = Path(sys.executable).parent / "unoattack"
    text = UNIT.read_text().replace("/opt/launcher/venv/bin/unoattack", str(unoattack))
    path = tmp_path / "unoattack-serve.service"
    path.write_text(text)
    return path


@needs_analyze
def test_unit_verifies_clean(tmp_path: Path) -> None:
    done = subprocess.run(
        [ANALYZE, "verify", "--recursive-errors=yes", "--man=no", str(checkable(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    problems = [ln for ln in done.stderr.splitlines() if "unoattack-serve" in ln]
    assert done.returncode == 0 and not problems, done.stderr


@needs_analyze
def test_unit_exposure(tmp_path: Path) -> None:
    done = subprocess.run(
        [ANALYZE, "security", "--offline=true", "--no-pager", str(checkable(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    found = re.search(
        r"Overall exposure level for unoattack-serve\.service: (\d+\.\d+)", done.stdout
    )
    assert found, done.stdout + done.stderr
    assert float(found.group(1)) <= EXPOSURE_MAX


def test_unit_contract() -> None:
    unit = settings()
    assert unit["NoNewPrivileges"] == ["yes"] and unit["CapabilityBoundingSet"] == [""]
    assert unit["ProtectSystem"] == ["strict"] and unit["DynamicUser"] == ["yes"]
    assert unit["IPAddressDeny"] == ["any"]
    assert "2" in unit["RestartPreventExitStatus"][0].split()
    assert 64 <= int(unit["LimitNOFILE"][0]) <= 4096  # room for a table, a cap on a flood


def test_unit_leaves_room_for_every_connection_the_server_keeps() -> None:
    """The server's connection limit is below the unit's open-file limit, with room for its
    own files and a batch of connections being accepted: it never runs out of descriptors."""
    from engine.web.connections import BACKLOG, MOST, RESERVED_FILES

    (limit,) = settings()["LimitNOFILE"]
    assert int(limit) - RESERVED_FILES - BACKLOG >= MOST


def test_exec_start_is_a_command_line_serve_accepts() -> None:
    unit = settings()
    env = dict(v.split("=", 1) for v in unit["Environment"])
    argv = shlex.split(unit["ExecStart"][0])
    assert argv[0].endswith("/unoattack") and argv[1] == "serve"
    argv = [re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], a) for a in argv[1:]]
    args = build_parser("serve").parse_args(argv)
    assert args.state == Path("/var/lib/unoattack/table.json") and args.http == "0.0.0.0:8500"
