"""Fixtures for the firmware runtime: configs with fast plant timings and a daemon on mock pins.

Limits always come from a config file, so tests write one (``tests/configs.py``): the documented
default with `FAST` and a few keys overridden (``"section.key": value``; ``None`` leaves it out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import configs
from tests.wait import WAIT

# Fast but realistic: cards every ~40 ms, no long waits anywhere. The safety and jam timeouts are
# the exception: generous, because the plant runs on its own thread, and on a busy machine it may
# be late by far more than a feed slot; a test of a healthy burst must not see a jam for it.
# Tests that provoke a jam (a stalled plant: no card will ever come) use QUICK_JAM.
FAST: dict[str, Any] = {
    "ejector.soft_start_ms": 20,
    "ejector.reverse_pulse_ms": 10,
    "ejector.flywheel_spinup_ms": 10,
    "timing.card_timeout_ms": 1000,
    "timing.cooldown_ms": 5,
    # Long enough for a card the roller still pushes after the feed stops (one feed interval
    # plus its jitter and a beam time, 47 ms), not the default 100 ms after every burst. Tests of
    # a coasting card that may come late on a busy machine set their own.
    "timing.settle_ms": 50,
    "timing.hold_clear_s": 0.5,
    "timing.debounce_ms": 0,
    "plant.hopper": 60,
    "plant.feed_interval_ms": 40,
    "plant.feed_jitter_ms": 3,
    "plant.beam_ms": 4,
    "plant.spinup_ms": 5,
    "plant.seed": 3,
    "jam.mode": "fixed",
    "jam.count": 3,
    "jam.seed": 7,
    # Personality off unless a test asks for it: their timings are not what these tests measure.
    "ejector.retract_ms": 0,
    "patterns.enabled": False,
    "attenuation.window_ms": 0,
}

# For tests whose plant never feeds (stalled, blind beam): the jam comes at once, whatever the
# speed of the machine, because no card is coming anyway.
QUICK_JAM: dict[str, Any] = {"timing.card_timeout_ms": 120}

# A solenoid box: no H-bridge pins, short pulses. The pulse's safety cap is wide: only a loop
# stalled for a second trips it (tests of the cap set their own).
SOLENOID: dict[str, Any] = {
    "ejector.kind": "solenoid",
    "pins.ejector_backward": None,
    "pins.ejector_enable": None,
    "ejector.soft_start_ms": 0,
    "ejector.pulse_ms": 5,
    "ejector.recovery_ms": 5,
    "limits.solenoid_max_on_ms": 1000,
    "limits.solenoid_duty_max": 0.9,
    "plant.spinup_ms": 2,
    "plant.beam_ms": 2,
}


def write_config(path: Path, overrides: dict[str, Any] | None = None) -> Path:
    """`tests.configs.write_config` with `FAST` under ``overrides``; returns ``path``."""
    return configs.write_config(path, FAST, overrides or {})


@pytest.fixture
def make_config(tmp_path: Path) -> Callable[..., Any]:
    """``make_config(overrides) -> Config`` written under tmp_path and loaded by firmware.config."""
    from firmware import config

    counter = iter(range(1000))

    def make(overrides: dict[str, Any] | None = None) -> Any:
        path = write_config(tmp_path / f"launcher-{next(counter)}.toml", overrides)
        return config.load(path)

    return make


class Box:
    """A started daemon on simulated pins (mock, or lgpio on the simulated chip) with its plant,
    plus helpers for tests."""

    def __init__(self, daemon: Any, plant: Any, factory: Any, config: Any) -> None:
        self.daemon = daemon
        self.plant = plant
        self.factory = factory
        self.config = config

    def command(self, op: str, timeout: float = WAIT, **args: Any) -> dict:
        """Run a command on the loop and return its reply."""
        import threading

        done = threading.Event()
        box: dict[str, dict] = {}

        def reply(r: dict) -> None:
            box["r"] = r
            done.set()

        self.daemon.submit(op, args, reply)
        assert done.wait(timeout), f"no reply to {op}"
        return box["r"]

    def fires(self) -> list[dict]:
        """Fire events of this run so far."""
        return [e for e in self.daemon.events if e["kind"] == "fire"]

    def presses(self) -> list[dict]:
        """Press events of this run so far."""
        return [e for e in self.daemon.events if e["kind"] == "press"]

    def wait_fires(self, n: int, timeout: float = WAIT) -> list[dict]:
        """Wait for ``n`` fire events in total; returns them."""
        self.daemon.wait_for(lambda e: len(self.fires()) >= n, timeout)
        return self.fires()

    def wait_state(self, state: str, timeout: float = WAIT) -> None:
        """Wait until the machine is in ``state``."""
        if self.daemon.state != state:
            self.daemon.wait_for(lambda e: self.daemon.state == state, timeout)
        assert self.daemon.state == state

    def wait_kind(self, kind: str, timeout: float = WAIT) -> dict:
        """The first event of ``kind``."""
        return self.daemon.wait_for(lambda e: e["kind"] == kind, timeout)

    def pin(self, name: str) -> Any:
        """The gpiozero pin wired to ``[pins] name`` (a mock pin on mock pins)."""
        return self.factory.pin(getattr(self.config.pins, name))

    def drive(self, name: str, high: bool) -> None:
        """The world drives the input wired to ``[pins] name`` (the button: low is pressed)."""
        self.plant.header.drive(getattr(self.config.pins, name), high)

    def outputs(self) -> dict[str, float]:
        """Output pin states (0 = off)."""
        return self.daemon.pin_states()

    def power_outputs_off(self) -> bool:
        """True when the ejector, flywheel and enable pins are all low."""
        states = self.outputs()
        names = ("ejector_forward", "ejector_backward", "ejector_enable", "flywheel")
        return all(not states.get(n, 0) for n in names)

    def hold_button(self, timeout: float = WAIT) -> None:
        """Hold the big button until the hold fires, then release it."""
        events = self.daemon.events
        after = events[-1]["seq"] if events else 0
        self.drive("button", False)
        try:
            self.daemon.wait_for(
                lambda e: e["seq"] > after and e["kind"] == "state" and e["why"] == "long press",
                timeout,
            )
        finally:
            self.drive("button", True)


@pytest.fixture
def make_box(pin_factory: Any, make_config: Callable[..., Any], tmp_path: Path) -> Iterator[Any]:
    """``make_box(overrides, journal=, plant_state=) -> Box``, started; stopped after the test.
    On mock pins, or on the simulated chip's lgpio where the module is parametrized over
    ``PIN_FACTORIES``."""
    from firmware.daemon import Daemon
    from firmware.plant import Plant

    boxes: list[Box] = []

    def make(
        overrides: dict[str, Any] | None = None,
        *,
        journal: Any = None,
        plant_state: Path | None = None,
        start: bool = True,
    ) -> Box:
        cfg = make_config(overrides)
        plant = Plant(
            cfg.plant, pin_factory, cfg.pins, state_path=plant_state, kind=cfg.ejector.kind
        )
        daemon = Daemon(cfg, factory=pin_factory, journal=journal, plant=plant)
        box = Box(daemon, plant, pin_factory, cfg)
        boxes.append(box)
        if start:
            daemon.start()
        return box

    yield make
    for box in boxes:
        box.daemon.stop()


def assert_one_fire_per_press(box: Box) -> None:
    """Every press event has exactly one fire event, and no fire lacks a press."""
    presses = [e["press_id"] for e in box.presses()]
    fires = [e["press_id"] for e in box.fires()]
    assert sorted(fires) == sorted(presses), (presses, fires)
    assert len(set(fires)) == len(fires)
