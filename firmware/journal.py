"""The event journal: every event is stored here, with its `seq`, before the link sends it.

Two implementations of one interface, the `Journal` protocol (docs/architecture.md, "Journal"):

- `MemoryJournal` keeps everything in memory (tests, `--journal` not given in a throw-away run);
- `SqliteJournal(path)` keeps it in SQLite (WAL) so that events, the acked mark, the press-id
  counter, the open presses and stored command replies survive a crash or a power cut.

**Open presses.** A ``press`` event opens its press and its ``fire`` event closes it, in the
same transaction as the event itself, so no crash can leave a journaled press that nobody
remembers to answer: after a restart the daemon answers every press still open (``fire``,
reason ``interrupted``). `update_press` records a burst's progress (cards counted so far).

**Durability** is a group commit (docs/architecture.md, "Journal"): every write commits without
an fsync (it survives a crash of the process at once), and `sync()` makes everything committed
so far survive a power cut with one fsync of the write-ahead log. The link calls `sync()` before
it writes any event above `durable_seq` and before it writes any reply, so nothing reaches the
host that a power cut could take back.

**A journal never goes backwards silently.** SQLite takes a damaged write-ahead-log frame for the
end of the log, and a deleted ``-wal`` or an emptied file loses commits without an error. So each
`sync()` also writes a small *mark* file beside the journal (``PATH-mark``: stream, newest seq and
press id at that sync). A journal found behind its mark at start-up, or a host that says it holds
a seq on our stream beyond our newest event (`host_holds`), is journal loss: a new stream is
started (never reusing seq numbers or press ids), `lost` says what happened, and it is logged.

Both are thread-safe: the loop thread appends, the link's threads read, ack and sync.
"""

from __future__ import annotations

import abc
import contextlib
import fcntl
import json
import logging
import os
import sqlite3
import threading
import time
import urllib.parse
import uuid
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import Any, NamedTuple, Protocol, Self

from common.commandline import digits
from common.errors import JournalError, LauncherError, UsageError
from wire import protocol

log = logging.getLogger(__name__)

KEEP_REPLIES = 10_000  # stored command replies (dedupe window for repeated command ids)
KEEP_ACKED_EVENTS = 10_000  # acked events kept for a host that comes back with an old position
SCHEMA_VERSION = 2
APPLICATION_ID = 0x554E4F41  # "UNOA" in the SQLite header: this file is a launcher journal
SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
SIDE_FILES = ("-wal", "-shm", "-mark")  # kept beside the journal, moved aside with it
MARK_SIZE = 128  # bytes of the mark record (fixed, so one pwrite replaces it whole)

# SQLite primary result codes (the low byte of `sqlite_errorcode`) that mean "this file is
# damaged"; every other failure is about the environment (permissions, a full disk, a lock).
_DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_READONLY_CODES = {3, 8, 23}  # SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH
_FULL = 13  # SQLITE_FULL
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED

__all__ = ["Journal", "JournalError", "Mark", "MemoryJournal", "SqliteJournal"]


class _Damaged(Exception):
    """The file is an SQLite database that cannot be read as a journal (moved aside)."""


class Mark(NamedTuple):
    """What the journal held at its last `sync()`: the floor it must never fall below."""

    stream: str
    seq: int
    press_id: int


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


def _press_change(kind: str, fields: dict) -> tuple[str, int] | None:
    """("open", id) for a press event, ("close", id) for a fire event: the one rule that keeps
    the open presses in step with the events (every press gets exactly one fire)."""
    press_id = fields.get("press_id")
    if not isinstance(press_id, int) or isinstance(press_id, bool):
        return None
    if kind == "press":
        return "open", press_id
    if kind == "fire":
        return "close", press_id
    return None


def _split_reply(reply: tuple) -> tuple[str, dict, str | None]:
    """``(cmd_id, reply)`` or ``(cmd_id, reply, command_key)``."""
    if len(reply) == 2:
        return reply[0], reply[1], None
    return reply[0], reply[1], reply[2]


def _carry(events: list[dict], stream: str, boot: str, lost: str) -> list[dict]:
    """This boot's `events` renumbered 1, 2, ... on the new `stream` (journal loss found at
    run time). Its `hello` event is the first of the new stream to say what was lost."""
    out = []
    told = False
    for n, event in enumerate(events, start=1):
        event = {**event, "seq": n, "stream": stream}
        if not told and event["kind"] == "hello" and event["boot"] == boot:
            event["journal_lost"] = lost
            told = True
            while len(protocol.encode_body(event)) > protocol.MAX_LINE - 16:
                event["journal_lost"] = event["journal_lost"][:-20]  # still fits one frame
        out.append(event)
    return out


def _loss_at_runtime(stream: str, seq: int, last: int, new: str) -> str:
    return (
        f"a host holds seq {seq} of stream {stream[:8]} but the journal ends at {last}: it went "
        f"back (a damaged or restored log); new stream {new[:8]}"
    )


