"""The web table probed from the LAN, as an attacker or a confused script would: each probe
against `unoattack serve`'s real web server (uvicorn, the app, the hub) on a free port of this
machine, over real HTTP and WebSocket connections. Each gets a one-line answer, the server
carries on, and nothing of the game changes unless the move was saved."""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import os
import socket
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from starlette.requests import HTTPConnection
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import engine.table.state_file
from engine.boxport import mock_box, mock_config
from tests.engine.web.conftest import Live, table_service

DEEP = "[" * 2000 + "]" * 2000  # fits the 4096-byte limit; the JSON parser recursed on it
WAIT_S = 60.0  # for the server to have let go of a connection (an event, not a speed)


@contextlib.contextmanager
def joined(served: Live) -> Iterator[httpx.Client]:
    """An HTTP client with a player's session on `served`."""
    with httpx.Client(base_url=served.url, headers=served.origin, timeout=30) as client:
        reply = client.post("api/join", json={"code": served.code})
        assert reply.status_code == 200, reply.text
        yield client


def ws(served: Live, query: str = "", **options: Any) -> Any:
    return connect(served.ws_url + query, origin=served.origin["origin"], **options)


def hello(sock: Any) -> dict[str, Any]:
    message = json.loads(sock.recv(timeout=30))
    assert message["type"] == "hello", message
    return message


def reply_to(sock: Any, request: str) -> dict[str, Any]:
    """Send `request`; the next message that is not an update."""
    sock.send(request)
    while True:
        message = json.loads(sock.recv(timeout=30))
        if message["type"] != "update":
            return message


def connection_objects() -> int:
    """Starlette requests and WebSockets alive in this process."""
    gc.collect()
    return sum(isinstance(o, HTTPConnection) for o in gc.get_objects())


def test_requests_and_websockets_are_not_kept_after_they_end(live: Callable[..., Live]) -> None:
    """Every request and WebSocket was kept for ever (a cache keyed by the connection): a Pi's
    memory went, 8 KB a request."""
    served = live()
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for i in range(120):
            lang = ("th", "cy", "ro", "zh_Hant", "en")[i % 5]
            assert http.get(f"api/state?lang={lang}").status_code == 200
            assert http.get("text.js", headers={"accept-language": lang}).status_code == 200
    for _i in range(30):
        with ws(served, "?lang=th") as sock:
            hello(sock)
    deadline = time.monotonic() + WAIT_S
    while connection_objects() > 2 and time.monotonic() < deadline:
        time.sleep(0.1)  # the server's side of the last sockets closing
    assert connection_objects() <= 2


@pytest.mark.parametrize("path", ["api/join", "api/act", "api/box"])
def test_deeply_nested_json_is_refused_in_one_line(live: Callable[..., Live], path: str) -> None:
    served = live()
    with joined(served) as http:
        before = http.get("api/state").json()
        for body in (DEEP, '{"line": ' + "[" * 1000 + "]" * 1000 + "}"):
            reply = http.post(path, content=body, headers={"content-type": "application/json"})
            assert reply.status_code == 400, reply.text
            error = reply.json()["error"]
            assert error.startswith("message nested ") and "\n" not in error
            assert reply.headers["x-content-type-options"] == "nosniff"
        assert http.get("api/state").json() == before


def test_a_deeply_nested_websocket_message_gets_an_error_and_the_socket_stays(
    live: Callable[..., Live],
) -> None:
    served = live()
    with ws(served) as sock:
        hello(sock)
        for bad in (DEEP, '{"type": "ping", "id": ' + "[" * 100 + "]" * 100 + "}", "[1, NaN]"):
            error = reply_to(sock, bad)
            assert error["type"] == "error" and "\n" not in error["error"], error
        assert reply_to(sock, '{"type": "ping", "id": 1}')["ok"] is True  # still there


def test_query_parameters_are_checked_before_anything_reads_them(
    live: Callable[..., Live],
) -> None:
    served = live()
    with ws(served) as sock:
        epoch = hello(sock)["epoch"]
    refused = [
        f"?since=%C2%B2&epoch={epoch}",  # `since=²`: str.isdigit() says yes, int() says no
        f"?since={'9' * 5000}&epoch={epoch}",
        f"?since=1&since=2&epoch={epoch}",
        "?lang=" + "x" * 300,
        "?debug=1",
        "?lang=%ff",
    ]
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for query in refused:
            with pytest.raises(InvalidStatus) as handshake, ws(served, query):
                pass
            assert handshake.value.response.status_code == 403, query
            reply = http.get("api/state" + query)
            assert reply.status_code == 400 and "\n" not in reply.json()["error"], query
            assert "default-src 'self'" in reply.headers["content-security-policy"]
        # A page's own reconnect still works, and the server carried on through all of it.
        with ws(served, f"?lang=th&since=0&epoch={epoch}") as sock:
            assert hello(sock)["lang"] == "th"
        assert http.get("api/state").status_code == 200


@pytest.fixture
def boxed(tmp_path: Path, live: Callable[..., Live]) -> Iterator[Live]:
    """A live server whose table has the mock box (`launcher run --mock`) behind it."""
    with mock_box(mock_config(speed=20, players=2, seed=1)) as (_box, client):
        service = table_service(tmp_path / "t.json", players="Ann,Bob", box=client)
        served = live(service)
        yield served
        served.stop()


