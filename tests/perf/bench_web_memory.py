"""The web server's memory per request and per WebSocket, and a move's reply on one socket.

Memory: `unoattack serve`'s web server (uvicorn, the app, the hub; a table without a box) in a
thread of this process, asked by clients in this process. After a warm-up, N `GET /api/state`
(each page's language in turn) and then N WebSocket connects (hello, close) are made; the
Python memory traced (tracemalloc, after a collection) before and after each batch, divided by
N, is what one request or one WebSocket leaves behind. Goal: flat (a few bytes at most: the
allocator's noise), where a connection once kept ~8 KB for ever.

Latency: one player's WebSocket sends moves (`hit`, then `fired 0`: every move an update
and then its reply on the same socket) and times each reply; and a kept-alive connection times
`GET /api/state`. Against the same server with TCP_NODELAY left off (its listening socket made
with proto 0, as it was): Nagle's algorithm then holds the reply until the page has
acknowledged the update before it, which a delayed ACK puts off by ~40 ms.

Run: `.venv/bin/python tests/perf/bench_web_memory.py [--requests N] [--moves N]`. The LAST
line is `ratio X`: the median move -> reply without TCP_NODELAY over ours (with it).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx2 as httpx  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from engine.table.options import GameOptions  # noqa: E402
from engine.web.server import WebServer  # noqa: E402
from engine.web.table_service import TableService, open_table  # noqa: E402

LANGS = ("en", "th", "zh_Hant", "ro", "cy")
CODE = "424242"


@contextlib.contextmanager
def served(**options: Any) -> Iterator[WebServer]:
    """A table (Ann, Bob; no box) served on a free port of 127.0.0.1 in a thread."""
    with tempfile.TemporaryDirectory(prefix="bench-web-memory-") as tmp:
        options = GameOptions(["Ann", "Bob"], state=Path(tmp) / "table.json", new=True)
        server = WebServer(http="127.0.0.1:0", code=CODE, **options)
        server.attach(TableService(open_table(options)))
        runner = threading.Thread(target=server.run, daemon=True)
        runner.start()
        url = f"http://127.0.0.1:{server.port}/"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "api/state", timeout=5).status_code == 200:
                    break
            time.sleep(0.05)
        try:
            yield server
        finally:
            server.shutdown()
            runner.join(30)


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def settle(before: int, rounds: int = 20) -> int:
    """Traced memory once the server's side of the last connections has let go."""
    now = traced()
    for _i in range(rounds):
        time.sleep(0.05)
        later = traced()
        if later >= now:
            return later
        now = later
    return now


def memory(requests: int, sockets: int) -> tuple[float, float]:
    """Bytes left behind per request and per WebSocket, after a warm-up."""
    with served() as server:
        url = f"http://127.0.0.1:{server.port}/"
        ws_url = f"ws://127.0.0.1:{server.port}/ws"
        origin = f"http://127.0.0.1:{server.port}"

        def get(n: int) -> None:
            for i in range(n):
                lang = LANGS[i % len(LANGS)]
                with httpx.Client(timeout=30) as http:  # a new connection each, like a script
                    assert http.get(f"{url}api/state?lang={lang}").status_code == 200

        def sockets_(n: int) -> None:
            for i in range(n):
                with connect(f"{ws_url}?lang={LANGS[i % len(LANGS)]}", origin=origin) as ws:
                    assert json.loads(ws.recv(timeout=30))["type"] == "hello"

        tracemalloc.start()
        try:
            get(100)
            sockets_(30)  # warm-up: imports, caches of a fixed size, the allocator's pools
            start = settle(traced())
            get(requests)
            after_requests = settle(start)
            sockets_(sockets)
            after_sockets = settle(after_requests)
        finally:
            tracemalloc.stop()
    return (after_requests - start) / requests, (after_sockets - after_requests) / sockets


def latency(moves: int, *, nodelay: bool) -> tuple[list[float], list[float]]:
    """Seconds from sending a move to its reply, and of a kept-alive GET."""
    with served(nodelay=nodelay) as server:
        url = f"http://127.0.0.1:{server.port}/"
        origin = {"origin": f"http://127.0.0.1:{server.port}"}
        with httpx.Client(base_url=url, headers=origin, timeout=30) as http:
            assert http.post("api/join", json={"code": CODE}).status_code == 200
            cookie = {"cookie": f"unoattack_session={http.cookies['unoattack_session']}"}
            gets = []
            for _i in range(moves):
                t0 = time.perf_counter()
                assert http.get("api/state").status_code == 200
                gets.append(time.perf_counter() - t0)
        replies = []
        with connect(
            url.replace("http", "ws") + "ws",
            origin=origin["origin"],
            **{"additional_headers": cookie},
        ) as ws:
            assert json.loads(ws.recv(timeout=30))["type"] == "hello"
            lines = ["R5"] + ["hit", "fired 0"] * moves
            for i, line in enumerate(lines):
                t0 = time.perf_counter()
                ws.send(json.dumps({"type": "act", "id": i, "line": line}))
                while True:
                    message = json.loads(ws.recv(timeout=30))
                    if message["type"] == "reply":
                        break
                assert message["ok"], message
                replies.append(time.perf_counter() - t0)
        return replies[1:], gets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="measured requests")
    parser.add_argument("--sockets", type=int, default=300, help="measured WebSocket connects")
    parser.add_argument("--moves", type=int, default=100, help="measured moves (x2 replies)")
    parser.add_argument("--only", choices=("memory", "latency"), help="one half only")
    args = parser.parse_args(argv)
    if args.only != "latency":
        per_request, per_socket = memory(args.requests, args.sockets)
        print(f"memory left per request   {per_request:9.1f} bytes ({args.requests} requests)")
        print(f"memory left per WebSocket {per_socket:9.1f} bytes ({args.sockets} connects)")
        flat = per_request < 200 and per_socket < 200
        print(f"goal flat after warm-up (< 200 bytes each): {'met' if flat else 'NOT met'}")
    if args.only == "memory":
        return 0
    ours, ours_get = latency(args.moves, nodelay=True)
    nagle, nagle_get = latency(args.moves, nodelay=False)
    for name, values in (
        ("move -> reply, TCP_NODELAY (ours)", ours),
        ("move -> reply, no TCP_NODELAY   ", nagle),
        ("kept-alive GET, TCP_NODELAY     ", ours_get),
        ("kept-alive GET, no TCP_NODELAY  ", nagle_get),
    ):
        median = statistics.median(values) * 1000
        p99 = sorted(values)[min(len(values) - 1, round(0.99 * (len(values) - 1)))] * 1000
        print(f"{name}  median {median:7.2f} ms   p99 {p99:7.2f} ms")
    print(f"ratio {statistics.median(nagle) / statistics.median(ours):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
