"""Press-to-page latency of the web app, against a bare broadcast of the same messages.

Ours: a mock box (`launcher run --mock --port pty` with the end-to-end tests' fast timings and a
pattern jam model that fires nothing on 19 presses in 20, so a press is answered at once), the
table referee behind `TableService`, and `unoattack serve`'s web server (uvicorn, WebSocket) in
this process; 1 and then 20 WebSocket clients speaking the page's
protocol. Two players take turns: `hit`, then `press` (what the page's Press button sends). For
each press we time

- press -> page: from sending the press to the box until a page has the update that counts it;
- event -> page: from the host receiving the box's fire event until a page has that update.

Reference: a bare Starlette WebSocket endpoint on the same uvicorn transport and settings that
sends the very update frames ours sent (same bytes, same order) to the same number of clients,
timed from the broadcast call to receipt.

Run: `.venv/bin/python tests/perf/bench_web.py [--presses N]`. The LAST line is `ratio X`: our
p99 event -> page with 20 pages over the bare broadcast's p99 with 20 pages. Goal: p99
press -> page under 100 ms with 20 pages.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect  # noqa: E402

from engine.boxport import mock_box  # noqa: E402
from engine.table.options import GameOptions  # noqa: E402
from engine.web.server import WebServer  # noqa: E402
from engine.web.table_service import TableService, open_table  # noqa: E402
from tests.configs import merge, write_config  # noqa: E402
from tests.e2e.conftest import FAST  # noqa: E402

WARMUP = 10


def box_config() -> str:
    """The end-to-end tests' fast mock box (no cooldown between presses: the box's own cadence
    is not the web app's latency) whose jam model fires nothing on 19 presses in 20, so a press
    is answered at once (the box insists that a pattern fires sometimes)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_config(
            Path(tmp) / "launcher.toml",
            merge(FAST, {"jam": {"mode": "pattern", "pattern": [0] * 19 + [1]}}),
        )
        return path.read_text()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> tuple[float, float]:
    return statistics.median(values) * 1000, percentile(values, 0.99) * 1000


class Pages:
    """N WebSocket clients on one event loop in a thread; each keeps the receipt time of every
    update caused by a fire event, by that event's number."""

    def __init__(self, url: str, n: int, kind: str = "fire") -> None:
        self.url, self.n, self.kind = url, n, kind
        self.got: list[dict[int, float]] = [{} for _ in range(n)]
        self.frames: list[str] = []  # page 0's matching frames, for the reference
        self._cond = threading.Condition()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),))
        self.thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("pages did not connect")

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        origin = "http://" + self.url.split("//", 1)[1].split("/", 1)[0]  # this server's own
        sockets = [await connect(self.url, origin=origin, max_size=None) for _ in range(self.n)]
        readers = [asyncio.create_task(self._read(i, ws)) for i, ws in enumerate(sockets)]
        self._ready.set()
        await self._stop.wait()
        for task in readers:
            task.cancel()
        for ws in sockets:
            await ws.close()

    async def _read(self, i: int, ws: Any) -> None:
        async for text in ws:
            now = time.perf_counter()
            key = _key(text, self.kind)
            if key is not None:
                with self._cond:
                    self.got[i][key] = now
                    if i == 0:
                        self.frames.append(text)
                    self._cond.notify_all()

    def wait_all(self, key: int, timeout: float = 10.0) -> None:
        with self._cond:
            self._cond.wait_for(lambda: all(key in g for g in self.got), timeout)

    def close(self) -> None:
        assert self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(10)


def _key(text: str, kind: str) -> int | None:
    if '"type":"update"' not in text:
        return None
    cause = json.loads(text).get("cause") or {}
    if kind == "fire" and cause.get("kind") == "fire":
        return int(cause["event"])
    if kind == "bare" and "bench" in cause:
        return int(cause["bench"])
    return None


