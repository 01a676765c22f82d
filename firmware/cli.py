"""`launcher`: the command line of the box.

Each subcommand lives in the module that owns its concept and registers itself through a
`register(subparsers)` function; this file only names them (common/commandline.py does the
rest, shared with `unoattack`). Nothing is imported before `main` runs (common/entry.py).
"""

from __future__ import annotations

import sys

from common.entry import N_, start

TYPE_CHECKING = False  # (not `typing`'s: nothing more is imported before `main` runs)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["COMMANDS", "build_parser", "main"]


PROG = "launcher"
DESCRIPTION = N_("UNO Attack launcher box daemon and tools.")

# subcommand -> module exposing register(subparsers); imported lazily so `launcher --help`
# stays fast and a missing optional dependency only affects its own command.
COMMANDS: dict[str, str] = {
    "run": "firmware.run",
    "config": "firmware.config",
    "model": "firmware.jam_cli",
    "diagram": "firmware.machine",
    "send": "firmware.send",
    "bench": "firmware.bench",
    "sound": "firmware.sound_cli",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `command`, only that subcommand's module is imported."""
    from common.commandline import build_parser as build

    return build(PROG, DESCRIPTION, COMMANDS, command)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `launcher` console script; returns the exit code."""

    def run() -> int:
        from common.commandline import run
        from common.errors import LauncherError

        return run(PROG, DESCRIPTION, COMMANDS, LauncherError, argv)

    return start(run)


if __name__ == "__main__":
    sys.exit(main())
