"""`unoattack`: the host command line. Subcommands register themselves from their own modules."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from engine.errors import UnoError

EXIT_USAGE = 2

COMMANDS: dict[str, str] = {
    "deck": "engine.cards_cli",
    "score": "engine.cards_cli",
    "sim": "engine.sim",
    "scenario": "engine.scenario",
    "demo": "engine.demo",
    "table": "engine.table",
    "watch": "engine.watch",
}


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `command`, only that subcommand's module is imported."""
    parser = _Parser(
        prog="unoattack", description="UNO Attack rules engine, referee and box client."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    seen: set[str] = set()
    names = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for module_name in names:
        if module_name in seen:
            continue
        seen.add(module_name)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # command not built yet in this checkout
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `unoattack` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UnoError as exc:
        print(f"unoattack: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `... | head` closed our stdout: not an error worth a traceback.
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
