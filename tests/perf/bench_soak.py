"""Soak: the resident memory of a busy box once every retention limit is full.

A `launcher run --mock --port pty --journal` daemon (SQLite journal) is pressed by the host
client from several threads, as fast as it answers, with a jam model that fires on one press
in ten (dry presses cost the journal the most: two events and a stored reply each). The
daemon's RSS is sampled every few seconds. Its stored replies (10,000) and acked events
(10,000) are full after 10,000 presses; from then on the box keeps nothing more, so its RSS
must stay where it is.

Run: `.venv/bin/python tests/perf/bench_soak.py [--presses N] [--rate PER_S]` (`make perf`
runs the default, about a minute). Prints RSS over time, bytes per press after the limits are
full, and as the LAST line `ratio X`: RSS at the end over RSS when the limits filled (1.00 is
flat).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from tests.e2e.conftest import pattern_box  # noqa: E402
from wire.client import BoxClient  # noqa: E402

FULL = 10_000  # presses after which every retention limit of the box is full
PRESSERS = 8
SAMPLE_S = 3.0


def soak(presses: int, rate: float | None) -> tuple[list[tuple[float, int, int]], int]:
    """[(seconds, presses so far, RSS bytes)] and the presses done when the limits filled."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        box = pattern_box(work, [0] * 9 + [1])
        box.start()
        try:
            proc = psutil.Process(box.proc.pid)
            samples: list[tuple[float, int, int]] = []
            done = [0]
            lock = threading.Lock()
            start = time.monotonic()
            with BoxClient(box.port, state_path=work / "host.sqlite", timeout=60) as client:
                gap = PRESSERS / rate if rate else 0.0

                def presser() -> None:
                    while True:
                        with lock:
                            if done[0] >= presses:
                                return
                            done[0] += 1
                        client.press()
                        if gap:
                            time.sleep(gap)

                def drain() -> None:
                    for _ in client.events(timeout=None):
                        pass  # delivered and acked by the client; nothing kept here

                threading.Thread(target=drain, daemon=True).start()
                threads = [threading.Thread(target=presser) for _ in range(PRESSERS)]
                for thread in threads:
                    thread.start()
                while any(t.is_alive() for t in threads):
                    samples.append((time.monotonic() - start, done[0], proc.memory_info().rss))
                    time.sleep(SAMPLE_S)
                for thread in threads:
                    thread.join()
                time.sleep(1.0)  # the last fire results and acks
                samples.append((time.monotonic() - start, done[0], proc.memory_info().rss))
        finally:
            box.stop()
            box.kill()
    return samples, FULL


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=25_000, help="presses in all (25000)")
    parser.add_argument("--rate", type=float, default=None, help="presses per second (max)")
    args = parser.parse_args(argv)
    if args.presses <= FULL:
        parser.error(f"--presses must be above {FULL} (the limits fill there)")
    samples, full = soak(args.presses, args.rate)
    print("     s   presses   RSS MiB")
    for seconds, done, rss in samples:
        print(f"{seconds:6.0f}  {done:8d}  {rss / 2**20:8.2f}")
    at_full = next(s for s in samples if s[1] >= full)
    end = samples[-1]
    grown = end[2] - at_full[2]
    per_press = grown / max(1, end[1] - at_full[1])
    print(
        f"after the limits filled ({at_full[1]} presses, {at_full[2] / 2**20:.2f} MiB): "
        f"{grown / 2**20:+.2f} MiB over {end[1] - at_full[1]} presses = {per_press:.1f} B/press"
    )
    print(f"ratio {end[2] / at_full[2]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
