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
        if message.endswith("required: COMMAND"):
            # argparse names the missing slot but not what may fill it.
            message = f"give a command: {', '.join(COMMANDS)} (or --help)"
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
    except (UnicodeDecodeError, OSError) as exc:
        # Last line of defence: a file or device the user named cannot be used. The command
        # should have said so itself; one line here still beats a traceback.
        print(f"unoattack: {_describe_os_error(exc)}", file=sys.stderr)
        return EXIT_USAGE if _is_user_path_error(exc) else 1


def _is_user_path_error(exc: BaseException) -> bool:
    """A path that does not exist, is a directory, or is not ours to use: the user's input."""
    return isinstance(
        exc,
        UnicodeDecodeError
        | FileNotFoundError
        | IsADirectoryError
        | NotADirectoryError
        | PermissionError,
    )


def _describe_os_error(exc: BaseException) -> str:
    """`cannot use PATH: reason` for an OSError, `not a UTF-8 text file` for a decode error."""
    if isinstance(exc, UnicodeDecodeError):
        return "a file given is not UTF-8 text (binary or another encoding)"
    assert isinstance(exc, OSError)
    reason = (exc.strerror or str(exc) or type(exc).__name__).rstrip(".")
    if exc.filename is not None:
        return f"cannot use {exc.filename}: {reason[0].lower()}{reason[1:]}"
    return reason


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
