"""Fixtures of the web app's tests: a table service, an in-process app, a served subprocess and
one headless Chromium per test session (the system's: Playwright never downloads one here)."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT = 120.0  # for the URL line: cold imports, a mock box, 2 busy cores
WAIT_MS = 120_000  # Playwright's wait for one thing on the page, on a loaded machine
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 360, "height": 740}


def chromium_path() -> str:
    """The system Chromium: $UNOATTACK_CHROMIUM, else chromium or chromium-browser on PATH."""
    found = os.environ.get("UNOATTACK_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None
    )
    if not found:
        pytest.fail(
            "the browser tests need Chromium: apt-get install -y chromium "
            "(or set UNOATTACK_CHROMIUM); `make test` and .ci/run install it"
        )
    return found


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the whole session (each xdist worker has its own)."""
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_playwright() as pw:
        # Playwright gives every launch a fresh temporary profile (user data dir).
        chromium = pw.chromium.launch(
            executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where the browser tests save their screenshots: a temporary folder, so that a test run
    never writes into the source tree; or the folder $UNOATTACK_SCREENSHOTS names (relative
    to the checkout): `make screenshots` regenerates docs/images/ that way."""
    wanted = os.environ.get("UNOATTACK_SCREENSHOTS")
    folder = ROOT / wanted if wanted else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def table_service(
    state: Path, *, players: str = "Ann,Bob,Cat", deck: str = "attack", box: Any = None
) -> Any:
    """A `TableService` on the game in `state` (a new one if the file is not there), its
    published updates kept in `service.updates`."""
    from engine.table.options import GameOptions
    from engine.web.table_service import TableService, open_table

    session = open_table(GameOptions(players.split(","), deck=deck, state=state), box)
    service = TableService(session)
    service.updates = []
    service.publish = service.updates.append
    return service


class Live:
    """`unoattack serve`'s web server (`WebServer`: uvicorn, the app, the hub) serving a table
    service in a thread of this process, on a free port of 127.0.0.1: real HTTP and
    WebSocket from outside, its objects inspectable from inside. `stop()` ends it."""

    def __init__(self, service: Any, **options: Any) -> None:
        from engine.web.server import WebServer

        self.service = service
        self.server = WebServer(http="127.0.0.1:0", code="424242", **options)
        self.server.attach(service)
        self.port = self.server.port
        self.url = f"http://127.0.0.1:{self.port}/"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws"
        self.origin = {"origin": f"http://127.0.0.1:{self.port}"}
        self.code = self.server.auth.code
        self.thread = threading.Thread(target=self.server.run, name="live-server", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:  # the app's startup has run: it serves
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 5) as probe,
            ):
                probe.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                if probe.recv(12).startswith(b"HTTP/1.1 200"):
                    return
            time.sleep(0.05)
        raise AssertionError("the live server did not start")

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the live server did not stop"


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Callable[..., Live]]:
    """Factory: ``live()`` serves a new table (Ann, Bob, Cat; no box) in this process,
    ``live(service, header_timeout=1)`` a given service with WebServer options; stopped at
    teardown."""

    def start(service: Any = None, **options: Any) -> Live:
        return Live(service or table_service(tmp_path / "table.json"), **options)

    yield from stopped_at_the_end(start)


def stopped_at_the_end(make: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """A fixture's factory: `make`, every server it made stopped at teardown."""
    started: list[Any] = []

    def start(*args: Any, **kwargs: Any) -> Any:
        served = make(*args, **kwargs)
        started.append(served)
        return served

    try:
        yield start
    finally:
        for served in started:
            served.stop()


class Served:
    """An `unoattack serve` (or `demo --web`) child process on a free port (`nofile`: its
    open-file limit, as systemd's LimitNOFILE sets it)."""

    def __init__(self, argv: list[str], cwd: Path, *, nofile: int | None = None) -> None:
        self.argv = argv
        self.cwd = cwd

        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(os.environ, TMPDIR=str(cwd)),  # a mock box's folder: findable (`stop`)
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=limit if nofile is not None else None,
        )
        self.output = ""
        self.url = ""
        self.code = ""
        deadline = time.monotonic() + START_TIMEOUT
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while not self.url or "Ctrl-C" not in self.output:  # (demo --web prints no code)
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.stop()
                raise AssertionError(f"no URL from {' '.join(argv)}:\n{self.output}{self.err}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    continue
                self.output += chunk.decode(errors="replace")
                url = re.search(r"the table at (http://\S+)", self.output)
                code = re.search(r"join code: (\S+)", self.output)
                self.url = url.group(1) if url else ""
                self.code = code.group(1) if code else ""
        self.err = ""

    def read_more(self, timeout: float = 0.0) -> str:
        """Whatever the child printed since (its stdout)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while select.select([fd], [], [], timeout)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self.output += chunk.decode(errors="replace")
            timeout = 0
        return self.output

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, as systemd stops the service; SIGKILL if it does not go."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.err = self.proc.stderr.read().decode(errors="replace")
            self.proc.stderr.close()
        if self.proc.stdout is not None and not self.proc.stdout.closed:
            self.read_more()
            self.proc.stdout.close()
        left = survivors(self.cwd)
        deadline = time.monotonic() + timeout
        while left and time.monotonic() < deadline:  # a child on its way out
            time.sleep(0.1)
            left = survivors(self.cwd)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert not left, f"{' '.join(self.argv)} left processes behind: {left}"
        return self.proc.returncode


def survivors(folder: Path) -> list[int]:
    """Processes whose command line names `folder` (a mock box started in it, say)."""
    found = []
    mark = str(folder).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if mark in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """Factory: ``serve("serve", "--port", "none", ...)`` starts `unoattack` with those
    arguments plus ``--http 127.0.0.1:0`` (a free port: xdist-safe); stopped at teardown."""

    def start(*args: str, nofile: int | None = None) -> Served:
        argv = [sys.executable, "-m", "engine.cli", *args, "--http", "127.0.0.1:0"]
        return Served(argv, tmp_path, nofile=nofile)

    yield from stopped_at_the_end(start)
