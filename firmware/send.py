"""`launcher send PORT OP [ARGS]`: talk to a box from a terminal.

A thin command line over the host client (`wire.client.BoxClient`), for a person at the bench:

    launcher send /dev/ttyACM0 status
    launcher send /dev/ttyACM0 press          # waits for the fire result and prints it
    launcher send /dev/ttyACM0 dispense 3
    launcher send /dev/ttyACM0 watch          # one line per event until Ctrl-C

Exit codes: 0 done, 1 the box is unreachable or refused, 2 bad op, arguments or port, 130 Ctrl-C
(also for `watch`; a closed pipe, `watch | head -1`, ends it with 0).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import i18n
from common.commandline import (
    EXIT_INTERRUPTED,
    CtrlC,
    integer,
    say_error,
    seconds,
    stop_when_reader_goes,
)
from common.errors import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE
from wire.ops import OPS as OP_TABLE
from wire.ops import TABLE
from wire.text import describe, fire_result

# op -> (argument names, help), from the op table: every op whose required arguments a
# command line can give (each a whole number), and `watch`, which is this command's own.
OPS: dict[str, tuple[tuple[str, ...], str]] = {
    op.name: (op.send_args, op.help)
    for op in TABLE
    if not op.by_link and {a.name for a in op.args if a.required} <= set(op.send_args)
}
OPS["watch"] = ((), i18n.N_("print events as they arrive until Ctrl-C"))
# Box error codes that mean the person asked for something wrong (exit 2, not 1).
USAGE_CODES = frozenset({"BAD_ARG", "UNKNOWN_OP", "BAD_PORT"})
# The first bytes of every SQLite database file (the host state file is one).
SQLITE_MAGIC = b"SQLite format 3\x00"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `launcher send` to the `launcher` command line."""
    listing = "\n".join(
        f"  {' '.join([op, *(a.upper() for a in names)]):<16} {i18n._(text)}"
        for op, (names, text) in OPS.items()
    )
    parser = subparsers.add_parser(
        "send",
        help=i18n._("send one command to a box (or watch its events)"),
        description=i18n._("Send one command to a launcher box over its serial port."),
        epilog=i18n._("operations:") + "\n" + listing,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "port", metavar="PORT", help=i18n._("serial device, pty path or pyserial URL")
    )
    parser.add_argument("op", metavar="OP", help=i18n._("operation (listed below)"))
    parser.add_argument(
        "args", metavar="ARG", nargs="*", default=[], help=i18n._("arguments of the operation")
    )
    parser.add_argument(
        "--json", action="store_true", help=i18n._("print replies and events as JSON")
    )
    parser.add_argument(
        "--total", action="store_true", help=i18n._("load: COUNT is what the hopper now holds")
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=5.0,
        metavar="S",
        help=i18n._("seconds to wait for the box to answer (default 5)"),
    )
    parser.add_argument(
        "--wait",
        type=seconds,
        default=30.0,
        metavar="S",
        help=i18n._("press/dispense: seconds to wait for the fire result (default 30)"),
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        default=None,
        help=i18n._("host state file (last acked event) to resume from; default: none"),
    )
    parser.set_defaults(func=run)


# Digits of a count read, below the 4,300 `int` reads; past a frame's MAX_LINE bytes it is
# refused as too long for one.
LONGEST = 4000


def parse_op(op: str, values: list[str], *, total: bool = False) -> dict[str, int]:
    """Check `op` and its arguments before any port is opened; returns them by name, as the box
    takes them (`total`: load's COUNT is what the hopper now holds). Each goes through the op
    table's own check (`Arg.problem`, the box's too): a value no box takes is refused here; the
    rest of a range (up to [limits] max_burst, the seats) is the box's to name. Raises
    ValueError with one line."""
    if op not in OPS:
        raise ValueError(
            i18n._("unknown operation {op!r}; allowed: {allowed}").format(
                op=op, allowed=", ".join(OPS)
            )
        )
    names = OPS[op][0]
    if len(values) != len(names):
        wanted = " ".join(n.upper() for n in names) or i18n._("no arguments")
        raise ValueError(
            i18n.ngettext(
                "{op} takes {wanted}, got {n} argument",
                "{op} takes {wanted}, got {n} arguments",
                len(values),
            ).format(op=op, wanted=wanted, n=len(values))
        )
    given: dict[str, int] = {}
    for name, text in zip(names, values, strict=True):
        declared = OP_TABLE[op].arg("total" if total and op == "load" else name)
        # A count of any length is read (one too long for a frame is refused below, as such).
        number = integer(text, most=LONGEST)
        value: int | str = text if number is None else number
        problem = declared.problem(value, called=name.upper())
        if problem is not None:
            raise ValueError(f"{op}: {problem.render()}")
        given[declared.name] = int(value)
    return given


