"""`unoattack demo`: its command line. The game is engine/demo.py's; `--web` serves it live
(engine/web/demo_web.py, which needs the `web` extra only when asked for)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from common.commandline import CtrlC, decimal, say_error, whole_number
from engine.boxport import mock_box
from engine.cards import load_deck
from engine.demo import NAMES, Demo, Screen, show_summary
from engine.errors import InputError, UnoError
from engine.mockbox import DEFAULT_SPEED, check_speed, mock_config
from engine.web.demo_web import add_arguments, check_without_web
from engine.web.demo_web import run as run_web
from i18n import _

__all__ = ["play", "register", "run_demo"]


def register(subparsers: Any) -> None:
    """Add the `demo` subcommand."""
    p = subparsers.add_parser(
        "demo",
        help=_("a whole game with bots through a mock box"),
        description=_(
            "Start the launcher daemon on mock pins as a child process and play a whole game "
            "with bots, every hit a real press over the serial link."
        ),
    )
    p.add_argument("--players", type=whole_number, default=4, help=_("2 to 10 (default 4)"))
    p.add_argument(
        "--seed", type=whole_number, default=1, help=_("seed of the game and the box (default 1)")
    )
    p.add_argument(
        "--deck",
        default="attack",
        metavar="PRESET",
        help=_(
            "attack (default), attack-1998, classic (every draw a `dispense 1`), or a deck file"
        ),
    )
    p.add_argument(
        "--speed",
        type=decimal,
        default=DEFAULT_SPEED,
        help=_("divide the box's timings by this (default {speed}; 1 = real time)").format(
            speed=f"{DEFAULT_SPEED:g}"
        ),
    )
    p.add_argument(
        "--target", type=whole_number, default=500, help=_("points that win the game (500)")
    )
    p.add_argument("--json", action="store_true", help=_("end with a one-line JSON summary"))
    add_arguments(p)  # --web, --pace, --http, --code (docs/web.md)
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """`unoattack demo`."""
    if not 2 <= args.players <= 10:
        raise InputError(_("--players {count}: from 2 to 10").format(count=args.players))
    if args.target < 1:
        raise InputError(
            _("--target {target}: a number of points above 0").format(target=args.target)
        )
    check_speed(args.speed)
    load_deck(args.deck)  # a bad deck is a usage error before anything starts
    text = mock_config(speed=args.speed, players=args.players, seed=args.seed)
    if args.web:
        return run_web(args, text)
    check_without_web(args)
    return play(text, args, sys.stdout)


def play(config_text: str, args: argparse.Namespace, out: TextIO) -> int:
    """Start the mock box, play the game, stop the box whatever happens. A closed stdout
    (`unoattack demo | head -1`) raises BrokenPipeError after the box is stopped: the command
    line ends quietly with 0 on it, as every command does."""
    screen = Screen(out, list(NAMES[: args.players]))
    # However many Ctrl-C come: the first stops the game, none cuts the box's stop short. The
    # stop signal sets `halt` and the game stops at its next wait on the box, at a safe point
    # (wire/client.py BoxClient's `halt`): never a KeyboardInterrupt in the middle of a lock.
    with CtrlC(until_exit=True) as ctrl_c:
        try:
            with mock_box(config_text, halt=ctrl_c.stopped) as (box, client):
                if ctrl_c.count:
                    raise KeyboardInterrupt  # stopped while the box started (no wait since)
                summary = Demo.for_args(args, box, client, screen).run()
                summary["sounds"] = box.sounds()  # its folder goes with the box
        except KeyboardInterrupt:
            screen.line()
            screen.line(_("interrupted: stopping the box"))
            return 130
        except UnoError as exc:
            say_error("unoattack demo", exc)
            return 1
    summary["box_exit"] = box.proc.returncode if box.proc is not None else None
    show_summary(screen, summary)
    if args.json:
        screen.line(json.dumps(summary, separators=(",", ":")))
    return 0 if summary["conserved"] else 1
