"""The box side of the serial link (docs/protocol.md).

`Link(port, daemon, journal)` owns the serial port and two threads:

- the **reader** reads bytes, decodes frames (`protocol.FrameDecoder`) and handles them: `ack`
  and `nak` move the delivery window, `cmd` frames are deduplicated by id and handed to
  ``daemon.submit`` (``hello`` is answered by the link itself), bad frames are answered with an
  error reply and counted. The reader also (re)opens the port, with back-off, for ever.
- the **writer** is the only thread that writes: queued replies first, then events from the
  journal, at most `window` unacknowledged events in flight, resending the oldest unacked ones
  when the resend timer (0.25 s doubling to 5 s) runs out. Nothing goes out that a power cut
  could take back: before it writes an event above ``journal.durable_seq``, and before it writes
  replies, it calls ``journal.sync()`` (one fsync for the whole batch: group commit).

The daemon's loop thread never blocks on the port: its subscriber callback only wakes the
writer, and command replies are queued for the writer.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import logging
import os
import select
import threading
import time
import tty
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import serial

import i18n
from common.errors import JournalError, UsageError
from wire import ports, protocol

if TYPE_CHECKING:
    from firmware.journal import Journal

log = logging.getLogger(__name__)

READ_TIMEOUT = 0.05  # seconds a read waits, so the reader notices stop() and broken ports
POLL_INTERVAL = 0.2  # the writer looks at the journal at least this often
# Replies waiting for the writer. Beyond this the oldest goes (a host that writes but does not
# read): it is stored, or a query or an error, so a retry of its id gets it again.
MAX_OUT_QUEUE = 256
REOPEN_FIRST = 0.1
REOPEN_MAX = 5.0
# the counters a status reply carries (all of them would not fit in one frame with the rest)
STATUS_COUNTERS = ("frames_in", "frames_out", "bad_crc", "dropped", "resent", "dup_cmds")


class _Port(Protocol):
    def read(self) -> bytes: ...
    def write(self, data: bytes) -> None: ...
    def close(self) -> None: ...


class Served(Protocol):
    """What the link asks of the box it serves: the `Daemon` (and the tests' fake one)."""

    @property
    def state(self) -> str:
        """The machine state's name (for `hello`)."""

    def subscribe(self, fn: Callable[[dict], None]) -> None:
        """Call `fn(event)` for every event once it is journaled (never blocking)."""

    def submit(
        self, op: str, args: dict, reply: Callable[[dict], None], *, cmd_id: str | None = None
    ) -> None:
        """Run command `op`; `reply` is called exactly once with the result."""


class _WriteTimeout(Exception):
    """The other end did not take our bytes within the write timeout."""


class _SerialPort:
    """A pyserial port or URL (a device path, ``loop://``, ``socket://host:port``, a pty path)."""

    def __init__(self, url: str, *, baudrate: int, write_timeout: float) -> None:
        self._serial = serial.serial_for_url(
            url, baudrate=baudrate, timeout=READ_TIMEOUT, write_timeout=write_timeout
        )

    def read(self) -> bytes:
        waiting = self._serial.in_waiting
        return bytes(self._serial.read(max(1, min(waiting, 4096))))

    def write(self, data: bytes) -> None:
        try:
            self._serial.write(data)
            self._serial.flush()
        except serial.SerialTimeoutException as exc:
            raise _WriteTimeout(str(exc)) from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._serial.close()


def check_pty_link(path: str) -> None:
    """`--pty-link PATH` checked before anything starts: UsageError (one line) unless PATH can
    be the daemon's link to its pty (its folder exists; nothing but a symlink is there)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(
            i18n._("--pty-link {path}: folder {folder} does not exist").format(
                path=path, folder=folder
            )
        )
    if os.path.lexists(path) and not os.path.islink(path):
        raise UsageError(
            i18n._(
                "--pty-link {path}: something that is not a symlink is there; remove it or "
                "give another path"
            ).format(path=path)
        )


class _PtyPort:
    """The master side of a fresh pseudo-terminal; the host opens `path` (the slave).

    We keep our own slave descriptor open so that the master never sees EOF/EIO (which would
    spin the reader) while no host is attached.

    With `link` (the all-in-one box: `unoattack serve` on the same Pi, as another user), the
    slave is made readable and writable by the daemon's group, as a serial port is by dialout,
    and `link` is a symlink to it, replaced at every start: a stable name the host follows anew
    whenever it reopens (`wire.ports.is_pty`). It is removed at close if it is still ours."""

    def __init__(self, *, write_timeout: float, link: str | None = None) -> None:
        self._master, self._slave = os.openpty()
        for fd in (self._master, self._slave):
            tty.setraw(fd)  # no echo, no line editing, no CR/LF translation
        flags = fcntl.fcntl(self._master, fcntl.F_GETFL)
        fcntl.fcntl(self._master, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self.path = os.ttyname(self._slave)
        self._write_timeout = write_timeout
        self._link = link
        if link is not None:
            try:
                os.fchown(self._slave, -1, os.getegid())
                os.fchmod(self._slave, 0o660)
                fresh = f"{link}.{os.getpid()}.new"
                os.symlink(self.path, fresh)
                os.replace(fresh, link)  # atomic: a host never finds the name missing
            except OSError as exc:
                self.close()
                raise UsageError(
                    i18n._("--pty-link {path}: cannot link the pty there: {error}").format(
                        path=link, error=exc.strerror or exc
                    )
                ) from None

    def read(self) -> bytes:
        ready, _, _ = select.select([self._master], [], [], READ_TIMEOUT)
        if not ready:
            return b""
        try:
            return os.read(self._master, 4096)
        except BlockingIOError:
            return b""

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        deadline = time.monotonic() + self._write_timeout
        while view:
            try:
                n = os.write(self._master, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                raise _WriteTimeout(f"{len(view)} bytes not taken within {self._write_timeout} s")
            select.select([], [self._master], [], min(left, 0.05))

    def close(self) -> None:
        if self._link is not None:
            with contextlib.suppress(OSError):
                if os.readlink(self._link) == self.path:  # not a newer daemon's
                    os.unlink(self._link)
            self._link = None
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)


class Link:
    """Serial side of the daemon: delivers journaled events exactly once and answers commands.

    `port` is a pyserial port name or URL, or ``"pty"`` to create a pseudo-terminal whose slave
    path is `port_path` after `start()` (and `pty_link`, if given, a symlink to it). `daemon` is
    what it serves (`Served`: ``subscribe(fn)``, ``submit(op, args, reply, cmd_id=...)``,
    ``state``); `journal` its `Journal`. `clock` returns seconds (monotonic) and drives the
    resend timers."""

    def __init__(
        self,
        port: str,
        daemon: Served,
        journal: Journal,
        *,
        clock: Callable[[], float] | None = None,
        baudrate: int = 115200,
        write_timeout: float = 1.0,
        resend_first: float = 0.25,
        resend_max: float = 5.0,
        window: int = 32,
        pty_link: str | None = None,
    ) -> None:
        self.port = port
        self._pty_link = pty_link
        self.port_path: str | None = None if port == "pty" else port
        self._daemon = daemon
        self._journal = journal
        self._clock = clock or time.monotonic
        self._baudrate = baudrate
        self._write_timeout = write_timeout
        self._resend_first = resend_first
        self._resend_max = resend_max
        self._window = window

        self._lock = threading.RLock()
        self._wake = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._port: _Port | None = None
        self._port_broken = False
        self._pty: _PtyPort | None = None
        self._threads: list[threading.Thread] = []
        self._started = False
        self._stopped = False

        # delivery window, guarded by _lock
        self._host_has = journal.acked  # every event up to here is known to be at the host
        self._next = self._host_has + 1  # next seq the writer sends
        self._high = self._host_has  # highest seq sent by this boot (to count resends)
        self._rto = resend_first
        self._deadline: float | None = None
        self._last_rewind: tuple[int, float] | None = None
        self._epoch = 0  # bumped when a hello or nak moves the window: a batch in progress stops
        self._dirty = False  # a write timed out mid-line: start the next write with a newline

        # replies in the order they were decided: (cmd id or None, message); at most one per id
        self._out: collections.deque[tuple[str | None, dict]] = collections.deque()
        self._queued: set[str] = set()  # ids with a reply in _out
        self._pending: set[str] = set()  # ids being carried out (no reply decided yet)
        self._decoder = protocol.FrameDecoder()
        self._counters = dict.fromkeys(
            (
                "frames_in",
                "frames_out",
                "bad_crc",
                "too_long",
                "bad_frame",
                "dropped",
                "resent",
                "dup_cmds",
                "naks",
                "internal",
                "write_timeouts",
                "reopens",
                "open_failures",
                "errors_dropped",
                "replies_dropped",
            ),
            0,
        )

    # -- public ---------------------------------------------------------------------------

    @property
    def counters(self) -> dict[str, int]:
        """A snapshot of the link counters (for `status` and tests)."""
        with self._lock:
            return dict(self._counters)

    def start(self) -> None:
        """Open the port (or create the pty), subscribe to the daemon and start the threads.
        A port name that can never work raises UsageError (`ports.PortError`); a port that is
        merely absent is retried in the background."""
        if self._started:
            return
        self.port = ports.check_port(self.port, ports.BOX_WORDS)  # a keyword comes back lower case
        self._started = True
        if self.port == "pty":
            self._pty = _PtyPort(write_timeout=self._write_timeout, link=self._pty_link)
            self.port_path = self._pty.path
            self._port = self._pty
        else:
            self.port_path = self.port
            try:
                self._port = self._open()
            except ValueError as exc:
                raise UsageError(f"port {self.port!r}: {exc}") from None
            except (OSError, serial.SerialException):
                pass  # the reader retries with back-off and logs the outage once
        self._daemon.subscribe(self._on_event)
        for name, target in (("link-reader", self._read_loop), ("link-writer", self._write_loop)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Stop both threads and close the port; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        for thread in self._threads:
            thread.join(timeout=5)
        with self._lock:
            port, self._port = self._port, None
        if port is not None:
            port.close()
        if self._pty is not None and self._pty is not port:
            self._pty.close()

    def __enter__(self) -> Link:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def poke(self) -> None:
        """Wake the writer (new events, or an injected clock has moved)."""
        with self._wake:
            self._wake.notify_all()

    # -- daemon side ----------------------------------------------------------------------

    def _on_event(self, event: dict) -> None:
        # called on the daemon's loop thread: never block, only wake the writer
        if not self._stop.is_set():
            self.poke()

    # -- port -----------------------------------------------------------------------------

    def _open(self) -> _Port:
        return _SerialPort(self.port, baudrate=self._baudrate, write_timeout=self._write_timeout)

    def _ensure_port(self) -> _Port | None:
        """Return an open port, reopening a vanished one with back-off (for ever)."""
        with self._lock:
            port, broken = self._port, self._port_broken
        if port is not None and not broken:
            return port
        if port is not None:
            port.close()
        delay = REOPEN_FIRST
        tries = 0
        while not self._stop.is_set():
            tries += 1
            try:
                port = self._open()
            except (OSError, serial.SerialException, ValueError) as exc:
                with self._lock:
                    self._counters["open_failures"] += 1
                if tries == 1:  # once per outage, not once per try
                    log.warning(
                        "port %s unavailable (%s); retrying with back-off",
                        self.port,
                        ports.reason(exc),
                    )
                self._stop.wait(delay)
                delay = min(delay * 2, REOPEN_MAX)
                continue
            if tries > 1 or broken:
                log.info("port %s open again after %d tries", self.port, tries)
            with self._wake:
                self._port, self._port_broken = port, False
                self._counters["reopens"] += 1
                self._next = self._host_has + 1  # the other end may have missed anything in flight
                self._deadline = None
                self._dirty = False
                self._wake.notify_all()
            self._decoder = protocol.FrameDecoder()
            return port
        return None

    def _port_failed(self, exc: BaseException) -> None:
        log.warning("port %s failed: %s", self.port, exc)
        with self._lock:
            if self.port == "pty":
                return  # our own pty does not vanish; keep it
            self._port_broken = True

    # -- reader ---------------------------------------------------------------------------

    def _read_loop(self) -> None:
        while not self._stop.is_set():
            port = self._ensure_port() if self.port != "pty" else self._port
            if port is None:
                return
            try:
                data = port.read()
            except (OSError, serial.SerialException) as exc:
                if self._stop.is_set():
                    return
                self._port_failed(exc)
                self._stop.wait(READ_TIMEOUT)
                continue
            if not data:
                continue
            for item in self._decoder.feed(data):
                try:
                    self._handle(item)
                except Exception as exc:
                    # a handler bug must not kill the link: answer INTERNAL and keep reading
                    # (a journal that cannot be written is said in one line, not a traceback)
                    if isinstance(exc, JournalError):
                        log.error("link: handling a frame failed: %s", exc)
                    else:
                        log.exception("link: handling a frame failed")
                    cmd_id = _item_id(item)
                    with self._lock:
                        self._counters["internal"] += 1
                        if cmd_id is not None:
                            self._pending.discard(cmd_id)
                    self._queue(
                        cmd_id, protocol.reply_error(cmd_id, protocol.INTERNAL, "internal error")
                    )

    def _handle(self, item: protocol.Frame | protocol.FrameErrorInfo) -> None:
        if isinstance(item, protocol.FrameErrorInfo):
            key = {
                protocol.BAD_CRC: "bad_crc",
                protocol.LINE_TOO_LONG: "too_long",
            }.get(item.code, "bad_frame")
            with self._lock:
                self._counters[key] += 1
                self._counters["dropped"] += 1
            if item.type in ("event", "reply"):
                return  # ours to send, never answered (see below), however garbled
            self._queue(
                None, protocol.reply_error(item.id, item.code, item.message), droppable=True
            )
            return
        message = item.message
        kind = message["type"]
        with self._lock:
            self._counters["frames_in"] += 1
        if kind == "ack":
            self._on_ack(message)
        elif kind == "nak":
            self._on_nak(message)
        elif kind == "cmd":
            self._on_cmd(message)
        else:
            # events and replies are ours to send, not to receive; answering them could start an
            # echo loop with a looped-back line, so they are only counted
            with self._lock:
                self._counters["dropped"] += 1

    def _foreign(self, message: dict) -> bool:
        stream = message.get("stream")
        return stream is not None and stream != self._journal.stream

    def _on_ack(self, message: dict) -> None:
        if self._foreign(message) or self._journal_went_back(message):
            with self._lock:
                self._counters["dropped"] += 1
            return
        seq = min(message["seq"], self._journal.last_seq)
        with self._wake:
            if seq <= self._host_has:
                return
            self._host_has = seq
            self._next = max(self._next, seq + 1)
            self._rto = self._resend_first  # progress: the line works, back to the short timer
            self._deadline = self._clock() + self._rto if self._next - 1 > seq else None
            self._wake.notify_all()
        self._journal.ack(seq)

    def _journal_went_back(self, message: dict) -> bool:
        """An ack or nak naming our stream beyond our newest event: the journal lost events
        (the journal starts a new stream; this message then belongs to the old one)."""
        stream = message.get("stream")
        if stream is None:
            return False
        held = message["seq"] - (1 if message.get("type") == "nak" else 0)
        return bool(self._journal.host_holds(stream, held))

    def _on_nak(self, message: dict) -> None:
        if self._foreign(message) or self._journal_went_back(message):
            with self._lock:
                self._counters["dropped"] += 1
            return
        seq = min(max(message["seq"], 1), self._journal.last_seq + 1)
        # A nak for N says the host holds everything before N and nothing from N on: even
        # below what it acked before (it lost its own state), resend from N.
        self._on_ack({"seq": seq - 1})
        now = self._clock()
        with self._wake:
            self._counters["naks"] += 1
            if self._last_rewind is not None:
                last_seq, when = self._last_rewind
                if last_seq == seq and now - when < self._resend_first:
                    return  # one rewind per gap; the host naks each later event it sees too
            self._last_rewind = (seq, now)
            self._host_has = seq - 1
            self._next = seq
            self._epoch += 1
            self._deadline = now + self._rto
            self._wake.notify_all()

    def _on_cmd(self, message: dict) -> None:
        cmd_id: str = message["id"]
        op: str = message["op"]
        args = protocol.command_args(message)
        key = protocol.command_key(op, args)
        # Running first, stored second: a command leaves `_pending` only after its reply is
        # stored (`_finish`), so a copy read while the first finishes is seen by one check or
        # the other. Looked up first, the first copy could finish between the two checks and
        # the copy would run again (seen under load as one press id that nobody was told).
        # Only this reader thread adds ids, so none can start between the checks.
        with self._lock:
            running = cmd_id in self._pending
        found = None if running else self._journal.lookup(cmd_id)
        with self._lock:
            duplicate = running or found is not None
            if duplicate:
                self._counters["dup_cmds"] += 1
            else:
                self._pending.add(cmd_id)
        if found is not None:
            stored, stored_key = found
            if stored_key is not None and stored_key != key:
                # a host bug: answering with the first command's reply would mislead it
                self._queue(
                    None,
                    protocol.reply_error(
                        cmd_id,
                        protocol.BAD_ARG,
                        f"id {cmd_id!r:.70} was already used for another command "
                        f"({stored_key[:80]}); give each command a new id",
                    ),
                )
                return
            self._queue(cmd_id, stored)  # the same answer again; the command is not run twice
            return
        if duplicate:
            return  # still running; its one reply is on the way
        if op == "hello":
            self._hello(cmd_id, args)
            return
        try:
            # the id goes along so the daemon can journal the reply with the command's effect
            self._daemon.submit(
                op,
                args,
                _Once(lambda result: self._finish(cmd_id, op, result, key)),
                cmd_id=cmd_id,
            )
        except Exception as exc:
            log.exception("daemon.submit(%r) raised", op)
            with self._lock:
                self._counters["internal"] += 1
            self._finish(
                cmd_id, op, protocol.result_error(protocol.INTERNAL, f"{op} failed: {exc}"), key
            )

    def _hello(self, cmd_id: str, args: dict) -> None:
        """Handshake: adopt the host's position when it is on our stream and replay after it.

        The reply is queued in the same step as the window is reset (a new epoch), and a writer
        step sends events only in the epoch its replies were flushed in, so every event of the
        replay goes out after the reply."""
        stream = args.get("stream")
        seq = args.get("seq", 0)
        journal = self._journal
        went_back = journal.host_holds(stream, seq)  # beyond our newest: we lost events
        if stream == journal.stream and seq > journal.acked:
            journal.ack(seq)
        with self._wake:
            last = journal.last_seq
            # another stream (or none): the host knows nothing of ours; replay from our acked mark
            position = min(seq, last) if stream == journal.stream else journal.acked
            self._host_has = position
            self._next = position + 1
            if went_back:
                self._high = 0  # the old stream's numbers mean nothing now
            self._epoch += 1
            self._rto = self._resend_first
            self._deadline = None
            self._last_rewind = None
            reply = {
                "ok": True,
                "stream": journal.stream,
                "boot": journal.boot,
                "seq": last,
                "acked": journal.acked,
                # where the replay starts when the host's position is older than what is held
                "oldest": min(journal.oldest_seq, last + 1),
                "state": self._daemon.state,
                "journal_recovered": journal.recovered,
                "journal_lost": journal.lost,
            }
            self._finish(cmd_id, "hello", reply)

    def _finish(self, cmd_id: str, op: str, result: dict, key: str | None = None) -> None:
        """Build the reply to `cmd_id`, store it (unless it answers a query, or the daemon
        stored it with the command's effect) and queue it for the writer."""
        if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
            log.error("daemon reply to %s is not a reply dict: %r", op, result)
            result = protocol.result_error(protocol.INTERNAL, f"{op}: daemon gave no valid reply")
        reply = protocol.reply(cmd_id, result)
        if op == "status" and reply["ok"]:
            counters = self.counters
            with_link = {**reply, "link": {k: counters[k] for k in STATUS_COUNTERS}}
            reply = with_link if _fits(with_link) else reply
            # A person must hear that the journal was moved aside or lost events: as much of
            # each report as fits in the one frame (the log has it whole).
            for name, told in (
                ("journal_lost", self._journal.lost),
                ("journal_recovered", self._journal.recovered),
            ):
                while isinstance(told, str) and told:
                    if _fits({**reply, name: told}):
                        reply = {**reply, name: told}
                        break
                    told = told[: len(told) * 3 // 4 - 3] + "..." if len(told) > 40 else ""
        if not _fits(reply) and _fits(protocol.without_text(reply)):
            reply = protocol.without_text(reply)
        if not _fits(reply):
            log.error("reply to %s does not fit in one frame: %r", op, reply)
            reply = protocol.reply_error(cmd_id, protocol.INTERNAL, f"{op}: reply too long")
        if op not in protocol.QUERY_OPS:
            # Stored before it is queued, so a retry of this id gets this reply even if the
            # queued copy is dropped (a host that does not read). The writer syncs before it
            # writes, so the host never holds a reply the journal could lose.
            try:
                if self._journal.get_reply(cmd_id) is None:
                    self._journal.put_reply(cmd_id, reply, key)
            except JournalError as exc:
                log.error("storing the reply to %s failed: %s", cmd_id, exc)
            except Exception:
                log.exception("storing the reply to %s failed", cmd_id)
        with self._lock:  # only now, with the reply stored: `_on_cmd` relies on this order
            self._pending.discard(cmd_id)
        self._queue(cmd_id, reply)

    def _queue(self, cmd_id: str | None, message: dict, *, droppable: bool = False) -> None:
        """Queue a reply for the writer: one per command id at a time (a repeat while one is
        queued gets that one), and at most `MAX_OUT_QUEUE` in all."""
        with self._wake:
            if cmd_id is not None and cmd_id in self._queued:
                return
            if len(self._out) >= MAX_OUT_QUEUE:
                if droppable:
                    self._counters["errors_dropped"] += 1
                    return
                old_id, _ = self._out.popleft()
                if old_id is not None:
                    self._queued.discard(old_id)
                self._counters["replies_dropped"] += 1
            self._out.append((cmd_id, message))
            if cmd_id is not None:
                self._queued.add(cmd_id)
            self._wake.notify_all()

    # -- writer ---------------------------------------------------------------------------

    def _write_loop(self) -> None:
        told = ""
        while not self._stop.is_set():
            try:
                self._write_step()
                told = ""
            except JournalError as exc:
                # a disk problem: nothing may go out until the journal holds it; say so once
                if str(exc) != told:
                    log.error("link: %s; holding events and replies back", exc)
                    told = str(exc)
                self._stop.wait(POLL_INTERVAL)
            except Exception:
                log.exception("link writer failed; continuing")
                self._stop.wait(POLL_INTERVAL)

    def _write_step(self) -> None:
        with self._wake:
            port = None if self._port_broken else self._port
            if port is None or not (self._out or self._events_due()):
                self._wake.wait(self._wait_time())
                return
            epoch = self._epoch  # the window this step's replies were queued in
        if not self._flush_replies(port) or self._stop.is_set():
            # a reply the port did not take goes first next step: no event may overtake it
            # (the replay of a hello must follow its reply)
            return
        self._send_events(port, epoch)

    def _events_due(self) -> bool:
        """Called with the lock held: is there an event to send or a resend timer run out?"""
        if self._deadline is not None and self._clock() >= self._deadline:
            return True
        in_flight = self._next - 1 - self._host_has
        return in_flight < self._window and self._next <= self._journal.last_seq

    def _wait_time(self) -> float:
        if self._deadline is None:
            return POLL_INTERVAL
        return max(0.0, min(POLL_INTERVAL, self._deadline - self._clock()))

    def _flush_replies(self, port: _Port) -> bool:
        """Write the replies queued when this step began; False when the port took not all."""
        # Only the replies queued when this step began: one queued meanwhile goes out after the
        # events this step finds due. So a reply always follows every event that was due before
        # its command arrived (a host can sync on it), and replies cannot starve events.
        with self._lock:
            batch = [self._out.popleft() for _ in range(len(self._out))]
            self._queued.clear()
        if not batch:
            return True
        unsent: collections.deque[tuple[str | None, dict]] = collections.deque(batch)
        try:
            # a reply may tell of journaled effects (a press id, its own stored copy): the disk
            # must hold them before the host hears of them. One fsync for the whole batch.
            self._journal.sync()
        except Exception:
            self._requeue(unsent)  # try again next step, in order
            raise
        while unsent:
            reply = unsent[0][1]
            if not self._write(port, protocol.encode(reply)):
                # this one too: a line cut short by a timeout is dropped by the host whole, so
                # the reply goes again, first (the host may not be able to ask for it again)
                self._requeue(unsent)
                return False
            unsent.popleft()
        return True

    def _requeue(self, unsent: collections.deque[tuple[str | None, dict]]) -> None:
        """Put replies the writer could not send back in front, in order, within the bound
        (a reply queued again meanwhile for the same id is the same reply: keep one)."""
        with self._lock:
            for cmd_id, reply in reversed(unsent):
                if cmd_id is not None and cmd_id in self._queued:
                    continue
                self._out.appendleft((cmd_id, reply))
                if cmd_id is not None:
                    self._queued.add(cmd_id)
            while len(self._out) > MAX_OUT_QUEUE:
                old_id, _ = self._out.popleft()
                if old_id is not None:
                    self._queued.discard(old_id)
                self._counters["replies_dropped"] += 1

    def _send_events(self, port: _Port, step_epoch: int | None = None) -> None:
        """Send what the window allows; nothing when the window moved since ``step_epoch`` (the
        epoch the calling step flushed its replies in; None: now)."""
        now = self._clock()
        with self._lock:
            if step_epoch is not None and self._epoch != step_epoch:
                # a hello (or nak) moved the window after this step flushed its replies: its
                # reply is queued, not sent, and its replay must come after it. Next step.
                return
            if self._deadline is not None and now >= self._deadline:
                # nothing acked in time: go back to the oldest unacked event, wait longer next time
                if self._next - 1 > self._host_has:
                    self._next = self._host_has + 1
                    self._rto = min(self._rto * 2, self._resend_max)
                self._deadline = None
            room = self._window - (self._next - 1 - self._host_has)
            start = self._next - 1
            epoch = self._epoch
        if room <= 0:
            return
        events = self._journal.events_after(start, limit=room)
        if events and events[-1]["seq"] > self._journal.durable_seq:
            # group commit: one fsync makes this whole batch (and all before it) survive a
            # power cut before any of it is on the wire
            self._journal.sync()
        for index, event in enumerate(events):
            seq = event["seq"]
            with self._lock:
                if index == 0 and seq > self._next == start + 1:
                    # the journal no longer holds what the host asked for (it keeps the newest
                    # acked events only): carry on from what exists rather than stall. Only the
                    # batch's first event can show that: later in the batch, a seq above _next
                    # means a nak or hello rewound the window meanwhile, and treating that as a
                    # gap would mark the lost event as held by the host (never resent).
                    log.warning("events %d-%d are gone from the journal", self._next, seq - 1)
                    self._host_has = max(self._host_has, seq - 1)
                    self._next = seq
                if seq != self._next or epoch != self._epoch:
                    break  # an ack, nak or hello moved the window meanwhile
                if self._deadline is None:  # the timer runs from the first send, before a reply
                    self._deadline = self._clock() + self._rto
            if not self._write(port, protocol.encode(event)):
                break
            with self._lock:
                if seq <= self._high:
                    self._counters["resent"] += 1
                self._high = max(self._high, seq)
                # (a hello or nak that came while this line was written has rewound the
                # window: the line was the old window's, and the new one still needs it)
                if self._next == seq and epoch == self._epoch:
                    self._next = seq + 1

    def _write(self, port: _Port, line: bytes) -> bool:
        """Write one frame; False when the port failed or timed out (the caller stops)."""
        with self._lock:
            prefix = b"\n" if self._dirty else b""
        try:
            port.write(prefix + line)
        except _WriteTimeout:
            with self._lock:
                self._counters["write_timeouts"] += 1
                self._dirty = True  # part of the line may be out: end it before the next frame
                if self._deadline is None:
                    self._deadline = self._clock() + self._rto
            return False
        except (OSError, serial.SerialException) as exc:
            self._port_failed(exc)
            return False
        with self._lock:
            self._dirty = False
            self._counters["frames_out"] += 1
        return True


class _Once:
    """Wraps a reply callback so a second call is ignored (and logged) instead of sent twice."""

    def __init__(self, fn: Callable[[dict], None]) -> None:
        self._fn = fn
        self._done = False
        self._lock = threading.Lock()

    def __call__(self, result: dict) -> None:
        with self._lock:
            if self._done:
                log.error("a command reply was given twice; the second is ignored: %r", result)
                return
            self._done = True
        self._fn(result)


def _fits(message: dict) -> bool:
    try:
        protocol.encode(message)
    except (ValueError, TypeError):
        return False
    return True


def _item_id(item: protocol.Frame | protocol.FrameErrorInfo) -> str | None:
    if isinstance(item, protocol.FrameErrorInfo):
        return item.id
    value = item.message.get("id")
    return value if isinstance(value, str) else None