class Journal(Protocol):
    """What the daemon and the link ask of a journal: `MemoryJournal` and `SqliteJournal`
    (docs/architecture.md, "Journal"). Thread-safe: the loop thread appends, the link's threads
    read, ack and sync."""

    @property
    def path(self) -> Path | None:
        """The journal's file (None in memory); the settings file lives beside it."""

    @property
    def stream(self) -> str:
        """The event stream's id: seq numbers count on it, a loss starts a new one."""

    @property
    def boot(self) -> str:
        """This open's id, in every event it journals."""

    @property
    def recovered(self) -> str | None:
        """Where a damaged journal was moved at open (for the `hello` event), or None."""

    @property
    def lost(self) -> str | None:
        """What a journal that went backwards lost (for the `hello` event), or None."""

    @property
    def last_seq(self) -> int:
        """Seq of the newest event (0 before the first)."""

    @property
    def acked(self) -> int:
        """Highest seq the host has acknowledged (cumulative)."""

    @property
    def oldest_seq(self) -> int:
        """Seq of the oldest event still held (``last_seq + 1`` when none is)."""

    @property
    def durable_seq(self) -> int:
        """Every event up to this seq survives a power cut: send nothing above it."""

    def sync(self) -> int:
        """Make what is committed survive a power cut; returns `durable_seq`."""

    def append(self, kind: str, t_ms: int, fields: dict, *, reply: tuple | None = None) -> dict:
        """Journal an event (and a command's reply with it) and return it in full."""

    def next_press_id(self) -> int:
        """A new press id, increasing for ever."""

    def update_press(self, press_id: int, **progress: Any) -> None:
        """Record how far the burst of open press `press_id` got."""

    def open_presses(self) -> list[dict]:
        """Presses journaled without a fire yet, oldest first."""

    def events_after(self, seq: int, limit: int = 32) -> list[dict]:
        """Up to `limit` stored events with seq > `seq`, oldest first."""

    def ack(self, seq: int) -> None:
        """Cumulative ack from the host."""

    def host_holds(self, stream: str | None, seq: int) -> bool:
        """A host holds `seq` of `stream`: True when that proves journal loss (new stream)."""

    def get_reply(self, cmd_id: str) -> dict | None:
        """The stored reply to command `cmd_id`, or None."""

    def lookup(self, cmd_id: str) -> tuple[dict, str | None] | None:
        """``(reply, command_key)`` stored for `cmd_id`."""

    def put_reply(self, cmd_id: str, reply: dict, key: str | None = None) -> None:
        """Store the reply to `cmd_id` and what the command asked."""

    def close(self) -> None:
        """Release the journal; idempotent."""


