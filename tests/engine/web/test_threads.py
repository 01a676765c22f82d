"""No leaked threads: `demo --web` in this process, 20 pages watching a whole mock-box game.
The number of threads never grows from the bots' first move to the game's end (no thread per
update, per page or per box event), and once the server is stopped every thread it started is
gone (the mock box child too)."""

from __future__ import annotations

import argparse
import asyncio
import io
import threading
from typing import Any

import pytest
from websockets.asyncio.client import connect

from engine import demo_cli
from engine.mockbox import mock_config
from engine.web import demo_web
from engine.web.server import WebServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
PAGES = 20
WAIT_S = 120.0  # for the game on a loaded machine; an event ends the wait, never the clock


def demo_args(*extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    demo_cli.register(parser.add_subparsers())
    return parser.parse_args(["demo", "--web", *extra])


class Pages:
    """`n` pages on one event loop in one thread (so they add one thread, whatever `n`); each
    counts the updates it receives; the threads alive are counted at every update of page 0."""

    def __init__(self, url: str, n: int) -> None:
        self.url, self.n = url, n
        self.received = [0] * n
        self.threads: list[int] = []  # threading.active_count() at each update, from the start
        self.started = threading.Event()  # the bots' first move arrived
        self.over = threading.Event()  # the game-over update arrived
        self.ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),))
        self.thread.start()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        origin = self.url.split("/ws", 1)[0].replace("ws://", "http://")
        sockets = [await connect(self.url, origin=origin) for _ in range(self.n)]
        tasks = [asyncio.create_task(self._read(i, ws)) for i, ws in enumerate(sockets)]
        self.ready.set()
        await self._stop.wait()
        for task in tasks:
            task.cancel()
        for ws in sockets:
            await ws.close()

    async def _read(self, i: int, ws: Any) -> None:
        import json

        async for text in ws:
            msg = json.loads(text)
            if msg.get("type") != "update":
                continue
            self.received[i] += 1
            if i != 0:
                continue
            cause = msg.get("cause") or {}
            if "demo" in cause and cause["demo"] != "over":
                self.started.set()
            if self.started.is_set():
                self.threads.append(threading.active_count())
            if cause.get("demo") == "over":
                self.over.set()

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)
        self.loop.close()


def test_threads_stay_flat_through_a_whole_game_with_twenty_pages() -> None:
    before = set(threading.enumerate())
    args = demo_args(  # a short whole game: one round of some 80 moves
        "--pace", "0", "--players", "3", "--target", "50", "--speed", "50", "--seed", "5"
    )
    args.wait_pages = PAGES
    server = WebServer(http="127.0.0.1:0")
    text = mock_config(speed=args.speed, players=args.players, seed=args.seed)
    out = io.StringIO()
    codes: list[int] = []
    runner = threading.Thread(
        target=lambda: codes.append(demo_web.run(args, text, out, server=server))
    )
    runner.start()
    pages = None
    try:
        while "watch them at" not in out.getvalue() and runner.is_alive():
            runner.join(0.05)  # the banner: the server is about to listen
        pages = Pages(f"ws://127.0.0.1:{server.port}/ws", PAGES)
        assert pages.ready.wait(WAIT_S), "the pages did not connect"
        assert pages.over.wait(WAIT_S), f"no game over:\n{out.getvalue()}"
        assert len(pages.threads) > 50, "a whole game is many updates"
        # Never more than at the first move (the bots' thread may end before the last updates
        # reach the page: fewer is fine).
        assert max(pages.threads) == pages.threads[0], pages.threads
    finally:
        if pages is not None:
            pages.close()
        server.shutdown()
        runner.join(60)
    assert not runner.is_alive() and codes == [0], out.getvalue()
    assert "cards conserved: yes" in out.getvalue()
    for thread in set(threading.enumerate()) - before:
        thread.join(10)  # a daemon thread on its way out
    assert set(threading.enumerate()) - before == set(), "threads left behind"
