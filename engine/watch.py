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
from typing import Any, TextIO

from engine.errors import InputError

__all__ = ["describe", "register", "run_watch"]


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
    p.add_argument("--count", type=int, default=0, help="stop after this many events (0: never)")
    p.add_argument(
        "--replay",
        action="store_true",
        help="first print every event the box still keeps in its journal, then live ones",
    )
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the box (5)")
    p.set_defaults(func=run_watch)


def run_watch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`unoattack watch`: connect, then print events until Ctrl-C or `--count` events."""
    from engine.client import BoxClient

    if args.count < 0:
        raise InputError(f"--count {args.count}: 0 (for ever) or more")
    if args.timeout <= 0:
        raise InputError(f"--timeout {args.timeout:g}: above 0 seconds")
    out = out or sys.stdout
    seen = 0
    try:
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
    except KeyboardInterrupt:
        pass  # Ctrl-C is how watching ends
    return 0
