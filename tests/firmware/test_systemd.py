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

from common.errors import EXIT_CONFIG
from firmware import config
from tests.units import unit_settings

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
    return unit_settings(UNIT)


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
        "install.sh: unknown option '--force'; allowed: --with-web, --dry-run, --now, --help"
    )


VENV_PYTHON = """#!/bin/sh
echo "venv-python $*" >> {log}
if [ "$1 $2 $3" = "-m pip --version" ]; then
    echo "pip 23.0.1 from $(dirname "$0")/../lib/python3.11/site-packages/pip (python 3.11)"
fi
"""


def _stub_system(tmp_path: Path, *, ensurepip: bool = True) -> tuple[Path, dict[str, str]]:
    """Stand-ins for the commands that change the system (user and group tools, systemctl) and
    for python3 (a venv whose python answers `-m pip --version` from the venv, and whose pip and
    launcher only log), so the real install path runs into tmp_path. Returns the call log and
    the environment."""
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "stubs"
    bin_dir.mkdir()
    logger = f'echo "$(basename "$0") $*" >> {log}'
    for name in ("useradd", "usermod", "groupadd", "systemctl", "pinctrl", "aplay"):
        _fake_tool(bin_dir, name, logger)
    _fake_tool(bin_dir, "getent", f"{logger}\nexit 0")  # both groups exist
    _fake_tool(bin_dir, "id", f'{logger}\n[ "$1" = -u ] && echo 0 && exit 0\nexit 1')
    (bin_dir / "venv-python").write_text(VENV_PYTHON.format(log=log))
    venv_launcher = f'#!/bin/sh\\necho "venv-launcher $*" >> {log}\\n'
    _fake_tool(
        bin_dir,
        "python3",
        f"{logger}\n"
        + ("" if ensurepip else '[ "$2" = "import ensurepip" ] && exit 1\n')
        + '[ "$1" = -m ] && [ "$2" = venv ] || exit 0\n'
        'for last; do :; done\nmkdir -p "$last/bin"\ntouch "$last/pyvenv.cfg"\n'
        f'cp {bin_dir}/venv-python "$last/bin/python"\n'
        f"printf '{venv_launcher}' > \"$last/bin/launcher\"\n"
        'chmod +x "$last/bin/python" "$last/bin/launcher"',
    )
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "LAUNCHER_PREFIX": str(tmp_path / "opt"),
        "LAUNCHER_ETC": str(tmp_path / "etc"),
        "LAUNCHER_UNIT_DIR": str(tmp_path / "units"),
    }
    return log, env


def _install_stubbed(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(INSTALL), *args], capture_output=True, text=True, env=env, timeout=60
    )


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
    again = _install_stubbed(env)
    assert again.returncode == 0, again.stderr
    assert "venv exists; upgrading the package in it" in again.stdout
    assert "--clear" not in log.read_text()
    assert (etc / "launcher.toml").read_text() == "# mine\n"
    assert (prefix / "doc" / "launcher.toml").read_bytes() == DEFAULT.read_bytes()


def test_install_says_what_to_apt_install_before_changing_anything(tmp_path: Path) -> None:
    log, env = _stub_system(tmp_path, ensurepip=False)
    proc = _install_stubbed(env)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "install.sh: python3 -m venv cannot put pip into a venv (no ensurepip): "
        "apt install python3-venv",
        "install.sh: nothing was changed; first: sudo apt install python3-venv",
    ]
    assert "useradd" not in log.read_text() and not (tmp_path / "opt").exists()


@pytest.mark.parametrize(
    ("python", "problem"),
    [
        # A first run without ensurepip: the venv has no pip, and the system's pip (python3-pip,
        # seen through --system-site-packages) answers in its place.
        (
            'echo "pip 23.0.1 from /usr/lib/python3/dist-packages/pip (python 3.11)"',
            "has no pip of its own (only the system's, /usr/lib/python3/dist-packages/pip)",
        ),
        # The interpreter it links to is gone (an OS upgrade), or a half-written venv.
        ("exit 127", "cannot run pip (a broken interpreter, or no pip)"),
    ],
)
def test_install_rebuilds_a_venv_a_failed_run_left_behind(
    tmp_path: Path, python: str, problem: str
) -> None:
    log, env = _stub_system(tmp_path)
    assert _install_stubbed(env).returncode == 0
    venv = tmp_path / "opt" / "venv"
    _fake_tool(venv / "bin", "python", python)
    proc = _install_stubbed(env)
    assert proc.returncode == 0, proc.stderr
    assert f"venv {venv} {problem} (left by a failed run?); rebuilding it" in proc.stdout
    calls = log.read_text()
    assert f"python3 -m venv --clear --system-site-packages {venv}" in calls
    assert calls.rstrip().endswith("systemctl enable launcher.service")


def test_install_rebuilds_a_folder_that_is_not_a_venv(tmp_path: Path) -> None:
    log, env = _stub_system(tmp_path)
    (tmp_path / "opt" / "venv").mkdir(parents=True)
    proc = _install_stubbed(env)
    assert proc.returncode == 0, proc.stderr
    assert "is not a venv (no pyvenv.cfg)" in proc.stdout
    assert "venv --clear --system-site-packages" in log.read_text()


# --- the all-in-one box (install.sh --with-web) -------------------------------------------------

