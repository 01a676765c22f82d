"""A Pi's CPU budget: instructions to READY and per press, counted, converted to a Pi.

Counted with valgrind's callgrind (``Ir``, instructions executed), so the figures do not depend
on how busy this machine is:

- **to READY**: ``launcher run --mock --port none`` with the default config, from the
  interpreter's start to the moment it tells systemd READY=1 (the process ends there), bytecode
  already compiled (as pip leaves an installed box). Mock pins and the plant stand in for lgpio.
- **per press**: a daemon whose loop this script runs on a fake clock, with no threads and no
  plant: the script plays the mechanism (a card every feed interval while the feed motor runs
  forward), so every run executes the same instructions. Callgrind's client requests (a tiny C
  shim built here with gcc) count two phases of each press: the button's edge until the loop
  has handled it (with the bare press-to-ejector settings of bench_daemon.py the ejector is on
  by then: **press -> ejector**), and the rest of the press until its fire and the box idle
  again (a 5-card burst with the default config: flywheel, soft start, motion patterns, light,
  sound cues to a recording sink). The first press is shown apart (it warms caches); the
  figure is the median of the others.

Converted to a Pi with stated assumptions (x86-64 instructions counted here; a CPython build for
AArch64 executes about ``ARM_PER_X86`` as many): Pi Zero 2 W, Cortex-A53 at 1.0 GHz, in-order,
about 0.5 instructions a cycle on interpreter code; Pi 4, Cortex-A72 at 1.5 GHz, out-of-order,
about 1.0. Not counted: the kernel's side (lgpio's ioctls, the serial port, systemd), ``aplay``
processes for the sounds, the journal's fsync. Goals on a Pi Zero 2 W: READY < 5 s, press ->
ejector < 5 ms of CPU.

Run: ``.venv/bin/python tests/perf/bench_cpu.py`` (``make perf``; needs valgrind and gcc). The
LAST line gives the Zero 2 W figures against their goals.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

ARM_PER_X86 = 1.2  # AArch64 instructions per x86-64 instruction for the same CPython work
PRESSES = 8
READY_GOAL_S = 5.0
PRESS_GOAL_MS = 5.0
# Every seed fixed: the same patterns, sounds and plans on every run.
SEEDS = {"jam.seed": 1, "patterns.seed": 1, "sound.seed": 1, "plant.seed": 1}
BURST = {"jam.mode": "fixed", "jam.count": 5}


@dataclass(frozen=True)
class Core:
    """A Pi's core as this budget models it."""

    name: str
    hz: float
    ipc: float  # instructions a cycle on CPython's interpreter loop (assumed)

    def seconds(self, x86_instructions: float) -> float:
        return x86_instructions * ARM_PER_X86 / (self.ipc * self.hz)


ZERO_2W = Core("Pi Zero 2 W (Cortex-A53 1.0 GHz, IPC 0.5)", 1.0e9, 0.5)
PI_4 = Core("Pi 4 (Cortex-A72 1.5 GHz, IPC 1.0)", 1.5e9, 1.0)

SHIM = r"""
#include <valgrind/callgrind.h>
void cg_zero(void) { CALLGRIND_ZERO_STATS; }
void cg_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
"""


# --------------------------------------------------------------------------- the children


def child_ready(config: str) -> None:
    """``launcher run --mock`` that ends the process at READY=1."""
    from firmware import notify

    notify.ready = lambda *args, **kwargs: os._exit(0)
    from firmware.cli import main

    main(["run", "--mock", "--port", "none", "--config", config])
    raise SystemExit("launcher run ended before READY")


