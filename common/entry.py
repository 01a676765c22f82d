"""Where both console scripts start (`launcher`: firmware/cli.py, `unoattack`: engine/cli.py).

Before any module of ours loads (a second on a busy Pi) the stop signals are taken: Ctrl-C
(SIGINT), SIGTERM and SIGHUP pressed or sent then end the command with 130 and no traceback,
as they do later (common/commandline.py: `run`, `CtrlC`). Only `signal` is imported here.
"""

from __future__ import annotations

import signal

TYPE_CHECKING = False  # (not `typing`'s: only `signal` is imported here)
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["EXIT_INTERRUPTED", "N_", "start"]

EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C


def N_(message: str) -> str:
    """`i18n.N_` for the command lines' descriptions: marks a message for the catalogs (the
    parser translates it) without importing i18n before the stop signals are taken."""
    return message


def start(main: Callable[[], int]) -> int:
    """`main()`'s exit code (it imports the command line and runs it), or EXIT_INTERRUPTED
    when a stop signal ends it: SIGTERM and SIGHUP raise KeyboardInterrupt as SIGINT does
    (unless ignored: `nohup`) until a command takes them itself."""
    taken = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            taken[sig] = signal.signal(sig, signal.default_int_handler)
    try:
        return main()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        for sig, previous in taken.items():
            if signal.getsignal(sig) is signal.default_int_handler:  # nobody took it since
                signal.signal(sig, previous)
