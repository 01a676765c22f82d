"""What `launcher` and `unoattack` share: a lazily built subcommand parser and the turning of
errors into one line and an exit code. Standard library only, so the host can use it too.

Each subcommand lives in the module that owns its concept and registers itself through a
`register(subparsers)` function that sets `func=handler(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Mapping, Sequence

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C


def whole_number(text: str) -> int:
    """argparse type for counts: a one-line "expected a whole number" instead of a traceback."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2 (no usage dump on stderr)."""

    commands: Sequence[str] = ()

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.endswith("required: COMMAND"):
            # argparse names the missing slot but not what may fill it.
            message = f"give a command: {', '.join(self.commands)} (or --help)"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser(
    prog: str, description: str, commands: Mapping[str, str], command: str | None = None
) -> argparse.ArgumentParser:
    """The parser for `prog`; `commands` maps a subcommand to the module that registers it.

    With `command`, only that subcommand's module is imported: `launcher run` on a Pi should
    not pay for importing the bench, the plotter and the client (time to READY is imports).
    """
    parser = _Parser(prog=prog, description=description)
    parser.commands = list(commands)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    names = [commands[command]] if command in commands else list(commands.values())
    for module_name in dict.fromkeys(names):  # one module may register several commands
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # command not built yet in this checkout
                continue
            raise
        module.register(sub)
    return parser


def run(
    prog: str,
    description: str,
    commands: Mapping[str, str],
    own_error: type[Exception],
    argv: Sequence[str] | None = None,
) -> int:
    """Parse `argv`, run the chosen handler and return its exit code. `own_error` (the
    program's error base, with an `exit_code`) and any unusable file become one stderr line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in commands else None
    args = build_parser(prog, description, commands, command).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except own_error as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 1))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `... | head` closed our stdout: not an error worth a traceback.
        _silence_stdout()
        return 0
    except (UnicodeDecodeError, OSError) as exc:
        # Last line of defence: a file or device the user named cannot be used. The command
        # should have said so itself; one line here still beats a traceback.
        print(f"{prog}: {_describe_os_error(exc)}", file=sys.stderr)
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
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
