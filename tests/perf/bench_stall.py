"""Stall: the resident memory of a box whose host writes but never reads (a broken TX wire).

A `launcher run --mock --port pty --journal` daemon gets a host that sends commands the way a
client does when no reply comes back: a new command every 50 ms (presses, locks, status) and
every unanswered one again every 250 ms, with the same id, for the whole stall; it never reads.
The daemon's RSS is sampled as it goes. Then a host that reads again connects and counts the
stale replies the box still had for it.

Run: `.venv/bin/python tests/perf/bench_stall.py [--seconds S]` (`make perf`: 60 s). Prints
RSS over time, the replies flushed after the stall, and as the LAST line `ratio X`: RSS at the
end of the stall over RSS at its start (1.00 is flat).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import serial  # noqa: E402

from tests.e2e.conftest import pattern_box  # noqa: E402
from wire import protocol  # noqa: E402

NEW_EVERY_S = 0.05
RETRY_EVERY_S = 0.25
SAMPLE_S = 5.0
OPS = ("press", "lock", "status", "unlock")


def stall(seconds: float) -> tuple[list[tuple[float, int, int]], int, int]:
    """[(seconds, commands written, RSS bytes)], stale replies flushed, frames written."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        box = pattern_box(work, [0] * 9 + [1])
        box.start()
        try:
            proc = psutil.Process(box.proc.pid)
            mute = serial.Serial(box.port, timeout=0.05, write_timeout=0.5)
            ids = itertools.count()
            pending: list[bytes] = []
            written = 0
            samples: list[tuple[float, int, int]] = []
            start = time.monotonic()
            next_new = next_retry = next_sample = start
            while (now := time.monotonic()) < start + seconds:
                if now >= next_sample:
                    samples.append((now - start, written, proc.memory_info().rss))
                    next_sample += SAMPLE_S
                lines: list[bytes] = []
                if now >= next_new:
                    n = next(ids)
                    pending.append(protocol.encode(protocol.cmd(f"m{n}", OPS[n % len(OPS)])))
                    lines.append(pending[-1])
                    next_new += NEW_EVERY_S
                if now >= next_retry:
                    lines.extend(pending)  # none is ever answered: all of them again
                    next_retry += RETRY_EVERY_S
                for line in lines:
                    try:
                        mute.write(line)
                        written += 1
                    except serial.SerialTimeoutException:
                        break  # the box no longer reads either: our side is full too
                time.sleep(0.005)
            samples.append((time.monotonic() - start, written, proc.memory_info().rss))
            mute.close()
            flushed = 0
            with serial.Serial(box.port, timeout=1.0) as host:
                deadline = time.monotonic() + 5
                decoder = protocol.FrameDecoder(check=False)
                while time.monotonic() < deadline:
                    data = host.read(max(1, host.in_waiting))
                    if not data:
                        break
                    for item in decoder.feed(data):
                        if isinstance(item, protocol.Frame) and item.message["type"] == "reply":
                            flushed += 1
        finally:
            box.stop()
            box.kill()
    return samples, flushed, written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the stall (60)")
    args = parser.parse_args(argv)
    samples, flushed, written = stall(args.seconds)
    print("     s  written   RSS MiB")
    for seconds, done, rss in samples:
        print(f"{seconds:6.0f}  {done:7d}  {rss / 2**20:8.2f}")
    print(f"frames written by the mute host: {written}; stale replies flushed after: {flushed}")
    print(f"ratio {samples[-1][2] / samples[0][2]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