class _Counted(abc.ABC):
    """What both journals keep the same way: the newest seq and the host's ack, read under
    the journal's lock, a stored reply found through `lookup`, and `with journal:`."""

    _lock: threading.RLock
    _last_seq: int
    _acked: int

    @property
    def last_seq(self) -> int:
        """Seq of the newest event (0 before the first)."""
        with self._lock:
            return self._last_seq

    @property
    def acked(self) -> int:
        """Highest seq the host has acknowledged (cumulative; persisted by `SqliteJournal`)."""
        with self._lock:
            return self._acked

    @abc.abstractmethod
    def lookup(self, cmd_id: str) -> tuple[dict, str | None] | None:
        """``(reply, command_key)`` stored for `cmd_id`."""

    def get_reply(self, cmd_id: str) -> dict | None:
        """The stored reply to command `cmd_id`, or None."""
        found = self.lookup(cmd_id)
        return found[0] if found is not None else None

    @abc.abstractmethod
    def close(self) -> None:
        """Release the journal; idempotent."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryJournal(_Counted):
    """In-memory journal with the full journal interface; forgets everything on exit."""

    path: Path | None = None
    recovered: str | None = None

    def __init__(self, *, stream: str | None = None) -> None:
        self.stream = stream or _new_id()
        self.boot = _new_id()[:12]
        self.lost: str | None = None
        self._lock = threading.RLock()
        self._events: OrderedDict[int, dict] = OrderedDict()
        self._last_seq = 0
        self._acked = 0
        self._press_id = 0
        self._open: dict[int, dict] = {}
        self._replies: OrderedDict[str, tuple[dict, str | None]] = OrderedDict()
        self._closed = False

    @property
    def oldest_seq(self) -> int:
        """Seq of the oldest event still held (``last_seq + 1`` when none is)."""
        with self._lock:
            return next(iter(self._events), self._last_seq + 1)

    @property
    def durable_seq(self) -> int:
        """Memory has no disk to wait for: every event is as durable as it will get."""
        return self.last_seq

    def sync(self) -> int:
        """Nothing to flush; returns `durable_seq` (the same interface as `SqliteJournal`)."""
        return self.durable_seq

    def append(self, kind: str, t_ms: int, fields: dict, *, reply: tuple | None = None) -> dict:
        """Assign the next seq, store the event and return it in full. A ``press`` event opens
        its press, a ``fire`` closes it; with `reply` ``(cmd_id, reply[, command_key])`` that
        command's reply is stored in the same step (exactly-once)."""
        with self._lock:
            event = _make_event(self.stream, self.boot, self._last_seq + 1, kind, t_ms, fields)
            self._last_seq += 1
            self._events[self._last_seq] = event
            change = _press_change(kind, fields)
            if change is not None and change[0] == "open":
                self._open[change[1]] = {"source": fields.get("source", "button")}
                self._press_id = max(self._press_id, change[1])
            elif change is not None:
                self._open.pop(change[1], None)
            if reply is not None:
                self.put_reply(*_split_reply(reply))
            return dict(event)

    def next_press_id(self) -> int:
        """A new press id, increasing for ever."""
        with self._lock:
            self._press_id += 1
            return self._press_id

    def update_press(self, press_id: int, **progress: Any) -> None:
        """Record how far the burst of open press `press_id` got (no-op once it has its fire)."""
        with self._lock:
            if press_id in self._open:
                self._open[press_id] = {**self._open[press_id], **progress}

    def open_presses(self) -> list[dict]:
        """Presses journaled without a fire yet, oldest first: ``{"press_id", "source", ...}``
        plus whatever `update_press` recorded."""
        with self._lock:
            return [{"press_id": pid, **self._open[pid]} for pid in sorted(self._open)]

    def events_after(self, seq: int, limit: int = 32) -> list[dict]:
        """Up to `limit` stored events with seq > `seq`, oldest first."""
        with self._lock:
            out = []
            for s in range(max(seq, self.oldest_seq - 1) + 1, self._last_seq + 1):
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

    def host_holds(self, stream: str | None, seq: int) -> bool:
        """A host says it holds `seq` of `stream`. Beyond our newest event on our own stream,
        that is proof the journal lost events: start a new stream (this boot's events carried
        over) and return True."""
        with self._lock:
            if stream != self.stream or seq <= self._last_seq:
                return False
            new = _new_id()
            self.lost = _loss_at_runtime(self.stream, seq, self._last_seq, new)
            log.error("journal: %s", self.lost)
            carried = _carry(list(self._events.values()), new, self.boot, self.lost)
            self.stream = new
            self._events = OrderedDict((e["seq"], e) for e in carried)
            self._last_seq, self._acked = len(carried), 0
            return True

    def lookup(self, cmd_id: str) -> tuple[dict, str | None] | None:
        """``(reply, command_key)`` stored for `cmd_id` (the key None when not recorded)."""
        with self._lock:
            found = self._replies.get(cmd_id)
            return (dict(found[0]), found[1]) if found is not None else None

    def put_reply(self, cmd_id: str, reply: dict, key: str | None = None) -> None:
        """Store the reply to `cmd_id` and what the command asked (`key`, from
        `protocol.command_key`); the last `KEEP_REPLIES` are kept."""
        with self._lock:
            self._replies[cmd_id] = (dict(reply), key)
            self._replies.move_to_end(cmd_id)
            while len(self._replies) > KEEP_REPLIES:
                self._replies.popitem(last=False)

    def close(self) -> None:
        """Nothing to release; idempotent."""
        self._closed = True


_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS replies (n INTEGER PRIMARY KEY AUTOINCREMENT,"
    " id TEXT NOT NULL UNIQUE, body TEXT NOT NULL, cmd TEXT)",
    # presses journaled without a fire yet: one row per open press, with its burst's progress
    "CREATE TABLE IF NOT EXISTS presses (press_id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
)
_OUR_TABLES = frozenset({"meta", "events", "replies", "presses", "sqlite_sequence"})


