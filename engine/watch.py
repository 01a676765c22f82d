"""`unoattack watch --port PORT`: the box's events, live, one readable line each.

Every event the box journals reaches the host exactly once and in order (`BoxClient.events()`),
so this is also a faithful log of a session: presses, what each fired and its dry streak, state
changes, jams, refills and faults. The port is opened exclusively: watch a box that no referee is
using, or stop the referee first (it resumes where it stopped).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any, TextIO

from common.commandline import (
    EXIT_INTERRUPTED,
    CtrlC,
    seconds,
    silence,
    stop_when_reader_goes,
    whole_number,
)
from engine.errors import InputError
from i18n import _
from wire.text import describe

__all__ = ["describe", "register", "run_watch", "stop_when_reader_goes"]


def register(subparsers: Any) -> None:
    """Add the `watch` subcommand."""
    p = subparsers.add_parser(
        "watch",
        help=_("print the box's events live"),
        description=_("Print every event of the box as it arrives, one line each, until Ctrl-C."),
    )
    p.add_argument("--port", required=True, help=_("the box's serial port (or a pyserial URL)"))
    p.add_argument("--json", action="store_true", help=_("print each event as a JSON line"))
    p.add_argument(
        "--count", type=whole_number, default=0, help=_("stop after this many events (0: never)")
    )
    p.add_argument(
        "--replay",
        action="store_true",
        help=_("first print every event the box still keeps in its journal, then live ones"),
    )
    p.add_argument(
        "--timeout", type=seconds, default=5.0, help=_("seconds to wait for the box (5)")
    )
    p.set_defaults(func=run_watch)


def run_watch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`unoattack watch`: connect, then print events until Ctrl-C or `--count` events."""
    if args.count < 0:
        raise InputError(f"--count {args.count}: 0 (for ever) or more")
    out = out or sys.stdout
    # However many Ctrl-C come: the first stops the watch, none cuts the port's closing short.
    # The stop signal and the pipe's reader leaving set `halt`, and the client's waits stop at
    # a safe point (wire/client.py BoxClient's `halt`): never a KeyboardInterrupt raised in
    # the middle of a lock.
    with CtrlC(until_exit=True) as ctrl_c:
        halt = ctrl_c.stopped
        try:
            with stop_when_reader_goes(out, halt=halt) as reader_gone:
                _watch(args, out, halt)
        except KeyboardInterrupt:
            if not reader_gone.is_set():
                return EXIT_INTERRUPTED  # Ctrl-C: exit 130, as every command
            # the reader of our pipe left (`watch | head -1`): as quiet as a finished watch
        except BrokenPipeError:
            # The reader left while we were writing.
            silence(out)
    return 0


def _watch(args: argparse.Namespace, out: TextIO, halt: threading.Event) -> int:
    """Connect and print events until `--count` (or `halt`: KeyboardInterrupt); returns how
    many."""
    from wire.client import BoxClient

    seen = 0
    client = BoxClient(args.port, timeout=args.timeout, halt=halt)
    if args.replay:
        # Learn the box's stream, then come back claiming to have seen nothing of it: the
        # box replays its journal from the start.
        with BoxClient(args.port, timeout=args.timeout, halt=halt) as probe:
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