def child_presses(shim: str, config: str, presses: int) -> None:
    """``presses`` presses on a stepped daemon, each phase dumped by callgrind."""
    import ctypes
    import logging

    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from firmware import config as config_mod
    from firmware.daemon import Daemon
    from firmware.loop import FakeClock

    logging.disable(logging.WARNING)  # the door is open at boot, until the mechanism shuts it
    cg = ctypes.CDLL(shim)
    cfg = config_mod.load(config)
    clock = FakeClock()
    factory = MockFactory(pin_class=MockPWMPin)
    daemon = Daemon(cfg, factory=factory, clock=clock)
    daemon.start(thread=False)
    box = Mechanism(daemon, factory, cfg, clock)
    try:
        for _ in range(presses):
            fired = box.fires()
            cg.cg_zero()
            box.press()
            cg.cg_dump(b"edge")
            box.run_until(lambda: box.fires() > fired and daemon.state == "idle")  # noqa: B023
            cg.cg_dump(b"rest")
            box.release()
    finally:
        daemon.stop()


class Mechanism:
    """The card mechanism, played on the fake clock: while the feed motor runs forward (EN on),
    a card breaks the beam every feed interval after the spin-up."""

    def __init__(self, daemon: Any, factory: Any, cfg: Any, clock: Any) -> None:
        self.daemon, self.factory, self.cfg, self.clock = daemon, factory, cfg, clock
        self.pins = cfg.pins
        self.next_card: int | None = None
        self.beam_off: int | None = None
        if self.pins.door is not None:
            self.pin("door").drive_low()  # the hopper door is shut
        daemon.loop.run_pending()

    def pin(self, name: str) -> Any:
        return self.factory.pin(getattr(self.pins, name))

    def fires(self) -> int:
        return sum(1 for e in self.daemon.events if e["kind"] == "fire")

    def press(self) -> None:
        self.pin("button").drive_low()
        self.daemon.loop.run_pending()

    def release(self) -> None:
        self.pin("button").drive_high()
        self.daemon.loop.run_pending()

    def feeding(self) -> bool:
        def on(name: str) -> bool:
            return getattr(self.pins, name) is None or float(self.pin(name).state or 0) > 0

        return (
            float(self.pin("ejector_forward").state or 0) > 0
            and not float(self.pin("ejector_backward").state or 0)
            and on("ejector_enable")
        )

    def run_until(self, done: Any) -> None:
        plant, loop, ms = self.cfg.plant, self.daemon.loop, 1_000_000
        while not done():
            now = self.clock()
            if not self.feeding():
                self.next_card = None
            elif self.next_card is None:
                self.next_card = now + (plant.spinup_ms + plant.feed_interval_ms) * ms
            times = [t for t in (*loop.timers().values(), self.next_card, self.beam_off) if t]
            self.clock.advance(max(0, min(times) - now) / ms + 0.001)
            now = self.clock()
            if self.beam_off is not None and now >= self.beam_off:
                self.pin("sensor").drive_low()
                self.beam_off = None
            if self.next_card is not None and now >= self.next_card and self.beam_off is None:
                self.pin("sensor").drive_high()
                self.beam_off = now + plant.beam_ms * ms
                self.next_card += plant.feed_interval_ms * ms
            loop.run_pending()


# --------------------------------------------------------------------------- the parent


def _env(pycache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=pycache, PYTHONHASHSEED="0")
    env.pop("NOTIFY_SOCKET", None)
    return env


def _me(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), *args]


def count_ready(tmp: Path, config: str, env: dict[str, str]) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/ready.%p",
         *_me("--child", "ready", config)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    found = re.search(r"==\d+== Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"bench_cpu: the READY run failed:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def count_presses(
    tmp: Path, name: str, shim: str, config: str, env: dict[str, str]
) -> dict[str, list[int]]:
    out_file = tmp / f"{name}.out"
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--collect-atstart=yes",
         f"--callgrind-out-file={out_file}", *_me("--child", "presses", shim, config,
                                                   str(PRESSES))],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"bench_cpu: the press run failed:\n{out.stderr[-2000:]}")
    phases: dict[str, list[int]] = {"edge": [], "rest": []}
    dumps = sorted(tmp.glob(f"{name}.out.*"), key=lambda p: int(p.suffix[1:]))
    for dump in dumps:
        text = dump.read_text(errors="replace")
        label = re.search(r"^desc: Trigger: Client Request: (\w+)", text, re.M)
        total = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
        if label and total and label.group(1) in phases:
            phases[label.group(1)].append(int(total.group(1)))
    if len(phases["edge"]) != PRESSES or len(phases["rest"]) != PRESSES:
        raise SystemExit(f"bench_cpu: expected {PRESSES} dumps a phase, got {phases}")
    return phases