def ours(pages: int, presses: int) -> tuple[list[float], list[float], list[str]]:
    """(press->page, event->page) seconds over every page and press, and the fire frames."""
    with contextlib.ExitStack() as stack:
        _box, client = stack.enter_context(mock_box(box_config()))
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-web-"))
        options = GameOptions(["Ann", "Bob"], state=Path(tmp) / "table.json", new=True)
        session = open_table(options, client)
        service = TableService(session)
        event_at: dict[int, float] = {}
        handle = service.handle_event

        def timed(event: dict[str, Any]) -> None:
            if event.get("kind") == "fire":
                event_at[int(event["seq"])] = time.perf_counter()
            handle(event)

        service.handle_event = timed  # type: ignore[method-assign]
        server = WebServer(http="127.0.0.1:0")
        server.attach(service)
        runner = threading.Thread(target=server.run, daemon=True)
        runner.start()
        stack.callback(runner.join, 10)
        stack.callback(server.shutdown)  # first: then the runner ends
        url = f"ws://127.0.0.1:{server.port}/ws"
        _wait_port(server.port)
        assert service.act("R5").ok
        view = Pages(url, pages)
        press_lat: list[float] = []
        event_lat: list[float] = []
        try:
            for k in range(WARMUP + presses):
                seat = service.session.ref.turn
                assert service.act("hit").ok
                before = set(event_at)
                t_press = time.perf_counter()
                out = service.act("press")
                assert out.ok, out.error
                deadline = time.monotonic() + 10
                while not set(event_at) - before and time.monotonic() < deadline:
                    time.sleep(0.0005)
                (seq,) = set(event_at) - before
                view.wait_all(seq)
                # the press counted, and the turn moved on: the next `hit` is the other seat's
                while service.session.ref.turn == seat:
                    time.sleep(0.0005)
                if k >= WARMUP:
                    for got in view.got:
                        press_lat.append(got[seq] - t_press)
                        event_lat.append(got[seq] - event_at[seq])
            frames = list(view.frames[WARMUP:])
        finally:
            view.close()
        return press_lat, event_lat, frames


def bare(pages: int, frames: list[str]) -> list[float]:
    """Seconds from the broadcast call to receipt, over every page and frame."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    clients: set[WebSocket] = set()
    loop_box: list[asyncio.AbstractEventLoop] = []

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        loop_box[:] = [asyncio.get_running_loop()]
        clients.add(ws)
        try:
            while True:
                await ws.receive_text()
        except WebSocketDisconnect:
            clients.discard(ws)

    async def broadcast(text: str) -> None:
        for ws in list(clients):
            await ws.send_text(text)

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        http="h11",
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    runner = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    runner.start()
    _wait_port(port)
    view = Pages(f"ws://127.0.0.1:{port}/ws", pages, kind="bare")
    latencies: list[float] = []
    try:
        while len(clients) < pages:
            time.sleep(0.01)
        for k, frame in enumerate(frames):
            data = json.loads(frame)
            data["cause"] = {"bench": k}  # the same bytes but for a number to match on
            text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
            t0 = time.perf_counter()
            asyncio.run_coroutine_threadsafe(broadcast(text), loop_box[0])
            view.wait_all(k)
            latencies.extend(got[k] - t0 for got in view.got)
    finally:
        view.close()
        server.should_exit = True
        runner.join(5)
    return latencies


def _wait_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=150, help="measured presses per run")
    args = parser.parse_args(argv)
    results: dict[int, dict[str, tuple[float, float]]] = {}
    for pages in (1, 20):
        press_lat, event_lat, frames = ours(pages, args.presses)
        ref = bare(pages, frames)
        results[pages] = {
            "press": summary(press_lat),
            "event": summary(event_lat),
            "bare": summary(ref),
        }
        size = statistics.median(len(f) for f in frames)
        r = results[pages]
        print(f"{pages:2d} page(s), {args.presses} presses, update frames ~{size:.0f} bytes")
        print(
            f"   ours  press -> page   median {r['press'][0]:7.2f} ms   p99 {r['press'][1]:7.2f} ms"
        )
        print(
            f"   ours  event -> page   median {r['event'][0]:7.2f} ms   p99 {r['event'][1]:7.2f} ms"
        )
        print(
            f"   bare  broadcast       median {r['bare'][0]:7.2f} ms   p99 {r['bare'][1]:7.2f} ms"
        )
    for what in ("press", "event"):
        met = "met" if results[20][what][1] < 100 else "NOT met"
        print(f"goal p99 {what} -> page < 100 ms with 20 pages: {met}")
    median_ratio = results[20]["event"][0] / results[20]["bare"][0]
    print(f"median ratio (ours event -> page / bare, 20 pages) {median_ratio:.2f}")
    print(f"ratio {results[20]['event'][1] / results[20]['bare'][1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
