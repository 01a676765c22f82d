"""Running the web app: the listening socket, the URL and its QR code, uvicorn, and the
threads beside it (the box's event reader, the demo's bots).

The socket is bound before anything is printed, so the URL shown is the one that works (port 0
picks a free port). By default only this machine can connect (127.0.0.1); a LAN address has to
be asked for with `--http`. The server answers only to the host names it was started for (its
addresses, this machine's name, `--allow-host`), which stops DNS-rebinding pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import socket
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

import uvicorn

from common.commandline import say_error
from engine.errors import InputError, UnoError
from engine.web.auth import Auth
from engine.web.connections import (
    BACKLOG,
    HEADER_TIMEOUT_S,
    KEEP_ALIVE_S,
    Gate,
    out_of_files_handler,
)
from engine.web.hub import Hub
from engine.web.options import DEFAULT_HTTP, check_join_code, parse_http
from engine.web.table_service import TableService

__all__ = ["WebServer"]

GRACE_S = 3  # for the connections open when the server stops
WS_MAX_SIZE = 64 * 1024  # frames above this are refused by the WebSocket layer itself (1009)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
SIOCGIFADDR = 0x8915  # Linux ioctl: an interface's IPv4 address


def _bind(host: str, port: int, *, nodelay: bool = True) -> socket.socket:
    """The listening socket. Made as a TCP socket (proto IPPROTO_TCP), so that asyncio sets
    TCP_NODELAY on every connection it accepts: a reply is not held back behind the update
    sent just before it on the same socket (Nagle's algorithm waiting for an ACK that the
    peer delays). `nodelay=False` (proto 0) is for the benchmark's comparison only."""
    try:
        infos = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise InputError(f"--http {host}:{port}: unknown host ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto if nodelay else 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise UnoError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _interface_addresses() -> list[str]:
    """IPv4 addresses of this machine's interfaces (Linux), loopback last."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        names = [name for _, name in socket.if_nameindex()]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for name in names:
                with contextlib.suppress(OSError):
                    packed = struct.pack("256s", name.encode()[:15])
                    reply = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, packed)
                    found.append(socket.inet_ntoa(reply[20:24]))
    if not found:
        with contextlib.suppress(OSError):
            found = socket.gethostbyname_ex(socket.gethostname())[2]
    return sorted(set(found), key=lambda a: (ipaddress.ip_address(a).is_loopback, a))


def _host_names(host: str) -> list[str]:
    """The host names (with brackets for IPv6) a page may use to reach `host`."""
    names = list(LOOPBACK_NAMES)
    if host in ("127.0.0.1", "localhost", "::1"):
        return names
    hostname = socket.gethostname().lower()
    names += [hostname, f"{hostname}.local"]
    if host in ("0.0.0.0", "::", ""):
        names += _interface_addresses()
    else:
        names.append(f"[{host}]" if ":" in host else host.lower())
    return names


def _loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.x, ::1, localhost)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name: whoever can resolve it


def _display_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        outside = [a for a in _interface_addresses() if not ipaddress.ip_address(a).is_loopback]
        return outside[0] if outside else "127.0.0.1"
    return f"[{host}]" if ":" in host else host


class _Uvicorn(uvicorn.Server):
    """uvicorn's server without its own signal handling: it took SIGINT and SIGTERM, and once
    stopped raised them again, which a second Ctrl-C turned into a KeyboardInterrupt in the
    middle of the event loop's shutdown (a traceback) or of the game's last save. The command's
    `CtrlC` takes them and tells `WebServer.stop_signal`."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebServer:
    """One table's web app. `WebServer(http=...)` binds the socket (so a busy port fails before
    a box is started); `attach(service)` builds the app; `run()` serves until Ctrl-C or SIGTERM.

    `workers` are functions run in threads while the server runs, each given a stop event
    (the box's event pump and its status asker always are)."""

    def __init__(
        self,
        *,
        http: str = DEFAULT_HTTP,
        code: str | None = None,
        allow_hosts: Iterable[str] = (),
        gate: Gate | None = None,
        header_timeout: float = HEADER_TIMEOUT_S,
        keep_alive: int = KEEP_ALIVE_S,
        nodelay: bool = True,
    ) -> None:
        check_join_code(code)
        host, port = parse_http(http)
        self.hub = Hub()
        self.auth = Auth(code)
        self.gate = gate or Gate()  # how many connections, from whom (engine/web/connections.py)
        # The connection timeouts (engine/web/connections.py); tests set them short to see
        # them close connections without waiting out the product's seconds.
        self.header_timeout = header_timeout
        self.keep_alive = keep_alive
        self.sock = _bind(host, port, nodelay=nodelay)
        self.port = int(self.sock.getsockname()[1])
        self.host = host
        self.url = f"http://{_display_host(host)}:{self.port}/"
        # The address a phone on the LAN can open, or None: this machine only (loopback).
        self.lan_url = None if _loopback(_display_host(host)) else self.url
        names = [*_host_names(host), *(h.lower() for h in allow_hosts)]
        self.allowed_hosts = tuple(dict.fromkeys(names))
        self.stop = threading.Event()
        self.service: TableService | None = None
        self.app: Any = None
        self._workers: list[Callable[[threading.Event], None]] = []
        self._threads: list[threading.Thread] = []
        self._server: Any = None
        self._signals = 0

    def attach(
        self, service: TableService, workers: Iterable[Callable[[threading.Event], None]] = ()
    ) -> None:
        """Serve `service`: its changes become the hub's numbered updates."""
        from engine.web.app import create_app

        self.service = service
        self._workers = [service.pump, service.ask_status, service.follow_night, *workers]
        service.publish = self.hub.publish
        service.announce(service.startup_messages, {"start": True})  # the state at the start
        self.app = create_app(
            service,
            self.hub,
            self.auth,
            allowed_hosts=self.allowed_hosts,
            lan_url=self.lan_url,
            on_startup=self._start_workers,
            on_shutdown=self._stop_workers,
        )

    def close(self) -> None:
        """Release the socket (when `run` never ran)."""
        self.sock.close()

    def banner(
        self,
        out: TextIO,
        prog: str = "unoattack serve",
        *,
        saved: bool = True,
        joinable: bool = True,
    ) -> None:
        """The URL, the join code (`joinable`: someone may join; not for `demo --web`, whose
        page is watch-only) and a QR code of the URL when a phone can reach it (`saved`: the
        game has a state file)."""
        print(f"{prog}: the table at {self.url}", file=out)
        if self.lan_url is None:
            print(
                f"  (this machine only: phones cannot open it; --http 0.0.0.0:{self.port} lets "
                "phones on the LAN in)",
                file=out,
            )
        if joinable:
            code = self.auth.code
            print(f"  join code: {code}  (watchers need none; players enter it)", file=out)
        if self.lan_url is not None:
            try:
                import segno

                segno.make(self.lan_url, error="m").terminal(out=out, compact=True, border=1)
            except UnicodeEncodeError:
                print("  (the QR code needs a UTF-8 terminal)", file=out)
        kept = "; the game is saved after every action" if saved else ""
        print(f"  Ctrl-C stops the server{kept}", file=out)
        out.flush()

    def run(self) -> None:
        """Serve until stopped: `shutdown()`, or the command's stop signals told to
        `stop_signal` (a `CtrlC` listener). uvicorn takes no signal itself."""
        from engine.web.connections import QuietClientMistakes, protocols

        http, ws = protocols(self.gate, self.header_timeout)
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            http=http,  # h11, with the header timeout and the gate's limits
            ws=ws,  # websockets-sansio, with the gate's limits
            timeout_keep_alive=self.keep_alive,
            backlog=BACKLOG,
            ws_max_size=WS_MAX_SIZE,
            ws_per_message_deflate=False,  # small frames: compression costs more than it saves
            lifespan="on",
            proxy_headers=False,  # the peer address is the client (slowing wrong join codes)
            server_header=False,
            timeout_graceful_shutdown=GRACE_S,
        )
        QuietClientMistakes.install()  # uvicorn's config has just set its loggers up
        self._server = _Uvicorn(config)
        if self._signals:  # one came while it was starting
            self.stop_signal(self._signals)
        try:
            self._server.run(sockets=[self.sock])
        finally:
            self._stop_workers()
            self.sock.close()

    def shutdown(self) -> None:
        """Ask a running server to stop (any thread)."""
        if self._server is not None:
            self._server.should_exit = True

    def stop_signal(self, count: int) -> None:
        """The command's `count`th stop signal (Ctrl-C, SIGTERM, SIGHUP: a `CtrlC` listener):
        the server stops, its connections closed within `GRACE_S`. (No later one hurries it:
        uvicorn's forced exit skips the app's shutdown, whose task it then cancels with a
        traceback.)"""
        self._signals = count
        if self._server is not None:
            self._server.should_exit = True

    def _start_workers(self) -> None:
        # On the server's event loop (the app's startup): out of descriptors is one line.
        asyncio.get_running_loop().set_exception_handler(out_of_files_handler())
        for work in self._workers:
            thread = threading.Thread(
                target=self._guard(work), name=f"web-{work.__name__}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _guard(self, work: Callable[[threading.Event], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                work(self.stop)
            except Exception as exc:  # a worker must not die silently
                say_error("unoattack", f"{work.__name__} stopped: {exc}")
                if self.service is not None:
                    self.service.announce([f"{work.__name__} stopped: {exc}"], {"error": True})

        return run

    def _stop_workers(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads = []
