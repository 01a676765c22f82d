"""``python -m tests.simchip ARGS``: ``launcher ARGS`` on gpiozero's lgpio backend over the
simulated chip, with the plant on it (``launcher run``, ``launcher bench``, ...).

Not ``--mock``: the launcher takes the path of real pins (the pins lock, gpiozero's own choice of
factory, ``GPIOZERO_PIN_FACTORY``); only the chip under lgpio is simulated. For the failure paths:
``SIMCHIP_DENY=1`` refuses ``/dev/gpiochip0`` as a missing ``gpio`` group would, and
``SIMCHIP_BUSY=17,24`` has another program hold those lines.
"""

from __future__ import annotations

import os
import sys

from . import install


def main(argv: list[str]) -> int:
    """Install the simulated chip, set up what the environment asks, run the launcher."""
    chip = install()
    if os.environ.get("SIMCHIP_DENY"):
        chip.permitted = False
    for offset in filter(None, os.environ.get("SIMCHIP_BUSY", "").split(",")):
        chip.hold(int(offset), "gpioset")
    from firmware.cli import main as launcher

    return launcher(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
