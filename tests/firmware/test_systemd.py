"""systemd integration: the unit verifies clean and is hardened, the safe-off script drives the
configured output pins low (checked through fake GPIO tools on PATH), install.sh dry-runs."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from firmware import config
from firmware.errors import EXIT_CONFIG

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "launcher.service"
SAFE_OFF = ROOT / "systemd" / "launcher-safe-off"
INSTALL = ROOT / "systemd" / "install.sh"
DEFAULT = ROOT / "hardware" / "launcher.toml"
EXPOSURE_MAX = 2.5

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def _unit_lines() -> dict[str, list[str]]:
    """Settings of the unit: key -> values in order (keys may repeat)."""
    out: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out


def _checkable_unit(tmp_path: Path) -> Path:
    """A copy of the unit whose ExecStart/ExecStopPost point at executables on this machine.

    systemd-analyze verify fails a unit whose command does not exist ("Command ... is not
    executable"), and /opt/launcher/... only exists on an installed Pi. So the copy runs the
    repo's venv `launcher` and the repo's safe-off script; every other line is unchanged.
    """
    launcher = Path(sys.executable).parent / "launcher"
    assert launcher.exists(), "the launcher console script is not installed in this venv"
    text = UNIT.read_text()
    changed = text.replace("/opt/launcher/venv/bin/launcher", str(launcher)).replace(
        "/opt/launcher/bin/launcher-safe-off", str(SAFE_OFF)
    )
    diff = [a for a, b in zip(text.splitlines(), changed.splitlines(), strict=True) if a != b]
    assert [d.split("=", 1)[0] for d in diff] == ["ExecStart", "ExecStopPost"]
    path = tmp_path / "launcher.service"
    path.write_text(changed)
    return path


@needs_analyze
def test_unit_verifies_clean(tmp_path: Path) -> None:
    unit = _checkable_unit(tmp_path)
    proc = subprocess.run(
        [ANALYZE, "verify", "--recursive-errors=yes", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    ours = [line for line in (proc.stdout + proc.stderr).splitlines() if "launcher" in line]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ours == []


@needs_analyze
def test_unit_exposure_is_at_most_2_5(tmp_path: Path) -> None:
    unit = _checkable_unit(tmp_path)
    proc = subprocess.run(
        [ANALYZE, "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"Overall exposure level for launcher\.service: (\d+\.\d+)", proc.stdout)
    assert found, proc.stdout
    exposure = float(found.group(1))
    print(f"exposure {exposure}")
    assert exposure <= EXPOSURE_MAX
    # --threshold counts tenths: the tool itself must agree the unit is within 2.5.
    strict = subprocess.run(
        [ANALYZE, "security", "--offline=true", "--threshold=25", "--no-pager", str(unit)],
        capture_output=True,
        timeout=60,
    )
    assert strict.returncode == 0


def test_unit_contract() -> None:
    """The settings the daemon and install.sh rely on."""
    unit = _unit_lines()
    assert unit["Type"] == ["notify"]
    assert unit["NotifyAccess"] == ["main"]
    assert unit["RestartPreventExitStatus"] == [str(EXIT_CONFIG)]
    assert unit["Restart"] == ["on-failure"]
    assert "StartLimitBurst" in unit and "StartLimitIntervalSec" in unit
    assert "WatchdogSec" in unit
    assert unit["User"] == ["launcher"]
    assert unit["SupplementaryGroups"] == ["gpio dialout"]
    assert unit["ExecStopPost"] == [
        "/opt/launcher/bin/launcher-safe-off --config /etc/launcher/launcher.toml"
    ]
    start = shlex.split(unit["ExecStart"][0])
    assert start[:2] == ["/opt/launcher/venv/bin/launcher", "run"]
    assert start[start.index("--config") + 1] == "/etc/launcher/launcher.toml"
    # The journal lives in the unit's writable StateDirectory.
    assert unit["StateDirectory"] == ["launcher"]
    assert start[start.index("--journal") + 1].startswith("/var/lib/launcher/")


def test_exec_start_arguments_are_accepted_by_launcher_run() -> None:
    from firmware.cli import build_parser

    start = shlex.split(_unit_lines()["ExecStart"][0])
    try:
        args = build_parser().parse_args(start[1:])
    except SystemExit as exc:  # argparse exits 2 on an unknown option
        raise AssertionError(f"launcher rejects the unit's ExecStart: {start}") from exc
    assert args.command == "run"


# --- the safe-off script -----------------------------------------------------------------------


def _safe_off_module() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("launcher_safe_off", str(SAFE_OFF))
    spec = importlib.util.spec_from_loader("launcher_safe_off", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_safe_off_knows_the_same_output_pins_as_the_config() -> None:
    module = _safe_off_module()
    assert module.OUTPUT_PINS == config.OUTPUT_PINS
    assert config.load(DEFAULT).pins.outputs() == module.DEFAULT_OUTPUTS


def _run_safe_off(
    *args: str, path: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env or {})}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, str(SAFE_OFF), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_safe_off_dry_run_lists_every_output_of_the_default_config() -> None:
    proc = _run_safe_off("--config", str(DEFAULT), "--backend", "pinctrl", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()[1:]
    expected = [
        f"GPIO{pin} {name}: drive low: pinctrl set {pin} op dl"
        for name, pin in config.load(DEFAULT).pins.outputs().items()
    ]
    assert sorted(lines) == sorted(expected)
    assert "GPIO17" not in proc.stdout and "GPIO27" not in proc.stdout  # inputs are left alone


@pytest.mark.parametrize(
    ("version", "command"),
    [
        # libgpiod v2 (Debian 13, Pi OS after Bookworm): lines by name
        ("gpioset (libgpiod) v2.1", "gpioset -b pull-down -t 0 GPIO6=0"),
        # libgpiod v1 (Bookworm's gpiod): chip and offset, which gpiofind looks up when it runs
        ("gpioset (libgpiod) v1.6.3", "gpioset -B pull-down <chip of GPIO6> <offset of GPIO6>=0"),
    ],
)
def test_safe_off_only_touches_fitted_outputs(tmp_path: Path, version: str, command: str) -> None:
    # The gpioset on PATH is pinned: the machine's own (if any) must not decide the command.
    _, path = _fake_path(tmp_path)
    _fake_tool(Path(path), "gpioset", f'[ "$1" = --version ] && echo "{version}"')
    config = tmp_path / "solenoid.toml"
    config.write_text(
        '[pins]\nbutton = 17\nejector_forward = 6\nsensor = 27\n[ejector]\nkind = "solenoid"\n'
    )
    proc = _run_safe_off("--config", str(config), "--backend", "gpioset", "--dry-run", path=path)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[1:] == [f"GPIO6 ejector_forward: drive low: {command}"]


def test_safe_off_without_a_config_sets_default_outputs_to_inputs(tmp_path: Path) -> None:
    proc = _run_safe_off(
        "--config", str(tmp_path / "missing.toml"), "--backend", "pinctrl", "--dry-run"
    )
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()[1:]
    assert len(lines) == len(config.load(DEFAULT).pins.outputs())
    assert all(line.endswith("ip pd") and ": input, pull-down: " in line for line in lines)
    assert "cannot read the config" in proc.stderr


def _fake_tool(bin_dir: Path, name: str, body: str) -> None:
    tool = bin_dir / name
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)


def _fake_path(tmp_path: Path) -> tuple[Path, str]:
    """A bin directory holding only sh and the tools a test adds, and the log they append to."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "echo"):
        found = shutil.which(tool)
        assert found
        (bin_dir / tool).symlink_to(found)
    return tmp_path / "calls.log", str(bin_dir)


def test_safe_off_runs_pinctrl_for_each_output(tmp_path: Path) -> None:
    log, path = _fake_path(tmp_path)
    _fake_tool(Path(path), "pinctrl", f'echo "pinctrl $*" >> {log}')
    proc = _run_safe_off(
        "--config", str(DEFAULT), path=path, env={"SERVICE_RESULT": "watchdog", "EXIT_STATUS": "6"}
    )
    assert proc.returncode == 0, proc.stderr
    assert "(daemon ended: watchdog, 6)" in proc.stderr
    outputs = config.load(DEFAULT).pins.outputs()
    assert sorted(log.read_text().splitlines()) == sorted(
        f"pinctrl set {pin} op dl" for pin in outputs.values()
    )
    assert f"{len(outputs)} output pins set to drive low with pinctrl" in proc.stderr


def test_safe_off_uses_gpiod_v1_with_gpiofind(tmp_path: Path) -> None:
    log, path = _fake_path(tmp_path)
    _fake_tool(
        Path(path),
        "gpioset",
        '[ "$1" = --version ] && echo "gpioset (libgpiod) v1.6.3" && exit 0\n'
        f'echo "gpioset $*" >> {log}',
    )
    _fake_tool(Path(path), "gpiofind", 'echo "gpiochip0 ${1#GPIO}"')
    proc = _run_safe_off("--config", str(DEFAULT), path=path)
    assert proc.returncode == 0, proc.stderr
    outputs = config.load(DEFAULT).pins.outputs()
    assert sorted(log.read_text().splitlines()) == sorted(
        f"gpioset -B pull-down gpiochip0 {pin}=0" for pin in outputs.values()
    )


def test_safe_off_reports_each_pin_it_could_not_set(tmp_path: Path) -> None:
    _, path = _fake_path(tmp_path)
    _fake_tool(Path(path), "pinctrl", 'echo "pinctrl: no access to /dev/gpiomem" >&2; exit 1')
    proc = _run_safe_off("--config", str(DEFAULT), path=path)
    assert proc.returncode == 1
    failures = [line for line in proc.stderr.splitlines() if "could not drive low" in line]
    assert len(failures) == len(config.load(DEFAULT).pins.outputs())
    assert "no access to /dev/gpiomem" in failures[0]


def test_safe_off_without_any_gpio_tool_fails_loudly(tmp_path: Path) -> None:
    _, path = _fake_path(tmp_path)
    proc = _run_safe_off("--config", str(DEFAULT), path=path)
    assert proc.returncode == 1
    assert "neither pinctrl nor gpioset is installed" in proc.stderr


# --- install.sh --------------------------------------------------------------------------------


def _install(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LAUNCHER_PREFIX": str(tmp_path / "opt"),
        "LAUNCHER_ETC": str(tmp_path / "etc"),
        "LAUNCHER_UNIT_DIR": str(tmp_path / "units"),
    }
    return subprocess.run(
        ["bash", str(INSTALL), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_install_script_parses() -> None:
    proc = subprocess.run(["bash", "-n", str(INSTALL)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_install_dry_run_prints_every_step_and_changes_nothing(tmp_path: Path) -> None:
    proc = _install(tmp_path, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    prefix = tmp_path / "opt"
    for expected in (
        f"venv --system-site-packages {prefix}/venv",
        f"{prefix}/venv/bin/python -m pip install --quiet --upgrade {ROOT}\\[pi\\]",
        f"{prefix}/bin/launcher-safe-off",
        f"install -m 0644 {ROOT}/hardware/launcher.toml {tmp_path}/etc/launcher.toml",
        f"{ROOT}/systemd/launcher.service -> {tmp_path}/units/launcher.service",
        "usermod --append --groups gpio launcher",
        "usermod --append --groups dialout launcher",
        "systemctl enable launcher.service",
        "dry run: nothing was changed",
    ):
        assert expected in out, expected
    assert "systemctl restart" not in out
    assert not any(p.exists() for p in (prefix, tmp_path / "etc", tmp_path / "units"))


def test_install_never_overwrites_an_existing_config(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "launcher.toml").write_text("# mine\n")
    proc = _install(tmp_path, "--dry-run", "--now")
    assert proc.returncode == 0, proc.stderr
    assert f"keeping the existing {tmp_path}/etc/launcher.toml" in proc.stdout
    assert f"{tmp_path}/etc/launcher.toml\n" not in proc.stdout.replace("keeping the existing", "")
    assert "systemctl restart launcher.service" in proc.stdout
    assert (tmp_path / "etc" / "launcher.toml").read_text() == "# mine\n"


def test_install_rejects_unknown_options(tmp_path: Path) -> None:
    proc = _install(tmp_path, "--force")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "install.sh: unknown option '--force'; allowed: --dry-run, --now, --help"
    )


def _stub_system(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Stand-ins for the commands that change the system (user and group tools, systemctl) and
    for python3 (a venv whose pip and launcher only log), so the real install path runs into
    tmp_path. Returns the call log and the environment."""
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "stubs"
    bin_dir.mkdir()
    logger = f'echo "$(basename "$0") $*" >> {log}'
    for name in ("useradd", "usermod", "groupadd", "systemctl", "pinctrl"):
        _fake_tool(bin_dir, name, logger)
    _fake_tool(bin_dir, "getent", f"{logger}\nexit 0")  # both groups exist
    _fake_tool(bin_dir, "id", f'{logger}\n[ "$1" = -u ] && echo 0 && exit 0\nexit 1')
    venv_tool = f'#!/bin/sh\\necho "venv-$(basename "$0") $*" >> {log}\\n'
    _fake_tool(
        bin_dir,
        "python3",
        f"{logger}\n"
        '[ "$1" = -m ] && [ "$2" = venv ] || exit 0\n'
        'for last; do :; done\nmkdir -p "$last/bin"\n'
        f"for tool in python launcher; do printf '{venv_tool}' > \"$last/bin/$tool\"; "
        'chmod +x "$last/bin/$tool"; done',
    )
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "LAUNCHER_PREFIX": str(tmp_path / "opt"),
        "LAUNCHER_ETC": str(tmp_path / "etc"),
        "LAUNCHER_UNIT_DIR": str(tmp_path / "units"),
    }
    return log, env


def test_install_runs_every_step_into_the_given_paths(tmp_path: Path) -> None:
    log, env = _stub_system(tmp_path)
    proc = subprocess.run(
        ["bash", str(INSTALL), "--now"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    prefix, etc = tmp_path / "opt", tmp_path / "etc"

    safe_off = prefix / "bin" / "launcher-safe-off"
    lines = safe_off.read_text().splitlines()
    assert lines[0] == f"#!{prefix}/venv/bin/python3"
    assert lines[1:] == SAFE_OFF.read_text().splitlines()[1:]
    assert os.access(safe_off, os.X_OK)
    assert (etc / "launcher.toml").read_bytes() == DEFAULT.read_bytes()
    assert (prefix / "doc" / "pi-setup.md").exists()

    unit = (tmp_path / "units" / "launcher.service").read_text()
    assert "/opt/launcher" not in unit and "/etc/launcher/" not in unit
    assert f"ExecStart={prefix}/venv/bin/launcher run --config {etc}/launcher.toml" in unit
    assert f"ExecStopPost={prefix}/bin/launcher-safe-off --config {etc}/launcher.toml" in unit

    calls = log.read_text()
    for expected in (
        f"python3 -m venv --system-site-packages {prefix}/venv",
        f"venv-python -m pip install --quiet --upgrade {ROOT}[pi]",
        f"venv-launcher config check {etc}/launcher.toml",
        "useradd --system --user-group",
        "usermod --append --groups gpio launcher",
        "usermod --append --groups dialout launcher",
        "systemctl daemon-reload",
        "systemctl enable launcher.service",
        "systemctl restart launcher.service",
    ):
        assert expected in calls, expected

    # Again, after the user edited the config: it is kept, the rest is upgraded in place.
    (etc / "launcher.toml").write_text("# mine\n")
    again = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert (etc / "launcher.toml").read_text() == "# mine\n"
    assert (prefix / "doc" / "launcher.toml").read_bytes() == DEFAULT.read_bytes()
