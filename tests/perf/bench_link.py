"""Link speed: fire results per second through the whole path, against raw pyserial line echo.

Ours: a `launcher run --mock --port pty` daemon (SQLite journal, group-commit fsync) whose jam
model plans 0 cards for 19 presses in 20 (a pattern must fire sometimes), so nearly every press
is answered at once by a `dry` fire result and the rest by a one-card burst of a few ms;
the host client presses from several threads, and every fire result travels daemon -> journal ->
pty -> `BoxClient`, which stores its position and acks it. Reference: a child process that
echoes lines on a pty, driven by plain pyserial with the same number of lines in flight and the
same line length as a fire frame. Both run in this one run, on the same kind of pty.

Also measured: the median time from `press()` to its fire result at the host, one press at a
time, against the median round trip of one echoed line.

Run: `.venv/bin/python tests/perf/bench_link.py [--presses N]`. The LAST line is `ratio X`
(our fire results per second over raw echoed lines per second).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import serial  # noqa: E402

from tests.e2e.conftest import pattern_box  # noqa: E402
from wire import protocol  # noqa: E402
from wire.client import BoxClient  # noqa: E402

PRESSERS = 8  # host threads pressing at once (commands in flight)
WINDOW = 32  # lines in flight for the echo reference (the link's event window)

ECHO_CHILD = r"""
import os, select, sys, tty
master, slave = os.openpty()
tty.setraw(master); tty.setraw(slave)
print("PORT " + os.ttyname(slave), flush=True)
while True:
    select.select([master], [], [])
    data = os.read(master, 65536)
    while data:
        data = data[os.write(master, data):]
"""


def ours(presses: int, latency_presses: int) -> tuple[float, float, dict[str, int]]:
    """(fire results per second, median press-to-host latency in ms, client stats)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        box = pattern_box(work, [0] * 19 + [1])
        try:
            box.start()
            with BoxClient(box.port, state_path=work / "host.sqlite", timeout=30) as client:
                # warm up: first frames, journal pages, imports on both sides
                for _ in range(20):
                    client.wait_fire(client.press(), timeout=10)
                latency = []
                for _ in range(latency_presses):
                    start = time.perf_counter()
                    client.wait_fire(client.press(), timeout=10)
                    latency.append(time.perf_counter() - start)
                list(client.events(timeout=0.2))  # drop the warm-up's other events

                fires = 0
                done = threading.Event()
                per_thread = presses // PRESSERS

                def reader() -> None:
                    nonlocal fires
                    for event in client.events(timeout=30):
                        if event["kind"] == "fire":
                            fires += 1
                            if fires == per_thread * PRESSERS:
                                done.set()
                                return

                def presser() -> None:
                    for _ in range(per_thread):
                        client.press()

                read = threading.Thread(target=reader, daemon=True)
                read.start()
                start = time.perf_counter()
                threads = [threading.Thread(target=presser) for _ in range(PRESSERS)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                if not done.wait(60):
                    raise RuntimeError(f"only {fires} of {per_thread * PRESSERS} fire results")
                elapsed = time.perf_counter() - start
                stats = client.stats.as_dict()
        finally:
            box.stop()
            box.kill()
    return per_thread * PRESSERS / elapsed, statistics.median(latency) * 1000, stats


class _Lines:
    """Counts complete lines read from a port in chunks (as the host client reads; pyserial's
    own readline() makes two system calls per byte and would make the reference look slow)."""

    def __init__(self, ser: serial.Serial) -> None:
        self.ser = ser

    def wait(self, at_least: int) -> int:
        """Read until at least `at_least` more lines are complete; returns how many."""
        done = 0
        while done < at_least:
            data = self.ser.read(max(1, self.ser.in_waiting))
            if not data:
                raise RuntimeError("echo stalled")
            done += data.count(b"\n")
        return done


def reference(lines: int, latency_lines: int, length: int) -> tuple[float, float]:
    """(echoed lines per second with WINDOW in flight, median one-line round trip in ms)."""
    child = subprocess.Popen([sys.executable, "-c", ECHO_CHILD], stdout=subprocess.PIPE, text=True)
    try:
        port = child.stdout.readline().split()[1]
        line = b"x" * (length - 1) + b"\n"
        with serial.Serial(port, 115200, timeout=5) as ser:
            reader = _Lines(ser)
            for _ in range(20):
                ser.write(line)
                reader.wait(1)
            latency = []
            for _ in range(latency_lines):
                start = time.perf_counter()
                ser.write(line)
                reader.wait(1)
                latency.append(time.perf_counter() - start)

            credit = threading.Semaphore(WINDOW)

            def writer() -> None:
                for _ in range(lines):
                    credit.acquire()
                    ser.write(line)

            start = time.perf_counter()
            thread = threading.Thread(target=writer)
            thread.start()
            got = 0
            while got < lines:
                n = reader.wait(1)
                got += n
                for _ in range(n):
                    credit.release()
            elapsed = time.perf_counter() - start
            thread.join()
    finally:
        child.kill()
        child.wait()
    return lines / elapsed, statistics.median(latency) * 1000


def fire_frame_length() -> int:
    """Bytes of a typical dry fire frame, so the reference moves lines of the same size."""
    event = {
        "v": 1,
        "type": "event",
        "seq": 12345,
        "boot": "0123456789ab",
        "stream": "0123456789abcdef0123456789abcdef",
        "t_ms": 123456,
        "kind": "fire",
        "press_id": 4321,
        "source": "host",
        "planned": 0,
        "ejected": 0,
        "reason": "dry",
        "dry_streak": 0,
        "spinup_ms": None,
        "first_card_ms": None,
        "total_ms": 0,
        "card_ms": [],
        "hopper": 112,
    }
    return len(protocol.encode(event))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=2000, help="presses for the rate (2000)")
    parser.add_argument("--latency", type=int, default=200, help="presses for latency (200)")
    args = parser.parse_args(argv)
    length = fire_frame_length()
    rate, latency, stats = ours(args.presses, args.latency)
    ref_rate, ref_latency = reference(args.presses, args.latency, length)
    print(f"frame length                         {length} bytes")
    print(
        f"ours: fire results to host client    {rate:10.1f} /s   median press->host"
        f" {latency:7.2f} ms  (acks {stats['acks']}, duplicates {stats['duplicates']})"
    )
    print(
        f"raw pyserial line echo on a pty      {ref_rate:10.1f} /s   median round trip "
        f"{ref_latency:7.2f} ms"
    )
    print(f"latency ratio (ours / echo) {latency / ref_latency:.2f}")
    print(f"ratio {rate / ref_rate:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
