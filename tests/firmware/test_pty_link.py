"""`launcher run --port pty --pty-link PATH`: the all-in-one box's link. The pty is kept at a
stable name that another user of the daemon's group can open, replaced at every start, removed
when its daemon stops (unless a newer daemon has it), and followed anew by a host that reopens."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.link import Link
from tests.firmware.test_bad_paths import launcher_run, refused
from wire.client import BoxClient


@pytest.fixture
def linked(make_box: Callable[..., Any]) -> Iterator[Callable[[Path], Link]]:
    """Starts a Link on a pty kept at a path (one box behind all of them: a daemon restarted
    on the same journal); every link is stopped at the end."""
    links: list[Link] = []
    box = make_box()

    def start(path: Path) -> Link:
        link = Link("pty", box.daemon, box.daemon.journal, pty_link=str(path))
        link.start()
        links.append(link)
        return link

    yield start
    for link in links:
        link.stop()


def test_the_link_names_the_pty_open_to_the_daemons_group(
    linked: Callable[[Path], Link], tmp_path: Path
) -> None:
    path = tmp_path / "tty"
    link = linked(path)
    assert link.port_path is not None
    assert os.readlink(path) == link.port_path
    slave = os.stat(link.port_path)
    assert stat.S_IMODE(slave.st_mode) == 0o660 and slave.st_gid == os.getegid()
    client = BoxClient(str(path), timeout=10)
    try:
        client.connect()  # the host talks to the box through the stable name
        assert client.status()["state"] == "idle"
    finally:
        client.close()
    link.stop()
    assert not os.path.lexists(path)


def test_a_stopping_daemon_leaves_a_newer_daemons_link_alone(
    linked: Callable[[Path], Link], tmp_path: Path
) -> None:
    path = tmp_path / "tty"
    old = linked(path)
    new = linked(path)  # a restart: the new daemon replaces the name at once
    assert new.port_path is not None and new.port_path != old.port_path
    old.stop()
    assert os.readlink(path) == new.port_path


def test_a_host_on_the_link_reaches_the_restarted_daemon(
    linked: Callable[[Path], Link], tmp_path: Path
) -> None:
    path = tmp_path / "tty"
    first = linked(path)
    client = BoxClient(str(path), timeout=10)
    try:
        client.connect()
        first.stop()
        linked(path)  # the daemon again, on a new pty under the same name
        assert client.status()["state"] == "idle"  # resent until the reopened link answers
        assert client.stats.reconnects >= 1
    finally:
        client.close()


def test_pty_link_needs_port_pty(tmp_path: Path) -> None:
    line = refused(launcher_run(tmp_path, "--pty-link", str(tmp_path / "tty")))
    assert line == "launcher: --pty-link needs --port pty"


def test_pty_link_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "no" / "tty"
    line = refused(launcher_run(tmp_path, "--port", "pty", "--pty-link", str(path)))
    assert line == f"launcher: --pty-link {path}: folder {path.parent} does not exist"


def test_pty_link_never_replaces_a_file(tmp_path: Path) -> None:
    mine = tmp_path / "notes"
    mine.write_text("mine\n")
    line = refused(launcher_run(tmp_path, "--port", "pty", "--pty-link", str(mine)))
    assert "is not a symlink" in line
    assert mine.read_text() == "mine\n"
