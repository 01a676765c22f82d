"""`unoattack serve`: the table referee as a live web page for every phone at the table.

The same referee and state file as `unoattack table` (run either one to resume the other's
game); the page composes the same command lines. `--port mock` starts `launcher run --mock
--port pty` as a child exactly as `unoattack demo` does, `none` referees without a box (the
page has `fired N` buttons). docs/web.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from engine.errors import UnoError
from firmware.commandline import CtrlC
from i18n import _

__all__ = ["DEFAULT_HTTP", "add_web_arguments", "need_web_extra", "register", "run_serve"]

# Here, not in server.py: `--help` builds these arguments without the web extra installed.
DEFAULT_HTTP = "127.0.0.1:8500"


def need_web_extra() -> None:
    """UnoError (exit 1) naming the extra to install when the web packages are missing."""
    missing = []
    for name in ("starlette", "uvicorn", "websockets", "segno"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise UnoError(
            f"the web app needs {', '.join(missing)}: pip install 'unoattack-launcher[web]' "
            "(make demo and make test install it)"
        )


def add_web_arguments(p: argparse.ArgumentParser) -> None:
    """Where the page is served, and who may join: shared by `serve` and `demo --web`."""
    p.add_argument(
        "--http",
        default=DEFAULT_HTTP,
        metavar="HOST:PORT",
        help=_(
            "where the page listens (default {address}: this machine only; 0.0.0.0:8500 for "
            "phones on the LAN; port 0 picks a free one)"
        ).format(address=DEFAULT_HTTP),
    )
    p.add_argument(
        "--code",
        default=os.environ.get("UNOATTACK_CODE") or None,
        metavar="CODE",
        help=_("the join code players enter (default: $UNOATTACK_CODE, else 6 random digits)"),
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help=_("another host name the page may be opened by (e.g. unoattack.home); repeatable"),
    )


def register(subparsers: Any) -> None:
    """Add the `serve` subcommand."""
    from engine.boxport import add_box_arguments
    from engine.table import add_game_arguments

    p = subparsers.add_parser(
        "serve",
        help=_("the table referee as a live web page for phones"),
        description=_(
            "Referee a real table from a web page: everyone with the URL watches live; players "
            "with the join code play by tapping. Same referee and state file as `unoattack "
            "table`."
        ),
    )
    add_box_arguments(p, mock=True)  # --port PORT|mock|none (--speed, --seed)
    add_game_arguments(p)  # the same game options as `unoattack table`
    add_web_arguments(p)
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """`unoattack serve`."""
    need_web_extra()
    from engine.boxport import check_box_arguments, open_box
    from engine.state_lock import holding
    from engine.table import check_game
    from engine.web.server import WebServer, check_web_arguments
    from engine.web.table_service import TableService, open_table

    check_box_arguments(args)  # usage errors before anything starts
    check_web_arguments(args)
    check_game(args)
    with holding(args.state):  # one referee per game (engine/state_lock.py)
        saved = check_game(args)  # read again: nobody else writes it now
        server = WebServer(http=args.http, code=args.code, allow_hosts=args.allow_host)
        # However many stop signals come (Ctrl-C, SIGTERM, SIGHUP): the first stops the
        # start-up or the server, a second the server at once, none cuts the game's save and
        # the button's lock short (`goodbye`).
        with CtrlC(until_exit=True) as ctrl_c, ctrl_c.listen(server.stop_signal):
            try:
                with contextlib.ExitStack() as stack:
                    with ctrl_c.stopping():
                        box = stack.enter_context(open_box(args, saved))
                        session = open_table(args, box.client, saved)
                        # saved, and the button locked while no referee runs
                        stack.callback(session.goodbye)
                        server.attach(TableService(session))
                        server.banner(sys.stdout)
                    server.run()
            except KeyboardInterrupt:
                pass
            finally:
                server.close()
            if ctrl_c.count:
                print("unoattack serve: stopped; the game is saved", file=sys.stderr)
    return 0
