"""The self-test: outputs low, exit beam clear, door shut, the ejector's own checks, the jam model.

It runs at boot (a failure latches ``fault`` before READY) and on the ``selftest`` op while the
box rests. The verdict is ``passed`` (never ``ok``: that is the reply envelope's).

Ops: ``selftest``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from common.errors import CommandError
from firmware.feature import Feature
from firmware.machine import BUSY_STATES
from i18n import Text

if TYPE_CHECKING:
    from firmware.daemon import Daemon

POWER_PINS = ("ejector_forward", "ejector_backward", "ejector_enable", "flywheel")


class SelfTest(Feature):
    """Runs the checks."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        box.serve("selftest", self._op_selftest)

    def run(self) -> dict[str, Any]:
        """``{"passed": bool, "checks": [{"name", "ok", "detail"}, ...]}``."""
        box = self.box
        devices = box.devices_built()
        checks: list[dict[str, Any]] = []

        def check(name: str, ok: bool, detail: str) -> None:
            checks.append({"name": name, "ok": bool(ok), "detail": detail})

        on = [name for name, value in devices.pin_states().items() if value and name in POWER_PINS]
        check("outputs_off", not on, "all outputs low" if not on else f"on: {', '.join(on)}")
        clear = not devices.sensor.is_active
        check("sensor_clear", clear, "exit beam clear" if clear else "exit beam reads broken")
        if devices.door is not None:
            # An open door is maintenance, not a fault: nothing moves until it shuts.
            shut = devices.door.is_active
            check("door_shut", True, "door switch closed" if shut else "door open: maintenance")
        for line in box.driver.checks():
            check(*line)
        jam = box.presses.jam
        try:
            jam.params.validate()
            check("jam_model", True, f"mode {jam.params.mode}")
        except ValueError as exc:
            check("jam_model", False, str(exc))
        return {"passed": all(c["ok"] for c in checks), "checks": checks}

    def _op_selftest(self, args: dict) -> dict:
        state = self.box.state
        if state in BUSY_STATES:
            raise CommandError(
                "BUSY", Text("the box is {state}; try again when it rests", state=state)
            )
        result = self.run()
        if not result["passed"]:
            # the envelope says the command failed (ok false, FAULT); the checks say why
            failed = "; ".join(c["detail"] for c in result["checks"] if not c["ok"])
            raise CommandError(
                "FAULT",
                Text("self-test failed: {failed}", failed=failed),
                extra={"passed": False, **result},
            )
        return {"passed": True, "checks": result["checks"]}
