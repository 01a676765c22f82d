"""The web table probed again from the LAN after the first round of fixes (issue 21's held-out
checks): each probe against `unoattack serve`'s real web server (uvicorn, the app, the hub) on a
free port of this machine, over real HTTP and WebSocket connections. Each got a traceback, a
silent socket or a flooded log; each now gets one line, and the server carries on."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.engine.web.conftest import Live, table_service
from tests.engine.web.test_lan_probes import WAIT_S, hello, joined, reply_to, ws
from tests.wait import wait_until

HALF_PAIR = '"\\ud800"'  # a valid JSON escape, but no character: UTF-8 cannot encode it


@pytest.mark.parametrize(
    "body",
    [
        '{"code": ' + HALF_PAIR + "}",  # unauthenticated: it was a 500 and a traceback
        '{"code": "1", "x\\udfff": 1}',
    ],
)
def test_half_a_surrogate_pair_to_join_is_one_line(live: Callable[..., Live], body: str) -> None:
    served = live()
    with httpx.Client(base_url=served.url, headers=served.origin, timeout=30) as http:
        reply = http.post("api/join", content=body, headers={"content-type": "application/json"})
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error.startswith("message is not text: ") and "\n" not in error
        assert http.post("api/join", json={"code": served.code}).status_code == 200


def test_half_a_surrogate_pair_over_the_websocket_gets_an_error_and_the_socket_stays(
    live: Callable[..., Live],
) -> None:
    """A ping whose id was `"\\ud800"`: its reply could not be sent, the socket's sender died
    without a word and the page never got another update."""
    served = live()
    with joined(served) as http:
        token = http.cookies["unoattack_session"]
    cookie = {"cookie": f"unoattack_session={token}"}
    with ws(served, additional_headers=cookie) as sock:
        hello(sock)
        for bad in (
            '{"type": "ping", "id": ' + HALF_PAIR + "}",
            '{"type": "act", "id": 2, "line": ' + HALF_PAIR + "}",
            '{"type": "box", "op": "model.set", "params": {' + HALF_PAIR + ": 1}}",
        ):
            error = reply_to(sock, bad)
            assert error["type"] == "error" and error["error"].startswith("message is not text")
        assert reply_to(sock, '{"type": "ping", "id": 3}')["ok"] is True
        served.service.announce(["still live"], {"test": True})
        update = json.loads(sock.recv(timeout=30))
        assert update["type"] == "update" and update["messages"] == ["still live"]


def _raw_websocket(served: Live, *, rcvbuf: int = 2048) -> socket.socket:
    """A WebSocket opened by hand, that never reads what the server sends (its receive
    buffer as small as the kernel allows)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", served.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Origin: {served.origin['origin']}\r\n\r\n".encode()
    )
    return sock


def _frame(text: str | bytes) -> bytes:
    """One masked WebSocket text frame (a client's); bytes are sent as they are."""
    data, mask = text.encode() if isinstance(text, str) else text, os.urandom(4)
    size = bytes([0x80 | len(data)]) if len(data) < 126 else bytes([0xFE]) + len(data).to_bytes(2)
    return b"\x81" + size + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def test_a_page_gone_with_replies_queued_costs_no_log_line_each(
    live: Callable[..., Live], caplog: pytest.LogCaptureFixture
) -> None:
    """A script sent 5,000 pings without reading, then went (a reset): the server wrote every
    reply still queued to the dead socket, and asyncio logged `socket.send() raised
    exception.` for each, 8,000 lines from 30 such sockets."""
    served = live()
    hub = served.server.hub
    sock = _raw_websocket(served)
    wait_until(lambda: hub.pages == 1, WAIT_S, what="the socket subscribed")
    pings = b"".join(_frame(json.dumps({"type": "ping", "id": "x" * 40})) for _ in range(5000))
    sock.sendall(pings)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with caplog.at_level(logging.WARNING):
        sock.close()  # with the server's frames unread: a reset
        wait_until(lambda: hub.pages == 0, WAIT_S, what="the server letting the socket go")
    assert "socket.send() raised exception" not in caplog.text


class _Page:
    """One WebSocket straight on the app's handler (`WebApp.websocket`), with the ASGI
    `receive` and `send` of a page that sends `requests` and reads nothing after the hello."""

    def __init__(self, tmp_path: Path, requests: list[str], updates: int = 0) -> None:
        from engine.web.app import WebApp
        from engine.web.auth import Auth
        from engine.web.hub import Hub

        self.service = table_service(tmp_path / "table.json")
        self.hub = Hub()
        self.web = WebApp(self.service, self.hub, Auth("424242"))
        self.service.publish = self.hub.publish
        for n in range(updates):
            self.service.announce([f"update {n}"], {"test": n})
        self.incoming = [{"type": "websocket.connect"}] + [
            {"type": "websocket.receive", "text": text} for text in requests
        ]
        self.read = 0  # messages the handler took
        self.frames: list[str] = []  # frames the handler sent
        self.never = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.read < len(self.incoming):
            self.read += 1
            return self.incoming[self.read - 1]
        await self.never.wait()
        raise AssertionError("unreachable")

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "websocket.send":
            self.frames.append(message["text"])

    def scope(self) -> dict[str, Any]:
        query = f"since=0&epoch={self.web.epoch}".encode()  # every update
        return {"type": "websocket", "path": "/ws", "headers": [], "query_string": query}

    async def run(self, turns: int) -> None:
        """The handler for `turns` turns of the event loop (no clock: what it does in them)."""
        from starlette.websockets import WebSocket

        self.hub.bind(asyncio.get_running_loop())
        task = asyncio.create_task(
            self.web.websocket(WebSocket(self.scope(), self.receive, self.send))
        )
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def test_a_page_that_never_reads_holds_one_reply_not_thousands(tmp_path: Path) -> None:
    """Replies piled up in the page's queue (4,000 of them, each up to 4 KB with its id echoed:
    5 MB a socket, 32 sockets an address); its next request is now read once the reply to the
    last one has left the queue."""
    page = _Page(tmp_path, [json.dumps({"type": "ping", "id": "x" * 40})] * 3000)
    blocked = page.never

    async def send(message: dict[str, Any]) -> None:  # the hello goes; nothing else ever does
        if message["type"] == "websocket.send":
            page.frames.append(message["text"])
            if len(page.frames) > 1:
                await blocked.wait()

    page.send = send  # type: ignore[method-assign]
    asyncio.run(page.run(turns=20_000))
    assert 2 <= page.read <= 4, page.read  # the connect and a request or two


