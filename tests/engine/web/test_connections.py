"""Connections to a real `unoattack serve` (a child process, with the open-file limit systemd
gives it): one client's flood of idle connections does not lock a new phone out; and to its web
server in this process with short timeouts: requests that never finish their headers are
closed, and a page's WebSocket stays open."""

from __future__ import annotations

import contextlib
import errno
import json
import select
import socket
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from websockets.sync.client import connect

from engine.web.connections import EMFILE_QUIET_S
from tests.engine.web.conftest import Live, Served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
ARGS = ["serve", "--port", "none", "--players", "Ann,Bob,Cat"]
NOFILE = (
    256  # the served process's open-file limit (systemd's default is 1,024): a flood runs into it
)
FLOOD = 300  # idle connections from one client
WAIT_S = 60.0  # for the server to answer or close (an event ends the wait, never the clock)
PHONE = "127.0.0.2"  # another machine on the LAN (every 127.x address is this one's loopback)
HEADER_S = 1.0  # the header timeout of the never-finishing test's server (the product's: 10 s)
KEEP_ALIVE_S = 1  # and its keep-alive (the product's: 5 s)
TRICKLE_S = 0.2  # a slowloris's byte every so often


def address(served: Served) -> tuple[str, int]:
    parts = urlsplit(served.url)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


@contextlib.contextmanager
def flood(where: tuple[str, int], n: int) -> Iterator[list[socket.socket]]:
    """`n` connections opened at once from this client, none of them ever used."""
    socks = []
    try:
        for _i in range(n):
            sock = socket.socket()
            sock.setblocking(False)
            code = sock.connect_ex(where)
            assert code in (0, errno.EINPROGRESS), errno.errorcode.get(code)
            socks.append(sock)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def phone(where: tuple[str, int]) -> socket.socket:
    """A connection from another machine of the LAN."""
    sock = socket.socket()
    sock.settimeout(WAIT_S)
    sock.bind((PHONE, 0))
    sock.connect(where)
    return sock


def closed_by_server(sock: socket.socket, timeout: float) -> bool:
    """True when the server closes `sock` within `timeout` (reading what it sent first)."""
    deadline = time.monotonic() + timeout
    while True:  # at least one look, also with no time to wait
        left = max(0.0, deadline - time.monotonic())
        if not select.select([sock], [], [], left)[0]:
            if left == 0:
                return False
            continue
        try:
            if not sock.recv(65536):
                return True
        except ConnectionResetError:
            return True


@pytest.mark.parametrize("nofile", [NOFILE, 64])
def test_a_flood_of_idle_connections_does_not_lock_out_a_new_phone(
    serve: Callable[..., Served], nofile: int
) -> None:
    """With 64 open files the server does run out of them as it accepts: one line every
    EMFILE_QUIET_S, no traceback per connection (it was ~30 MB in 10 s), and it recovers."""
    started = time.monotonic()
    served = serve(*ARGS, nofile=nofile)
    where = address(served)
    with flood(where, FLOOD):
        time.sleep(1)  # the flood reaches the server first (it is not waited for: no clock)
        with phone(where) as sock:
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        origin = f"http://{where[0]}:{where[1]}"
        page = phone(where)
        with connect(f"ws://{where[0]}:{where[1]}/ws", sock=page, origin=origin) as ws:
            assert json.loads(ws.recv(timeout=WAIT_S))["type"] == "hello"
    assert served.stop() == 0
    lines = served.err.splitlines()
    most = 1 + (time.monotonic() - started) // EMFILE_QUIET_S + 1  # + "stopped; the game is saved"
    assert "Traceback" not in served.err and len(lines) <= most, served.err[-3000:]
    assert all(line.startswith("unoattack") for line in lines), lines


def test_requests_that_never_finish_are_closed_and_pages_stay(live: Callable[..., Live]) -> None:
    """`unoattack serve`'s web server in this process with its timeouts short (HEADER_S,
    KEEP_ALIVE_S; the product's are engine/web/connections.py's, seconds): the test waits for
    the server to close the connections, not for a clock."""
    served = live(header_timeout=HEADER_S, keep_alive=KEEP_ALIVE_S)
    where = ("127.0.0.1", served.port)
    with connect(served.ws_url, **served.origin) as page:
        assert json.loads(page.recv(timeout=WAIT_S))["type"] == "hello"
        opened = time.monotonic()
        slow = []  # slowloris: a header byte every TRICKLE_S, never the blank line
        for _i in range(20):
            sock = phone(where)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
            slow.append(sock)
        silent = [phone(where) for _i in range(5)]  # connected, never a byte
        kept = phone(where)  # one request answered, then idle on a kept-alive connection
        kept.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert kept.recv(12) == b"HTTP/1.1 200"
        deadline = time.monotonic() + WAIT_S
        while slow and time.monotonic() < deadline:
            for sock in list(slow):
                try:
                    sock.sendall(b"a")
                except OSError:
                    slow.remove(sock)  # closed by the server
                    continue
                if closed_by_server(sock, 0):
                    slow.remove(sock)
            # The next byte after TRICKLE_S (bytes after the first do not buy a request time),
            # or sooner when the server closes one of them.
            select.select(slow, [], [], TRICKLE_S)
        assert not slow, f"{len(slow)} slowloris requests still open after {WAIT_S} s"
        for sock in [*silent, kept]:
            assert closed_by_server(sock, WAIT_S)
        # The page has been open longer than a request may take for its headers and than a
        # kept-alive connection may idle: still there.
        assert time.monotonic() - opened >= max(HEADER_S, KEEP_ALIVE_S)
        page.send('{"type": "ping", "id": 1}')
        while (message := json.loads(page.recv(timeout=WAIT_S)))["type"] == "update":
            pass
        assert message["type"] == "reply" and message["ok"] is True, message
