"""Numbered updates: order, catch-up after a reconnect, a reset when the log is too short."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from engine.web.hub import Hub


def drain(sub) -> list[dict]:
    out = []
    while not sub.queue.empty():
        item = sub.queue.get_nowait()
        out.append(None if item is None else json.loads(item))
    return out


def arun(main: Any) -> None:
    """asyncio.run in a thread of its own: Playwright's sync API may own this thread's loop."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "the test's event loop did not finish"
    if failure:
        raise failure[0]


def update(n: int) -> dict:
    return {"messages": [f"m{n}"], "view": {"n": n}, "cause": {}}


def test_updates_from_many_threads_arrive_numbered_and_in_order() -> None:
    async def main() -> None:
        hub = Hub()
        hub.bind(asyncio.get_running_loop())
        subs = [hub.subscribe(None) for _ in range(3)]
        lock = threading.Lock()

        def publish(k: int) -> None:
            for i in range(50):
                with lock:  # the service's lock: numbering follows the order of changes
                    hub.publish(update(k * 100 + i))

        threads = [threading.Thread(target=publish, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        await asyncio.sleep(0.05)
        for sub in subs:
            seqs = [m["seq"] for m in drain(sub)]
            assert seqs == list(range(1, 201))

    arun(main)


def test_a_page_that_reconnects_gets_every_update_it_missed_then_the_new_ones() -> None:
    async def main() -> None:
        hub = Hub()
        hub.bind(asyncio.get_running_loop())
        for n in range(10):
            hub.publish(update(n))
        await asyncio.sleep(0)
        sub = hub.subscribe(4)
        hub.publish(update(10))
        await asyncio.sleep(0.01)
        assert [m["seq"] for m in drain(sub)] == list(range(5, 12))
        fresh = hub.subscribe(None)  # a new page: the newest state only
        assert [m["seq"] for m in drain(fresh)] == [11]
        current = hub.subscribe(11)
        assert drain(current) == []
        assert hub.recent()[-1] == {"seq": 11, "line": "m10"}

    arun(main)


def test_a_page_away_longer_than_the_log_gets_a_reset_and_the_newest_state() -> None:
    async def main() -> None:
        hub = Hub(keep=5)
        hub.bind(asyncio.get_running_loop())
        for n in range(20):
            hub.publish(update(n))
        sub = hub.subscribe(3)
        got = drain(sub)
        assert got[0] == {"type": "reset", "since": 3, "oldest": 16}
        assert [m["seq"] for m in got[1:]] == [20]
        later = hub.subscribe(99)  # a number from another server run: a new page
        assert [m["seq"] for m in drain(later)] == [20]

    arun(main)


def test_a_page_that_falls_too_far_behind_is_dropped_to_reconnect() -> None:
    async def main() -> None:
        hub = Hub(queue=3)
        hub.bind(asyncio.get_running_loop())
        sub = hub.subscribe(None)
        for n in range(5):
            hub.publish(update(n))
        await asyncio.sleep(0.01)
        assert sub.dropped
        assert drain(sub) == [None]  # the sender closes; the page reconnects with `since`

    arun(main)
