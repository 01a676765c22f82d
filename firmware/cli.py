"""`launcher`: the command line of the box.

Each subcommand lives in the module that owns its concept and registers itself through a
`register(subparsers)` function; this file only names them (firmware/commandline.py does the
rest, shared with `unoattack`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from firmware.commandline import build_parser as _build
from firmware.commandline import run, whole_number
from firmware.errors import LauncherError
from i18n import N_

__all__ = ["COMMANDS", "build_parser", "main", "whole_number"]

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
    return _build(PROG, DESCRIPTION, COMMANDS, command)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `launcher` console script; returns the exit code."""
    return run(PROG, DESCRIPTION, COMMANDS, LauncherError, argv)


if __name__ == "__main__":
    sys.exit(main())
