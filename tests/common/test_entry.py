"""Ctrl-C (and SIGTERM, SIGHUP) while a console script is still loading its modules, a second
on a busy Pi: the command ends with 130 and no traceback. Before, the scripts' first import
(the command line's modules) ran before anything took the signal: a KeyboardInterrupt traceback
through importlib, or a death by SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.ctrl_c import ENV, ROOT

# What pip's console script does (`from engine.cli import main; sys.exit(main())`), with the
# signal raised the moment the command line's first own module (i18n) starts to load.
SCRIPT = """
import builtins, signal, sys
real = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "i18n" and not hasattr(builtins, "signalled"):
        builtins.signalled = True
        signal.raise_signal(signal.{signal})
    return real(name, *args, **kwargs)
builtins.__import__ = importing
from {module} import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
@pytest.mark.parametrize(
    ("module", "argv"), [("engine.cli", ["deck"]), ("firmware.cli", ["model", "show"])]
)
def test_a_stop_signal_while_the_modules_load_ends_with_130_quietly(
    sig: str, module: str, argv: list[str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(signal=sig, module=module, argv=argv)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "", "")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # this process: untouched
