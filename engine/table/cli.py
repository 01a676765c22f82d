"""`unoattack table`: its command line (the only module of the table that reads one), and the
loop that feeds typed lines and box events to the session.

`add_game_arguments` and `options_of` are the game options `unoattack table` and `unoattack
serve` share (`GameOptions`); `run` reads lines (a terminal through `Console`, or a pipe) and
the box's events until `quit` or the end of input.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, TextIO

from common.commandline import CtrlC, whole_number
from engine.boxport import add_box_arguments, check_box_arguments, open_box
from engine.errors import InputError
from engine.night_book import NightBook
from engine.outcomes import ConnectionLost, PressUnreported
from engine.rules import parse_option
from engine.scoring import modes_help, target_help, teams_help
from engine.table import view
from engine.table.console import Console
from engine.table.night_table import NightTable, night_state_path
from engine.table.options import DEFAULT_STATE, GameOptions
from engine.table.referee import MODES
from engine.table.session import TableSession, build_session
from engine.table.state_lock import holding
from i18n import _

__all__ = ["FIRE_WAIT_S", "add_game_arguments", "options_of", "register", "run", "run_table"]

# A press sent from the keyboard waits this long for the box's fire event before the next line.
FIRE_WAIT_S = 30.0
# The longest the run loop waits for a line or an event in one go. Never an endless wait: a
# SIGINT another thread took (a reader's), or one that came just before the wait began, only
# flags Python's handler, and the main thread runs it when its wait ends.
SIGNAL_CHECK_S = 0.25


def register(subparsers: Any) -> None:
    """Add the `table` subcommand."""
    p = subparsers.add_parser(
        "table",
        help=_("referee a real table with a real box"),
        description=_(
            "Referee a game at a real table: type what each player plays (card notation, hit, "
            "uno, catch NAME); the box's button is unlocked and aimed only for the seat that must "
            "hit. The state is saved after every action: run the same command again to resume. "
            "Lines may also come from a pipe or a file (the same typed lines)."
        ),
    )
    add_box_arguments(p, mock=False)  # --port PORT|none, checked as `serve` checks it
    add_game_arguments(p)
    p.add_argument(
        "--json",
        action="store_true",
        help=_(
            "print the referee's state as one JSON object on stdout when the input ends "
            "(the table's messages go to stderr)"
        ),
    )
    p.set_defaults(func=run_table)


def add_game_arguments(p: argparse.ArgumentParser) -> None:
    """Which game is refereed: `--players`, `--deck`, `--mode`, `--target`, `--teams`,
    `--option` for a new one, `--state` and `--new`. `unoattack table` and `unoattack serve`
    take the same (`options_of` makes the `GameOptions` of them)."""
    p.add_argument(
        "--players",
        metavar="NAMES",
        help=_("comma-separated names, clockwise (a table of a night: the night seats them)"),
    )
    # No argparse defaults for what shapes the game: None is "not given" (a resumed game keeps
    # its own, `GameOptions.check`), and a new game takes the Referee's defaults.
    p.add_argument(
        "--deck",
        metavar="PRESET",
        help=_("attack (default), attack-1998 or classic (the referee dispenses every draw)"),
    )
    p.add_argument("--mode", choices=MODES, help=modes_help())
    p.add_argument(
        "--target",
        type=whole_number,
        help=target_help(),
    )
    p.add_argument(
        "--teams",
        type=whole_number,
        metavar="N",
        help=teams_help(),
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=_("rule option for a new game, e.g. stacking=true (repeatable; docs/rules.md)"),
    )
    p.add_argument(
        "--state",
        type=Path,
        default=DEFAULT_STATE,
        metavar="FILE",
        help=_(
            "state file, saved after every action (default unoattack-table.json); "
            "`unoattack table` and `unoattack serve` resume each other's games"
        ),
    )
    p.add_argument("--new", action="store_true", help=_("start a new game even if FILE exists"))
    night = p.add_argument_group(_("a table of a game night (unoattack schedule --night FILE)"))
    night.add_argument(
        "--night",
        type=Path,
        metavar="FILE",
        help=_(
            "follow the night in FILE: the rotation seats the players round by round, the night "
            "sets the mode, deck and rules, and every round scored is recorded in FILE for the "
            "standings over all tables (the state file defaults to FILE's name with .tableT)"
        ),
    )
    night.add_argument(
        "--table",
        type=whole_number,
        metavar="T",
        help=_("which table of the night this is (1, 2, ...)"),
    )


def options_of(args: argparse.Namespace) -> GameOptions:
    """The `GameOptions` the arguments of `add_game_arguments` name (InputError for a bad
    `--option`, a night that cannot be read, or what a night's table does not take)."""
    if args.night is not None or args.table is not None:
        return _night_options(args)
    if args.players is None:
        raise InputError(
            _("--players NAMES is needed (or --night FILE --table T at a game night's table)")
        )
    return GameOptions(
        players=[p.strip() for p in args.players.split(",")],
        deck=args.deck,
        mode=args.mode,
        target=args.target,
        teams=args.teams,
        rules=dict(parse_option(text) for text in args.option),
        state=args.state,
        new=args.new,
    )


def _night_options(args: argparse.Namespace) -> GameOptions:
    if args.night is None or args.table is None:
        raise InputError(_("--night FILE and --table T go together: a table of a game night"))
    shaped = {
        "--players": args.players is not None,
        "--deck": args.deck is not None,
        "--mode": args.mode is not None,
        "--target": args.target is not None,
        "--teams": args.teams is not None,
        "--option": bool(args.option),
    }
    given = next((flag for flag, is_given in shaped.items() if is_given), None)
    if given is not None:
        raise InputError(
            _("{flag}: a table of a night plays the night's players, mode, deck and rules").format(
                flag=given
            )
        )
    book = NightBook.load(args.night)
    table = args.table - 1
    book.check_table(table)
    state = args.state if args.state != DEFAULT_STATE else night_state_path(args.night, table)
    night = NightTable(book, table)
    return GameOptions(players=night.referee().players, state=state, new=args.new, night=night)


def run_table(args: argparse.Namespace) -> int:
    """`unoattack table`: the interactive referee loop."""
    check_box_arguments(args)
    options = options_of(args)
    options.check()  # usage errors (names, deck, mode, options) before anything starts
    with holding(options.state):  # one referee per game (engine/table/state_lock.py)
        saved = options.check()  # read again: nobody else writes it now
        # With --json, stdout is for the one JSON object: the table's words go to stderr.
        out = sys.stderr if args.json else sys.stdout
        with open_box(args, saved.last_event if saved is not None else None) as opened:
            session = build_session(options, opened.client, out, saved=saved)
            history = args.state.with_name(args.state.name + ".history")
            tty = None if not args.json else False
            console = Console(sys.stdin, out, history=history, tty=tty)
            code = run(session, console)
            if args.json:
                state = session.view()
                state["refused_lines"] = session.refused_lines
                print(json.dumps(state), flush=True)
            return code


def run(session: TableSession, lines: TextIO | Console) -> int:
    """Read lines (a `Console`, or any text stream read as a pipe) and box events until `quit`
    or the end of input, and feed them to `session`. Exit code: 0, 130 for Ctrl-C, 1 when the
    box connection was lost, or when input that is not a terminal had a line refused."""
    console = lines if isinstance(lines, Console) else Console(lines, session.out, tty=False)
    session.console = console
    items: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()
    ready = threading.Event()  # a terminal's reader may show the next prompt

    def read_lines() -> None:
        while not stop.is_set():
            if console.tty:
                ready.wait()
                ready.clear()
                if stop.is_set():
                    return
            line = console.read(session.prompt())
            if line is None:
                items.put(("eof", None))
                return
            items.put(("line", line))

    def read_events() -> None:
        box = session.box
        assert box is not None
        while not stop.is_set():
            try:
                for event in box.events(timeout=0.2):
                    items.put(("event", event))
                    if stop.is_set():
                        break
            except Exception as exc:  # the reader must never die silently
                items.put(("box-error", exc))
                return

    def next_prompt() -> None:
        if console.tty:
            ready.set()
        else:
            console.prompt(session.prompt())

    threading.Thread(target=read_lines, daemon=True, name="table-stdin").start()
    if session.box is not None:
        threading.Thread(target=read_events, daemon=True, name="table-box").start()
    session.start()
    session.say(*view.status(session.ref))
    code = 0
    deferred: deque[tuple[str, Any]] = deque()
    waiting: float | None = None  # since when a keyboard press waits for its fire event
    # However many Ctrl-C come: the first stops the loop, none cuts the save and the button's
    # lock short (`goodbye`), and the exit is 130. Taken from the first prompt on, between two
    # steps: the loop looks at the count at least every SIGNAL_CHECK_S, and a move is never cut
    # in half (nor a wait of `threading`'s, which a KeyboardInterrupt can leave with its lock
    # released: "cannot release un-acquired lock").
    with CtrlC(until_exit=True) as ctrl_c:
        next_prompt()
        try:
            while session.running and not ctrl_c.count:
                if deferred and waiting is None:
                    kind, item = deferred.popleft()
                else:
                    try:
                        kind, item = items.get(
                            timeout=0.5 if waiting is not None else SIGNAL_CHECK_S
                        )
                    except queue.Empty:
                        if waiting is not None and time.monotonic() - waiting > FIRE_WAIT_S:
                            session.tell(PressUnreported())
                            waiting = None
                            next_prompt()
                        continue
                if waiting is not None and kind in ("line", "eof"):
                    deferred.append((kind, item))  # piped lines wait for the press's result
                    continue
                if kind == "eof":
                    break
                if kind == "line":
                    if session.handle_line(item):
                        if session.running:
                            next_prompt()
                    else:
                        waiting = time.monotonic()
                elif kind == "event":
                    shown = session.handle_event(item)
                    if waiting is not None and item.get("kind") == "fire":
                        waiting = None
                        next_prompt()
                    elif shown and not console.tty:
                        next_prompt()
                else:
                    session.tell(ConnectionLost(str(item)))
                    code = 1
                    break
        finally:
            stop.set()
            ready.set()
            console.stop_reading()  # what is said from here on is printed at once
        if ctrl_c.count and code != 1:
            code = 130
        if code != 1:
            session.goodbye()
        console.close()
    if code == 0 and not console.tty and session.refused_lines:
        code = 1
    return code
