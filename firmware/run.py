"""``launcher run``: the daemon on real or mock pins, with the serial link and systemd notify.

SIGTERM, SIGINT and SIGHUP turn every output off and exit 0; a config error exits 78 before anything
starts; a bad ``--port`` exits 2. ``--console`` reads ops from stdin and writes replies and events
as JSON lines (tests and the bench); the end of its input stops the daemon the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import os
import select
import signal
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import i18n
from common import textfile
from common.errors import UsageError

if TYPE_CHECKING:
    from firmware.daemon import Daemon
    from firmware.journal import Journal

log = logging.getLogger("firmware.daemon")  # the name the logs have always shown


def _parse_console(line: str) -> tuple[str, dict]:
    """``press`` / ``dispense 3`` / ``load total=20`` / ``aim 1`` / ``{"op": ..., ...}``."""
    line = line.strip()
    if line.startswith("{"):
        data = textfile.parse_json(line)  # (nested too deep: a ValueError, not the reader's end)
        op = str(data.pop("op"))
        return op, data
    words = line.split()
    op, rest = words[0], words[1:]
    args: dict[str, Any] = {}
    for word in rest:
        key, sep, value = word.partition("=")
        if not sep:
            key, value = {"aim": "seat"}.get(op, "count"), word
        try:
            args[key] = textfile.parse_json(value)
        except ValueError:
            args[key] = value
    return op, args


# At the end of the console's input, how long the ops already read may take to be answered
# before the daemon stops anyway (a reply takes milliseconds; this is a bound, not a wait).
REPLIES_WAIT_S = 10.0


def _console(daemon: Daemon, out: Callable[[dict], None], at_end: Callable[[], None]) -> None:
    """Read ops from stdin, one per line; write replies as JSON lines (tests and the bench).
    At the end of the input (`</dev/null`, a pipe closed, Ctrl-D), once every op read has its
    reply, `at_end()`: the daemon stops as on SIGTERM (outputs off, the exit line, exit 0)."""
    waiting = [0]  # ops sent, reply not written yet
    answered = threading.Condition()

    def reply(op: str, result: dict) -> None:
        out({"type": "reply", "op": op, **result})
        with answered:
            waiting[0] -= 1
            answered.notify_all()

    for line in _input_lines():
        if not line.strip():
            continue
        try:
            op, args = _parse_console(line)
        except (ValueError, KeyError) as exc:
            out({"type": "reply", "ok": False, "error": {"code": "BAD_FRAME", "message": str(exc)}})
            continue
        with answered:
            waiting[0] += 1
        daemon.submit(op, args, functools.partial(reply, op))
    with answered:
        answered.wait_for(lambda: waiting[0] <= 0, REPLIES_WAIT_S)
    log.info("end of the console's input: stopping")
    at_end()


def _input_lines() -> Iterator[str]:
    """stdin's lines, read from its file descriptor: no buffer lock held while this thread waits
    (the interpreter's exit would wait for it), each line decoded on its own (a stray byte is an
    unknown op, not the end of the console). No stdin at all (`<&-`) is an input that ended."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        yield from (line.decode("utf-8", errors="replace") for line in lines)
    if pending:
        yield pending.decode("utf-8", errors="replace")


