"""`unoattack demo --web`: bots play a whole game at a real-cards table through the mock box,
refereed by the table referee and served live on the web page.

The box is the demo's mock box (`launcher run --mock --port pty` as a child, same config and
timings as `unoattack demo`); the referee is `unoattack table`'s, behind the web app's
`TableService`; the players are `TableBots`, who move only by command lines, as a tap on the
page would. After every round the cards in the bots' launcher are checked against the mock
box's hopper (cards are conserved). The page stays up after the game until Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, TextIO

from engine.errors import UnoError

__all__ = ["add_arguments", "run"]

DEFAULT_PACE = 0.6


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`demo`'s web options: --web, --pace and where the page listens."""
    from engine.web.serve import add_web_arguments

    p.add_argument(
        "--web",
        action="store_true",
        help="referee the bots' game with the table referee and serve it live on a web page",
    )
    p.add_argument(
        "--pace",
        type=float,
        default=DEFAULT_PACE,
        metavar="SECONDS",
        help=f"--web: seconds between two moves, to follow on the page (default {DEFAULT_PACE:g})",
    )
    p.add_argument(
        "--wait-pages",
        type=int,
        default=1,
        metavar="N",
        help="--web: the bots start when N pages are open, so the first game is seen whole (1)",
    )
    add_web_arguments(p)


def run(args: argparse.Namespace, config_text: str, out: TextIO | None = None) -> int:
    """Start the mock box, the referee, the bots and the server; serve until Ctrl-C."""
    from engine.demo import NAMES, MockBox, signals_as_interrupt
    from engine.errors import InputError
    from engine.web.serve import connect_box, need_web_extra
    from engine.web.server import WebServer
    from engine.web.table_bots import TableBots
    from engine.web.table_service import TableService, open_table

    out = out or sys.stdout
    need_web_extra()
    if not 0 <= args.pace <= 60:
        raise InputError(f"--pace {args.pace:g}: 0 to 60 seconds")
    if not 0 <= args.wait_pages <= 1000:
        raise InputError(f"--wait-pages {args.wait_pages}: 0 to 1000 pages")
    names = ",".join(NAMES[: args.players])
    server = WebServer(http=args.http, code=args.code, allow_hosts=args.allow_host)
    box = MockBox(config_text)
    client: Any = None
    checks: list[dict[str, Any]] = []

    def say(line: str) -> None:
        print(f"  {line}", file=out, flush=True)

    def conserved(round_no: int, pile: int) -> None:
        hopper = _hopper(box)
        checks.append({"round": round_no, "pile": pile, "hopper": hopper})
        mark = "=" if hopper == pile else "!="
        say(f"round {round_no}: launcher {pile} {mark} box hopper {hopper}")

    try:
        with signals_as_interrupt(), tempfile.TemporaryDirectory(prefix="unoattack-web-") as tmp:
            port = box.start()
            client = connect_box(port, {})
            session = open_table(
                players=names,
                deck=args.deck,
                mode="target",
                target=args.target,
                state=Path(tmp) / "table.json",
                new=True,
                box=client,
            )
            service = TableService(session, port=port)
            bots = TableBots(
                service, seed=args.seed, pace=args.pace, say=say, on_round_end=conserved
            )

            def play(stop: threading.Event) -> None:
                while server.hub.pages < args.wait_pages and not stop.wait(0.05):
                    pass
                if not stop.is_set():
                    say(f"{server.hub.pages} page(s) watching: the bots start")
                    bots.run(stop)

            server.attach(service, workers=[play])
            server.banner(out, "unoattack demo --web")
            waiting = f" when {args.wait_pages} page(s) are open" if args.wait_pages else ""
            print(
                f"the bots {names.replace(',', ', ')} play to {args.target} through the mock box "
                f"on {port}{waiting}; watch them at {server.url}",
                file=out,
                flush=True,
            )
            server.run()
    except KeyboardInterrupt:
        pass
    except UnoError as exc:
        print(f"unoattack demo: {exc}", file=sys.stderr)
        return 1
    finally:
        server.close()
        if client is not None:
            client.close()
        box.cleanup()
    if any(c["hopper"] != c["pile"] for c in checks):
        print("unoattack demo: cards not conserved (see above)", file=sys.stderr)
        return 1
    return 0


def _hopper(box: Any) -> int | None:
    try:
        return int(box.plant()["hopper"])
    except (OSError, ValueError, KeyError):
        return None
