"""`unoattack demo --web`: the demo's bot game, served live with the table referee following it.

The game is the terminal demo's (engine/demo.py `Demo`: the same bots on a `Round`, every hit a
press of the mock box through `BoxLauncher`, the cards conserved after every round) and its
terminal shows the same lines. Here a `Spectator` also tells the table referee every move, as a
table would (engine/follow.py, the code the differential test checks against the simulator),
each move one step of the web app's `TableService`; the box's events fill the page's box panel.
The page shows the referee's view, as for `unoattack serve`, but it is watch-only: the bots
play. The page stays up after the game until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from typing import TYPE_CHECKING, Any, TextIO

from common.commandline import CtrlC, decimal, goes_with, say_error, whole_number
from engine.boxport import mock_box
from engine.demo import NAMES, Demo, Screen, Spectator, show_summary
from engine.errors import InputError, UnoError
from engine.web.options import DEFAULT_HTTP, add_web_arguments, need_web_extra
from i18n import _, number

if TYPE_CHECKING:
    from engine.follow import Follower
    from engine.web.server import WebServer

__all__ = ["WATCH_ONLY", "TableSpectator", "add_arguments", "run"]

DEFAULT_PACE = 0.6
WATCH_ONLY = (
    "this is the bots' game (`unoattack demo --web`): watch it; `unoattack serve` referees "
    "a real table"
)


class Stopped(Exception):
    """The server is stopping: the game ends here."""


class TableSpectator(Spectator):
    """Tells the table referee (through `service`) every move of the demo's game, and the
    page's box panel every box event; waits `pace` seconds after each move so that a person
    can follow; ends the game (`Stopped`) once `stop` is set."""

    def __init__(
        self, service: Any, names: list[str], *, pace: float, stop: threading.Event
    ) -> None:
        self.service = service
        self.names = names
        self.pace = pace
        self.stop = stop
        self.follower: Follower | None = None
        self._facts: dict[str, Any] = {}
        self._seat: int | None = None  # who the move being made is by (a dispense's seat)
        self._cause: dict[str, Any] = {}

    def round_started(self, rnd: Any) -> None:
        from engine.follow import Follower  # the table referee, once a round is played

        self._cause = {"demo": "deal"}
        self.follower = Follower(rnd, self._step)

    def before(self, rnd: Any, act: Any) -> None:
        if self.stop.is_set():
            raise Stopped
        self._facts = self._following().facts()
        self._seat = act.seat

    def after(self, rnd: Any, act: Any) -> None:
        self._cause = {"demo": act.kind, "seat": act.seat}
        self._following().moved(act, self._facts)
        if self.stop.wait(self.pace):
            raise Stopped

    def round_over(self, rnd: Any) -> None:
        self._cause = {"demo": "round over"}
        self._following().finish()

    def _following(self) -> Follower:
        """The follower of the round being played (made when it starts)."""
        assert self.follower is not None, "a move told before its round started"
        return self.follower

    def box_event(self, event: dict[str, Any]) -> None:
        self.service.show_box_event(event)

    def fired(self, seat: int, event: dict[str, Any]) -> None:
        who = seat if seat >= 0 else self._seat  # a dispense is for the player drawing
        self.service.show_box_event(event, None if who is None else self.names[who])

    def _step(self, change: Any) -> list[str]:
        try:
            return self.service.apply(change, self._cause)
        except UnoError as exc:
            raise UnoError(
                f"the referee refused what the bots did ({exc}): the simulator and the "
                "referee disagree, a bug to report"
            ) from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`demo`'s web options: --web, --pace and where the page listens."""
    p.add_argument(
        "--web",
        action="store_true",
        help=_("serve the game live on a web page, refereed by the table referee"),
    )
    p.add_argument(
        "--pace",
        type=decimal,
        default=DEFAULT_PACE,
        metavar="SECONDS",
        help=_("--web: seconds between two moves, to follow on the page (default {pace})").format(
            pace=number(DEFAULT_PACE)
        ),
    )
    p.add_argument(
        "--wait-pages",
        type=whole_number,
        default=1,
        metavar="N",
        help=_("--web: the bots start when N pages are open, so the first game is seen whole (1)"),
    )
    add_web_arguments(p)


