"""Bench overhead: how much of a measured press is our software, on mock pins.

`launcher bench --mock` drives the simulated mechanism (firmware/plant.py) through the daemon,
its state machine and the recorder. The plant keeps its own log of when the feed motor turned on
and when each card crossed the beam: that is the mechanism's own time for a press (the
reference). Our time for the same press is the wall time the bench loop spends on it, from
sending the dispense to holding its row. The difference is software: the command queue, the loop,
the state machine, the sensor callback, the journal, the recorder.

Settings: dispense mode, 5 cards a press, feed interval 20 ms without jitter, plant spin-up 5 ms,
no flywheel, no soft start, no cooldown, no settle window (`timing.settle_ms = 0`: the box does not
wait for late cards after the last one), a hopper large enough that no refill happens mid-run.
The beam stays broken 4 ms per card and the daemon starts a burst only once the beam is clear (or
the last card would go uncounted), so up to 4 ms of the difference is the mechanism, not us.

Run: `.venv/bin/python tests/perf/bench_bench.py [--presses N]`. The LAST line is
`ratio X`: our wall time per press over the plant's own feed time per press (1.0 = no overhead).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpiozero.pins.mock import MockFactory, MockPWMPin

from firmware import config as config_mod
from firmware.bench import Progress, run_bench
from firmware.plant import Plant
from tests.firmware.conftest import write_config

BURST = 5
SETTINGS = {
    "pins.flywheel": None,  # no flywheel spin-up: the press starts with the feed
    "ejector.soft_start_ms": 0,
    "timing.cooldown_ms": 0,
    "timing.card_timeout_ms": 500,
    # No settle window: with a feed motor the box otherwise waits `settle_ms` (default 100 ms)
    # after the last card for late ones before reporting the fire. That wait is a deliberate
    # mechanism allowance, not software, and would swamp the overhead this script measures.
    "timing.settle_ms": 0,
    "plant.feed_interval_ms": 20,
    "plant.feed_jitter_ms": 0,
    "plant.spinup_ms": 5,
    "plant.beam_ms": 4,
    "plant.hopper": 100_000,
}


class Stamps(Progress):
    """A silent progress bar that notes when each press's row arrived."""

    def __init__(self) -> None:
        super().__init__(1, "presses", stream=None)
        self.enabled = False
        self.times: list[int] = []

    def update(self, done: int, cards: int, *, force: bool = False) -> None:
        if not force:
            self.times.append(time.monotonic_ns())


def plant_press_times(plant: Plant) -> list[float]:
    """Per press, ms from the feed motor turning on to its last card crossing the beam."""
    ons = [t for name, t, v in plant.output_log if name == "ejector_forward" and v > 0]
    out = []
    crossings = sorted(plant.crossings)
    for i, on in enumerate(ons):
        end = ons[i + 1] if i + 1 < len(ons) else float("inf")
        mine = [c for c in crossings if on <= c < end]
        if mine:
            out.append((mine[-1] - on) / 1e6)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_config(Path(tmp) / "bench.toml", SETTINGS)
        cfg = config_mod.load(path)
    factory = MockFactory(pin_class=MockPWMPin)
    plant = Plant(cfg.plant, factory, cfg.pins, kind=cfg.ejector.kind)
    stamps = Stamps()
    start = {}

    def hook(daemon: object) -> None:
        start["ns"] = time.monotonic_ns()

    result = run_bench(
        cfg,
        factory=factory,
        plant=plant,
        mode="dispense",
        presses=args.presses,
        burst=BURST,
        progress=stamps,
        daemon_hook=hook,
    )
    factory.reset()
    if result.summary["stopped"]:
        print(f"bench stopped early: {result.summary['stopped']}", file=sys.stderr)
        return 1
    wall = []
    previous = start["ns"]
    for t in stamps.times:
        wall.append((t - previous) / 1e6)
        previous = t
    mech = plant_press_times(plant)
    intervals = result.summary["timings"]["interval_ms"]
    ours = statistics.median(wall)
    reference = statistics.median(mech)
    print(
        f"presses: {len(wall)} x {BURST} cards, feed interval {cfg.plant.feed_interval_ms} ms, "
        f"settle {cfg.timing.settle_ms} ms"
    )
    print(f"plant's own feed time per press (median): {reference:.2f} ms")
    print(f"bench wall time per press (median):        {ours:.2f} ms")
    print(f"software overhead per press (median):      {ours - reference:.2f} ms")
    print(
        f"measured card interval: median {intervals['median']} ms, p95 {intervals['p95']} ms "
        f"(plant {cfg.plant.feed_interval_ms} ms)"
    )
    total = result.summary["timings"]["total_ms"]["median"]
    print(f"burst total from the fire event (median):  {total} ms")
    spinup = result.summary["timings"]["spinup_ms"]["median"]
    print(f"spin-up (press served -> feed on, median):  {spinup} ms")
    print(f"ratio {ours / reference:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
