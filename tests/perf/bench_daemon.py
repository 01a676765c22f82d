"""Benchmarks of the launcher daemon against bare references, in one run.

1. Press-to-ejector-on latency (median, p99): the daemon on a MockFactory, the big button driven
   low until the feed motor's IN1 pin goes high, against a bare gpiozero ``Button.when_pressed``
   -> ``LED.on`` on the same factory, trials interleaved. Goal: within 10x at the median.
2. Idle CPU of ``launcher run --mock --port none`` over 10 s from READY on (psutil). Goal: under
   0.5 % of a core.
3. Resident memory and time to READY (a real NOTIFY_SOCKET) against a bare
   ``python -c "import gpiozero, transitions, serial"``. Goal: under 1.5x its time.

Run: ``.venv/bin/python tests/perf/bench_daemon.py`` (``make perf``). The last line is the ratio.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from tests.configs import write_config  # noqa: E402

TRIALS = 300
IDLE_SECONDS = 10.0
STARTS = 5


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def watch_pin(pin: object, on_high: threading.Event, stamps: list[int]) -> None:
    """Stamp (monotonic ns, the daemon's clock) the moment a mock output pin goes high, wrapping
    this pin object's state change."""
    original = pin._change_state  # type: ignore[attr-defined]

    def changed(value: object) -> bool:
        result = original(value)
        if result and value:
            stamps.append(time.monotonic_ns())
            on_high.set()
        return result

    pin._change_state = changed  # type: ignore[attr-defined]


class Reference:
    """The reference: a bare gpiozero Button whose ``when_pressed`` lights an LED, on two spare
    header pins of the same mock factory as the daemon."""

    def __init__(self, factory: object) -> None:
        from gpiozero import LED, Button

        self.button = Button(6, pin_factory=factory)
        self.led = LED(21, pin_factory=factory)
        self.button.when_pressed = self.led.on
        self._high = threading.Event()
        self._stamps: list[int] = []
        watch_pin(factory.pin(21), self._high, self._stamps)  # type: ignore[attr-defined]
        self._pin = factory.pin(6)  # type: ignore[attr-defined]

    def press_ns(self) -> int:
        """One press: nanoseconds from the button's edge to the LED on."""
        self._high.clear()
        t0 = time.monotonic_ns()
        self._pin.drive_low()
        assert self._high.wait(5), "the reference LED never lit"
        took = self._stamps[-1] - t0
        self._pin.drive_high()
        self.led.off()
        return took

    def close(self) -> None:
        self.button.close()
        self.led.close()


def latency_box(path: Path, trials: int) -> tuple[object, object, object]:
    """``(config, factory, daemon)``: the started box of the latency benchmarks, on mock pins
    with the plant, configured by ``latency_settings(trials)`` and written to ``path``."""
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from firmware import config as config_mod
    from firmware.daemon import Daemon
    from firmware.plant import Plant

    cfg = config_mod.load(write_config(path, latency_settings(trials)))
    factory = MockFactory(pin_class=MockPWMPin)
    plant = Plant(cfg.plant, factory, cfg.pins, kind="motor")
    return cfg, factory, Daemon(cfg, factory=factory, plant=plant).start()


def latency_settings(trials: int) -> dict[str, object]:
    """One card a press, no ramps, no waits, no character: the bare press-to-ejector path
    (tests/perf/bench_feedback.py measures the feedback on the same box)."""
    return {
        "jam.mode": "fixed",
        "jam.count": 1,
        "ejector.soft_start_ms": 0,
        "ejector.retract_ms": 0,
        "pins.flywheel": None,
        "patterns.enabled": False,
        "attenuation.window_ms": 0,
        "timing.cooldown_ms": 0,
        "timing.debounce_ms": 0,
        "plant.hopper": trials + 10,
        "plant.feed_interval_ms": 20,
        "plant.feed_jitter_ms": 0,
        "plant.beam_ms": 1,
        "plant.spinup_ms": 0,
    }


def wait_served(daemon: object, sensor: object, press_id: int) -> None:
    """Wait for the fire of ``press_id``, the box idle again and the card out of the beam."""
    daemon.wait_for(  # type: ignore[attr-defined]
        lambda e: e["kind"] == "fire" and e["press_id"] == press_id, timeout=5
    )
    while daemon.state != "idle":  # type: ignore[attr-defined]
        daemon.wait_for(lambda e: daemon.state == "idle", timeout=5)  # type: ignore[attr-defined]
    # The card must have left the beam, or the next burst rightly waits for it.
    assert sensor.wait_for_inactive(timeout=5)  # type: ignore[attr-defined]
    daemon.call(lambda: None)  # type: ignore[attr-defined]  # the loop handled the beam edge too


def bench_latency(tmp: Path) -> tuple[list[float], list[float]]:
    cfg, factory, daemon = latency_box(tmp / "latency.toml", TRIALS)
    reference = Reference(factory)
    ours_high = threading.Event()
    ours_stamps: list[int] = []
    watch_pin(factory.pin(cfg.pins.ejector_forward), ours_high, ours_stamps)
    button = factory.pin(cfg.pins.button)
    sensor = daemon.devices.sensor.device
    ours: list[float] = []
    ref: list[float] = []
    try:
        for i in range(TRIALS):
            ref.append(reference.press_ns() / 1000)
            ours_high.clear()
            t0 = time.monotonic_ns()
            button.drive_low()
            assert ours_high.wait(5), "the ejector never turned on"
            ours.append((ours_stamps[-1] - t0) / 1000)
            button.drive_high()
            wait_served(daemon, sensor, i + 1)
    finally:
        daemon.stop()
        reference.close()
        factory.reset()
    return ours, ref


PYCACHE = tempfile.mkdtemp(prefix="launcher-bench-pycache-")


def _launcher_env(notify: str | None = None) -> dict[str, str]:
    """Child environment: bytecode caching on (as on an installed box) but outside the tree."""
    drop = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONPYCACHEPREFIX"] = PYCACHE
    if notify:
        env["NOTIFY_SOCKET"] = notify
    return env


def _started(tmp: Path, name: str) -> tuple[subprocess.Popen, float]:
    """``launcher run --mock --port none`` with a real notify socket; returns the process once it
    said READY=1, and the seconds that took from spawn."""
    address = str(tmp / f"notify-{name}.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(30)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "run", "--mock", "--port", "none"],
        cwd=ROOT,
        env=_launcher_env(address),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while b"READY=1" not in sock.recv(4096):
            pass
    except BaseException:
        proc.kill()
        proc.wait(10)
        raise
    finally:
        sock.close()
    return proc, time.perf_counter() - t0


def bench_idle_cpu(tmp: Path) -> float:
    """CPU of the daemon idling, measured from READY on: start-up is not idle (on a slow or
    emulated CPU it lasts seconds, and was counted as idle when a fixed sleep stood for it)."""
    proc, _ = _started(tmp, "idle")
    try:
        p = psutil.Process(proc.pid)
        before = p.cpu_times()
        t0 = time.monotonic()
        time.sleep(IDLE_SECONDS)
        after = p.cpu_times()
        wall = time.monotonic() - t0
        used = (after.user - before.user) + (after.system - before.system)
        return 100.0 * used / wall
    finally:
        proc.terminate()
        proc.wait(10)


def _time_to_ready(tmp: Path, i: int) -> tuple[float, float]:
    """Seconds from spawn to READY=1 on a real notify socket, and RSS (MiB) at READY."""
    proc, elapsed = _started(tmp, str(i))
    try:
        return elapsed, _peak_rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)


def _peak_rss_mib(pid: int) -> float:
    """Peak resident memory so far (VmHWM), as measured for the reference."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return psutil.Process(pid).memory_info().rss / 2**20


def _bare_import() -> tuple[float, float]:
    """Seconds for ``python -c "import gpiozero, transitions, serial"`` and its peak RSS (MiB)."""
    # VmHWM, not ru_maxrss: after fork+exec Linux may report the forking parent's size there.
    code = (
        "import gpiozero, transitions, serial;"
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0])"
    )
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=_launcher_env(),
    ).stdout
    return time.perf_counter() - t0, int(out.strip()) / 1024


def bench_starts(tmp: Path) -> tuple[list[float], list[float], list[float], list[float]]:
    """Interleaved starts (same load for both); the first pair warms the bytecode cache."""
    ready, rss, bare, bare_rss = [], [], [], []
    for i in range(-1, STARTS):
        r = _time_to_ready(tmp, i)
        b = _bare_import()
        if i >= 0:
            ready.append(r[0])
            rss.append(r[1])
            bare.append(b[0])
            bare_rss.append(b[1])
    return ready, rss, bare, bare_rss


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ours, ref = bench_latency(tmp)
        med_ours, med_ref = statistics.median(ours), statistics.median(ref)
        print(
            f"press->ejector on (us): launcher median {med_ours:.1f} p99 "
            f"{percentile(ours, 0.99):.1f} | bare Button->LED median {med_ref:.1f} p99 "
            f"{percentile(ref, 0.99):.1f} | median ratio {med_ours / med_ref:.1f}x (goal <= 10x)"
        )
        cpu = bench_idle_cpu(tmp)
        print(f"idle CPU over {IDLE_SECONDS:.0f} s: {cpu:.3f} % of a core (goal < 0.5 %)")
        ready, rss, bare, bare_rss = bench_starts(tmp)
        print(
            f"time to READY (s): median {statistics.median(ready):.3f} of {STARTS}; "
            f"peak RSS at READY {statistics.median(rss):.1f} MiB"
        )
        print(
            f"bare import gpiozero+transitions+serial (s): median {statistics.median(bare):.3f}; "
            f"peak RSS {statistics.median(bare_rss):.1f} MiB"
        )
        print(f"latency median ratio: {med_ours / med_ref:.2f}x (goal <= 10x)")
        ratio = statistics.median(ready) / statistics.median(bare)
        print(f"ratio time-to-READY / bare import: {ratio:.2f}x (goal < 1.5x)")
    shutil.rmtree(PYCACHE, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
