"""Host side of the serial link to the launcher box (`BoxClient`).

The box journals every event and resends it until the host acknowledges it; the host's half of
that bargain lives here:

- one reader thread owns the port: it decodes frames, hands events over in order, drops
  duplicates (a `seq` already seen in the same `stream`), asks for gaps with `nak`, and acks
  cumulatively *after* the new position is stored, so an event the box forgets has always
  reached the host first;
- the last acked `stream`/`seq` lives in a small SQLite file (`state_path`), so a host restart
  resumes where it stopped: `hello` carries it and the box replays everything after it;
- commands get an id and are resent with the same id until a reply arrives (the box answers a
  repeated id with its stored reply and never runs it twice);
- a vanished port is reopened with back-off for ever, followed by a fresh `hello` (except a
  pty's own path, `/dev/pts/N`: it never comes back for the same box, `ports.is_pty`; and a
  symlink to a pty only once it leads to that pty again or was made anew, `ports.PtyLink`).

The wire format itself is `wire.protocol`; nothing here touches GPIO.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import serial

from i18n import Text, _
from wire import ops, ports, protocol
from wire.errors import UnoError

__all__ = ["BoxClient", "BoxError", "ClientStats", "Position"]

log = logging.getLogger(__name__)

# Command resend schedule: first resend after this, doubling up to the cap (the box answers a
# command within milliseconds; a missing reply means a lost frame or a box restarting).
HALT_CHECK_S = 0.1  # how often a wait looks at the command's `halt` (Ctrl-C): at once, to a person
RETRY_FIRST_S = 0.25
RETRY_MAX_S = 2.0
# Port reopen back-off after a disconnect.
REOPEN_FIRST_S = 0.05
REOPEN_MAX_S = 2.0
# Do not repeat a nak for the same missing seq more often than this: the box is already resending.
NAK_REPEAT_S = 0.5
# A gap still open this long after its first nak: send hello again (the box rewinds to us).
RESYNC_S = 2.0
READ_TIMEOUT_S = 0.05
WRITE_TIMEOUT_S = 1.0
# Fire results kept for `wait_fire` after `events()` handed them out.
RECENT_FIRES = 4096


class BoxError(UnoError, RuntimeError):
    """The box refused a command or could not be reached.

    `code` is the wire-protocol error code of the box's reply (`LOCKED`, `BAD_ARG`, ...) or one
    of the client's own:

    - `UNREACHABLE`: the port cannot be opened (missing, busy, no permission); `BAD_PORT`: a
      name that can never be a serial port (`wire.ports.check_port`: empty, a directory, a
      regular file, /dev/null, an unknown URL scheme, ...), the user's mistake (exit code 2);
    - `TIMEOUT`: no answer in time; `BAD_REPLY`: the box answered with a frame that breaks the
      protocol; `CLOSED`: the client was closed; `STATE`: the host state file cannot be used.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        """2 for a port name that is the user's mistake, 1 for anything else."""
        return 2 if self.code == ports.PortError.code else 1


