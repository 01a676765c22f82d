"""`unoattack serve`: the table referee as a live web page for every phone at the table.

The same referee and state file as `unoattack table` (run either one to resume the other's
game); the page sends the same commands. `--port mock` starts `launcher run --mock
--port pty` as a child exactly as `unoattack demo` does, `none` referees without a box (the
page has `fired N` buttons). docs/web.md.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from common.commandline import CtrlC
from engine.boxport import add_box_arguments, check_box_arguments, open_box
from engine.table.cli import add_game_arguments, options_of
from engine.table.state_lock import holding
from engine.web.options import add_web_arguments, check_web_arguments, need_web_extra
from i18n import _

__all__ = ["register", "run_serve"]


def register(subparsers: Any) -> None:
    """Add the `serve` subcommand."""
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
    from engine.web.server import WebServer  # the web extra, imported once it is known there
    from engine.web.table_service import TableService, open_table

    check_box_arguments(args)  # usage errors before anything starts
    check_web_arguments(args)
    options = options_of(args)
    options.check()
    with holding(options.state):  # one referee per game (engine/table/state_lock.py)
        saved = options.check()  # read again: nobody else writes it now
        server = WebServer(http=args.http, code=args.code, allow_hosts=args.allow_host)
        # However many stop signals come (Ctrl-C, SIGTERM, SIGHUP): the first stops the
        # start-up or the server, a second the server at once, none cuts the game's save and
        # the button's lock short (`goodbye`).
        # The start-up's waits on the box stop at a safe point once `halt` is set
        # (wire/client.py): never a KeyboardInterrupt in the middle of a lock.
        with CtrlC(until_exit=True) as ctrl_c, ctrl_c.listen(server.stop_signal):
            try:
                with contextlib.ExitStack() as stack:
                    box = stack.enter_context(
                        open_box(args, saved.last_event if saved else None, halt=ctrl_c.stopped)
                    )
                    if ctrl_c.count:
                        raise KeyboardInterrupt  # stopped while the box was opened
                    if box.client is not None:
                        # From here the server's threads use the box, and the server's own stop
                        # ends them: none of their waits is to raise KeyboardInterrupt.
                        box.client.halt = None
                    session = open_table(options, box.client, saved)
                    # saved, and the button locked while no referee runs
                    stack.callback(session.goodbye)
                    server.attach(TableService(session))
                    server.banner(sys.stdout)
                    if not ctrl_c.count:
                        server.run()
            except KeyboardInterrupt:
                pass
            finally:
                server.close()
            if ctrl_c.count:
                print("unoattack serve: stopped; the game is saved", file=sys.stderr)
    return 0
