"""tools/pi_check.py (`make pi-check`) outside the emulated Pi: where its Debian mirror comes
from, when an image is stale, and the one line it says where it cannot run. The run itself is
`make pi-check` (root, qemu-user; .ci/run runs it after `make test`)."""

from __future__ import annotations

import importlib.util
import sys
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
