"""`unoattack serve`: the table referee as a live web page for every phone at the table.

The same referee and state file as `unoattack table` (run either one to resume the other's
game); the page composes the same command lines. `--port mock` starts `launcher run --mock
--port pty` as a child exactly as `unoattack demo` does, `none` referees without a box (the
page has `fired N` buttons). docs/web.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from engine.errors import InputError, UnoError

__all__ = ["add_web_arguments", "connect_box", "need_web_extra", "register", "run_serve"]


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
    from engine.web.server import DEFAULT_HTTP

    p.add_argument(
        "--http",
        default=DEFAULT_HTTP,
        metavar="HOST:PORT",
        help=f"where the page listens (default {DEFAULT_HTTP}: this machine only; "
        "0.0.0.0:8500 for phones on the LAN; port 0 picks a free one)",
    )
    p.add_argument(
        "--code",
        default=os.environ.get("UNOATTACK_CODE") or None,
        metavar="CODE",
        help="the join code players enter (default: $UNOATTACK_CODE, else 6 random digits)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name the page may be opened by (e.g. unoattack.home); repeatable",
    )


def register(subparsers: Any) -> None:
    """Add the `serve` subcommand."""
    from engine.demo import DEFAULT_SPEED

    p = subparsers.add_parser(
        "serve",
        help="the table referee as a live web page for phones",
        description=(
            "Referee a real table from a web page: everyone with the URL watches live; players "
            "with the join code play by tapping. Same referee and state file as `unoattack "
            "table`."
        ),
    )
    p.add_argument(
        "--port",
        required=True,
        help="the box's serial port, `mock` (a box on mock pins, as in the demo) or `none`",
    )
    p.add_argument(
        "--players", required=True, metavar="NAMES", help="comma-separated names, clockwise"
    )
    p.add_argument(
        "--deck", default="attack", metavar="PRESET", help="attack (default), attack-1998, classic"
    )
    p.add_argument(
        "--mode", default="target", help="target (default), lowest, elimination or teams"
    )
    p.add_argument("--target", type=int, default=500, help="points that end the game (500)")
    p.add_argument(
        "--state",
        type=Path,
        default=Path("unoattack-table.json"),
        metavar="FILE",
        help="state file, saved after every action (default unoattack-table.json); "
        "the same format as `unoattack table`",
    )
    p.add_argument("--new", action="store_true", help="start a new game even if FILE exists")
    add_web_arguments(p)
    p.add_argument(
        "--speed",
        type=float,
        default=DEFAULT_SPEED,
        help=f"--port mock: divide the mock box's timings by this (default {DEFAULT_SPEED:g})",
    )
    p.add_argument("--seed", type=int, default=1, help="--port mock: the mock box's seed (1)")
    p.set_defaults(func=run_serve)


def connect_box(port: str, resume: dict[str, Any]) -> Any:
    """A connected `BoxClient` on `port`, asked to replay every event after the last one the
    saved game applied (as `unoattack table` does). A port that cannot be a serial port is a
    usage error."""
    from engine.client import BoxClient, BoxError

    client = BoxClient(port)
    if resume.get("stream"):
        client.position.stream = resume["stream"]
        client.position.seq = int(resume.get("seq") or 0)
    try:
        client.connect()
    except BoxError as exc:
        client.close()
        if exc.code == "BAD_PORT":
            raise InputError(str(exc)) from None
        raise
    return client


def run_serve(args: argparse.Namespace) -> int:
    """`unoattack serve`."""
    need_web_extra()
    from engine.demo import MockBox, default_config_path, demo_config, signals_as_interrupt
    from engine.web.server import WebServer
    from engine.web.table_service import TableService, check_table_options, open_table

    if not 0 < args.speed <= 1000:
        raise InputError(f"--speed {args.speed:g}: above 0 and at most 1000")
    options = dict(
        players=args.players,
        deck=args.deck,
        mode=args.mode,
        target=args.target,
        state=args.state,
        new=args.new,
    )
    resume = check_table_options(**options)  # usage errors before anything starts
    server = WebServer(http=args.http, code=args.code, allow_hosts=args.allow_host)
    mock: MockBox | None = None
    client: Any = None
    port = args.port
    try:
        with signals_as_interrupt():
            if port.lower() == "mock":
                players = len(args.players.split(","))
                mock = MockBox(
                    demo_config(
                        default_config_path().read_text(encoding="utf-8"),
                        speed=args.speed,
                        players=players,
                        seed=args.seed,
                    )
                )
                port = mock.start()
                client = connect_box(port, {})  # a new mock box: nothing to replay
            elif port.lower() != "none":
                client = connect_box(port, resume)
            session = open_table(**options, box=client)
            service = TableService(session, port=None if client is None else port)
            server.attach(service)
            server.banner(sys.stdout)
            server.run()
    except KeyboardInterrupt:
        print("unoattack serve: stopped; the game is saved", file=sys.stderr)
    finally:
        server.close()
        if client is not None:
            client.close()
        if mock is not None:
            mock.cleanup()
    return 0
