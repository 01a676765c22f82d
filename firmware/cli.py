"""`launcher`: the command line of the box.

Each subcommand lives in the module that owns its concept and registers itself through a
`register(subparsers)` function; this file only wires them up and turns errors into exit codes.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from firmware.errors import EXIT_USAGE, LauncherError

# subcommand -> module exposing register(subparsers); imported lazily so `launcher --help`
# stays fast and a missing optional dependency only affects its own command.
COMMANDS: dict[str, str] = {
    "run": "firmware.daemon",
    "config": "firmware.config",
    "model": "firmware.jam_cli",
    "diagram": "firmware.machine",
    "send": "firmware.send",
    "bench": "firmware.bench",
}


def whole_number(text: str) -> int:
    """argparse type for counts: a one-line "expected a whole number" instead of a traceback."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2 (no usage dump on stderr)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.endswith("required: COMMAND"):
            # argparse names the missing slot but not what may fill it.
            message = f"give a command: {', '.join(COMMANDS)} (or --help)"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `command`, only that subcommand's module is imported.

    `launcher run` on a Pi should not pay for importing the bench, the plotter and the
    client: the time to READY is mostly imports.
    """
    parser = _Parser(prog="launcher", description="UNO Attack launcher box daemon and tools.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    names = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for module_name in names:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # command not built yet in this checkout
                continue
            raise
        module.register(sub)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line, if it comes first (`launcher run ...`)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `launcher` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LauncherError as exc:
        print(f"launcher: {exc}", file=sys.stderr)
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
        print(f"launcher: {_describe_os_error(exc)}", file=sys.stderr)
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
