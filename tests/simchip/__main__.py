"""``launcher ARGS`` on gpiozero's lgpio backend over the simulated chip, with the plant on it
(``launcher run``, ``launcher bench``, ...). Two ways to start it:

- ``python -m tests.simchip ARGS`` from a checkout: the checkout's launcher;
- ``python CHECKOUT/tests/simchip ARGS`` (this folder itself): whatever launcher the Python
  running it has installed (pi-check, on an emulated Pi). Only this folder is loaded, as the
  package ``simchip``: ``tests/`` is not put on the path (its ``firmware`` and ``i18n`` test
  packages would hide the installed ones).

Not ``--mock``: the launcher takes the path of real pins (the pins lock, gpiozero's own choice of
factory, ``GPIOZERO_PIN_FACTORY``); only the chip under lgpio is simulated. For the failure paths:
``SIMCHIP_DENY=1`` refuses ``/dev/gpiochip0`` as a missing ``gpio`` group would, and
``SIMCHIP_BUSY=17,24`` has another program hold those lines.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any


def _package() -> Any:
    """This folder as a package: ``tests.simchip`` when run with ``-m``, else loaded by path."""
    if __package__:
        return sys.modules[__package__]
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    spec = importlib.util.spec_from_file_location(
        "simchip", here / "__init__.py", submodule_search_locations=[str(here)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["simchip"] = package
    spec.loader.exec_module(package)
    return package


def main(argv: list[str]) -> int:
    """Install the simulated chip, set up what the environment asks, run the launcher."""
    chip = _package().install()
    if os.environ.get("SIMCHIP_DENY"):
        chip.permitted = False
    for offset in filter(None, os.environ.get("SIMCHIP_BUSY", "").split(",")):
        chip.hold(int(offset), "gpioset")
    from firmware.cli import main as launcher

    return launcher(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
