"""`unoattack`: the host command line. Subcommands register themselves from their own modules;
common/commandline.py (standard library only) does the rest, shared with `launcher`. Nothing
is imported before `main` runs (common/entry.py)."""

from __future__ import annotations

import sys

from common.entry import N_, start

TYPE_CHECKING = False  # (not `typing`'s: nothing more is imported before `main` runs)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

PROG = "unoattack"
DESCRIPTION = N_("UNO Attack rules engine, referee and box client.")

COMMANDS: dict[str, str] = {
    "deck": "engine.cards_cli",
    "score": "engine.cards_cli",
    "sim": "engine.sim",
    "sweep": "engine.sweep",
    "scenario": "engine.scenario",
    "demo": "engine.demo_cli",
    "table": "engine.table.cli",
    "watch": "engine.watch",
    "schedule": "engine.night",
    "standings": "engine.night",
    "serve": "engine.web.serve",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `command`, only that subcommand's module is imported."""
    from common.commandline import build_parser as build

    return build(PROG, DESCRIPTION, COMMANDS, command)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `unoattack` console script; returns the exit code."""

    def run() -> int:
        from common.commandline import run
        from engine.errors import UnoError

        return run(PROG, DESCRIPTION, COMMANDS, UnoError, argv)

    return start(run)


if __name__ == "__main__":
    sys.exit(main())
