"""`unoattack watch --port PORT`: the box's events, live, one readable line each.

Every event the box journals reaches the host exactly once and in order (`BoxClient.events()`),
so this is also a faithful log of a session: presses, what each fired and its dry streak, state
changes, jams, refills and faults. The port is opened exclusively: watch a box that no referee is
using, or stop the referee first (it resumes where it stopped).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import stat
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from engine.errors import InputError
from firmware.commandline import seconds, whole_number

__all__ = ["describe", "register", "run_watch", "stop_when_reader_goes"]


# What the pipe's watcher thread sends the main thread when the reader left.
_READER_GONE = signal.SIGUSR2


@contextlib.contextmanager
def stop_when_reader_goes(stream: TextIO | None = None) -> Iterator[threading.Event]:
    """While inside, a closed pipe on `stream` (stdout: `watch | head -1`) interrupts the main
    thread like Ctrl-C (KeyboardInterrupt), and the yielded event is set. A quiet box gives
    watch nothing to write, so without this it would wait for ever for the write that finds the
    reader gone.
    Does nothing unless `stream` is a pipe."""
    gone = threading.Event()
    stream = stream if stream is not None else sys.stdout
    try:
        fd = stream.fileno()
        is_pipe = stat.S_ISFIFO(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError):
        is_pipe = False
    if not is_pipe or threading.current_thread() is not threading.main_thread():
        yield gone
        return
    done = threading.Event()
    armed = threading.Event()  # interrupt only once the caller's block runs, never mid-setup
    main = threading.main_thread().ident

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # A signal of our own, not SIGINT: a job started in the background of a script has SIGINT
    # ignored (and Python leaves it so), and the reader leaving must still end the watch.
    previous = signal.signal(_READER_GONE, interrupted)

    def wait_for_reader_to_go() -> None:
        poller = select.poll()
        poller.register(fd, 0)  # no events asked: only POLLERR (reader gone) can be reported
        while not done.is_set():
            if poller.poll(200) and armed.wait():
                gone.set()
                if not done.is_set() and main is not None:
                    signal.pthread_kill(main, _READER_GONE)
                return

    thread = threading.Thread(target=wait_for_reader_to_go, name="watch-pipe", daemon=True)
    try:
        thread.start()
        armed.set()
        yield gone
    finally:
        armed.set()
        done.set()
        thread.join(timeout=1.0)
        if not thread.is_alive():  # else a late signal must still find our handler
            signal.signal(_READER_GONE, previous)
        if gone.is_set():
            silence(stream)


def silence(stream: TextIO) -> None:
    """Point `stream`'s file descriptor at /dev/null: its reader left, and flushing it at exit
    would only print an error."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value} ms"


def describe(event: dict[str, Any]) -> str:
    """One line for a person: `#seq  t=…  kind  details`."""
    kind = event.get("kind", "?")
    head = f"#{event.get('seq', '?'):<5} {event.get('t_ms', 0) / 1000:>9.3f}s  {kind:<6} "
    if kind == "hello":
        return head + (
            f"box {event.get('name')} up: {event.get('ejector')} ejector, "
            f"hopper {event.get('hopper')}, config {event.get('config')}"
        )
    if kind == "state":
        why = f" ({event['why']})" if event.get("why") else ""
        return head + f"{event.get('from')} -> {event.get('to')}{why}"
    if kind == "press":
        return head + f"press {event.get('press_id')} from the {event.get('source')}"
    if kind == "fire":
        ejected = int(event.get("ejected") or 0)
        planned = event.get("planned")
        reason = event.get("reason")
        if reason == "dry":
            what = "dry (nothing fired)"
        elif reason == "fired":
            what = f"fired {ejected} card{'s' if ejected != 1 else ''}"
        else:
            what = f"{reason}: {ejected} of {planned} fired"
        timing = ""
        if ejected:
            timing = (
                f"; spin-up {_ms(event.get('spinup_ms'))}, first card "
                f"{_ms(event.get('first_card_ms'))}, total {_ms(event.get('total_ms'))}"
            )
        return head + (
            f"press {event.get('press_id')} ({event.get('source')}): {what}, "
            f"dry streak {event.get('dry_streak')}, hopper {event.get('hopper')}{timing}"
        )
    if kind == "jam":
        return head + (
            f"JAM on press {event.get('press_id')} after {event.get('retries')} unjam retries: "
            "clear the cards, then `clear`"
        )
    if kind == "empty":
        return head + f"hopper empty (press {event.get('press_id')}, hopper {event.get('hopper')})"
    if kind == "fault":
        return head + f"FAULT on {event.get('output')}: {event.get('why')}"
    if kind == "refill":
        return head + f"hopper now {event.get('hopper')} (added {event.get('added')})"
    extra = {k: v for k, v in event.items() if k not in ("v", "type", "seq", "boot", "stream")}
    return head + json.dumps(extra, separators=(",", ":"))


def register(subparsers: Any) -> None:
    """Add the `watch` subcommand."""
    p = subparsers.add_parser(
        "watch",
        help="print the box's events live",
        description="Print every event of the box as it arrives, one line each, until Ctrl-C.",
    )
    p.add_argument("--port", required=True, help="the box's serial port (or a pyserial URL)")
    p.add_argument("--json", action="store_true", help="print each event as a JSON line")
    p.add_argument(
        "--count", type=whole_number, default=0, help="stop after this many events (0: never)"
    )
    p.add_argument(
        "--replay",
        action="store_true",
        help="first print every event the box still keeps in its journal, then live ones",
    )
    p.add_argument("--timeout", type=seconds, default=5.0, help="seconds to wait for the box (5)")
    p.set_defaults(func=run_watch)


def run_watch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`unoattack watch`: connect, then print events until Ctrl-C or `--count` events."""
    if args.count < 0:
        raise InputError(f"--count {args.count}: 0 (for ever) or more")
    out = out or sys.stdout
    try:
        with stop_when_reader_goes(out) as reader_gone:
            _watch(args, out)
    except KeyboardInterrupt:
        if not reader_gone.is_set():
            raise  # Ctrl-C: exit 130, as every command
        # the reader of our pipe left (`watch | head -1`): as quiet as a finished watch
    except BrokenPipeError:
        # The reader left while we were writing.
        silence(out)
    return 0


def _watch(args: argparse.Namespace, out: TextIO) -> int:
    """Connect and print events until `--count` (or an interruption); returns how many."""
    from engine.client import BoxClient

    seen = 0
    client = BoxClient(args.port, timeout=args.timeout)
    if args.replay:
        # Learn the box's stream, then come back claiming to have seen nothing of it: the
        # box replays its journal from the start.
        with BoxClient(args.port, timeout=args.timeout) as probe:
            stream = probe.box.get("stream")
        client.position.stream, client.position.seq = stream, 0
    with client:
        if not args.json:
            box = client.box
            print(
                f"watching {box.get('name', 'the box')} on {args.port} "
                f"(state {box.get('state')}, stream {box.get('stream')}); Ctrl-C stops",
                file=out,
                flush=True,
            )
        for event in client.events():
            line = json.dumps(event, separators=(",", ":")) if args.json else describe(event)
            print(line, file=out, flush=True)
            seen += 1
            if args.count and seen >= args.count:
                break
        else:
            client.raise_if_gone()
    return seen