@dataclass
class ClientStats:
    """Counters of the host side of the link."""

    received: int = 0  # event frames read (including duplicates and out-of-order ones)
    delivered: int = 0  # events handed to the host, each exactly once
    duplicates: int = 0  # events dropped because their seq was already held
    gaps: int = 0  # events dropped because an earlier seq was missing
    early: int = 0  # events dropped because they came before the box answered hello
    naks: int = 0  # nak frames sent
    acks: int = 0  # ack frames sent
    retries: int = 0  # command frames resent with the same id
    reconnects: int = 0  # times the port was reopened after it vanished
    resyncs: int = 0  # hellos sent again because naks did not fill a gap
    skipped: int = 0  # events the box no longer held when we came back (gone for good)
    bad_frames: int = 0  # lines dropped by the decoder (bad CRC, bad JSON, too long, ...)
    box_errors: int = 0  # error replies that named no pending command (e.g. a garbled frame)

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict (for `--json` and logs)."""
        return asdict(self)


class Position:
    """The host's last acked (`stream`, `seq`), in memory or in a small SQLite file.

    Saving is synchronous (WAL, `synchronous=FULL`) because the ack that follows a save lets the
    box forget the event: the position must be on disk before the box is told."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = None if path is None else os.fspath(path)
        self.stream: str | None = None
        self.seq = 0
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        if self.path is None:
            return
        try:
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS position"
                " (id INTEGER PRIMARY KEY CHECK (id = 1), stream TEXT, seq INTEGER NOT NULL)"
            )
            row = db.execute("SELECT stream, seq FROM position WHERE id = 1").fetchone()
        except sqlite3.Error as exc:
            raise BoxError(
                "STATE",
                _("cannot use the host state file {path}: {error}").format(
                    path=self.path, error=exc
                ),
            ) from None
        self._db = db
        if row is not None:
            self.stream, self.seq = row[0], int(row[1])

    def save(self, stream: str | None, seq: int) -> None:
        """Remember `stream`/`seq` (durably when backed by a file)."""
        with self._lock:
            self.stream, self.seq = stream, seq
            if self._db is not None:
                self._db.execute(
                    "INSERT INTO position (id, stream, seq) VALUES (1, ?, ?)"
                    " ON CONFLICT(id) DO UPDATE SET stream = excluded.stream, seq = excluded.seq",
                    (stream, seq),
                )

    def close(self) -> None:
        """Close the file; idempotent."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class _Pending:
    """A command waiting for its reply."""

    __slots__ = ("done", "reply")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: dict[str, Any] | None = None


def _open_port(port: str) -> serial.Serial:
    """Open `port` (a device path or a pyserial URL) exclusively where the backend supports it."""
    kwargs: dict[str, Any] = {
        "baudrate": 115200,
        "timeout": READ_TIMEOUT_S,
        "write_timeout": WRITE_TIMEOUT_S,
    }
    try:
        return serial.serial_for_url(port, exclusive=True, **kwargs)
    except (TypeError, ValueError):
        # URL handlers without an exclusive mode (loop://, socket://): nothing to lock
        return serial.serial_for_url(port, **kwargs)


def command_frame(cmd_id: str, op: str, args: Mapping[str, Any]) -> bytes:
    """The frame of command `op`; BoxError(BAD_ARG) when it does not fit in one (a 600-digit
    count): the box would answer LINE_TOO_LONG, with no id, for ever."""
    try:
        return protocol.encode(protocol.cmd(cmd_id, op, **args))
    except ValueError as exc:
        raise BoxError(
            "BAD_ARG", _("{op} does not fit in one frame ({error})").format(op=op, error=exc)
        ) from None


class BoxClient:
    """Host side of the serial link: commands, and every box event exactly once, in order.

    `port` is a device path (`/dev/ttyACM0`, a pty) or a pyserial URL (`loop://`, `socket://`).
    `state_path` is a SQLite file holding the last acked position, so a host restart loses
    nothing; without it the position lives in memory. `timeout` bounds `connect()` and every
    command (including resends across a box restart).

    Thread-safe for one consumer: any thread may send commands while one thread reads
    `events()`; the reader thread is internal. Use as a context manager or call `connect()` and
    `close()`.

    `halt`, when given, stops a command's waits the way Ctrl-C should: once it is set, every
    wait of the client (connecting, a reply, an event, a fire result) raises KeyboardInterrupt
    within HALT_CHECK_S, from a place where no lock is half taken. A command sets it from its
    stop signal's listener (`common.commandline.CtrlC.listen`) instead of letting the signal
    raise KeyboardInterrupt wherever the main thread is: raised inside `threading`'s own wait
    code, that can leave a lock released that a `with` block then releases again ("cannot
    release un-acquired lock", exit 1 instead of 130). It is for the thread of a command
    line: a server whose threads share the client clears it (`halt = None`) once started.
    """

    def __init__(
        self,
        port: str,
        *,
        state_path: str | os.PathLike[str] | None = None,
        timeout: float = 5.0,
        halt: threading.Event | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be above 0 seconds, got {timeout}")
        try:
            # A name that can never be a port is refused before the state file is touched.
            self.port = ports.check_port(port)
        except ports.PortError as exc:
            raise BoxError(exc.code, str(exc)) from None
        self.timeout = timeout
        self.halt = halt
        self.stats = ClientStats()
        self.position = Position(state_path)
        self.box: dict[str, Any] = {}  # the last hello reply: stream, boot, name, ...
        self._ser: serial.Serial | None = None
        self._write_lock = threading.Lock()
        self._cond = threading.Condition()
        self._backlog: collections.deque[list[Any]] = collections.deque()  # [event, taken]
        self._fires: collections.OrderedDict[int, list[Any]] = collections.OrderedDict()
        self._pending: dict[str, _Pending] = {}
        self._online = threading.Event()  # port open and hello answered
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # ids are unique across host restarts (the box keeps replies by id for ever)
        self._id_prefix = secrets.token_hex(4)
        self._ids = itertools.count(1)
        self._hello_ids: set[str] = set()  # hellos sent on the current connection
        self._hello_due = 0.0
        self._hello_wait = RETRY_FIRST_S
        self._nak_seq = 0
        self._nak_at = 0.0
        self._rehello_at = 0.0
        self._gap_seq = 0  # first missing seq of the gap being waited for, and since when
        self._gap_since = 0.0
        self._closed = False
        self._pty = False  # the port is a pty slave: never reopened once it vanishes
        self._pty_link: ports.PtyLink | None = None  # the port is a symlink to a pty: as opened
        self._stale_told = False  # the stale link was logged (once per outage)
        self._gone: Text | None = None  # why the box can no longer be reached, once it cannot

    # ----------------------------------------------------------------------------------------
    # lifecycle

    def connect(self) -> None:
        """Open the port, start the reader and wait for the box to answer `hello`.

        Raises BoxError `UNREACHABLE` when the port cannot be opened (`no serial port at X: is
        the box plugged in? ...`, busy, no permission), `BAD_PORT` when it turns out not to be a
        serial port, each with one line, and `TIMEOUT` when nothing answers within `timeout`.
        (A name that can never be a port is refused by the constructor, `BAD_PORT`.) Calling it
        again while connected does nothing."""
        if self._closed:
            raise BoxError("CLOSED", _("this client was closed; make a new one"))
        if self._thread is None:
            try:
                ser = self._open()
            except ValueError as exc:  # pyserial: bad URL settings (the scheme was checked)
                raise BoxError(
                    "BAD_PORT",
                    _("cannot use port {port!r}: {error}").format(port=self.port, error=exc),
                ) from None
            except (serial.SerialException, OSError) as exc:
                raise BoxError(*ports.open_failure(self.port, exc)) from None
            self._pty = ports.is_pty(self.port)
            self._attach(ser)
            self._thread = threading.Thread(
                target=self._run, name=f"box-reader {self.port}", daemon=True
            )
            self._thread.start()
        if not self._wait(self._online.wait, self.timeout):
            self.close()
            self.raise_if_gone()
            raise BoxError(
                "TIMEOUT",
                _("no answer from a box on {port} within {seconds} s").format(
                    port=self.port, seconds=f"{self.timeout:g}"
                ),
            )

    def _wait(self, wait: Callable[[float | None], bool], timeout: float | None) -> bool:
        """`wait(timeout)` (an Event's or the condition's, its lock held for the latter), in
        slices of HALT_CHECK_S when there is a `halt` to look at: KeyboardInterrupt once it
        is set. What `wait` returns (False: the time ran out)."""
        if self.halt is None:
            return wait(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.halt.is_set():
                raise KeyboardInterrupt
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            if wait(HALT_CHECK_S if left is None else min(left, HALT_CHECK_S)):
                return True

    def close(self) -> None:
        """Stop the reader, close the port and the state file; idempotent."""
        self._closed = True
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
        self._detach()
        self.position.close()
        with self._cond:
            for pending in self._pending.values():
                pending.done.set()
            self._cond.notify_all()

    def __enter__(self) -> BoxClient:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        """True while the port is open and the box has answered `hello`."""
        return self._online.is_set()

    def raise_if_gone(self) -> None:
        """Raise BoxError `UNREACHABLE` once the box can never be reached on this port again
        (its pty vanished: `ports.is_pty`); a port that may come back is waited for instead."""
        if self._gone:
            raise BoxError("UNREACHABLE", self._gone.render())

    # ----------------------------------------------------------------------------------------
    # commands

    def command(self, op: str, /, **args: Any) -> dict[str, Any]:
        """Send command `op` with `args`, resending with the same id until the box replies.

        Returns the reply's result fields (without v, type, id, ok). Raises BoxError with the
        box's error code when it answers `ok: false`, `BAD_ARG` for a command too big for one
        frame (a 600-digit count), or `TIMEOUT` after `timeout` seconds."""
        if op not in ops.OPS:  # the box would only answer UNKNOWN_OP: say so without asking
            raise BoxError(
                "UNKNOWN_OP",
                _("unknown op {op!r}; known: {known}").format(op=op, known=", ".join(ops.OPS)),
            )
        try:  # the op table's arguments and shapes: the box would only answer BAD_ARG
            protocol.validate_args(None, op, args)
        except protocol.ProtocolError as exc:
            raise BoxError("BAD_ARG", str(exc)) from None
        cmd_id = f"{self._id_prefix}-{next(self._ids)}"
        line = command_frame(cmd_id, op, args)
        if self._thread is None:
            self.connect()
        pending = _Pending()
        with self._cond:
            self._pending[cmd_id] = pending
        deadline = time.monotonic() + self.timeout
        wait = RETRY_FIRST_S
        sends = 0
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BoxError(
                        "TIMEOUT",
                        _("no reply to {op!r} from the box on {port} within {seconds} s").format(
                            op=op, port=self.port, seconds=f"{self.timeout:g}"
                        ),
                    )
                if self._closed:
                    raise BoxError(
                        "CLOSED", _("client closed while waiting for {op!r}").format(op=op)
                    )
                self.raise_if_gone()
                if not self._online.is_set():
                    # port down or hello not answered yet: resend once it is back (the wait is
                    # short so a port gone for good is noticed soon)
                    self._wait(self._online.wait, min(remaining, RETRY_FIRST_S))
                    continue
                if self._write(line):
                    if sends:
                        self.stats.retries += 1
                    sends += 1
                if self._wait(pending.done.wait, min(wait, remaining)):
                    break
                wait = min(wait * 2, RETRY_MAX_S)
        finally:
            with self._cond:
                self._pending.pop(cmd_id, None)
        reply = pending.reply
        if reply is None:
            self.raise_if_gone()
            raise BoxError("CLOSED", _("client closed while waiting for {op!r}").format(op=op))
        if not reply.get("ok"):
            error = reply.get("error") or {}
            # The box's English line, or (when it sent one) the same message in our language.
            text = Text.from_wire(error.get("text"))
            message = text.render() if text is not None else str(error.get("message", ""))
            raise BoxError(str(error.get("code", "INTERNAL")), message)
        return {k: v for k, v in reply.items() if k not in ("v", "type", "id", "ok")}

    def press(self) -> int:
        """Press the button from the host; returns the press id (its fire result is an event)."""
        return int(self.command("press")["press_id"])

    def dispense(self, n: int) -> int:
        """Fire exactly `n` cards; returns the press id of the dispense."""
        return int(self.command("dispense", count=n)["press_id"])

    def lock(self) -> dict[str, Any]:
        """Forbid presses (the button answers with `locked`)."""
        return self.command("lock")

    def unlock(self) -> dict[str, Any]:
        """Allow presses again."""
        return self.command("unlock")

    def aim(self, seat: int) -> dict[str, Any]:
        """Turn the aiming servo to `seat`; returns `seat` and `angle`."""
        return self.command("aim", seat=seat)

    def load(self, count: int | None = None, total: int | None = None) -> dict[str, Any]:
        """Tell the box cards were added (`count`) or how many it now holds (`total`): one of
        the two (BoxError BAD_ARG otherwise, from the op table's check)."""
        given = {"count": count, "total": total}
        return self.command("load", **{k: v for k, v in given.items() if v is not None})

    def clear(self) -> dict[str, Any]:
        """Leave a latched `jammed` or `empty` state."""
        return self.command("clear")

    def reset(self) -> dict[str, Any]:
        """Leave a latched `fault` state."""
        return self.command("reset")

    def status(self) -> dict[str, Any]:
        """State, hopper, dry streak, queue, aim, fault, jam summary and uptime."""
        return self.command("status")

    def model_get(self) -> dict[str, Any]:
        """The jam-model parameters the box is using."""
        return dict(self.command("model.get").get("params", {}))

    def model_set(self, /, **params: Any) -> dict[str, Any]:
        """Change jam-model parameters (range-checked by the box); returns the new parameters."""
        return dict(self.command("model.set", params=params).get("params", {}))

    def selftest(self) -> dict[str, Any]:
        """Run the box's self-test; returns `passed` (true) and `checks`. A failed self-test is
        answered with error FAULT and raises `BoxError`."""
        return self.command("selftest")

    # ----------------------------------------------------------------------------------------
    # events

    def events(self, timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Yield every event once, in `seq` order. Stops when no event arrives for `timeout`
        seconds (None: wait for ever), when the client is closed, or when the box is gone for
        good (`raise_if_gone` then says why). Fire results already taken by `wait_fire` are
        skipped."""
        while True:
            with self._cond:
                deadline = None if timeout is None else time.monotonic() + timeout
                while True:
                    while self._backlog and self._backlog[0][1]:
                        self._backlog.popleft()
                    if self._backlog:
                        entry = self._backlog.popleft()
                        entry[1] = True
                        break
                    if self._closed or self._gone:
                        return
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return
                    self._wait(self._cond.wait, left)
            yield entry[0]

    def wait_fire(self, press_id: int, timeout: float) -> dict[str, Any]:
        """Wait for the fire result of `press_id` and return it. It is then skipped by
        `events()` unless `events()` had already handed it out. Raises BoxError `TIMEOUT`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while press_id not in self._fires:
                left = deadline - time.monotonic()
                if self._closed:
                    raise BoxError(
                        "CLOSED",
                        _("client closed while waiting for press {press}").format(press=press_id),
                    )
                self.raise_if_gone()
                if left <= 0:
                    raise BoxError(
                        "TIMEOUT",
                        _("no fire result for press {press} within {seconds} s").format(
                            press=press_id, seconds=f"{timeout:g}"
                        ),
                    )
                self._wait(self._cond.wait, left)
            entry = self._fires.pop(press_id)
            entry[1] = True
            return entry[0]

    # ----------------------------------------------------------------------------------------
    # reader thread

    def _run(self) -> None:
        decoder = protocol.FrameDecoder(check=False)
        reopen_wait = REOPEN_FIRST_S
        while not self._stop.is_set():
            ser = self._ser
            if ser is None and self._pty:
                self._lose_for_good()
                return
            if ser is None:
                if self._pty_link is not None and self._pty_link.stale(self.port):
                    # The box is gone and its link still names its pty's number, which may be
                    # another pty's by now: wait for a box to make the link anew.
                    if not self._stale_told:
                        log.info("%s names a pty that is gone; waiting for it anew", self.port)
                        self._stale_told = True
                    self._stop.wait(reopen_wait)
                    reopen_wait = min(reopen_wait * 2, REOPEN_MAX_S)
                    continue
                try:
                    ser = self._open()
                except Exception as exc:  # SerialException, OSError, termios.error (pty gone)
                    log.debug("reopen %s failed: %s", self.port, ports.reason(exc))
                    self._stop.wait(reopen_wait)
                    reopen_wait = min(reopen_wait * 2, REOPEN_MAX_S)
                    continue
                reopen_wait = REOPEN_FIRST_S
                self._stale_told = False
                decoder = protocol.FrameDecoder(check=False)  # old half lines are noise
                self.stats.reconnects += 1
                log.info("reopened %s", self.port)
                self._attach(ser)
            try:
                self._maybe_hello()
                data = ser.read(max(1, ser.in_waiting))
            except Exception as exc:  # the port vanished under us, whatever the backend says
                log.info("lost %s: %s", self.port, ports.reason(exc))
                self._detach()
                continue
            try:
                if data:
                    self._handle(decoder.feed(data))
            except Exception:
                # a bug here must not silence the link for good: the box resends what we miss
                log.exception("host link: handling frames from %s failed", self.port)

    def _open(self) -> serial.Serial:
        """Open the port, noting what it led to when it is a symlink to a pty."""
        link = ports.link_of(self.port)  # before the open: a link replaced meanwhile is new
        ser = _open_port(self.port)
        try:
            self._pty_link = ports.PtyLink.opened(link, ser.fileno()) if link else None
        except OSError:
            self._pty_link = None
        return ser

    def _lose_for_good(self) -> None:
        """The box's pty is gone: its path will soon name some other pty (docs/protocol.md), so
        stop here and let every waiting call raise the one line instead of reaching a stranger."""
        self._gone = Text(
            "the box's pseudo-terminal {port} is gone (a restarted `launcher run --port pty`"
            " prints a new PORT path: connect to that)",
            port=self.port,
        )
        log.warning("%s", self._gone)
        self._online.clear()
        with self._cond:
            for pending in self._pending.values():
                pending.done.set()
            self._cond.notify_all()

    def _attach(self, ser: serial.Serial) -> None:
        with self._write_lock:
            self._ser = ser
        self._hello_ids = set()
        self._hello_due = 0.0
        self._hello_wait = RETRY_FIRST_S

    def _detach(self) -> None:
        self._online.clear()
        with self._write_lock:
            ser, self._ser = self._ser, None
        if ser is not None:
            with contextlib.suppress(Exception):
                ser.close()

    def _write(self, line: bytes) -> bool:
        """Write one frame; False when the port is down or the write failed (the reader notices
        a dead port on its next read and reopens it)."""
        with self._write_lock:
            ser = self._ser
            if ser is None:
                return False
            try:
                ser.write(line)
            except (serial.SerialException, OSError) as exc:
                log.debug("write to %s failed: %s", self.port, ports.reason(exc))
                return False
        return True

    def _maybe_hello(self) -> None:
        """(Re)send `hello` with the last acked position until the box answers it."""
        if self._online.is_set():
            return
        now = time.monotonic()
        if now < self._hello_due:
            return
        self._send_hello()
        self._hello_due = now + self._hello_wait
        self._hello_wait = min(self._hello_wait * 2, RETRY_MAX_S)

    def _send_hello(self) -> None:
        # a fresh id each time: hello is harmless to repeat and must trigger a replay each time;
        # a late answer to an earlier one of this connection is just as good
        hello_id = f"{self._id_prefix}-h{next(self._ids)}"
        self._hello_ids.add(hello_id)
        msg = protocol.cmd(hello_id, "hello", stream=self.position.stream, seq=self.position.seq)
        self._write(protocol.encode(msg))

    def _handle(self, items: list[protocol.Frame | protocol.FrameErrorInfo]) -> None:
        """Process the frames of one read; save the position and ack once for the batch."""
        need_ack = False
        for item in items:
            if isinstance(item, protocol.FrameErrorInfo):
                self.stats.bad_frames += 1
                continue
            msg = item.message
            try:
                protocol.validate(msg)
            except protocol.ProtocolError as exc:
                # the CRC held, so this is what the box really sent: a box bug, not noise
                self._on_invalid(msg, exc)
                continue
            kind = msg.get("type")
            if kind == "event":
                need_ack |= self._on_event(msg)
            elif kind == "reply":
                self._on_reply(msg)
            # cmd/ack/nak never come from a box (loop:// echoes our own frames): ignore them
        if need_ack:
            # durable first, then tell the box it may forget these events
            self.position.save(self.position.stream, self.position.seq)
            if self._write(protocol.encode(protocol.ack(self.position.seq, self.position.stream))):
                self.stats.acks += 1

    def _on_invalid(self, msg: dict[str, Any], exc: protocol.ProtocolError) -> None:
        """An intact frame that breaks the protocol. A reply to one of our commands fails that
        command at once (resending would only fetch the same stored reply); anything else is
        dropped and counted."""
        self.stats.bad_frames += 1
        reply_id = msg.get("id") if msg.get("type") == "reply" else None
        with self._cond:
            pending = self._pending.get(reply_id) if isinstance(reply_id, str) else None
        if pending is None:
            log.error("box sent an invalid %s frame: %s", msg.get("type"), exc.message)
            return
        if pending.reply is None:
            pending.reply = {
                "ok": False,
                "error": {
                    "code": "BAD_REPLY",
                    "message": _("the box's reply is invalid: {error}").format(error=exc),
                },
            }
            pending.done.set()

    def _on_event(self, event: dict[str, Any]) -> bool:
        """Deliver, drop or nak one event; True when an ack is due."""
        self.stats.received += 1
        if not self._online.is_set():
            # sent before the box heard our hello (its writer does not wait for one): the
            # replay that follows the hello reply brings it again, from our position
            self.stats.early += 1
            return False
        stream, seq = event["stream"], event["seq"]
        if stream != self.position.stream:
            # the box got a new journal while we stayed connected: where to start in it comes
            # from a hello reply (its acked mark), not from whichever event arrived first
            log.warning("box stream changed from %s to %s", self.position.stream, stream)
            self.stats.early += 1
            self._online.clear()
            self._hello_due, self._hello_wait = 0.0, RETRY_FIRST_S
            return False
        if event["boot"] != self.box.get("boot") and seq > self.box.get("seq", 0):
            # newer than anything the box had at our hello, from another boot: the box
            # restarted behind a port that stayed open; greet it (it rewinds to our position)
            now = time.monotonic()
            if now - self._rehello_at >= NAK_REPEAT_S:
                self._rehello_at = now
                self._send_hello()
        last = self.position.seq
        if seq <= last:
            self.stats.duplicates += 1
            return True  # the box missed our ack: say it again
        if seq > last + 1:
            self.stats.gaps += 1
            now = time.monotonic()
            if self._gap_seq != last + 1:
                self._gap_seq, self._gap_since = last + 1, now
            elif now - self._gap_since >= RESYNC_S:
                # naks have not filled this gap: handshake again, which makes the box rewind
                # its window to our position whatever it believed we held
                self._gap_since = now
                self.stats.resyncs += 1
                log.warning("seq %d still missing after naks; sending hello again", last + 1)
                self._send_hello()
            if self._nak_seq != last + 1 or now - self._nak_at >= NAK_REPEAT_S:
                self._nak_seq, self._nak_at = last + 1, now
                if self._write(protocol.encode(protocol.nak(last + 1, stream))):
                    self.stats.naks += 1
            return False
        self.position.seq = seq
        self.stats.delivered += 1
        entry = [event, False]
        with self._cond:
            self._backlog.append(entry)
            if event["kind"] == "fire":
                self._fires[event["press_id"]] = entry
                while len(self._fires) > RECENT_FIRES:
                    self._fires.popitem(last=False)
            self._cond.notify_all()
        return True

    def _on_reply(self, reply: dict[str, Any]) -> None:
        reply_id = reply.get("id")
        if reply_id is not None and reply_id in self._hello_ids:
            if not reply.get("ok"):
                # a box that refuses hello is not one we can talk to; keep trying, say why
                log.warning("box refused hello: %s", reply.get("error"))
                return
            self.box = {k: v for k, v in reply.items() if k not in ("v", "type", "id", "ok")}
            stream = self.box.get("stream")
            if self.box.get("journal_lost"):
                log.error("the box lost journal events: %s", self.box["journal_lost"])
            if isinstance(stream, str) and stream != self.position.stream:
                # first contact, or the box's journal was replaced: the box replays what no
                # host has acked yet (after its `acked` mark), so that is where we stand
                if self.position.stream is not None:
                    log.warning("box stream changed from %s to %s", self.position.stream, stream)
                acked = self.box.get("acked", 0)
                self.position.stream = stream
                self.position.seq = acked if isinstance(acked, int) and acked >= 0 else 0
                with self._cond:
                    self._fires.clear()  # press ids are numbered per stream
            oldest = self.box.get("oldest")
            if isinstance(oldest, int) and oldest - 1 > self.position.seq:
                # the box no longer holds what we missed (it keeps the newest acked events
                # only): the replay starts at `oldest`, and waiting for the rest would be for ever
                log.warning(
                    "events %d-%d are gone from the box; carrying on from %d",
                    self.position.seq + 1,
                    oldest - 1,
                    oldest,
                )
                self.stats.skipped += oldest - 1 - self.position.seq
                self.position.seq = oldest - 1
            self._online.set()
            return
        with self._cond:
            pending = self._pending.get(reply_id) if reply_id is not None else None
        if pending is None:
            if not reply.get("ok"):
                self.stats.box_errors += 1
                log.debug("box error: %s", reply.get("error"))
            return
        if pending.reply is None:
            pending.reply = reply
            pending.done.set()
