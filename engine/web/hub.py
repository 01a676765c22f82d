"""Numbered updates for every page: live fan-out, and catch-up after a reconnect.

Every change of the table becomes one update with the next sequence number. Its words (the
referee's lines, the prompt, what is owed) are `i18n.Phrase`s, so each page reads them in its
own language: the update is encoded once per language a page reads (`Update.frame`), and every
page of that language is sent the same frame. The hub keeps the last `keep` updates: a page
that reconnects says the last number it has (`since`) and gets every update after it, in
order, before any new one; a page that was away longer than that gets a `reset` notice and the
newest update (each update carries the whole state, so the page is right again at once, only
the log has a hole).

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

from i18n import current, language, say_in

__all__ = ["Hub", "Subscriber", "Update", "encode"]

KEEP = 2000  # updates kept for catch-up: several whole rounds
QUEUE = 4000  # frames a subscriber may fall behind before it is dropped
RECENT = 60  # message lines a new page gets to start its log (and box console lines)


def encode(message: dict[str, Any]) -> str:
    """The wire form of one message to a page (compact JSON)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def _frozen(value: Any) -> Any:
    """A copy of `value`'s dicts and lists (what `json` encodes), sharing every other value:
    the `Phrase`s, numbers and strings do not change."""
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_frozen(v) for v in value]
    return value


class Update:
    """One numbered update, kept as made (its words not yet in any language), with its frame
    in each language some page has read it in."""

    __slots__ = ("frames", "message", "seq")

    def __init__(self, seq: int, update: dict[str, Any]) -> None:
        self.seq = seq
        # A copy of its own (the Phrases are shared: they do not change), so that encoding it
        # later, in a language no page read it in yet, sees the table as it was.
        self.message = {"type": "update", "seq": seq, **_frozen(update)}
        self.frames: dict[str, str] = {}

    def frame(self, lang: str) -> str:
        """The update encoded in `lang`, made once per language (call with the hub's lock)."""
        text = self.frames.get(lang)
        if text is None:
            text = self.frames[lang] = encode(say_in(language(lang), self.message))
        return text


class Subscriber:
    """One page's outbound queue of text frames (updates and replies, in order), and the
    language the page reads (`lang`). Its sender `take`s the frames one by one; `taken()`
    waits until it has taken all those queued so far, so a page's next request is read only
    once the reply to its last one is on its way (a page that sends and never reads holds one
    reply here, not thousands)."""

    def __init__(self, size: int = QUEUE, lang: str = "en") -> None:
        self.lang = lang
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(size)
        self.last = 0  # highest update number queued
        self.dropped = False
        self.closed = False  # its sender has stopped
        self._queued = 0  # frames ever queued
        self._taken = 0  # frames ever taken by the sender
        self._moved = asyncio.Event()

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
            self._moved.set()
            return False
        self._queued += 1
        return True

    async def take(self) -> str | None:
        """The next frame to send (None: dropped, close the connection)."""
        text = await self.queue.get()
        self._taken += 1
        self._moved.set()
        return text

    async def taken(self) -> None:
        """Wait until the sender has taken every frame queued so far (or stopped)."""
        mark = self._queued
        while self._taken < mark and not self.dropped and not self.closed:
            self._moved.clear()
            await self._moved.wait()

    def close(self) -> None:
        """Its sender has stopped: nobody waits for it any more."""
        self.closed = True
        self._moved.set()


class Hub:
    """Sequence numbers, the catch-up log and the live subscribers."""

    def __init__(self, *, keep: int = KEEP, queue: int = QUEUE) -> None:
        self._lock = threading.Lock()
        self.seq = 0
        self._log: collections.deque[Update] = collections.deque(maxlen=keep)
        self._recent: collections.deque[tuple[int, str]] = collections.deque(maxlen=RECENT)
        self._console: collections.deque[tuple[int, str]] = collections.deque(maxlen=RECENT)
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
            kept = Update(seq, update)
            self._log.append(kept)
            for line in kept.message.get("messages") or ():
                self._recent.append((seq, line))
            for line in kept.message.get("console") or ():
                self._console.append((seq, line))
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._fanout, kept)
        return seq

    def latest(self, lang: str | None = None) -> str | None:
        """The newest update's frame in `lang` (the language in use if None); None before the
        first."""
        with self._lock:
            return self._log[-1].frame(lang or current().code) if self._log else None

    def recent(self, lang: str | None = None, *, console: bool = False) -> list[dict[str, Any]]:
        """The last message lines (the table log's; `console`: the box console's) in `lang`
        (the language in use if None), oldest first, with the update number of each."""
        said = language(lang or current().code)
        with self._lock:
            kept = list(self._console if console else self._recent)
        return [{"seq": seq, "line": say_in(said, line)} for seq, line in kept]

    def subscribe(self, since: int | None, lang: str | None = None) -> Subscriber:
        """A new subscriber (on the loop) reading `lang` (the language in use if None), its
        queue primed: the newest update for a new page (`since` None), else every update after
        `since`, or a `reset` and the newest one when the log no longer reaches back that far."""
        sub = Subscriber(self._queue_size, lang or current().code)
        with self._lock:
            log = list(self._log)
            self._subs.add(sub)
        if not log:
            return sub
        newest = log[-1].seq
        if since is None or since > newest:  # a new page (or one from another server run)
            backlog = log[-1:]
        elif since == newest:
            backlog = []
            sub.last = since
        elif since + 1 >= log[0].seq:
            backlog = [item for item in log if item.seq > since]
        else:
            sub.put(encode({"type": "reset", "since": since, "oldest": log[0].seq}))
            backlog = log[-1:]
        for item in backlog:
            with self._lock:
                text = item.frame(sub.lang)
            sub.put(text)
            sub.last = item.seq
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

    def _fanout(self, item: Update) -> None:
        with self._lock:
            subs = [sub for sub in self._subs if item.seq > sub.last]
            # One encoding per language read, whatever the number of pages reading it.
            frames = {lang: item.frame(lang) for lang in {sub.lang for sub in subs}}
        for sub in subs:
            # (not if it was already sent from the log when it subscribed)
            if item.seq > sub.last and sub.put(frames[sub.lang]):
                sub.last = item.seq
