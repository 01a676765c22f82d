"""Numbered updates for every page: live fan-out, and catch-up after a reconnect.

Every change of the table becomes one update with the next sequence number, encoded once. The
hub keeps the last `keep` of them: a page that reconnects says the last number it has
(`since`) and gets every update after it, in order, before any new one; a page that was away
longer than that gets a `reset` notice and the newest update (each update carries the whole
state, so the page is right again at once, only the log has a hole).

`publish` may be called from any thread; it takes a lock, numbers the update and schedules its
delivery on the event loop in the same critical section, so deliveries keep the numbers' order.
Subscribers live on the event loop: each has a bounded queue, and one that falls that far
behind is dropped (its page reconnects and catches up).
"""

from __future__ import annotations

import asyncio
import collections
import json
import threading
from typing import Any

__all__ = ["Hub", "Subscriber", "encode"]

KEEP = 2000  # updates kept for catch-up: several whole rounds
QUEUE = 4000  # frames a subscriber may fall behind before it is dropped
RECENT = 60  # message lines a new page gets to start its log


def encode(message: dict[str, Any]) -> str:
    """The wire form of one message to a page (compact JSON)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


class Subscriber:
    """One page's outbound queue of text frames (updates and replies, in order)."""

    def __init__(self, size: int = QUEUE) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(size)
        self.last = 0  # highest update number queued
        self.dropped = False

    def put(self, text: str) -> bool:
        """Queue a frame; False (and the subscriber is marked dropped) when it is full."""
        if self.dropped:
            return False
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.dropped = True
            # Wake the sender so it closes the connection; the page reconnects with `since`.
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)
            return False
        return True


class Hub:
    """Sequence numbers, the catch-up log and the live subscribers."""

    def __init__(self, *, keep: int = KEEP, queue: int = QUEUE) -> None:
        self._lock = threading.Lock()
        self.seq = 0
        self._log: collections.deque[tuple[int, str]] = collections.deque(maxlen=keep)
        self._recent: collections.deque[tuple[int, str]] = collections.deque(maxlen=RECENT)
        self._subs: set[Subscriber] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue_size = queue

    def bind(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """The event loop the subscribers live on (None: stop delivering)."""
        with self._lock:
            self._loop = loop

    def publish(self, update: dict[str, Any]) -> int:
        """Number `update` ({"messages", "view", "cause"}), keep it, deliver it; any thread."""
        with self._lock:
            self.seq += 1
            seq = self.seq
            text = encode({"type": "update", "seq": seq, **update})
            self._log.append((seq, text))
            for line in update.get("messages") or ():
                self._recent.append((seq, line))
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._fanout, seq, text)
        return seq

    def latest(self) -> str | None:
        """The newest update's frame (None before the first)."""
        with self._lock:
            return self._log[-1][1] if self._log else None

    def recent(self) -> list[dict[str, Any]]:
        """The last message lines, oldest first, with the update number of each."""
        with self._lock:
            return [{"seq": seq, "line": line} for seq, line in self._recent]

    def subscribe(self, since: int | None) -> Subscriber:
        """A new subscriber (on the loop), its queue primed: the newest update for a new page
        (`since` None), else every update after `since`, or a `reset` and the newest one when
        the log no longer reaches back that far."""
        sub = Subscriber(self._queue_size)
        with self._lock:
            log = list(self._log)
            self._subs.add(sub)
        if not log:
            return sub
        newest = log[-1][0]
        if since is None or since > newest:  # a new page (or one from another server run)
            backlog = log[-1:]
        elif since == newest:
            backlog = []
            sub.last = since
        elif since + 1 >= log[0][0]:
            backlog = [item for item in log if item[0] > since]
        else:
            sub.put(encode({"type": "reset", "since": since, "oldest": log[0][0]}))
            backlog = log[-1:]
        for seq, text in backlog:
            sub.put(text)
            sub.last = seq
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        """Forget a subscriber (its page went away)."""
        with self._lock:
            self._subs.discard(sub)

    @property
    def pages(self) -> int:
        """Subscribers connected now."""
        with self._lock:
            return len(self._subs)

    def _fanout(self, seq: int, text: str) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            # (not if it was already sent from the log when it subscribed)
            if seq > sub.last and sub.put(text):
                sub.last = seq
