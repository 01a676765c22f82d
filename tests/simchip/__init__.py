"""A simulated Raspberry Pi GPIO chip under gpiozero's own ``LGPIOFactory`` (tests and pi-check).

gpiozero's lgpio backend is what a box runs on Raspberry Pi OS Bookworm; MockFactory skips all of
it. Here the ``lgpio`` module gpiozero imports is ``tests/simchip/lgpio.py`` over the simulated
chip of ``tests/simchip/chip.py``, and the board revision gpiozero reads from ``/proc`` is a
Pi 4's; the rest, gpiozero's ``gpiozero.pins.lgpio`` with its pulls, debounce, PWM and edge
ticks, runs as on a Pi. The plant (``firmware/plant.py``) drives the chip's inputs and watches
its outputs (``lgpio.plant_side``), as it does with mock pins.

Two ways in, neither reachable on a box by accident (the real lgpio module has no world side,
and nothing in the product imports this package):

- in a test: ``with simchip.installed() as chip: ...`` (the ``lgpio_factory`` fixture);
- a whole command: ``python -m tests.simchip ARGS`` is ``launcher ARGS`` on the simulated chip
  (``run``, ``bench``, ...) with the checkout's launcher; ``python CHECKOUT/tests/simchip ARGS``
  (the folder) runs the launcher installed for that Python on it (pi-check). ``SIMCHIP_DENY=1``
  refuses ``/dev/gpiochip0`` (permission denied) and ``SIMCHIP_BUSY=17`` (comma-separated
  offsets) has another program hold those lines, for the failure paths.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from .chip import Edge, SimChip

__all__ = ["REVISION", "Edge", "SimChip", "install", "installed", "uninstall"]

REVISION = 0xC03114  # Raspberry Pi 4 Model B 4 GB rev 1.4: the board the chip sits on

_saved: dict[str, Any] = {}


def install() -> SimChip:
    """Make ``import lgpio`` the simulated module and the board a Pi 4; a fresh chip 0."""
    import gpiozero.pins.local as local

    from . import lgpio as sim

    if not _saved:
        _saved["lgpio"] = sys.modules.get("lgpio")
        _saved["revision"] = local.get_pi_revision
    sys.modules["lgpio"] = sim
    # gpiozero's LocalPiFactory reads the revision from /proc/device-tree or /proc/cpuinfo,
    # which this machine does not have; the simulated board is a Pi 4.
    local.get_pi_revision = lambda: REVISION
    _forget_gpiozero_lgpio()
    return sim.fresh_board()


def uninstall() -> None:
    """Undo ``install()``: the real ``lgpio`` (or none) and the real revision again."""
    import gpiozero.pins.local as local

    from . import lgpio as sim

    if not _saved:
        return
    sim.fresh_board()  # stop the alert threads
    previous = _saved.pop("lgpio")
    if previous is None:
        sys.modules.pop("lgpio", None)
    else:
        sys.modules["lgpio"] = previous
    local.get_pi_revision = _saved.pop("revision")
    _forget_gpiozero_lgpio()


@contextlib.contextmanager
def installed() -> Iterator[SimChip]:
    """``install()`` for the ``with`` block; yields chip 0."""
    chip = install()
    try:
        yield chip
    finally:
        uninstall()


def _forget_gpiozero_lgpio() -> None:
    # gpiozero.pins.lgpio keeps the lgpio module it imported: import it again next time, so it
    # gets the module installed now.
    sys.modules.pop("gpiozero.pins.lgpio", None)
    pins = sys.modules.get("gpiozero.pins")
    if pins is not None and hasattr(pins, "lgpio"):
        delattr(pins, "lgpio")