def test_the_sender_gives_the_loop_a_turn_between_two_frames(tmp_path: Path) -> None:
    """Frames still queued when the connection was lost were written one after the other to
    the dead socket before the loop could say it was lost: a log line each (asyncio's
    `socket.send() raised exception.`)."""
    page = _Page(tmp_path, [], updates=50)
    gone = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] != "websocket.send":
            return
        if gone.is_set():
            raise OSError("the connection is gone")  # what uvicorn says once it knows
        page.frames.append(message["text"])
        if len(page.frames) == 2:  # the first update found the peer gone: known a turn later
            asyncio.get_running_loop().call_soon(gone.set)

    page.send = send  # type: ignore[method-assign]
    asyncio.run(page.run(turns=1000))
    assert len(page.frames) <= 3, f"{len(page.frames) - 2} frames written to a dead socket"


def test_a_refused_id_is_not_echoed_back(live: Callable[..., Live]) -> None:
    """An `id` of 4,000 digits was refused and sent back in full with the refusal: 4 KB a
    reply that a script could queue thousands of."""
    served = live()
    with ws(served) as sock:
        hello(sock)
        for ident in ("9" * 4000, json.dumps("x" * 41)):
            error = reply_to(sock, '{"type": "ping", "id": ' + ident + "}")
            assert error["type"] == "error" and error["id"] is None, str(error)[:200]
        assert reply_to(sock, '{"type": "ping", "id": "' + "x" * 40 + '"}')["id"] == "x" * 40


def _answer(served: Live, request: bytes) -> bytes:
    """The server's whole answer to `request` sent on a connection of its own."""
    with socket.create_connection(("127.0.0.1", served.port), 30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


HANDSHAKE = (
    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: {version}\r\n{more}\r\n"
)


@pytest.mark.parametrize(
    ("request_", "status"),
    [
        (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\x00" * 40, b"400"),  # TLS
        (b"GET /api/state HTTP/1.1\r\n\r\n", b"400"),  # no Host
        (
            b"POST /api/act HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"400",
        ),
        (HANDSHAKE.format(path="/ws", version=99, more="").encode(), b"400"),
        (HANDSHAKE.format(path="/ws", version=13, more=f"X: {'a' * 9000}\r\n").encode(), b"431"),
        (HANDSHAKE.format(path="/nosuch", version=13, more="").encode(), b"403"),
    ],
    ids=["tls", "no-host", "two-lengths", "ws-version", "ws-header-size", "ws-nowhere"],
)
def test_the_answers_uvicorn_gives_itself_carry_the_security_headers(
    live: Callable[..., Live], request_: bytes, status: bytes
) -> None:
    """A request uvicorn could not read, and a WebSocket handshake refused before the app
    accepted it, were answered without the headers every other answer carries."""
    served = live()
    head = _answer(served, request_).partition(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"http/1.1 " + status), head[:80]
    for name in (b"content-security-policy", b"x-content-type-options", b"x-frame-options"):
        assert head.count(b"\r\n" + name + b": ") == 1, (name, head)


def test_a_flood_of_malformed_requests_is_a_line_in_the_log_not_one_each(
    live: Callable[..., Live],
) -> None:
    """uvicorn logged a line for every request it could not read, and a whole traceback for
    every WebSocket text that was not UTF-8: a script filled the journal."""
    served = live()
    logged: list[logging.LogRecord] = []
    catch = logging.Handler()
    catch.emit = logged.append  # type: ignore[method-assign]
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(catch)
    try:
        for _ in range(40):
            assert _answer(served, b"\x16\x03\x01garbage\r\n\r\n").startswith(b"HTTP/1.1 400")
        for _ in range(20):
            sock = _raw_websocket(served, rcvbuf=65536)
            sock.recv(12)  # 101: the handshake is answered
            sock.sendall(_frame(b'{"type": "ping", "id": "\xff"}'))  # not UTF-8
            sock.close()
        wait_until(lambda: served.server.hub.pages == 0, WAIT_S, what="the sockets let go")
    finally:
        logger.removeHandler(catch)
    said = [r.getMessage() for r in logged]
    assert said.count("Invalid HTTP request received.") <= 2, said
    assert said.count("Invalid UTF-8 sequence received from client.") <= 2, said
    assert not any(r.exc_info for r in logged)