LAUNCHER_DROPIN = ROOT / "systemd" / "launcher.service.d" / "all-in-one.conf"
SERVE_UNIT = ROOT / "systemd" / "unoattack-serve.service"
SERVE_DROPIN = ROOT / "systemd" / "unoattack-serve.service.d" / "all-in-one.conf"
TTY_LINK = "/run/launcher/tty"


def test_all_in_one_runs_the_units_command_on_a_pty_link() -> None:
    """The drop-in's ExecStart is the unit's, with the serial port swapped for the pty link."""
    from firmware.cli import build_parser

    unit = shlex.split(_unit_lines()["ExecStart"][0])
    reset, start = unit_settings(LAUNCHER_DROPIN)["ExecStart"]
    assert reset == ""  # a drop-in must clear ExecStart before giving its own
    argv = shlex.split(start)
    at = unit.index("--port")
    assert argv == [*unit[:at], "--port", "pty", "--pty-link", TTY_LINK, *unit[at + 2 :]]
    args = build_parser().parse_args(argv[1:])
    assert args.port == "pty" and args.pty_link == TTY_LINK
    serve = unit_settings(SERVE_DROPIN)
    assert serve["Environment"] == [f"UNOATTACK_PORT={TTY_LINK}"]
    assert serve["SupplementaryGroups"] == ["launcher"]  # the daemon's group opens the pty
    assert _unit_lines()["Group"] == ["launcher"]


def _with_dropins(tmp_path: Path) -> Path:
    """Both units and their all-in-one drop-ins, runnable here, in one folder."""
    units = tmp_path / "units"
    (units / "launcher.service.d").mkdir(parents=True)
    (units / "unoattack-serve.service.d").mkdir()
    bin_dir = Path(sys.executable).parent
    for src, dest in (
        (_checkable_unit(tmp_path), units / "launcher.service"),
        (SERVE_UNIT, units / "unoattack-serve.service"),
        (LAUNCHER_DROPIN, units / "launcher.service.d" / "all-in-one.conf"),
        (SERVE_DROPIN, units / "unoattack-serve.service.d" / "all-in-one.conf"),
    ):
        dest.write_text(
            src.read_text()
            .replace("/opt/launcher/venv/bin/", f"{bin_dir}/")
            .replace("/opt/launcher/bin/launcher-safe-off", str(SAFE_OFF))
        )
    return units


@needs_analyze
def test_all_in_one_units_verify_clean_and_stay_hardened(tmp_path: Path) -> None:
    units = _with_dropins(tmp_path)
    env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:"}
    for name, limit in (("launcher.service", EXPOSURE_MAX), ("unoattack-serve.service", 2.0)):
        verify = subprocess.run(
            [ANALYZE, "verify", "--recursive-errors=no", "--man=no", str(units / name)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        ours = [ln for ln in verify.stderr.splitlines() if name in ln or "all-in-one" in ln]
        assert verify.returncode == 0 and ours == [], verify.stderr
        security = subprocess.run(
            [ANALYZE, "security", "--offline=true", "--no-pager", name],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        found = re.search(rf"Overall exposure level for {name}: (\d+\.\d+)", security.stdout)
        assert found, security.stdout + security.stderr
        assert float(found.group(1)) <= limit


def test_install_with_web_installs_the_all_in_one_box(tmp_path: Path) -> None:
    log, env = _stub_system(tmp_path)
    proc = _install_stubbed(env, "--with-web", "--now")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    prefix, etc, units = tmp_path / "opt", tmp_path / "etc", tmp_path / "units"
    calls = log.read_text()
    assert f"venv-python -m pip install --quiet --upgrade {ROOT}[pi,web]" in calls
    assert "systemctl enable launcher.service unoattack-serve.service" in calls
    assert "systemctl restart launcher.service unoattack-serve.service" in calls
    dropin = (units / "launcher.service.d" / "all-in-one.conf").read_text()
    assert f"ExecStart={prefix}/venv/bin/launcher run --config {etc}/launcher.toml" in dropin
    serve = (units / "unoattack-serve.service").read_text()
    assert f"ExecStart={prefix}/venv/bin/unoattack serve" in serve
    assert f"EnvironmentFile=-{etc}/serve.env" in serve
    assert (units / "unoattack-serve.service.d" / "all-in-one.conf").exists()
    assert (prefix / "doc" / "web.md").exists()
    settings = etc / "serve.env"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640  # the join code is in it
    values = dict(ln.split("=", 1) for ln in settings.read_text().splitlines() if "=" in ln)
    assert values["UNOATTACK_PORT"] == TTY_LINK
    assert re.fullmatch(r"\d{6}", values["UNOATTACK_CODE"])

    # An upgrade without the option keeps the all-in-one box and its settings.
    settings.write_text(settings.read_text() + "UNOATTACK_PLAYERS=Ann,Bo\n")
    before = settings.read_text()
    again = _install_stubbed(env)
    assert again.returncode == 0, again.stderr
    assert "installed by an earlier run with --with-web; kept and upgraded" in again.stdout
    assert f"keeping the existing {settings}" in again.stdout
    assert settings.read_text() == before
    assert log.read_text().count("[pi,web]") == 2


def test_install_dry_run_with_web_changes_nothing(tmp_path: Path) -> None:
    proc = _install(tmp_path, "--with-web", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "unoattack-serve.service.d/all-in-one.conf" in proc.stdout
    assert "systemctl enable launcher.service unoattack-serve.service" in proc.stdout
    assert not any(p.exists() for p in (tmp_path / "opt", tmp_path / "etc", tmp_path / "units"))