def _primary(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def _check_path(path: Path) -> None:
    """Raise UsageError (one line) when `path` can never hold our journal, before anything is
    created or moved: a directory, a missing or read-only folder, a file that is not SQLite,
    or the file or one of its side files (-wal, -shm, -mark) not readable and writable."""
    if path.is_dir():
        raise UsageError(f"journal {path} is a directory; give a file path (created if missing)")
    folder = path.absolute().parent
    if not folder.exists():
        raise UsageError(
            f"journal {path}: folder {folder} does not exist; create it or give another path"
        )
    if not folder.is_dir():
        raise UsageError(f"journal {path}: {folder} is not a folder; give another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(
            f"journal {path}: folder {folder} is not writable by this user (the journal keeps "
            f"its -wal, -shm and -mark files beside it); fix its permissions or give another path"
        )
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        head = b""
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
    for name in ("", *SIDE_FILES):
        side = path.with_name(path.name + name)
        if side.exists() and not os.access(side, os.R_OK | os.W_OK):
            raise UsageError(
                f"journal {path}: {side.name} is not readable and writable by this user (owner "
                f"uid {side.stat().st_uid}); run as that user or give the file to this one"
            )


class SqliteJournal(_Counted):
    """Journal in a SQLite file in WAL mode. A commit survives a crash of the process at once
    and a power cut once `sync()` has returned (one fsync of the write-ahead log covers every
    commit before it: group commit). The `stream` id is created with the file and kept in its
    meta table; `boot` is new each open.

    Refused with `UsageError` (one line, nothing created or moved): a directory, a missing or
    read-only folder, a file that is not SQLite (someone's notes), another program's SQLite
    database, a journal of a newer schema, files this user cannot read and write. Refused with
    `JournalError`: a full disk, a journal another launcher holds. An SQLite file that is
    damaged is moved aside to ``PATH.corrupt-<timestamp>`` (`recovered` names it); a journal
    found behind its mark is moved aside the same way. Either way, and when the journal itself
    is gone, `lost` says what was lost and the new stream never reuses seq or press ids."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.boot = _new_id()[:12]
        self.recovered: str | None = None
        self.lost: str | None = None
        self._lock = threading.RLock()
        # held across a sync's fsync (not `_lock`, so the loop keeps appending meanwhile)
        self._sync_lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._wal_fd: int | None = None  # our own descriptor of the -wal file, for fsync
        self._mark_fd: int | None = None  # the mark file, locked: one launcher per journal
        self._mark_failed = False
        self._dir_synced = False
        # commits made / commits known to be on disk: sync() has work iff they differ. A file
        # left by a killed process may hold commits that never reached the disk, so the first
        # sync always fsyncs.
        self._commits = 1
        self._synced_commits = 0
        self._durable_seq = 0
        self.stream = ""
        self._acked = self._last_seq = self._press_id = self._press_saved = self._opened_seq = 0
        self._open_presses: dict[int, dict] = {}
        _check_path(self.path)
        # files this open creates, removed again if it refuses: the folder is left as it was
        made = [self._side(x) for x in ("", *SIDE_FILES) if not self._side(x).exists()]
        self._mark_fd = self._lock_mark()
        try:
            mark = self._read_mark()
            behind = self._behind(mark)
            if behind:
                # before SQLite opens it for writing (closing would checkpoint the log): the
                # files are moved aside as the crash left them, evidence for a person
                self.recovered = self._move_aside(behind)
            try:
                created = self._open()
            except _Damaged as exc:
                self.recovered = self._move_aside(f"it is damaged ({exc})")
                created = self._open_new()
            self._load()
            self._check_mark(mark, created, behind)
        except BaseException:
            self.close()
            if self.recovered is None:
                for path in made:
                    with contextlib.suppress(OSError):
                        path.unlink()
            raise
        self._opened_seq = self._last_seq

    # -- opening --------------------------------------------------------------------------

    def _side(self, suffix: str) -> Path:
        return self.path.with_name(self.path.name + suffix)

    def _lock_mark(self) -> int:
        mark = self._side("-mark")
        try:
            fd = os.open(mark, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise UsageError(
                f"journal {self.path}: cannot create {mark.name}: {exc.strerror or exc}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise JournalError(
                f"journal {self.path} is in use by another launcher ({mark.name} is locked); "
                "stop that one or give another path"
            ) from None
        return fd

    def _read_mark(self) -> Mark | None:
        assert self._mark_fd is not None
        raw = os.pread(self._mark_fd, MARK_SIZE, 0).decode("ascii", "replace").strip()
        if not raw:
            return None
        try:
            text, crc = raw.rsplit(" ", 1)
            tag, version, stream, seq, press_id = text.split(" ")
            if (tag, version) != ("launcher-mark", "1") or int(crc, 16) != zlib.crc32(
                text.encode()
            ):
                raise ValueError(raw)
            return Mark(stream, int(seq), int(press_id))
        except ValueError:
            log.warning("journal %s: its mark is unreadable; cannot check it for loss", self.path)
            return None

    def _write_mark(self, mark: Mark) -> None:
        text = f"launcher-mark 1 {mark.stream} {mark.seq} {mark.press_id}"
        record = f"{text} {zlib.crc32(text.encode()):08X}".ljust(MARK_SIZE - 1) + "\n"
        try:
            assert self._mark_fd is not None
            os.pwrite(self._mark_fd, record.encode("ascii"), 0)
        except OSError as exc:
            if not self._mark_failed:  # once: the journal still works, its loss check less so
                log.warning("journal %s: cannot write its mark: %s", self.path, exc)
                self._mark_failed = True

    def _open(self) -> bool:
        """Connect and check; True when the database was empty (a new journal)."""
        try:
            return self._connect()
        except sqlite3.Error as exc:
            self._close_db()
            if _primary(exc) in _DAMAGE_CODES:
                raise _Damaged(str(exc)) from None
            raise self._refusal(exc, "cannot open") from None
        except BaseException:
            self._close_db()
            raise

    def _open_new(self) -> bool:
        try:
            return self._open()
        except _Damaged as exc:
            raise JournalError(f"journal {self.path}: cannot create a new one: {exc}") from None

    def _connect(self) -> bool:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so one event is one transaction
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=5)
        self._db = db
        # Nothing is written before we know the file is ours (or empty).
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        created = not tables
        schema = SCHEMA_VERSION if created else self._check_ours(db, tables)
        mode = str(db.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        if mode != "wal":
            raise JournalError(
                f"journal {self.path}: this filesystem cannot keep a write-ahead log (journal "
                f"mode {mode}); put the journal on a local disk"
            )
        # Commits skip the fsync (group commit: `sync()` does it); checkpoints still fsync.
        db.execute("PRAGMA synchronous=NORMAL")
        check = db.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise _Damaged(f"integrity check failed: {check[0] if check else '?'}")
        if created:
            self._transaction(db, self._create)
        elif schema < SCHEMA_VERSION:
            self._transaction(db, self._migrate)
        for key in ("acked", "last_seq", "press_id"):
            row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            if row is None or digits(str(row[0])) is None:  # ("²" is isdigit, not int)
                raise _Damaged(f"meta {key} missing or not a number")
        if db.execute("SELECT value FROM meta WHERE key='stream'").fetchone() is None:
            raise _Damaged("no stream id")
        return created

    def _check_ours(self, db: sqlite3.Connection, tables: set[str]) -> int:
        """The schema version of our journal; UsageError for anything else."""
        app = int(db.execute("PRAGMA application_id").fetchone()[0])
        if app == APPLICATION_ID and not tables <= _OUR_TABLES:
            raise _Damaged(f"unknown tables {sorted(tables - _OUR_TABLES)}")
        foreign = app not in (0, APPLICATION_ID) or not tables <= _OUR_TABLES
        row = None
        if not foreign and "meta" in tables:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if foreign or row is None:
            if app == APPLICATION_ID:
                raise _Damaged("no schema version")
            names = ", ".join(sorted(tables - {"sqlite_sequence"}))
            raise UsageError(
                f"journal {self.path} is another program's SQLite database (tables: "
                f"{names[:60]}), not a launcher journal; give a new path or move that file away"
            )
        schema = str(row[0])
        version = digits(schema)  # ("²" passed isdigit and failed int: a traceback)
        if version is None or version > SCHEMA_VERSION:
            raise UsageError(
                f"journal {self.path} holds schema {schema[:20]!r}, which this launcher does not "
                "know (a newer launcher's journal, or another program's database); "
                "give a new path or move that file away"
            )
        return version

    @staticmethod
    def _transaction(db: sqlite3.Connection, fn: Any) -> Any:
        db.execute("BEGIN IMMEDIATE")
        try:
            result = fn(db)
            db.execute("COMMIT")
        except BaseException:
            # SQLite has already rolled back after some errors (a full disk): the error that
            # counts is the first one, never "cannot rollback - no transaction is active"
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise
        return result

    def _create(self, db: sqlite3.Connection) -> None:
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        for statement in _TABLES:
            db.execute(statement)
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

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Schema 1 -> 2: open presses become rows (from the events, which is exact: a press's
        fire always comes after it), stored replies get the command they answer."""
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        db.execute(_TABLES[3])
        columns = {r[1] for r in db.execute("PRAGMA table_info(replies)")}
        if "cmd" not in columns:
            db.execute("ALTER TABLE replies ADD COLUMN cmd TEXT")
        open_: dict[int, dict] = {}
        for (body,) in db.execute("SELECT body FROM events ORDER BY seq"):
            event = json.loads(body)
            change = _press_change(event.get("kind", ""), event)
            if change is not None and change[0] == "open":
                open_[change[1]] = {"source": event.get("source", "button")}
            elif change is not None:
                open_.pop(change[1], None)
        row = db.execute("SELECT value FROM meta WHERE key='inflight'").fetchone()
        record = json.loads(row[0]) if row is not None else {}
        burst = record.get("press_id")
        if burst in open_:
            keys = ("planned", "ejected", "card_ms", "dry_streak")
            open_[burst].update({k: record[k] for k in keys if k in record})
        db.executemany(
            "INSERT OR REPLACE INTO presses(press_id, body) VALUES (?, ?)",
            [(pid, json.dumps(rec, separators=(",", ":"))) for pid, rec in open_.items()],
        )
        db.execute("DELETE FROM meta WHERE key='inflight'")
        db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))

    def _load(self) -> None:
        db = self._conn()
        self.stream = self._meta("stream")
        self._acked = int(self._meta("acked"))
        row = db.execute("SELECT MAX(seq) FROM events").fetchone()
        self._last_seq = max(int(row[0] or 0), int(self._meta("last_seq")))
        self._press_id = self._press_saved = int(self._meta("press_id"))
        self._open_presses = {
            int(pid): json.loads(body)
            for pid, body in db.execute("SELECT press_id, body FROM presses ORDER BY press_id")
        }

    def _behind(self, mark: Mark | None) -> str | None:
        """Why the journal on disk is behind its mark (a read-only look, so nothing is
        checkpointed), or None when it is not, or cannot be read that way."""
        if mark is None or not self.path.exists() or self.path.stat().st_size == 0:
            return None
        uri = "file:" + urllib.parse.quote(str(self.path.absolute())) + "?mode=ro"
        try:
            db = sqlite3.connect(uri, uri=True, timeout=5)
            try:
                meta = dict(
                    db.execute(
                        "SELECT key, value FROM meta WHERE key IN ('stream','last_seq','press_id')"
                    ).fetchall()
                )
                top = db.execute("SELECT MAX(seq) FROM events").fetchone()[0]
            finally:
                db.close()
            stream, press_id = str(meta["stream"]), int(meta["press_id"])
            last = max(int(top or 0), int(meta["last_seq"]))
        except (sqlite3.Error, KeyError, ValueError, TypeError):
            return None  # the real open decides (damaged, foreign, not ours)
        if stream != mark.stream or (mark.seq <= last and mark.press_id <= press_id):
            return None
        return self._went_back(mark, last)

    def _went_back(self, mark: Mark, last: int) -> str:
        return f"the journal went back from seq {mark.seq} to {last} (a damaged or lost log)"

    def _check_mark(self, mark: Mark | None, created: bool, behind: str | None = None) -> None:
        """Compare the journal with its mark: behind it, or gone, is journal loss."""
        if mark is None:
            return
        if behind:
            what = behind
        elif mark.stream == self.stream:
            if mark.seq <= self._last_seq and mark.press_id <= self._press_saved:
                return
            what = self._went_back(mark, self._last_seq)
            self.recovered = self._move_aside(what)
            created = self._open_new()
            self._load()
        elif created:
            what = (
                f"the journal was lost ({'damaged' if self.recovered else 'deleted or'}"
                f"{'' if self.recovered else ' emptied'}): stream {mark.stream[:8]} had reached"
                f" seq {mark.seq}"
            )
        else:
            what = (
                f"this is not the journal last used here (stream {mark.stream[:8]} at"
                f" seq {mark.seq})"
            )
        if created and mark.press_id > self._press_saved:
            # press ids the host may hold from the lost journal are never given out again
            self._write(lambda db: self._set_meta("press_id", str(mark.press_id)))
            self._press_id = self._press_saved = mark.press_id
        self.lost = f"{what}; new stream {self.stream[:8]}" if created else what
        log.error("journal %s: %s", self.path, self.lost)
        self.sync()  # the mark follows the new journal at once, so the loss is told once

    def _move_aside(self, why: str) -> str:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
        self._close_db()
        try:
            os.replace(self.path, target)
            for suffix in SIDE_FILES:
                side = self._side(suffix)
                if side.exists():
                    os.replace(side, target.with_name(target.name + suffix))
        except OSError as move_exc:
            raise JournalError(
                f"journal {self.path}: {why}, and it cannot be moved aside: "
                f"{move_exc.strerror or move_exc}"
            ) from None
        if self._mark_fd is not None:  # that descriptor now belongs to the moved mark
            os.close(self._mark_fd)
            self._mark_fd = None
        self._mark_fd = self._lock_mark()
        log.error("journal %s: %s; moved it to %s, starting a new stream", self.path, why, target)
        return str(target)

    def _refusal(self, exc: sqlite3.Error, doing: str) -> LauncherError:
        """One line for an SQLite failure that is not damage: whose problem, and the fix."""
        code = _primary(exc)
        if code in _READONLY_CODES or code == 14:  # 14: SQLITE_CANTOPEN
            return UsageError(
                f"journal {self.path} cannot be written by this user ({exc}); check the "
                "permissions of the file, its -wal and -shm files and its folder"
            )
        if code == _FULL:
            return JournalError(f"journal {self.path}: the disk is full ({exc}); free some space")
        if code in _BUSY_CODES:
            return JournalError(f"journal {self.path} is locked by another program ({exc})")
        return JournalError(f"journal {self.path}: {doing}: {exc}")

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

    def _write(self, fn: Any) -> Any:
        """Run `fn(db)` in one IMMEDIATE transaction under the lock and commit it without an
        fsync: the change survives a crash of the process at once and a power cut after the
        next `sync()`. Failures are raised as JournalError (one line) so callers see one kind."""
        with self._lock:
            db = self._conn()
            self._commits += 1  # counted before the commit: a failed one costs one spare fsync
            try:
                return self._transaction(db, fn)
            except sqlite3.Error as exc:
                # one line, and always a JournalError: whatever the cause (a full disk, a
                # filesystem gone read-only), a box that cannot journal stops safely
                raise JournalError(str(self._refusal(exc, "write failed"))) from exc

    # -- interface -------------------------------------------------------------------------

    @property
    def oldest_seq(self) -> int:
        """Seq of the oldest event still held (``last_seq + 1`` when none is)."""
        with self._lock:
            row = self._conn().execute("SELECT MIN(seq) FROM events").fetchone()
            return int(row[0]) if row[0] is not None else self._last_seq + 1

    @property
    def durable_seq(self) -> int:
        """Every event up to this seq is on disk (survives a power cut). Send nothing above it:
        call `sync()` first."""
        with self._lock:
            return self._durable_seq

    def sync(self) -> int:
        """Make every change committed so far survive a power cut, with one fsync of the
        write-ahead log, then raise the mark to it; returns the new `durable_seq`. A no-op
        when nothing was committed since the last sync.

        Why an fsync of the -wal file is enough: in WAL mode a commit only appends frames to
        that file (``synchronous=NORMAL`` skips its fsync), and fsync flushes every written
        page of the file, so it covers all commits before it; the main database file only
        changes in a checkpoint, which fsyncs the log before and the database after copying.
        The fsync runs without the journal lock, so appends on the loop thread go on meanwhile
        (they are covered by the next sync). The mark is written after the fsync and never
        fsync'd itself: it can only lag behind what is on disk, never run ahead of it."""
        with self._sync_lock:
            with self._lock:
                self._conn()  # JournalError once closed
                if self._synced_commits == self._commits:
                    return self._durable_seq
                commits, seq = self._commits, self._last_seq
                mark = Mark(self.stream, seq, self._press_saved)
                try:
                    wal_fd = self._open_wal()
                except OSError as exc:
                    raise JournalError(f"journal {self.path}: cannot open its log: {exc}") from exc
            try:
                if wal_fd is None:
                    # no -wal file (cannot happen while the connection is open, but then the
                    # fallback is SQLite's own: a commit with synchronous=FULL syncs the log)
                    self._full_commit()
                else:
                    os.fsync(wal_fd)
                    if not self._dir_synced:
                        self._fsync_dir()  # the -wal file's own name must survive too
                        self._dir_synced = True
            except OSError as exc:
                raise JournalError(f"journal {self.path}: sync failed: {exc}") from exc
            with self._lock:
                if mark.stream == self.stream:  # (a new stream started meanwhile: next time)
                    self._write_mark(mark)
                self._synced_commits = max(self._synced_commits, commits)
                self._durable_seq = max(self._durable_seq, seq)
                return self._durable_seq

    def _full_commit(self) -> None:
        with self._lock:
            db = self._conn()
            db.execute("PRAGMA synchronous=FULL")
            try:
                self._write(lambda db: self._set_meta("last_seq", str(self._last_seq)))
            finally:
                db.execute("PRAGMA synchronous=NORMAL")

    def _open_wal(self) -> int | None:
        """Our descriptor of the -wal file, reopened if SQLite replaced the file. Called with
        both locks held. Never open the main database file: closing any descriptor of it would
        drop SQLite's POSIX locks on it (the -wal file carries no locks; WAL locking is done in
        the -shm file)."""
        wal = self._side("-wal")
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
        fd = os.open(self.path.absolute().parent, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def append(self, kind: str, t_ms: int, fields: dict, *, reply: tuple | None = None) -> dict:
        """Assign the next seq, commit the event and return it in full. The commit survives a
        crash of the process; it survives a power cut after the next `sync()` (the link syncs
        before it sends the event). A ``press`` event opens its press and a ``fire`` closes it
        in the same transaction; with `reply` ``(cmd_id, reply[, command_key])`` that command's
        reply is stored in it too, so a crash can never leave the effect (e.g. a ``press``)
        journaled without the answer a retry of the same command id must get."""
        with self._lock:
            seq = self._last_seq + 1
            event = _make_event(self.stream, self.boot, seq, kind, t_ms, fields)
            body = json.dumps(event, separators=(",", ":"))
            change = _press_change(kind, fields)
            record = {"source": fields.get("source", "button")}

            def write(db: sqlite3.Connection) -> None:
                db.execute("INSERT INTO events(seq, body) VALUES (?, ?)", (seq, body))
                self._set_meta("last_seq", str(seq))
                if change is not None and change[0] == "open":
                    db.execute(
                        "INSERT OR REPLACE INTO presses(press_id, body) VALUES (?, ?)",
                        (change[1], json.dumps(record, separators=(",", ":"))),
                    )
                    if change[1] > self._press_saved:
                        self._set_meta("press_id", str(change[1]))
                elif change is not None:
                    db.execute("DELETE FROM presses WHERE press_id=?", (change[1],))
                if reply is not None:
                    self._store_reply(db, *_split_reply(reply))

            # no fsync here: one `sync()` before sending covers a whole batch (group commit)
            self._write(write)
            self._last_seq = seq
            if change is not None and change[0] == "open":
                self._open_presses[change[1]] = record
                self._press_id = max(self._press_id, change[1])
                self._press_saved = max(self._press_saved, change[1])
            elif change is not None:
                self._open_presses.pop(change[1], None)
            return event

    def next_press_id(self) -> int:
        """A new press id, increasing for ever. Kept in memory until the press event that
        carries it is journaled (that commit persists it): an id no event carries was never
        shown to anyone, so a crash may hand it out again."""
        with self._lock:
            self._press_id += 1
            return self._press_id

    def update_press(self, press_id: int, **progress: Any) -> None:
        """Record how far the burst of open press `press_id` got (no-op once it has its fire).
        Committed without an fsync, like every write."""
        with self._lock:
            record = self._open_presses.get(press_id)
            if record is None:
                return
            record = {**record, **progress}
            body = json.dumps(record, separators=(",", ":"))
            self._write(
                lambda db: db.execute(
                    "UPDATE presses SET body=? WHERE press_id=?", (body, press_id)
                )
            )
            self._open_presses[press_id] = record

    def open_presses(self) -> list[dict]:
        """Presses journaled without a fire yet, oldest first: ``{"press_id", "source", ...}``
        plus whatever `update_press` recorded."""
        with self._lock:
            return [
                {"press_id": pid, **self._open_presses[pid]} for pid in sorted(self._open_presses)
            ]

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

            # An acked mark lost in a power cut only makes the box resend events the host
            # already holds, and the host drops those by seq.
            self._write(write)
            self._acked = seq

    def host_holds(self, stream: str | None, seq: int) -> bool:
        """A host says it holds `seq` of `stream`. Beyond our newest event on our own stream,
        that is proof the journal lost events (a damaged log whose mark was lost too): start a
        new stream, carry this boot's events over to it, say so in `lost` and the log, and
        return True."""
        with self._lock:
            if stream != self.stream or seq <= self._last_seq:
                return False
            new = _new_id()
            lost = _loss_at_runtime(self.stream, seq, self._last_seq, new)
            db = self._conn()
            mine = [
                json.loads(r[0])
                for r in db.execute(
                    "SELECT body FROM events WHERE seq > ? ORDER BY seq", (self._opened_seq,)
                )
            ]
            carried = _carry(mine, new, self.boot, lost)

            def write(db: sqlite3.Connection) -> None:
                db.execute("DELETE FROM events")
                db.executemany(
                    "INSERT INTO events(seq, body) VALUES (?, ?)",
                    [(e["seq"], json.dumps(e, separators=(",", ":"))) for e in carried],
                )
                self._set_meta("stream", new)
                self._set_meta("last_seq", str(len(carried)))
                self._set_meta("acked", "0")

            self._write(write)
            self.stream, self._last_seq, self._acked = new, len(carried), 0
            self._opened_seq = self._durable_seq = 0
            self.lost = lost
        log.error("journal %s: %s", self.path, lost)
        self.sync()  # the mark follows the new stream at once
        return True

    def lookup(self, cmd_id: str) -> tuple[dict, str | None] | None:
        """``(reply, command_key)`` stored for `cmd_id` (the key None when not recorded)."""
        with self._lock:
            row = (
                self._conn()
                .execute("SELECT body, cmd FROM replies WHERE id=?", (cmd_id,))
                .fetchone()
            )
        return (json.loads(row[0]), row[1]) if row is not None else None

    def put_reply(self, cmd_id: str, reply: dict, key: str | None = None) -> None:
        """Store the reply to `cmd_id` and what the command asked (`key`, from
        `protocol.command_key`); only the newest `KEEP_REPLIES` are kept. Like `append`,
        durable after the next `sync()` (the link syncs before it writes the reply)."""
        self._write(lambda db: self._store_reply(db, cmd_id, reply, key))

    def _store_reply(
        self, db: sqlite3.Connection, cmd_id: str, reply: dict, key: str | None = None
    ) -> None:
        body = json.dumps(reply, separators=(",", ":"))
        db.execute(
            "INSERT OR REPLACE INTO replies(id, body, cmd) VALUES (?, ?, ?)", (cmd_id, body, key)
        )
        db.execute(
            "DELETE FROM replies WHERE n <= (SELECT MAX(n) FROM replies) - ?", (KEEP_REPLIES,)
        )

    def close(self) -> None:
        """Close the database and release the journal; idempotent. Changes not yet synced stay
        in the operating system's hands (safe across a crash of this process, not across a
        power cut)."""
        with self._sync_lock, self._lock:  # never close the -wal descriptor under an fsync
            if self._wal_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._wal_fd)
                self._wal_fd = None
            self._close_db()
            if self._mark_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._mark_fd)  # releases the lock: another launcher may open it
                self._mark_fd = None