def check_without_web(args: argparse.Namespace) -> None:
    """`demo` without --web: an option only the web demo reads is refused (InputError), not
    ignored (`demo --http 0.0.0.0:8500` played in the terminal, and nobody could join)."""
    import os

    given = {
        "--pace": args.pace != DEFAULT_PACE,
        "--wait-pages": args.wait_pages != 1,
        "--http": args.http != DEFAULT_HTTP,
        "--code": args.code not in (None, os.environ.get("UNOATTACK_CODE") or None),
        "--allow-host": bool(args.allow_host),
    }
    problem = goes_with("--web", given)
    if problem:
        raise InputError(problem)


def run(
    args: argparse.Namespace,
    config_text: str,
    out: TextIO | None = None,
    *,
    server: WebServer | None = None,
) -> int:
    """Start the mock box, the referee and the server; the bots play once the pages are
    there; serve until Ctrl-C (or `server.shutdown()`: `server` is made from `args` unless
    given). Exit code 1 when the game failed (cards not conserved, the referee disagreeing)."""
    out = out or sys.stdout
    need_web_extra()
    if not 0 <= args.pace <= 60:
        raise InputError(f"--pace {args.pace:g}: 0 to 60 seconds")
    if not 0 <= args.wait_pages <= 1000:
        raise InputError(f"--wait-pages {args.wait_pages}: 0 to 1000 pages")
    # Imported here, as the server is: `unoattack --help` builds this parser too.
    from engine.web.table_service import TableService, demo_table

    names = list(NAMES[: args.players])
    if server is None:
        from engine.web.server import WebServer

        server = WebServer(http=args.http, code=args.code, allow_hosts=args.allow_host)
    web = server
    screen = Screen(out, names)
    summaries: list[dict[str, Any]] = []
    failed: list[str] = []
    # However many stop signals come (Ctrl-C, SIGTERM, SIGHUP): the first stops the start-up
    # or the server, a second the server at once, none cuts the mock box's stop short.
    # The mock box's start stops at a safe point once `halt` is set (wire/client.py): never a
    # KeyboardInterrupt in the middle of a lock.
    with CtrlC(until_exit=True) as ctrl_c, ctrl_c.listen(server.stop_signal):
        try:
            with contextlib.ExitStack() as stack:
                box, client = stack.enter_context(mock_box(config_text, halt=ctrl_c.stopped))
                if ctrl_c.count:
                    raise KeyboardInterrupt  # stopped while the box started
                # From here the bots' thread uses the box and the server's stop ends it.
                client.halt = None
                session = demo_table(players=names, deck=args.deck, target=args.target)
                service = TableService(session, box=client, watch_only=WATCH_ONLY)

                def play(stop: threading.Event) -> None:
                    while web.hub.pages < args.wait_pages and not stop.wait(0.05):
                        pass
                    if stop.is_set():
                        return
                    screen.line(f"{web.hub.pages} page(s) watching: the bots start")
                    spectator = TableSpectator(service, names, pace=args.pace, stop=stop)
                    try:
                        summary = Demo.for_args(args, box, client, screen, spectator).run()
                    except Stopped:
                        return
                    except UnoError as exc:
                        failed.append(str(exc))
                        raise  # the server says so on the page and on stderr
                    summaries.append(summary)
                    show_summary(screen, summary)
                    service.announce(
                        [f"game over: {summary['winner_name']} wins"], {"demo": "over"}
                    )

                server.attach(service, workers=[play])
                server.banner(out, "unoattack demo --web", saved=False, joinable=False)
                waiting = f" when {args.wait_pages} page(s) are open" if args.wait_pages else ""
                screen.line(
                    f"the bots {', '.join(names)} play to {args.target} through the mock "
                    f"box on {client.port}{waiting}; watch them at {server.url}"
                )
                if not ctrl_c.count:
                    server.run()
        except KeyboardInterrupt:
            pass
        except UnoError as exc:
            say_error("unoattack demo", exc)
            return 1
        finally:
            server.close()
    return 0 if not failed and all(s["conserved"] for s in summaries) else 1
