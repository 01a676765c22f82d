"""Nothing the box keeps grows for ever: once every retention limit is full, more presses cost
no more memory. (The long soak with RSS figures is tests/perf/bench_soak.py.)

The limits are made small so that a short run fills them all: stored replies, acked events,
the daemon's event history, the plant's crossings and output log, gpiozero's mock pin states,
the sound sink's cues.
Python allocations are traced from before the warm-up, so what is live after it is all traced;
after that, a thousand more presses may only churn, not grow.
"""

from __future__ import annotations

import gc
import threading
import tracemalloc
from pathlib import Path

import pytest

from firmware import config as config_mod
from firmware import daemon as daemon_mod
from firmware import journal as journal_mod
from firmware import pins as pins_mod
from firmware import plant as plant_mod
from firmware import sound as sound_mod
from firmware.daemon import Daemon
from firmware.journal import MemoryJournal, SqliteJournal
from firmware.pins import make_factory
from firmware.plant import Plant
from tests.firmware.conftest import write_config

LIMIT = 40  # every retention limit, for this test
WARM_UP = 300  # presses that fill every limit
MEASURED = 1200
PER_PRESS = 30  # bytes a press may leave behind on average (allocator noise); a leak of the
# kind fixed here (gpiozero's mock pin history, the plant's logs) costs 60-200


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_memory_stays_flat_once_every_retention_limit_is_full(monkeypatch, tmp_path: Path, kind):
    for module, name in (
        (journal_mod, "KEEP_REPLIES"),
        (journal_mod, "KEEP_ACKED_EVENTS"),
        (daemon_mod, "HISTORY"),
        (plant_mod, "KEEP_HISTORY"),
        (pins_mod, "KEEP_PIN_STATES"),
        (sound_mod, "SINK_KEEP"),
    ):
        monkeypatch.setattr(module, name, LIMIT)
    fast = {
        "jam.mode": "pattern",
        "jam.pattern": [0, 0, 0, 1],  # a burst every fourth press, dry presses between
        "plant.hopper": 100_000,
        "plant.feed_interval_ms": 3,
        "plant.feed_jitter_ms": 0,
        "plant.beam_ms": 1,
        "plant.spinup_ms": 0,
        "ejector.soft_start_ms": 0,
        "pins.flywheel": None,
        "timing.cooldown_ms": 0,
        "timing.settle_ms": 5,
    }
    cfg = config_mod.load(write_config(tmp_path / "launcher.toml", fast))
    tracemalloc.start()
    factory = make_factory(mock=True)
    plant = Plant(cfg.plant, factory, cfg.pins, kind="motor")
    journal = MemoryJournal() if kind == "memory" else SqliteJournal(tmp_path / "j.db")
    daemon = Daemon(cfg, factory=factory, journal=journal, plant=plant).start()
    counter = iter(range(10**9))

    def presses(n: int) -> None:
        for _ in range(n):
            done = threading.Event()
            daemon.submit("press", {}, lambda r, d=done: d.set(), cmd_id=f"c{next(counter)}")
            assert done.wait(10)
            journal.ack(journal.last_seq)  # the host holds everything
        daemon.wait_for(lambda e: daemon.state == "idle", timeout=10)
        assert plant.wait_quiet(10)
        daemon.call(lambda: None)

    try:
        presses(WARM_UP)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        presses(MEASURED)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        daemon.stop()
        journal.close()
    assert (after - before) / MEASURED < PER_PRESS, f"{after - before} bytes for {MEASURED} presses"
    pin = factory.pin(cfg.pins.ejector_forward)
    assert len(pin.states) <= LIMIT
    assert len(plant.output_log) <= 2 * LIMIT and len(plant.crossings) <= 2 * LIMIT