def build_shim(tmp: Path) -> str:
    source, lib = tmp / "cg.c", tmp / "libcg.so"
    source.write_text(SHIM)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(lib), str(source)], check=True)
    return str(lib)


def host_ready_s(config: str, env: dict[str, str]) -> float:
    """Median wall time to READY here, bytecode cached (the host's own rate, for reference)."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(_me("--child", "ready", config), env=env, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _m(instructions: float) -> str:
    return f"{instructions / 1e6:,.1f} M"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "ready":
            child_ready(*rest)
        else:
            child_presses(rest[0], rest[1], int(rest[2]))
        return 0
    missing = [tool for tool in ("valgrind", "gcc") if shutil.which(tool) is None]
    if missing:
        print(f"bench_cpu: needs {' and '.join(missing)} (apt-get install valgrind gcc)")
        return 1
    from tests.configs import write_config
    from tests.perf.bench_daemon import latency_settings

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = _env(str(tmp / "pycache"))
        default = str(write_config(tmp / "default.toml", SEEDS, BURST))
        bare = str(write_config(tmp / "bare.toml", latency_settings(0), SEEDS))
        shim = build_shim(tmp)
        wall = host_ready_s(default, env)  # also compiles the bytecode, as an install does
        subprocess.run(_me("--child", "presses", shim, bare, "1"), env=env, check=True)
        ready = count_ready(tmp, default, env)
        bare_phases = count_presses(tmp, "bare", shim, bare, env)
        full_phases = count_presses(tmp, "default", shim, default, env)

    def steady(values: list[int]) -> float:
        return statistics.median(values[1:])

    to_ejector = steady(bare_phases["edge"])
    handled = steady(full_phases["edge"])
    whole = steady([e + r for e, r in zip(full_phases["edge"], full_phases["rest"], strict=True)])
    first = full_phases["edge"][0] + full_phases["rest"][0]
    print(f"instructions (x86-64, callgrind Ir), median of presses 2-{PRESSES}:")
    print(f"  to READY (interpreter start, imports, config, boot): {_m(ready)}")
    print(f"  press -> ejector on (bare settings):                   {_m(to_ejector)}")
    print(f"  press handled by the loop (default config):            {_m(handled)}")
    print(f"  whole press, 5-card burst to idle (default config):    {_m(whole)}"
          f" (first press {_m(first)})")  # fmt: skip
    print(f"  this machine: READY in {wall:.2f} s wall = {ready / wall / 1e9:.2f} G instr/s")
    print(f"converted (x{ARM_PER_X86} AArch64 instructions per x86-64 one):")
    for core in (ZERO_2W, PI_4):
        print(
            f"  {core.name}: READY {core.seconds(ready):.2f} s, press -> ejector "
            f"{core.seconds(to_ejector) * 1e3:.2f} ms, whole press "
            f"{core.seconds(whole) * 1e3:.1f} ms of CPU"
        )
    ready_s, press_ms = ZERO_2W.seconds(ready), ZERO_2W.seconds(to_ejector) * 1e3
    print(
        f"Pi Zero 2 W: READY {ready_s:.2f} s (goal < {READY_GOAL_S:g} s, "
        f"{ready_s / READY_GOAL_S:.2f} of it); press -> ejector {press_ms:.2f} ms of CPU "
        f"(goal < {PRESS_GOAL_MS:g} ms, {press_ms / PRESS_GOAL_MS:.2f} of it)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