@pytest.mark.slow
def test_box_controls_go_through_the_wire_op_table(boxed: Live) -> None:
    """`model.set` with a parameter named `self` (or `op`) was a 500: the params were passed
    as Python keyword arguments. They are the op's `params`, checked against wire/ops.py."""
    with joined(boxed) as http:
        for params in ({"self": 1}, {"op": "press"}, {"params": {}}, {"base": 0.3, "self": 1}):
            reply = http.post("api/box", json={"op": "model.set", "params": params})
            assert reply.status_code == 422, reply.text
            assert reply.json()["error"].startswith("box: BAD_ARG: model.set: cannot set ")
        reply = http.post("api/box", json={"op": "model.set", "params": {"base": 0.3}})
        assert reply.status_code == 200 and reply.json()["ok"], reply.text
        assert http.post("api/box", json={"op": "model"}).json()["ok"]
        assert "/dev/" not in http.get("api/state").text  # the box's port: a server path


class SaveFails:
    """The state file's temporary file (engine/table/state_file.py) for the next save fails
    with `error` (then it works again): the SD card full, the descriptors gone, a read-only
    remount."""

    def __init__(self, error: int) -> None:
        import tempfile

        self.error = error
        self.armed = False
        self.failed = 0
        self._real = tempfile.mkstemp

    def mkstemp(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            self.armed = False
            self.failed += 1
            raise OSError(self.error, os.strerror(self.error))
        return self._real(*args, **kwargs)


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EMFILE, errno.EROFS])
def test_a_move_that_cannot_be_saved_is_refused_and_undone(
    live: Callable[..., Live], monkeypatch: pytest.MonkeyPatch, error: int
) -> None:
    """It got no reply, stayed applied in memory and came back silently with the next move."""
    served = live()
    saving = SaveFails(error)
    monkeypatch.setattr(
        engine.table.state_file, "tempfile", types.SimpleNamespace(mkstemp=saving.mkstemp)
    )
    state = served.service.session.state_path
    with joined(served) as http:
        assert http.post("api/act", json={"line": "R5"}).status_code == 200
        before, saved = http.get("api/state").json(), state.read_bytes()
        saving.armed = True
        reply = http.post("api/act", json={"line": "R7"})
        assert saving.failed == 1 and reply.status_code == 422, reply.text
        problem = reply.json()["error"]
        assert problem.startswith("cannot save the game in table.json: ") and "\n" not in problem
        assert problem.endswith("not done, nothing changed"), problem
        assert http.get("api/state").json() == before and state.read_bytes() == saved
        assert served.service.session.ref.top == "R5"  # undone in memory too
        token = http.cookies["unoattack_session"]
        cookie = {"cookie": f"unoattack_session={token}"}
        with ws(served, additional_headers=cookie) as sock:  # a reply, never silence
            hello(sock)
            saving.armed = True
            answer = reply_to(sock, '{"type": "act", "id": 9, "line": "R7"}')
            assert answer["type"] == "reply" and answer["id"] == 9 and not answer["ok"], answer
            assert answer["error"] == problem
        assert http.get("api/state").json() == before and state.read_bytes() == saved
        # Saved again: the move is made, once.
        assert http.post("api/act", json={"line": "R7"}).status_code == 200
        assert engine.table.state_file.load_state(state).referee.top == "R7"
    with ws(served) as sock:
        said = [entry["line"] for entry in hello(sock)["recent"]]
    assert sum("R7" in line for line in said) == 1, said


def test_accepted_sockets_send_without_delay(live: Callable[..., Live]) -> None:
    """TCP_NODELAY on every accepted socket: a reply was held ~40 ms behind the update sent
    just before it on the same socket."""
    served = live()
    with socket.create_connection(("127.0.0.1", served.port), 10) as client:
        client.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert client.recv(12) == b"HTTP/1.1 200"
        ours = client.getsockname()
        gc.collect()
        accepted = [
            o
            for o in gc.get_objects()
            if isinstance(o, socket.socket) and o.fileno() >= 0 and _peer(o) == ours
        ]
        assert len(accepted) == 1
        assert accepted[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def _peer(sock: socket.socket) -> Any:
    try:
        return sock.getpeername()
    except OSError:
        return None


def test_the_guards_own_refusals_carry_the_security_headers(live: Callable[..., Live]) -> None:
    served = live()
    with httpx.Client(base_url=served.url, timeout=30) as http:
        rebinding = http.get("api/state", headers={"host": "evil.example"})
        forged = http.post(
            "api/act", json={"line": "R5"}, headers={"origin": "http://evil.example"}
        )
    for reply, status in ((rebinding, 400), (forged, 403)):
        assert reply.status_code == status
        assert "default-src 'self'" in reply.headers["content-security-policy"]
        assert reply.headers["x-frame-options"] == "DENY"
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.headers["referrer-policy"] == "no-referrer"


def test_watchers_are_not_told_the_servers_paths(tmp_path: Path, live: Callable[..., Live]) -> None:
    deck = tmp_path / "decks" / "home.toml"
    deck.parent.mkdir()
    deck.write_text('name = "home box"\n[cards]\nR1 = 30\nB2 = 30\nG3 = 30\n')
    state = tmp_path / "games" / "table.json"
    state.parent.mkdir()
    table_service(state, deck=str(deck)).session.goodbye()  # a game saved, then resumed:
    served = live(table_service(state, deck=str(deck)))
    served.service.announce(served.service.startup_messages, {"start": True})
    with httpx.Client(base_url=served.url, timeout=30) as http:
        seen = http.get("api/state").text
    with ws(served) as sock:
        seen += json.dumps(hello(sock))
    assert "resuming the game saved in table.json" in seen and "home box" in seen
    assert str(tmp_path) not in seen and "home.toml" not in seen


def test_a_session_lasts_an_evening(live: Callable[..., Live]) -> None:
    served = live()
    with joined(served) as http:
        cookie = http.post("api/join", json={"code": served.code}).headers["set-cookie"]
    assert "Max-Age=43200" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
