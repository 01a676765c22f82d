"""The event journal: every event is stored here, with its `seq`, before the link sends it.

Two implementations of one interface (docs/architecture.md, "Journal"):

- `MemoryJournal` keeps everything in memory (tests, `--journal` not given in a throw-away run);
- `SqliteJournal(path)` keeps it in SQLite (WAL) so that events, the acked mark, the press-id
  counter, the in-flight press and stored command replies survive a crash or a power cut.

Durability is a group commit (docs/architecture.md, "Journal"): `append`, `put_reply`,
`next_press_id` and `ack` commit without an fsync (they survive a crash of the process at once),
and `sync()` makes everything committed so far survive a power cut with one fsync of the
write-ahead log. The link calls `sync()` before it writes any event above `durable_seq` and
before it writes any reply, so nothing reaches the host that a power cut could take back; the
in-flight press record is still committed with ``synchronous=FULL`` (fsync'd on its own).

Both are thread-safe: the loop thread appends, the link's threads read, ack and sync.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

from firmware import protocol
from firmware.errors import LauncherError, UsageError

log = logging.getLogger(__name__)

KEEP_REPLIES = 10_000  # stored command replies (dedupe window for repeated command ids)
KEEP_ACKED_EVENTS = 10_000  # acked events kept for a host that comes back with an old position
SCHEMA_VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


class JournalError(LauncherError, OSError):
    """The journal cannot be opened, read or written (and could not be moved aside)."""


def _new_id() -> str:
    return uuid.uuid4().hex


def _make_event(stream: str, boot: str, seq: int, kind: str, t_ms: int, fields: dict) -> dict:
    clash = sorted(set(fields) & {"v", "type", "seq", "boot", "stream", "t_ms", "kind"})
    if clash:
        raise ValueError(f"event field {clash[0]!r} is set by the journal, not by the caller")
    event = {
        "v": protocol.VERSION,
        "type": "event",
        "seq": seq,
        "boot": boot,
        "stream": stream,
        "t_ms": t_ms,
        "kind": kind,
        **fields,
    }
    # fail here, in the caller's hands, rather than later in the link's resend loop
    protocol.encode(event)
    return event


class MemoryJournal:
    """In-memory journal with the full journal interface; forgets everything on exit."""

    recovered: str | None = None

    def __init__(self, *, stream: str | None = None) -> None:
        self.stream = stream or _new_id()
        self.boot = _new_id()[:12]
        self._lock = threading.RLock()
        self._events: OrderedDict[int, dict] = OrderedDict()
        self._last_seq = 0
        self._acked = 0
        self._press_id = 0
        self._inflight: dict | None = None
        self._replies: OrderedDict[str, dict] = OrderedDict()
        self._closed = False

    @property
    def last_seq(self) -> int:
        """Seq of the newest event (0 before the first)."""
        with self._lock:
            return self._last_seq

    @property
    def acked(self) -> int:
        """Highest seq the host has acknowledged (cumulative)."""
        with self._lock:
            return self._acked

    @property
    def durable_seq(self) -> int:
        """Memory has no disk to wait for: every event is as durable as it will get."""
        return self.last_seq

    def sync(self) -> int:
        """Nothing to flush; returns `durable_seq` (the same interface as `SqliteJournal`)."""
        return self.durable_seq

    def append(
        self,
        kind: str,
        t_ms: int,
        fields: dict,
        *,
        clear_inflight: bool = False,
        reply: tuple[str, dict] | None = None,
    ) -> dict:
        """Assign the next seq, store the event and return it in full. With `clear_inflight`
        the in-flight press record is cleared in the same step (a fire result); with `reply`
        ``(cmd_id, reply)`` that command's reply is stored in the same step (exactly-once)."""
        with self._lock:
            event = _make_event(self.stream, self.boot, self._last_seq + 1, kind, t_ms, fields)
            self._last_seq += 1
            self._events[self._last_seq] = event
            if clear_inflight:
                self._inflight = None
            if reply is not None:
                self.put_reply(*reply)
            return dict(event)

    def next_press_id(self) -> int:
        """A new press id, increasing for ever."""
        with self._lock:
            self._press_id += 1
            return self._press_id

    def set_inflight(self, press: dict) -> None:
        """Record the press that is being served (updated as cards cross the beam)."""
        with self._lock:
            self._inflight = dict(press)

    def take_inflight(self) -> dict | None:
        """The press that was mid-burst when the last boot died (and forget it)."""
        with self._lock:
            press, self._inflight = self._inflight, None
            return press

    def clear_inflight(self) -> None:
        """Forget the in-flight press (its fire result is journaled)."""
        with self._lock:
            self._inflight = None

    def events_after(self, seq: int, limit: int = 32) -> list[dict]:
        """Up to `limit` stored events with seq > `seq`, oldest first."""
        with self._lock:
            out = []
            for s in range(max(seq, 0) + 1, self._last_seq + 1):
                event = self._events.get(s)
                if event is not None:
                    out.append(dict(event))
                    if len(out) >= limit:
                        break
            return out

    def ack(self, seq: int) -> None:
        """Cumulative ack: events up to `seq` are delivered. Never moves backwards and never
        past the newest event."""
        with self._lock:
            seq = min(seq, self._last_seq)
            if seq > self._acked:
                self._acked = seq
                while self._events and next(iter(self._events)) <= seq - KEEP_ACKED_EVENTS:
                    self._events.popitem(last=False)

    def get_reply(self, cmd_id: str) -> dict | None:
        """The stored reply to command `cmd_id`, or None."""
        with self._lock:
            reply = self._replies.get(cmd_id)
            return dict(reply) if reply is not None else None

    def put_reply(self, cmd_id: str, reply: dict) -> None:
        """Store the reply to `cmd_id` (the last `KEEP_REPLIES` are kept)."""
        with self._lock:
            self._replies[cmd_id] = dict(reply)
            self._replies.move_to_end(cmd_id)
            while len(self._replies) > KEEP_REPLIES:
                self._replies.popitem(last=False)

    def close(self) -> None:
        """Nothing to release; idempotent."""
        self._closed = True

    def __enter__(self) -> MemoryJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS replies (
    n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL
);
"""


def _refuse_foreign(path: Path) -> None:
    """Raise UsageError when `path` can never be a journal of ours: a directory, or a non-empty
    file without the SQLite header. (An empty file is a fresh database to SQLite.)"""
    if path.is_dir():
        raise UsageError(f"journal {path} is a directory; give a file path (created if missing)")
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return  # created on open
    except PermissionError:
        raise UsageError(
            f"journal {path} is not readable and writable by this user; fix its permissions"
        ) from None
    except OSError as exc:
        raise UsageError(f"journal {path} cannot be read: {exc.strerror or exc}") from None
    if head and head != SQLITE_MAGIC:
        raise UsageError(
            f"journal {path} is not a launcher journal (not an SQLite file); "
            "give a new path or move that file away"
        )
    if head and not os.access(path, os.R_OK | os.W_OK):
        raise UsageError(
            f"journal {path} is not readable and writable by this user; fix its permissions"
        )


class SqliteJournal:
    """Journal in a SQLite file in WAL mode. A commit survives a crash of the process at once
    and a power cut once `sync()` has returned (one fsync of the write-ahead log covers every
    commit before it: group commit); the in-flight press record is written with
    ``synchronous=FULL`` and fsync'd by its own commit. The `stream` id is created with the file
    and kept in its meta table; `boot` is new each open.

    A path that is a directory, or a file that is not SQLite at all (someone's notes), is
    refused with `UsageError`: it is the user's, never ours to move. An SQLite file that is
    damaged, or holds another program's schema, is moved aside to ``PATH.corrupt-<timestamp>``
    and a new journal is started; `recovered` then names the moved file so the daemon can report
    it (it is never reset silently)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.boot = _new_id()[:12]
        self.recovered: str | None = None
        self._lock = threading.RLock()
        # held across a sync's fsync (not `_lock`, so the loop keeps appending meanwhile)
        self._sync_lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._wal_fd: int | None = None  # our own descriptor of the -wal file, for fsync
        self._dir_synced = False
        # commits made / commits known to be on disk: sync() has work iff they differ. A file
        # left by a killed process may hold commits that never reached the disk, so the first
        # sync always fsyncs.
        self._commits = 1
        self._synced_commits = 0
        self._durable_seq = 0
        _refuse_foreign(self.path)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            self._close_db()
            self.recovered = self._move_aside(exc)
            try:
                self._db = self._open()
            except sqlite3.Error as again:
                self._close_db()
                raise JournalError(
                    f"journal {self.path}: cannot create a new one: {again}"
                ) from None
        except sqlite3.Error as exc:  # e.g. OperationalError: unable to open (permissions)
            self._close_db()
            raise JournalError(f"journal {self.path}: cannot open: {exc}") from None
        db = self._db
        self.stream = self._meta("stream")
        self._acked = int(self._meta("acked"))
        row = db.execute("SELECT MAX(seq) FROM events").fetchone()
        self._last_seq = max(int(row[0] or 0), int(self._meta("last_seq")))

    # -- opening --------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so one event is one transaction
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=5)
        self._db = db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        check = db.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {check[0] if check else '?'}")
        db.executescript(_SCHEMA)
        names = {r[0] for r in db.execute("SELECT key FROM meta")}
        if "stream" not in names:
            has_events = db.execute("SELECT 1 FROM events LIMIT 1").fetchone() is not None
            if has_events:
                raise sqlite3.DatabaseError("events without a stream id")
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                [
                    ("schema", str(SCHEMA_VERSION)),
                    ("stream", _new_id()),
                    ("acked", "0"),
                    ("last_seq", "0"),
                    ("press_id", "0"),
                ],
            )
            db.execute("COMMIT")
        schema = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if schema is None or schema[0] != str(SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"unknown journal schema {schema[0] if schema else None}")
        for key in ("acked", "last_seq", "press_id"):
            row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            if row is None or not str(row[0]).isdigit():
                raise sqlite3.DatabaseError(f"meta {key} missing or not a number")
        return db

    def _move_aside(self, exc: Exception) -> str:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
        try:
            os.replace(self.path, target)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, target.with_name(target.name + suffix))
        except OSError as move_exc:
            raise JournalError(
                f"journal {self.path} is unreadable ({exc}) and cannot be moved aside: {move_exc}"
            ) from None
        log.error(
            "journal %s is unreadable (%s); moved it to %s, starting a new stream",
            self.path,
            exc,
            target,
        )
        return str(target)

    def _close_db(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    # -- helpers ---------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise JournalError(f"journal {self.path} is closed")
        return self._db

    def _meta(self, key: str) -> str:
        row = self._conn().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        if row is None:
            raise JournalError(f"journal {self.path}: meta {key} missing")
        return str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._conn().execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def _write(self, fn: Any, *, durable: bool = True) -> Any:
        """Run `fn(db)` in one IMMEDIATE transaction under the lock; journal errors are raised
        as JournalError so callers see one kind of failure.

        `durable=False` commits without waiting for the disk (WAL, ``synchronous=NORMAL``): the
        change survives a crash of the process but may be lost, together with everything after
        it, in a power cut, until the next `sync()`."""
        with self._lock:
            db = self._conn()
            self._commits += 1  # counted before the commit: a failed one costs one spare fsync
            try:
                if not durable:
                    db.execute("PRAGMA synchronous=NORMAL")
                try:
                    db.execute("BEGIN IMMEDIATE")
                    try:
                        result = fn(db)
                    except BaseException:
                        db.execute("ROLLBACK")
                        raise
                    db.execute("COMMIT")
                finally:
                    if not durable:
                        db.execute("PRAGMA synchronous=FULL")
                return result
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path}: write failed: {exc}") from exc

    # -- interface -------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """Seq of the newest event (0 before the first)."""
        with self._lock:
            return self._last_seq

    @property
    def acked(self) -> int:
        """Highest seq the host has acknowledged (cumulative, persisted)."""
        with self._lock:
            return self._acked

    @property
    def durable_seq(self) -> int:
        """Every event up to this seq is on disk (survives a power cut). Send nothing above it:
        call `sync()` first."""
        with self._lock:
            return self._durable_seq

    def sync(self) -> int:
        """Make every change committed so far survive a power cut, with one fsync of the
        write-ahead log, and return the new `durable_seq`. A no-op when nothing was committed
        since the last sync.

        Why an fsync of the -wal file is enough: in WAL mode a commit only appends frames to
        that file (``synchronous=NORMAL`` skips its fsync), and fsync flushes every written
        page of the file, so it covers all commits before it; the main database file only
        changes in a checkpoint, which fsyncs the log before and the database after copying.
        The fsync runs without the journal lock, so appends on the loop thread go on meanwhile
        (they are covered by the next sync)."""
        with self._sync_lock:
            with self._lock:
                self._conn()  # JournalError once closed
                if self._synced_commits == self._commits:
                    return self._durable_seq
                commits, seq = self._commits, self._last_seq
                try:
                    wal_fd = self._open_wal()
                except OSError as exc:
                    raise JournalError(f"journal {self.path}: cannot open its log: {exc}") from exc
            try:
                if wal_fd is None:
                    # no -wal file (cannot happen while the connection is open, but then the
                    # fallback is SQLite's own: a commit with synchronous=FULL syncs the log)
                    self._write(lambda db: self._set_meta("last_seq", str(self._last_seq)))
                else:
                    os.fsync(wal_fd)
                    if not self._dir_synced:
                        self._fsync_dir()  # the -wal file's own name must survive too
                        self._dir_synced = True
            except OSError as exc:
                raise JournalError(f"journal {self.path}: sync failed: {exc}") from exc
            with self._lock:
                self._synced_commits = max(self._synced_commits, commits)
                self._durable_seq = max(self._durable_seq, seq)
                return self._durable_seq

    def _open_wal(self) -> int | None:
        """Our descriptor of the -wal file, reopened if SQLite replaced the file. Called with
        both locks held. Never open the main database file: closing any descriptor of it would
        drop SQLite's POSIX locks on it (the -wal file carries no locks; WAL locking is done in
        the -shm file)."""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            st = os.stat(wal)
        except FileNotFoundError:
            st = None
        if self._wal_fd is not None:
            mine = os.fstat(self._wal_fd)
            if st is None or (mine.st_dev, mine.st_ino) != (st.st_dev, st.st_ino):
                os.close(self._wal_fd)
                self._wal_fd = None
                self._dir_synced = False
        if self._wal_fd is None and st is not None:
            try:
                self._wal_fd = os.open(wal, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
        return self._wal_fd

    def _fsync_dir(self) -> None:
        fd = os.open(self.path.parent, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def append(
        self,
        kind: str,
        t_ms: int,
        fields: dict,
        *,
        clear_inflight: bool = False,
        reply: tuple[str, dict] | None = None,
    ) -> dict:
        """Assign the next seq, commit the event and return it in full. The commit survives a
        crash of the process; it survives a power cut after the next `sync()` (the link syncs
        before it sends the event). With `clear_inflight` the in-flight press record is cleared
        in the same transaction; with `reply` ``(cmd_id, reply)`` that command's reply is
        stored in it too, so a crash can never leave the effect (e.g. a ``press``) journaled
        without the answer a retry of the same command id must get."""
        with self._lock:
            seq = self._last_seq + 1
            event = _make_event(self.stream, self.boot, seq, kind, t_ms, fields)
            body = json.dumps(event, separators=(",", ":"))

            def write(db: sqlite3.Connection) -> None:
                db.execute("INSERT INTO events(seq, body) VALUES (?, ?)", (seq, body))
                self._set_meta("last_seq", str(seq))
                if clear_inflight:
                    db.execute("DELETE FROM meta WHERE key='inflight'")
                if reply is not None:
                    self._store_reply(db, *reply)

            # no fsync here: one `sync()` before sending covers a whole batch (group commit)
            self._write(write, durable=False)
            self._last_seq = seq
            return event

    def next_press_id(self) -> int:
        """A new press id, persisted, increasing for ever."""

        def bump(db: sqlite3.Connection) -> int:
            value = int(self._meta("press_id")) + 1
            self._set_meta("press_id", str(value))
            return value

        # not synced on its own: an id is only ever shown after the press event that carries
        # it is made durable by a sync(), and that sync covers this commit too
        return int(self._write(bump, durable=False))

    def set_inflight(self, press: dict) -> None:
        """Record the press being served, so a restart can report it as interrupted."""
        body = json.dumps(press, separators=(",", ":"))
        self._write(lambda db: self._set_meta("inflight", body))

    def take_inflight(self) -> dict | None:
        """The press that was mid-burst when the last boot died (and forget it)."""

        def take(db: sqlite3.Connection) -> dict | None:
            row = db.execute("SELECT value FROM meta WHERE key='inflight'").fetchone()
            db.execute("DELETE FROM meta WHERE key='inflight'")
            return json.loads(row[0]) if row is not None else None

        return self._write(take)

    def clear_inflight(self) -> None:
        """Forget the in-flight press."""
        self._write(lambda db: db.execute("DELETE FROM meta WHERE key='inflight'"))

    def events_after(self, seq: int, limit: int = 32) -> list[dict]:
        """Up to `limit` stored events with seq > `seq`, oldest first."""
        with self._lock:
            rows = (
                self._conn()
                .execute("SELECT body FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit))
                .fetchall()
            )
        return [json.loads(r[0]) for r in rows]

    def ack(self, seq: int) -> None:
        """Cumulative ack, persisted; never moves backwards or past the newest event. Old
        acked events beyond `KEEP_ACKED_EVENTS` are pruned."""
        with self._lock:
            seq = min(seq, self._last_seq)
            if seq <= self._acked:
                return

            def write(db: sqlite3.Connection) -> None:
                self._set_meta("acked", str(seq))
                db.execute("DELETE FROM events WHERE seq <= ?", (seq - KEEP_ACKED_EVENTS,))

            # not synced: an acked mark lost in a power cut only makes the box resend events
            # the host already holds, and the host drops those by seq
            self._write(write, durable=False)
            self._acked = seq

    def get_reply(self, cmd_id: str) -> dict | None:
        """The stored reply to command `cmd_id`, or None."""
        with self._lock:
            row = self._conn().execute("SELECT body FROM replies WHERE id=?", (cmd_id,)).fetchone()
        return json.loads(row[0]) if row is not None else None

    def put_reply(self, cmd_id: str, reply: dict) -> None:
        """Store the reply to `cmd_id`; only the newest `KEEP_REPLIES` are kept. Like `append`,
        durable after the next `sync()` (the link syncs before it writes the reply)."""
        self._write(lambda db: self._store_reply(db, cmd_id, reply), durable=False)

    def _store_reply(self, db: sqlite3.Connection, cmd_id: str, reply: dict) -> None:
        body = json.dumps(reply, separators=(",", ":"))
        db.execute("INSERT OR REPLACE INTO replies(id, body) VALUES (?, ?)", (cmd_id, body))
        db.execute(
            "DELETE FROM replies WHERE n <= (SELECT MAX(n) FROM replies) - ?", (KEEP_REPLIES,)
        )

    def close(self) -> None:
        """Close the database; idempotent. Changes not yet synced stay in the operating
        system's hands (safe across a crash of this process, not across a power cut)."""
        with self._sync_lock, self._lock:  # never close the -wal descriptor under an fsync
            if self._wal_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._wal_fd)
                self._wal_fd = None
            self._close_db()

    def __enter__(self) -> SqliteJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
