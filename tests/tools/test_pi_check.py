"""tools/pi_check.py (`make pi-check`) outside the emulated Pi: where its Debian mirror comes
from, when an image is stale, and the one line it says where it cannot run. The run itself is
`make pi-check` (root, qemu-user; .ci/run runs it after `make test`)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT


def _pi_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pi_check", ROOT / "tools" / "pi_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pi_check"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


pi_check = _pi_check()


def _apt(tmp_path: Path, files: dict[str, str], os_id: str = "debian") -> tuple[Path, Path]:
    (tmp_path / "sources.list.d").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    release = tmp_path / "os-release"
    release.write_text(f'PRETTY_NAME="a host"\nID={os_id}\nVERSION_CODENAME=bookworm\n')
    return tmp_path, release


def test_the_mirror_is_the_hosts_release_source_in_deb822(tmp_path: Path) -> None:
    apt = _apt(
        tmp_path,
        {
            "sources.list.d/debian.sources": (
                "Types: deb\nURIs: http://security.example/debian-security\n"
                "Suites: bookworm-security\nComponents: main\n\n"
                "Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n\n"
                "Types: deb\n# a comment\nURIs: http://mirror.example/debian/\n"
                "Suites: bookworm bookworm-updates\nComponents: main\n"
            ),
        },
    )
    assert pi_check.apt_mirror(*apt) == "http://mirror.example/debian"


def test_the_mirror_from_a_one_line_sources_list(tmp_path: Path) -> None:
    apt = _apt(
        tmp_path,
        {
            "sources.list": (
                "# deb http://old.example/debian bookworm main\n"
                "deb http://security.example/debian-security bookworm-security main\n"
                "deb [arch=amd64 signed-by=/k.gpg] https://mirror.example/debian bookworm main\n"
            ),
        },
    )
    assert pi_check.apt_mirror(*apt) == "https://mirror.example/debian"


def test_a_debian_host_without_a_source_of_its_release_is_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    apt = _apt(
        tmp_path,
        {"sources.list.d/nodesource.list": "deb https://x.example/node_20 nodistro main\n"},
    )
    with pytest.raises(pi_check.Fatal) as caught:
        pi_check.apt_mirror(*apt)
    assert caught.value.code == 2
    assert str(caught.value).startswith("pi-check: no source of bookworm in ")
    assert "PI_CHECK_MIRROR" in str(caught.value)


def test_on_a_host_that_is_not_debian_debootstrap_picks_the_mirror(tmp_path: Path) -> None:
    apt = _apt(
        tmp_path, {"sources.list": "deb http://archive.example/ubuntu noble main\n"}, "ubuntu"
    )
    assert pi_check.apt_mirror(*apt) is None  # debootstrap's own default for a Debian suite


def test_an_image_is_rebuilt_when_its_recipe_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    before = {arch: pi_check.image_key(arch) for arch in pi_check.ARCHES}
    assert len(set(before.values())) == len(before)  # one image per architecture
    monkeypatch.setattr(pi_check, "PACKAGES", (*pi_check.PACKAGES, "gcc"))
    assert pi_check.image_key("arm64") != before["arm64"]
    monkeypatch.setattr(pi_check, "PACKAGES", tuple(reversed(pi_check.PACKAGES)))
    monkeypatch.setattr(pi_check, "IMAGE_VERSION", pi_check.IMAGE_VERSION + 1)
    assert pi_check.image_key("arm64") not in (before["arm64"],)


def test_without_root_it_says_so_in_one_line_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pi_check.os, "geteuid", lambda: 1000)
    assert pi_check.main([]) == 2
    err = capsys.readouterr().err
    assert err == "pi-check: needs root (it mounts binfmt_misc and a chroot): sudo make pi-check\n"


def test_the_suites_need_the_dev_extra() -> None:
    wanted = pi_check.dev_requirements()
    assert any(req.startswith("pytest-xdist") for req in wanted)
    assert any(req.startswith("gpiozero") for req in wanted)


def test_the_wheelhouse_holds_what_pip_installs_on_each_pi() -> None:
    arm64, armhf = pi_check.pip_requirements("arm64"), pi_check.pip_requirements("armhf")
    for wanted in (arm64, armhf):  # install.sh builds the checkout: the backend comes too
        assert any(req.startswith("setuptools") for req in wanted)
        assert any(req.startswith("lgpio") for req in wanted)
    assert any(req.startswith("starlette") for req in arm64)  # install.sh --with-web
    assert any(req.startswith("pytest-xdist") for req in arm64)  # the suites
    assert not any(req.startswith(("starlette", "pytest")) for req in armhf)


def test_wheels_are_fetched_again_when_the_requirements_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = pi_check.wheels_key("arm64")
    assert before != pi_check.wheels_key("armhf")
    wanted = pi_check.pip_requirements("arm64")
    monkeypatch.setattr(pi_check, "pip_requirements", lambda arch: [*wanted, "six>=1.16"])
    assert pi_check.wheels_key("arm64") != before


def _tree(monkeypatch: pytest.MonkeyPatch, root: Path, files: dict[str, str]) -> None:
    """A checkout of `files` at `root`, as pi_check sees its tree."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.setattr(pi_check, "TREE", root)
    monkeypatch.setattr(pi_check, "tree_files", lambda: sorted(files))


