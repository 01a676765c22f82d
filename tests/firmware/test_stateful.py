"""Hypothesis stateful test: random presses, dispenses, faults, loads and clears on the mock box.

The box runs on a fake clock with its plant (tests/firmware/simulated.py): time passes when a
rule lets it (``let_time_pass``), or when the test waits for the box to come to rest; the loop
is made late on purpose (``lag``), as a busy machine makes it. Every example is the same on
every machine, and the mechanism's timings cost no wall time.

Invariants, checked after every step on the loop thread:
- every power output that is on has its max-on deadline armed in the loop at on-time + max_on_ms
  (so the loop will force it off), and nothing is on while the box rests; the feed motor
  running backwards (a motion pattern's whir, the retraction, an unjam pulse) has the timer
  that ends it armed before that deadline; motion patterns and the retraction are on;
- every press gets at most one fire result while running, and exactly one after ``stop()``;
- no event reports a card the exit sensor did not see; cards leave the hopper only as loaded; a
  fire's ``extra`` is exactly the cards beyond its ``planned``;
- at rest (box idle or latched with an empty queue, plant still): the cards counted in ``fire``
  and ``stray`` events equal the beam's rising edges, and equal the cards the plant ejected when
  no sensor fault was injected (a stuck beam misses real cards and makes up others).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from firmware import config as config_mod
from tests.firmware.conftest import write_config
from tests.firmware.simulated import SimulatedBox

pytestmark = pytest.mark.slow  # run first: see tests/conftest.py
RESTING = ("idle", "locked", "jammed", "empty", "fault")
POWER_PINS = ("ejector_forward", "ejector_backward", "ejector_enable", "flywheel")

_CONFIG = None
PATTERNS = [
    {"name": "plain", "dry": 1, "fire": 1, "segments": [{"feed": "rest"}]},
    {"name": "split", "fire": 1, "big": 1,
     "segments": [{"feed": 1}, {"pause": 15}, {"feed": "rest", "speed": 0.6}]},
    {"name": "wait", "fire": 1, "segments": [{"pause": 20}, {"feed": "rest"}]},
    {"name": "tease", "dry": 1, "segments": [{"whir": 15, "speed": 0.5}, {"pause": 10}]},
]  # fmt: skip
# The timers that end a backwards run of the feed motor: a pattern's whir, the retraction,
# an unjam pulse. Each must come before the motor's max-on deadline.
BACKWARD_TIMERS = ("motion", "retract", "reverse")


def _config():
    # One config file for every example: writing and checking it is the slow part of setup.
    global _CONFIG
    if _CONFIG is None:
        path = Path(tempfile.mkdtemp(prefix="launcher-stateful-")) / "launcher.toml"
        write_config(
            path,
            {
                "jam.mode": "hazard",
                "jam.seed": 11,
                "jam.base": 0.4,
                "jam.step": 0.2,
                "plant.hopper": 30,
                "plant.feed_interval_ms": 10,
                "plant.feed_jitter_ms": 2,
                "plant.beam_ms": 3,
                "plant.spinup_ms": 2,
                "timing.card_timeout_ms": 50,
                "timing.settle_ms": 30,  # a coasting card comes one ~10 ms feed slot later
                "limits.ejector_max_on_ms": 130,  # long bursts trip it; a stall jams first
                "limits.unjam_retries": 1,
                "limits.press_queue": 4,
                "pins.flywheel": None,
                # The box's character under the same deadlines: motion patterns (a split
                # burst, a pause first, a fake start's whir) and the retraction after a burst.
                "ejector.retract_ms": 20,
                "ejector.retract_speed": 0.5,
                "patterns.enabled": True,
                "patterns.builtin": False,
                "patterns.seed": 5,
                "patterns.pattern": PATTERNS,
            },
        )
        _CONFIG = config_mod.load(path)
    return _CONFIG


class LauncherBox(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.cfg = _config()
        self.factory = MockFactory(pin_class=MockPWMPin)
        self.box = SimulatedBox(self.cfg, self.factory)
        self.plant, self.daemon = self.box.plant, self.box.daemon
        self.loaded = self.cfg.plant.hopper
        self.sensor_faulted = False  # a stuck beam was injected in this example

    # -- helpers -------------------------------------------------------------------------------

    def command(self, op: str, **args) -> dict:
        return self.box.command(op, **args)

    def counted(self) -> int:
        """Cards reported by fire and stray events so far."""
        events = self.daemon.events
        return sum(e["ejected"] for e in events if e["kind"] == "fire") + sum(
            e["count"] for e in events if e["kind"] == "stray"
        )

    def settle(self) -> None:
        """Wait until the box rests with an empty queue (every press answered) and the plant is
        still, then check that every card is reported."""
        d = self.daemon

        def resting() -> bool:
            return d.state in RESTING and not d.queue and d.burst is None

        assert self.box.run_until(resting), f"the box never came to rest ({d.state})"
        # A coasting roller may still push a card after the burst's settle window.
        assert self.box.run_until(lambda: self.plant.quiet), "the plant kept moving at rest"
        # Every card the sensor posted has been handled (and reported) by now.
        edges = d.devices.sensor.edges
        assert self.counted() == edges, (self.counted(), edges)
        if not self.sensor_faulted:
            assert edges == self.plant.ejected_total

    # -- rules ---------------------------------------------------------------------------------

    @rule(n=st.integers(1, 6), wait=st.booleans())
    def press(self, n: int, wait: bool) -> None:
        for _ in range(n):
            self.daemon.press()
        self.box.run()
        if wait:
            self.settle()

    @rule(ms=st.integers(1, 300))
    def let_time_pass(self, ms: int) -> None:
        self.box.run_for(ms)

    @rule(ms=st.integers(1, 200))
    def lag(self, ms: int) -> None:
        self.box.lag(ms)

    @rule(count=st.integers(1, 12), wait=st.booleans())
    def dispense(self, count: int, wait: bool) -> None:
        reply = self.command("dispense", count=count)
        assert reply["ok"] or reply["error"]["code"] in ("JAMMED", "EMPTY", "FAULT", "BUSY")
        if wait:
            self.settle()

    @rule()
    def settle_down(self) -> None:
        self.settle()

    @rule(
        fault=st.sampled_from(
            ["stall", "misfeed", "stick_high", "stick_low", "empty_soon", "overrun", "push"]
        )
    )
    def inject(self, fault: str) -> None:
        plant = self.plant
        if fault.startswith("stick"):
            self.sensor_faulted = True
        if fault == "overrun":
            plant.overrun(1)
        elif fault == "push":
            plant.push_card()
        elif fault == "stall":
            plant.stall()
        elif fault == "misfeed":
            plant.misfeed(8)
        elif fault == "stick_high":
            plant.stick_sensor(True)
        elif fault == "stick_low":
            plant.stick_sensor(False)
        else:
            plant.run_empty_after(2)
        self.box.run()  # what the fault changes now

    @rule()
    def repair(self) -> None:
        self.plant.fix()
        self.plant.unstick()
        self.box.run()

    @rule(op=st.sampled_from(["clear", "reset"]))
    def clear(self, op: str) -> None:
        self.settle()
        reply = self.command(op)
        assert reply["ok"] or reply["error"]["code"] in ("FAULT", "EMPTY")

    @rule(count=st.integers(1, 20))
    def load(self, count: int) -> None:
        assert self.command("load", count=count)["ok"]
        self.loaded += count

    @rule(locked=st.booleans())
    def lock(self, locked: bool) -> None:
        assert self.command("lock" if locked else "unlock")["ok"]

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def outputs_on_have_their_deadline_armed(self) -> None:
        d = self.daemon

        def check():
            on = d.outputs_on()
            timers = d.loop.timers()
            limits = {p.name: p.max_on_ms for p in d.devices.power_outputs()}
            for name, (since, deadline) in on.items():
                assert deadline == since + limits[name] * 1_000_000
                assert timers.get(f"max_on:{name}") == deadline, (name, timers)
            ejector = d.devices.ejector
            if ejector.direction == -1:  # whir, retraction or unjam: its own end is armed
                ends = [timers[t] for t in BACKWARD_TIMERS if t in timers]
                assert ends and min(ends) <= on["ejector"][1], timers
            if d.state in RESTING:
                assert on == {}
                states = d.pin_states()
                assert not any(states.get(p) for p in POWER_PINS), states
            return True

        assert d.call(check)

    @invariant()
    def at_most_one_fire_per_press(self) -> None:
        events = self.daemon.events
        presses = {e["press_id"] for e in events if e["kind"] == "press"}
        fires = [e["press_id"] for e in events if e["kind"] == "fire"]
        assert len(fires) == len(set(fires))
        assert set(fires) <= presses

    @invariant()
    def cards_never_exceed_the_hopper(self) -> None:
        fires = [e for e in self.daemon.events if e["kind"] == "fire"]
        assert all(f["extra"] == max(0, f["ejected"] - f["planned"]) for f in fires)
        assert all(0 <= f["ejected"] - f["extra"] <= f["planned"] for f in fires)
        assert self.counted() <= self.daemon.devices.sensor.edges
        assert self.plant.ejected_total <= self.loaded
        assert self.plant.hopper >= 0

    def teardown(self) -> None:
        try:
            self.settle()  # let the last presses run through the mechanism
            self.daemon.stop()
            events = self.daemon.events
            presses = sorted(e["press_id"] for e in events if e["kind"] == "press")
            fires = sorted(e["press_id"] for e in events if e["kind"] == "fire")
            assert fires == presses  # exactly one fire result per press
            states = self.daemon.pin_states()
            assert not any(states.get(p) for p in POWER_PINS), states
        finally:
            self.factory.reset()


LauncherBox.TestCase.settings = settings(max_examples=100, stateful_step_count=25, deadline=None)
TestLauncherBox = LauncherBox.TestCase