def _run(args: argparse.Namespace) -> int:
    # The box's modules are imported here, not at the top: `launcher --help` builds this
    # command's parser too, and needs none of them.
    from firmware import config as config_mod
    from firmware import notify
    from firmware.daemon import Daemon
    from firmware.pins import claim_pins, make_factory, mock_requested, pins_label

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="launcher: %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("transitions").setLevel(logging.WARNING)  # one line per callback otherwise
    path = args.config or config_mod.default_path()
    cfg = config_mod.load(path)  # ConfigError -> one line, exit 78
    mock = bool(args.mock or mock_requested())
    if args.plant_state and not mock:
        raise UsageError("--plant-state needs --mock (the plant only exists on mock pins)")
    if args.sound_log and not mock:
        raise UsageError("--sound-log needs --mock (on a Pi the cues play through the speaker)")
    sound_log = None
    if args.sound_log:
        try:
            sound_log = open(args.sound_log, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise UsageError(
                f"--sound-log {args.sound_log}: cannot write: {exc.strerror or exc}"
            ) from None
    from wire.ports import BOX_WORDS, check_port

    # Before anything starts: a bad --port is the only line printed (PortError, exit 2).
    port = check_port(args.port, BOX_WORDS)
    if args.pty_link is not None:
        if port != "pty":
            raise UsageError(i18n._("--pty-link needs --port pty"))
        from firmware.link import check_pty_link

        check_pty_link(args.pty_link)
    if port != "none":
        try:
            from firmware.link import Link
        except ModuleNotFoundError as exc:
            raise UsageError(f"the serial link is not available ({exc}); use --port none") from None
    if args.plant_state:
        from firmware.plant import check_state_path

        check_state_path(args.plant_state)
    journal: Journal
    if args.journal:
        from firmware.journal import SqliteJournal

        journal = SqliteJournal(args.journal)  # refuses a directory or a non-SQLite file
    else:
        from firmware.journal import MemoryJournal

        journal = MemoryJournal()

    # The handler only sets a flag: it runs on the main thread between bytecodes, possibly inside
    # a lock the main thread holds (Event.set() there can deadlock). The wakeup fd makes the
    # main thread's select() return at once, so SIGTERM turns the outputs off without delay.
    stop_requested: list[int] = []
    wake_r, wake_w = socket.socketpair()
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)

    def on_signal(signum: int, frame: Any) -> None:
        stop_requested.append(signum)

    def on_end_of_input() -> None:  # from the console's thread
        stop_requested.append(0)
        with contextlib.suppress(OSError):
            wake_w.send(b"\0")

    # SIGHUP too: the terminal or SSH session the daemon was started from closed, an exit
    # path like any other (it killed the daemon with the ejector running).
    for stop in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(stop, on_signal)

    # Real pins are exclusive: `launcher bench` must not drive them while we run.
    pins_lock = None if mock else claim_pins()
    try:
        factory = make_factory(mock=mock)  # a library that cannot drive the pins: one line
        plant = None
        from firmware.plant import Plant, world_of

        if world_of(factory) is not None:  # mock pins, or the simulated chip of tests/pi-check
            plant = Plant(
                cfg.plant, factory, cfg.pins, state_path=args.plant_state, kind=cfg.ejector.kind
            )
        daemon = Daemon(cfg, factory=factory, journal=journal, plant=plant, config_path=str(path))
    except BaseException:
        if pins_lock is not None:
            pins_lock.release()
        raise
    printer: _Printer | None = _Printer() if args.console else None
    daemon.set_watchdog(notify.watchdog_interval(), notify.watchdog)
    if sound_log is not None and daemon.sound.sink is not None:
        daemon.sound.sink.log_to(sound_log)  # the demo's transcript of what would have played
    if printer is not None:
        daemon.subscribe(printer.put)
    link = None
    code = 0
    try:
        daemon.start()
        if port != "none":
            link = Link(port, daemon, journal, pty_link=args.pty_link)
            link.start()
            if port == "pty":
                print(f"PORT {link.port_path}", flush=True)
        if printer is not None:
            printer.start()
            threading.Thread(
                target=_console, args=(daemon, printer.put, on_end_of_input), daemon=True
            ).start()
        pins = pins_label(factory, simulated=plant is not None)
        notify.ready(f"{daemon.state}; {cfg.ejector.kind} ejector; {pins} pins")
        log.info("ready: state %s, hopper %s", daemon.state, daemon.hopper.count)
        while not stop_requested:
            if select.select([wake_r], [], [], 0.5)[0]:
                with contextlib.suppress(OSError):
                    wake_r.recv(512)
            if daemon.failure is not None:
                code = 1  # said in one line below, after the outputs are off
                break
            if daemon.loop.crashed is not None:
                log.critical("control loop died; shutting down")
                code = 1
                break
    finally:
        notify.stopping("turning outputs off")
        daemon.stop()  # outputs off first; the link may still flush the last events
        if link is not None:
            link.stop()
        states = daemon.pin_states()
        if daemon.devices is not None:  # (a box that could not build its parts drove nothing)
            log.info(
                "outputs at exit: %s",
                " ".join(f"{name}={value:g}" for name, value in sorted(states.items())) or "none",
            )
        if printer is not None:
            printer.put({"type": "exit", "outputs": states})
            printer.stop()
        with contextlib.suppress(Exception):
            journal.close()
        if sound_log is not None:
            sound_log.close()
        if pins_lock is not None:
            pins_lock.release()
        signal.set_wakeup_fd(-1)
        wake_r.close()
        wake_w.close()
    if daemon.failure is not None:
        raise daemon.failure
    return code


class _Printer:
    """Writes JSON lines to stdout from its own thread, so the loop never blocks on a pipe."""

    def __init__(self) -> None:
        self._queue: deque[dict | None] = deque()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="console-out", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, item: dict | None) -> None:
        with self._cond:
            self._queue.append(item)
            self._cond.notify()

    def stop(self) -> None:
        self.put(None)
        if self._thread.is_alive():
            self._thread.join(5)
        else:
            self._run()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                item = self._queue.popleft()
            if item is None:
                return
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.write(json.dumps(item, separators=(",", ":")) + "\n")
                sys.stdout.flush()


def register(subparsers: Any) -> None:
    """Add ``launcher run``."""
    parser = subparsers.add_parser(
        "run",
        help=i18n._("run the launcher daemon"),
        description=i18n._(
            "Run the launcher daemon: button, ejector, jam model and safety on real or "
            "mock pins. SIGTERM/SIGINT/SIGHUP turn every output off and exit 0."
        ),
    )
    parser.add_argument(
        "--config", metavar="FILE", help=i18n._("config file (default: the packaged one)")
    )
    parser.add_argument(
        "--mock",
        action="store_true",
        help=i18n._("mock pins with the simulated mechanism (also GPIOZERO_PIN_FACTORY=mock)"),
    )
    parser.add_argument(
        "--port",
        default="none",
        metavar="PORT|pty|none",
        help=i18n._(
            "serial port or pyserial URL for the host link; 'pty' creates one and prints "
            "'PORT <path>' first on stdout; 'none' (default) runs without a link"
        ),
    )
    parser.add_argument(
        "--pty-link",
        metavar="PATH",
        help=i18n._(
            "with --port pty: keep a symlink to the pty at PATH, open to the daemon's group "
            "(the all-in-one box: the web referee on the same Pi)"
        ),
    )
    parser.add_argument(
        "--journal", metavar="PATH", help=i18n._("SQLite event journal (default: memory)")
    )
    parser.add_argument(
        "--plant-state",
        metavar="PATH",
        help=i18n._("with --mock: keep the simulated hopper in this JSON file across restarts"),
    )
    parser.add_argument(
        "--sound-log",
        metavar="PATH",
        help=i18n._("with --mock: write each sound cue the box would play as a JSON line to PATH"),
    )
    parser.add_argument(
        "--console",
        action="store_true",
        help=i18n._(
            "read ops from stdin ('press', 'dispense 3', 'load total=20') and write replies "
            "and events as JSON lines on stdout (tests, bench); the end of the input stops it"
        ),
    )
    parser.add_argument("-v", "--verbose", action="store_true", help=i18n._("debug logging"))
    parser.set_defaults(func=_run)
