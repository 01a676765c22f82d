"""Who may hold a connection to the web table, and for how long.

A Raspberry Pi at a table has a few phones to serve and a LAN that anyone may be on, so:

- a request's line and headers must arrive within `HEADER_TIMEOUT_S` of its first byte (or of
  the connection, for the first request), and its body within `BODY_TIMEOUT_S` (app.py); a
  kept-alive connection idle for `KEEP_ALIVE_S` between requests is closed. A slowloris, or a
  connection opened and never used, is closed within seconds;
- one address holds at most `PER_CLIENT` connections at once (a phone needs a WebSocket and a
  few requests); a connection above that is closed at once;
- all together hold at most `most_connections()`: well below the open-file limit, so the
  server never runs out of descriptors (the state file and the serial port need theirs). When
  that many are open, a newcomer still gets in: the oldest connection of the address holding
  the most is closed for it (unless the newcomer's own address is that one);
- should the process still run out of descriptors, that is one line per `EMFILE_QUIET_S`, not
  a traceback per refused connection;
- what uvicorn logs of a client's mistakes (a request it cannot read, an upgrade it does not
  know, a WebSocket text that is not UTF-8: a line, or a whole traceback, for each) is one
  line per `EMFILE_QUIET_S`, without the traceback (`QuietClientMistakes`): the client gets
  its refusal, a script sending thousands does not fill the journal.

The answers uvicorn and the WebSocket layer give themselves (400 for a request they cannot
read, a refused handshake) carry the security headers of every other answer
(engine/web/headers.py).

WebSockets stay open as long as their page does (uvicorn pings each every 20 s and closes one
that does not answer).

The limits are kept by uvicorn's own protocol classes with a `Gate` in front
(`protocols(gate, header_timeout)`): the HTTP one (h11) times the headers, and both it and the
WebSocket one (which takes a connection over on an upgrade) tell the gate when a connection
opens and closes.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import logging
import resource
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from engine.web.headers import HEADERS, raw_headers
from i18n import _

__all__ = [
    "BACKLOG",
    "BODY_TIMEOUT_S",
    "HEADER_TIMEOUT_S",
    "KEEP_ALIVE_S",
    "PER_CLIENT",
    "Gate",
    "QuietClientMistakes",
    "most_connections",
    "out_of_files_handler",
    "protocols",
]

HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
PER_CLIENT = 32
MOST = 512  # phones at one table, many times over; each costs memory on a Pi
# Connections accepted in one go (the listen backlog too): a flood's extra ones are open for a
# moment before they are closed, so the open-file limit keeps room for a whole batch.
BACKLOG = 64
RESERVED_FILES = 64  # descriptors kept for everything but connections (files, the serial port)
EMFILE_QUIET_S = 10.0
OUT_OF_FILES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# What uvicorn logs (logger `uvicorn.error`) when a client sends what no browser sends.
CLIENT_MISTAKES = frozenset(
    {
        "Invalid HTTP request received.",
        "Unsupported upgrade request.",
        "Invalid UTF-8 sequence received from client.",
    }
)


def most_connections() -> int:
    """Connections the server holds at most: `MOST`, or fewer when the open-file limit
    (systemd's LimitNOFILE, `ulimit -n`) leaves less room."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MOST
    return max(8, min(MOST, soft - RESERVED_FILES - BACKLOG))


class Gate:
    """The open connections, by client address: `admit` a new one (False: close it),
    `release` it when it closes."""

    def __init__(self, *, per_client: int = PER_CLIENT, most: int | None = None) -> None:
        self.per_client = per_client
        self.most = most_connections() if most is None else most
        # transport -> its address; a dict keeps them oldest first
        self._open: dict[Any, str] = {}
        self._by_address: collections.Counter[str] = collections.Counter()
        self.refused = 0

    def __len__(self) -> int:
        return len(self._open)

    def admit(self, transport: Any) -> bool:
        """A connection has opened: True when it may stay."""
        if transport in self._open:  # a WebSocket taking over its HTTP connection
            return True
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if self._by_address[address] >= self.per_client:
            self.refused += 1
            return False
        if len(self._open) >= self.most and not self._make_room(address):
            self.refused += 1
            return False
        self._open[transport] = address
        self._by_address[address] += 1
        return True

    def release(self, transport: Any) -> None:
        """A connection has closed."""
        address = self._open.pop(transport, None)
        if address is not None:
            self._by_address[address] -= 1
            if self._by_address[address] <= 0:
                del self._by_address[address]

    def _make_room(self, newcomer: str) -> bool:
        """Close the oldest connection of the address holding the most (not the newcomer's)."""
        greedy, held = self._by_address.most_common(1)[0]
        if greedy == newcomer or held <= 1:
            return False
        oldest = next(t for t, a in self._open.items() if a == greedy)
        self.release(oldest)
        oldest.abort()
        return True


def protocols(gate: Gate, header_timeout: float = HEADER_TIMEOUT_S) -> tuple[type, type]:
    """uvicorn's HTTP (h11) and WebSocket protocol classes keeping `gate`'s limits and the
    header timeout (for uvicorn.Config's `http` and `ws`)."""

    class TableHTTP(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if not gate.admit(transport):
                transport.abort()
                return
            self._time_headers()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE:
                self._time_headers()  # a new request starts: its headers are timed
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._stop_timing()  # the headers are in (or the connection was upgraded)

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_timing()
            gate.release(self.transport)
            super().connection_lost(exc)

        def _time_headers(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout, self._too_slow)

        def _stop_timing(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

        def send_400_response(self, msg: str) -> None:
            # uvicorn's own answer to a request it cannot read, with the security headers.
            body = msg.encode("ascii")
            headers = [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *raw_headers(),
            ]
            answer = h11.Response(status_code=400, headers=headers, reason=b"Bad Request")
            for event in (answer, h11.Data(data=body)):
                self.transport.write(self.conn.send(event))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
            self.transport.close()

    class TableWebSocket(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Every handshake answer the WebSocket layer makes (101, a refused handshake, the
            # app refusing before it accepts) is made by one of these two.
            for name in ("accept", "reject"):
                setattr(self.conn, name, _with_headers(getattr(self.conn, name)))

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            gate.admit(transport)  # already admitted as an HTTP connection

        def connection_lost(self, exc: Exception | None) -> None:
            gate.release(self.transport)
            super().connection_lost(exc)

    return TableHTTP, TableWebSocket


def _with_headers(make: Callable[..., Any]) -> Callable[..., Any]:
    """`make` (a handshake response maker of `websockets`), its responses with `HEADERS`."""

    def made(*args: Any, **kwargs: Any) -> Any:
        response = make(*args, **kwargs)
        for name, value in HEADERS.items():
            if name not in response.headers:  # (`accept` refuses through `reject`)
                response.headers[name] = value
        return response

    return made


class QuietClientMistakes(logging.Filter):
    """A filter for uvicorn's logger: each of its `CLIENT_MISTAKES` lines at most once per
    `EMFILE_QUIET_S`, and never with a traceback. `install()` puts one on the logger."""

    LOGGER = "uvicorn.error"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.clock = clock
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg not in CLIENT_MISTAKES:
            return True
        record.exc_info, record.exc_text = None, None
        now = self.clock()
        if now - self._last.get(record.msg, -EMFILE_QUIET_S) < EMFILE_QUIET_S:
            return False
        self._last[record.msg] = now
        return True

    @classmethod
    def install(cls) -> None:
        """On uvicorn's logger, once (uvicorn sets its loggers up again for each server)."""
        logger = logging.getLogger(cls.LOGGER)
        if not any(isinstance(f, cls) for f in logger.filters):
            logger.addFilter(cls())


def out_of_files_handler(out: TextIO | None = None) -> Any:
    """An asyncio exception handler: running out of descriptors (EMFILE, ...) is one line per
    `EMFILE_QUIET_S` on `out` (stderr), never a traceback per connection; anything else goes
    to asyncio's own handler."""
    last = [0.0]

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in OUT_OF_FILES:
            now = time.monotonic()
            if now - last[0] >= EMFILE_QUIET_S:
                last[0] = now
                limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
                said = _(
                    "out of open files ({error}): new connections wait (the limit is {limit}: "
                    "LimitNOFILE in the unit, ulimit -n in a shell)"
                ).format(error=exc.strerror, limit=limit)
                print(f"unoattack: {said}", file=out or sys.stderr, flush=True)
            return
        loop.default_exception_handler(context)

    return handle
