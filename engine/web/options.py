"""The web page's command-line options, `--http`, `--code`, `--allow-host` (shared by `serve`
and `demo --web`), and their checks: here, apart from the server, because `unoattack --help`
builds them without the web extra installed (tests/engine/test_web_optional.py)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from common.commandline import digits
from engine.errors import InputError, UnoError
from i18n import _

__all__ = [
    "DEFAULT_HTTP",
    "add_web_arguments",
    "check_join_code",
    "check_web_arguments",
    "need_web_extra",
    "parse_http",
]

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


def parse_http(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `PORT` -> (host, port); InputError (exit 2) otherwise."""
    usage = "--http HOST:PORT, e.g. 127.0.0.1:8500, 0.0.0.0:8500 (every address) or :8500"
    raw = text.strip()
    if digits(raw) is not None:
        host, port_text = "127.0.0.1", raw
    elif raw.startswith("["):
        host, sep, port_text = raw[1:].partition("]:")
        if not sep:
            raise InputError(f"--http {text}: {usage}")
    else:
        host, sep, port_text = raw.rpartition(":")
        if not sep:
            raise InputError(f"--http {text}: {usage}")
    host = host or "127.0.0.1"
    port = digits(port_text)
    if port is None or not 0 <= port <= 65535:
        raise InputError(f"--http {text}: port `{port_text}` is not 0 to 65535; {usage}")
    if any(c.isspace() for c in host):
        raise InputError(f"--http {text}: {usage}")
    return host, port


def check_web_arguments(args: Any) -> None:
    """`--http` and `--code` (`add_web_arguments`), checked before anything starts:
    InputError (exit 2) naming the problem."""
    parse_http(args.http)
    check_join_code(args.code)


def check_join_code(code: str | None) -> None:
    """`--code`, checked as the server checks a join code (InputError naming the problem)."""
    from engine.web.auth import check_code  # hashing and secrets: not for --help

    if code is not None and (problem := check_code(code)) is not None:
        raise InputError("--code: " + problem)