def test_the_suites_checkout_is_brought_in_line_and_keeps_what_was_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, kept = tmp_path / "tree", tmp_path / "kept"
    files = {"firmware/run.py": "one", "tests/test_a.py": "a", "tests/test_gone.py": "g"}
    _tree(monkeypatch, tree, files)
    assert pi_check.sync_checkout(kept) == (3, 0)
    built = [
        "firmware/__pycache__/run.cpython-311.pyc",
        "i18n/locale/cy/LC_MESSAGES/launcher.mo",
        "unoattack_launcher.egg-info/PKG-INFO",
        ".mypy_cache/3.11/firmware/run.data.json",
    ]
    for name in [*built, ".hypothesis/examples/x", "notes.txt"]:
        (kept / name).parent.mkdir(parents=True, exist_ok=True)
        (kept / name).write_text("made in the Pi")
    mtime = (kept / "firmware/run.py").stat().st_mtime_ns
    assert mtime == (tree / "firmware/run.py").stat().st_mtime_ns  # compiled modules stay valid
    del files["tests/test_gone.py"]
    (tree / "tests/test_gone.py").unlink()
    (tree / "tests/test_a.py").write_text("a, changed")
    # changed, 1 copied; the test the tree lost, a test's leftovers, a stray file: removed
    assert pi_check.sync_checkout(kept) == (1, 3)
    assert (kept / "tests/test_a.py").read_text() == "a, changed"
    assert not (kept / "tests/test_gone.py").exists() and not (kept / ".hypothesis").exists()
    assert all((kept / name).exists() for name in built)
    assert pi_check.sync_checkout(kept) == (0, 0)


def test_the_editable_install_is_made_again_only_when_its_inputs_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "pyproject.toml": "[project]",
        "setup.py": "setup()",
        "i18n/locale/cy/LC_MESSAGES/launcher.po": 'msgid "a"',
        "firmware/run.py": "code",
    }
    _tree(monkeypatch, tmp_path, files)
    key = pi_check.build_inputs_key()
    (tmp_path / "firmware/run.py").write_text("other code")  # an editable install follows it
    assert pi_check.build_inputs_key() == key
    (tmp_path / "i18n/locale/cy/LC_MESSAGES/launcher.po").write_text('msgid "b"')
    assert pi_check.build_inputs_key() != key  # the catalogs are compiled by the install


def test_a_command_is_not_waited_for_past_its_deadline_or_a_stop() -> None:
    never = threading.Event()
    # What it leaves behind in a session of its own keeps its output open: not waited for.
    done, ended = pi_check.run_bounded(
        ["sh", "-c", "echo said; setsid sleep 30 & echo more >&2"], timeout=60, stopping=never
    )
    assert ended and done.returncode == 0
    assert (done.stdout, done.stderr) == ("said\n", "more\n")
    start = time.monotonic()
    done, ended = pi_check.run_bounded(["sleep", "30"], timeout=0.5, stopping=never)
    assert not ended and done.returncode == -signal.SIGKILL
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    done, ended = pi_check.run_bounded(["sleep", "30"], timeout=60, stopping=stop)
    assert not ended and time.monotonic() - start < 20


def test_a_failed_check_prints_the_end_of_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "install.sh.log"
    log.write_text("".join(f"line {n}\n" for n in range(100)) + "ERROR: no wheel for lgpio\n")

    def failing() -> str:
        raise pi_check.Failed("install.sh exited 1: ERROR: no wheel for lgpio", log)

    checks = pi_check.Checks()
    assert not checks.run("arm64", "install.sh", failing)
    out = capsys.readouterr().out
    assert "FAIL" in out and "| ERROR: no wheel for lgpio" in out
    assert f"| line {100 - pi_check.TAIL_LINES + 1}\n" in out and "| line 50\n" not in out


def test_one_run_at_a_time_on_a_machine(tmp_path: Path) -> None:
    path = tmp_path / "pi-check.lock"
    held = pi_check.one_at_a_time(path)
    try:
        assert path.read_text() == f"{os.getpid()}\n"
        probe = "import fcntl, sys; fcntl.flock(open(sys.argv[1]), fcntl.LOCK_EX | fcntl.LOCK_NB)"
        other = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True)
        assert other.returncode != 0 and b"BlockingIOError" in other.stderr
    finally:
        held.close()
