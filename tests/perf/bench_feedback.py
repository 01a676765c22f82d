"""Benchmark: press to primary feedback (sound cue or light) on mock pins, with press to ejector.

The daemon runs on a MockFactory with its plant, the default sound pack into the recording sink
and the RGB button light. Each trial drives the big button low and stamps, on one monotonic
clock: the first primary feedback (the sink's ``press`` cue or the first change of the light's
red, green or blue pin, whichever comes first), and the feed motor's IN1 going high. A bare
gpiozero ``Button.when_pressed -> LED.on`` on the same factory is the reference, trials
interleaved. Goal: feedback within 200 ms at p99.

Run: ``.venv/bin/python tests/perf/bench_feedback.py`` (``make perf``). The last line is the ratio.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.perf.bench_daemon import (  # noqa: E402
    Reference,
    latency_box,
    percentile,
    wait_served,
    watch_pin,
)

TRIALS = 200
GOAL_MS = 200.0


def bench(tmp: Path) -> tuple[list[float], list[float], list[float], list[str], list[float]]:
    cfg, factory, daemon = latency_box(tmp / "feedback.toml", TRIALS)  # bench_daemon's box
    sink = daemon.sound.sink
    assert sink is not None
    reference = Reference(factory)
    light_stamps: list[int] = []
    motor_stamps: list[int] = []
    light_seen, motor_seen = threading.Event(), threading.Event()
    for name in ("light_red", "light_green", "light_blue"):
        watch_pin(factory.pin(getattr(cfg.pins, name)), light_seen, light_stamps)
    watch_pin(factory.pin(cfg.pins.ejector_forward), motor_seen, motor_stamps)
    button = factory.pin(cfg.pins.button)
    sensor = daemon.devices.sensor.device
    feedback: list[float] = []
    ejector: list[float] = []
    ref: list[float] = []
    first: list[str] = []
    sound: list[float] = []
    sink.wait(1, timeout=10)  # the ready cue at boot
    try:
        for i in range(TRIALS):
            ref.append(reference.press_ns() / 1e6)

            cues = len(sink.played)
            light_stamps.clear()
            motor_seen.clear()
            t0 = time.monotonic_ns()
            button.drive_low()
            assert motor_seen.wait(5), "the ejector never turned on"
            played = sink.wait(cues + 1, timeout=5)
            cue = next(p for p in played[cues:] if p.event == "press")
            when = {"sound": cue.t_ns}
            if light_stamps:
                when["light"] = light_stamps[0]
            kind = min(when, key=lambda k: when[k])
            first.append(kind)
            feedback.append((when[kind] - t0) / 1e6)
            sound.append((cue.t_ns - t0) / 1e6)
            ejector.append((motor_stamps[-1] - t0) / 1e6)
            button.drive_high()
            wait_served(daemon, sensor, i + 1)
    finally:
        daemon.stop()
        reference.close()
        factory.reset()
    return feedback, ejector, ref, first, sound


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        feedback, ejector, ref, first, sound = bench(Path(tmp))
    med, p99 = statistics.median(feedback), percentile(feedback, 0.99)
    print(
        f"press->primary feedback (ms, {TRIALS} presses): median {med:.2f} p99 {p99:.2f} "
        f"(first: light {first.count('light')}, sound {first.count('sound')}; goal < {GOAL_MS:g})"
    )
    print(
        f"press->sound cue alone (ms): median {statistics.median(sound):.2f} "
        f"p99 {percentile(sound, 0.99):.2f}"
    )
    print(
        f"press->ejector on (ms): median {statistics.median(ejector):.2f} "
        f"p99 {percentile(ejector, 0.99):.2f}"
    )
    print(
        f"bare gpiozero Button->LED (ms): median {statistics.median(ref):.3f} "
        f"p99 {percentile(ref, 0.99):.3f}"
    )
    print(
        f"feedback median / bare Button->LED median: {med / statistics.median(ref):.1f}x; "
        f"feedback median / ejector median: {med / statistics.median(ejector):.2f}x"
    )
    print(f"ratio press->feedback p99 / {GOAL_MS:g} ms goal: {p99 / GOAL_MS:.3f} (goal < 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
