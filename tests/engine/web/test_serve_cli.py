"""`unoattack serve` as a user runs it: usage errors, the URL and code, resuming a game (also
one `unoattack table` saved), and the WebSocket layer's own frame limit."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import httpx2 as httpx
import psutil
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from engine.table.state_file import load_state
from engine.table.view import summary
from tests.conftest import run_unoattack
from tests.ctrl_c import interrupt
from tests.engine.web.conftest import ROOT, Served

ARGS = ["serve", "--port", "none", "--players", "Ann,Bob,Cat"]


run = run_unoattack


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--http", "localhost"], "--http localhost: --http HOST:PORT"),
        (["--http", "127.0.0.1:99999"], "port `99999` is not 0 to 65535"),
        (["--code", "ab-cd-ef"], "--code: join code `ab-cd-ef`: 6 to 32 letters or digits"),
        # The floor: four digits are found in a game night at the server's guess limit.
        (["--code", "4711"], "--code: join code `4711` is too short: at 7,200 guesses"),
        (["--http", "²"], "--http ²: --http HOST:PORT"),
        (["--http", "127.0.0.1:" + "9" * 5000], "is not 0 to 65535"),
        (["--deck", "nope"], "unknown deck `nope`"),
        (["--mode", "chaos"], "argument --mode: invalid choice: 'chaos'"),
        (["--state", "nodir/t.json"], "folder nodir does not exist"),
        (["--speed", "0"], "--speed 0: above 0"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path, extra: list[str], error: str) -> None:
    done = run(*ARGS, *extra, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and error in done.stderr
    assert "Traceback" not in done.stderr and not done.stdout


def test_a_port_that_is_no_serial_port_and_a_bad_state_file(tmp_path: Path) -> None:
    done = run("serve", "--port", str(tmp_path), "--players", "Ann,Bob", cwd=tmp_path)
    assert done.returncode == 2 and "is a directory, not a serial port" in done.stderr
    (tmp_path / "junk.json").write_bytes(b"\x00\xff")
    done = run(*ARGS, "--state", "junk.json", cwd=tmp_path)
    assert done.returncode == 2 and "not a table state file" in done.stderr


def test_serve_prints_the_url_and_code_and_resumes_its_game(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    served = serve(*ARGS, "--code", "424242")
    assert served.url.startswith("http://127.0.0.1:") and served.code == "424242"
    # 127.0.0.1 is no address for a phone: no QR code of it, but how to let phones in
    assert "▀" not in served.output and "--http 0.0.0.0:" in served.output
    origin = {"origin": served.url.rstrip("/")}
    with httpx.Client(base_url=served.url, headers=origin) as http:
        assert http.post("/api/join", json={"code": "424242"}).status_code == 200
        for line in ("R5", "RH2", "fired 2"):
            assert http.post("/api/act", json={"line": line}).json()["ok"]
        before = http.get("/api/state").json()["view"]
    assert served.stop() == 0
    saved = summary(load_state(tmp_path / "unoattack-table.json").referee)
    assert saved.items() <= before.items()  # the page showed the game that was saved
    again = serve(*ARGS)
    with httpx.Client(base_url=again.url) as http:
        data = http.get("/api/state").json()
    assert data["view"] == before
    assert data["messages"] == [f"resuming the game saved in {Path('unoattack-table.json')}"]
    assert again.stop() == 0
    # ... and `unoattack table` plays on in the same file, then `serve` again.
    table = run(
        "table", "--port", "none", "--players", "Ann,Bob,Cat", cwd=tmp_path, stdin="fired 0\n"
    )
    assert table.returncode == 0 and "Cat: dry (holds 9)" in table.stdout
    third = serve(*ARGS)
    with httpx.Client(base_url=third.url) as http:
        ref = http.get("/api/state").json()["view"]
    assert ref["presses"] == [0, 0, 2] and ref["turn"] == 0


def test_corrections_that_the_deck_cannot_hold_are_refused_and_the_game_restarts(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    """Hand corrections adding up to more than the deck were acknowledged and saved; the
    restart then failed with exit 2, which the serve unit does not restart: the table stayed
    down."""
    served = serve(*ARGS, "--code", "424242")
    with httpx.Client(base_url=served.url, headers={"origin": served.url.rstrip("/")}) as http:
        assert http.post("/api/join", json={"code": "424242"}).status_code == 200
        for line in ("R5", "hand Ann 90"):
            assert http.post("/api/act", json={"line": line}).json()["ok"]
        refused = http.post("/api/act", json={"line": "hand Bob 90"})
        assert refused.status_code == 422 and refused.json()["error"].startswith(
            "Bob cannot hold 90: "
        )
    assert served.stop() == 0
    again = serve(*ARGS)  # it starts: the game saved is one it can load
    with httpx.Client(base_url=again.url) as http:
        assert http.get("/api/state").json()["view"]["hands"] == [90, 7, 7]


def test_the_join_code_from_the_environment_has_the_same_floor(tmp_path: Path) -> None:
    done = run(*ARGS, cwd=tmp_path, env={**os.environ, "UNOATTACK_CODE": "4711"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "join code `4711` is too short" in done.stderr and "72%" in done.stderr


def test_a_saved_game_is_not_reshaped_by_serve_flags(tmp_path: Path) -> None:
    """`serve` resumes as `table` does: a --deck, --mode or --target other than the saved game's
    is one line and exit 2 before anything is served (issue 21)."""
    new = ["--port", "none", "--players", "Ann,Bob,Cat", "--deck", "classic"]
    assert run("table", *new, cwd=tmp_path, stdin="R5\n").returncode == 0
    for flag, value, saved in (("--deck", "attack", "classic"), ("--target", "200", "500")):
        done = run(*ARGS, flag, value, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        error = f"{flag} {value}: unoattack-table.json holds a game with {flag} {saved}"
        assert done.stderr == f"unoattack: {error} (--new to start one)\n" and not done.stdout


def test_frames_too_big_for_the_websocket_layer_close_the_connection_only(
    serve: Callable[..., Served],
) -> None:
    served = serve(*ARGS)
    ws_url = served.url.replace("http://", "ws://") + "ws"
    origin = served.url.rstrip("/")
    with connect(ws_url, origin=origin, max_size=None) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "hello"
        ws.send("x" * (200 * 1024))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with connect(ws_url, origin=origin) as ws:  # the server is fine
        assert json.loads(ws.recv(timeout=10))["type"] == "hello"
    assert served.stop() == 0


def test_the_package_ships_the_page(tmp_path: Path) -> None:
    """The page is package data: an installed copy serves it with no checkout around."""
    import engine.web.app as app

    static = Path(app.STATIC)
    assert {"index.html", "app.js", "style.css", "icon.svg"} <= {p.name for p in static.iterdir()}
    text = (ROOT / "pyproject.toml").read_text()
    assert '"engine.web" = ["static/*"]' in text


def test_without_the_web_extra_serve_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.errors import UnoError
    from engine.web.options import need_web_extra

    monkeypatch.setitem(sys.modules, "segno", None)  # as if it were not installed
    with pytest.raises(UnoError, match=r"needs segno: pip install 'unoattack-launcher\[web\]'"):
        need_web_extra()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "stop", "signals"),
    [
        ([*ARGS, "--code", "424242"], signal.SIGINT, 2),
        ([*ARGS, "--code", "424242"], signal.SIGINT, 3),
        ([*ARGS, "--code", "424242", "--port", "mock"], signal.SIGTERM, 2),
        (["demo", "--web", "--code", "424242", "--wait-pages", "0"], signal.SIGINT, 3),
    ],
    ids=["serve-ctrl-c-twice", "serve-ctrl-c-thrice", "serve-mock-sigterm-twice", "demo-web"],
)
def test_stop_signals_however_many_stop_the_server_once_quietly(
    tmp_path: Path, command: list[str], stop: signal.Signals, signals: int
) -> None:
    """A second Ctrl-C (or SIGTERM) landed in uvicorn's own handling, which raised it again
    once the server had stopped: a KeyboardInterrupt in the event loop's shutdown, a traceback
    through asyncio and Starlette's lifespan on the terminal."""
    children: list[psutil.Process] = []
    done = interrupt(
        ["-m", "engine.cli", *command, "--http", "127.0.0.1:0"],
        # (demo --web's page is watch-only: no join code, its line names the page)
        running=b"join code" if command[0] == "serve" else b"watch them at",
        signals=signals,
        stop=stop,
        cwd=tmp_path,
        interactive=True,
        when_running=lambda pid: children.extend(psutil.Process(pid).children(recursive=True)),
    )
    assert done.code == 0, done.terminal[-800:]
    assert "Traceback" not in done.terminal and "ERROR" not in done.terminal, done.terminal
    assert done.left == [] and not any(c.is_running() and c.status() != "zombie" for c in children)
    if command[0] == "serve":
        assert "unoattack serve: stopped; the game is saved" in done.terminal
        assert load_state(tmp_path / "unoattack-table.json").referee.players == [
            "Ann",
            "Bob",
            "Cat",
        ]