def _check_state_path(path: str) -> None:
    """ValueError unless `path` can be the host state file (an existing file or a new one in an
    existing folder): found here, the client's SQLite message would not say which is wrong."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(
            i18n._("--state {path}: is a directory; give a file name").format(path=path)
        )
    if not target.exists() and not target.parent.is_dir():
        raise ValueError(
            i18n._("--state {path}: folder {folder} does not exist").format(
                path=path, folder=target.parent
            )
        )
    if target.is_file() and target.stat().st_size:
        with target.open("rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
        if head != SQLITE_MAGIC:
            # Not ours: refuse rather than let SQLite fail (or a typo point at a precious file).
            raise ValueError(
                i18n._(
                    "--state {path}: not a host state file (SQLite); give a new file name or one "
                    "an earlier --state run wrote"
                ).format(path=path)
            )


def describe_reply(op: str, reply: dict[str, Any]) -> str:
    """A short human form of a command's reply."""
    if op == "model.get":
        params = reply.get("params", {})
        return " ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in params.items())
    if op == "selftest":
        checks = reply.get("checks") or []
        lines = [i18n._("selftest passed") if reply.get("passed") else i18n._("selftest FAILED")]
        lines += [
            "  "
            + (i18n._("ok  ") if c.get("ok") else i18n._("FAIL"))
            + f" {c.get('name')}: {c.get('detail', '')}"
            for c in checks
        ]
        return "\n".join(lines)
    return " ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in reply.items())


def _print(args: argparse.Namespace, data: dict[str, Any], human: Callable[[], str]) -> None:
    print(json.dumps(data, separators=(",", ":")) if args.json else human(), flush=True)


def run(args: argparse.Namespace) -> int:
    """Handler of `launcher send`."""
    try:
        if args.total and args.op != "load":
            raise ValueError(i18n._("--total only goes with load"))
        given = parse_op(args.op, args.args, total=args.total)
        if args.state is not None:
            _check_state_path(args.state)
    except ValueError as exc:
        say_error("launcher send", exc)
        return EXIT_USAGE
    from wire.client import BoxError, command_frame

    if args.op in OP_TABLE:  # (not `watch`)
        try:  # a count too long for a frame: said before the port is opened
            command_frame("send", args.op, given)
        except BoxError as exc:
            say_error("launcher send", exc)
            return EXIT_USAGE
    # However many Ctrl-C come: the first stops the command, none cuts the port's closing short.
    with CtrlC(until_exit=True) as ctrl_c:
        return _send(args, given, ctrl_c)


def _send(args: argparse.Namespace, given: dict[str, int], ctrl_c: CtrlC) -> int:
    """`launcher send` with its checked arguments: open the port, ask, print."""
    from wire.client import BoxClient, BoxError

    op = args.op
    reader_gone = threading.Event()
    # A stop signal (and, watching, the pipe's reader leaving) sets `halt`: the client's waits
    # stop at a safe point (wire/client.py), never a KeyboardInterrupt in the middle of a lock.
    halt = ctrl_c.stopped
    try:
        with BoxClient(args.port, state_path=args.state, timeout=args.timeout, halt=halt) as client:
            if op == "watch":
                # `watch | head -1` ends when head does, even while the box is quiet.
                with stop_when_reader_goes(sys.stdout, halt=halt) as reader_gone:
                    for event in client.events():
                        _print(args, event, functools.partial(describe, event))
                    client.raise_if_gone()
                return EXIT_OK
            if op in ("press", "dispense"):
                press_id = client.press() if op == "press" else client.dispense(given["count"])
                fire = client.wait_fire(press_id, timeout=args.wait)
                _print(args, fire, lambda: fire_result(fire))
                return EXIT_OK
            reply = client.command(op, **given)
            _print(args, reply, lambda: describe_reply(op, reply))
            return EXIT_OK
    except BoxError as exc:
        say_error("launcher send", exc)
        return EXIT_USAGE if exc.code in USAGE_CODES else EXIT_RUNTIME
    except KeyboardInterrupt:
        # The reader of our pipe leaving ends a watch quietly; Ctrl-C is 130, as everywhere.
        return EXIT_OK if reader_gone.is_set() else EXIT_INTERRUPTED
