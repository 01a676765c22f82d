"""A box that dies at a chosen write: the child half of tests/firmware/test_crash_points.py.

`run_box(...)` runs in a child process forked by ``python -m tests.firmware.crashbox`` (a small
fork server: it imports the firmware once, then forks one child per line it reads, so a crash
point costs a fork, not a Python start). It starts a daemon on mock
pins with a SQLite journal and a plant state file, drives one scripted session (a host press
with a button press queued behind it, a dispense, a load), and calls ``os._exit(CRASHED)`` at
the `n`-th write: every journal transaction and the plant's load. ``mode="before"`` dies inside
the write (the transaction never commits, the cards never go in), ``"after"`` right after it
(the write is on disk, nothing that follows it happened). With `n` = 0 nothing crashes and the
child writes how many writes the session made to `count_path`. Nothing here is timing: the
crash comes at a write, whatever the speed of the machine.
"""

from __future__ import annotations

import faulthandler
import json
import logging
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from firmware.journal import SqliteJournal
from firmware.plant import Plant

CRASHED = 77
# (command id, op, args): what the host sends, and sends again with the same id after a crash
SCRIPT: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("c-press", "press", {}),
    ("c-disp", "dispense", {"count": 3}),
    ("c-load", "load", {"count": 2}),
)


class Writes:
    """Counts writes; dies at the `n`-th one."""

    def __init__(self, n: int, mode: str) -> None:
        self.n = n
        self.mode = mode
        self.count = 0
        self._lock = threading.Lock()

    def before(self) -> None:
        with self._lock:
            self.count += 1
            if self.count == self.n and self.mode == "before":
                os._exit(CRASHED)

    def after(self) -> None:
        with self._lock:
            if self.count == self.n and self.mode == "after":
                os._exit(CRASHED)


class CrashingJournal(SqliteJournal):
    """A SqliteJournal that dies inside or right after its `n`-th transaction."""

    writes: Writes | None = None

    def _write(self, fn: Any) -> Any:
        writes = self.writes
        if writes is None:
            return super()._write(fn)

        def inside(db: Any) -> Any:
            result = fn(db)
            writes.before()  # statements run, COMMIT not yet: a crash here loses the write
            return result

        result = super()._write(inside)
        writes.after()
        return result


class CrashingPlant(Plant):
    """A plant whose `load` (the cards going into the hopper) counts as a write."""

    writes: Writes | None = None

    def load(self, *args: Any, **kwargs: Any) -> int:
        if self.writes is not None:
            self.writes.before()
        hopper = super().load(*args, **kwargs)
        if self.writes is not None:
            self.writes.after()
        return hopper


_live: list[Any] = []  # the child's daemon and plant, for the report of a session that failed


def box_report(daemon: Any, plant: Any) -> str:
    """A box as it stands, for a wait that ran out (read without the loop: it may be what is
    stuck): its state, timers, burst, driver, sensor and plant, and its newest events."""
    burst = daemon.inflight.burst
    driver = daemon.driver
    lines = [
        f"state {daemon.state}; loop timers {daemon.loop.timers()} (now {daemon.clock()}); "
        f"{daemon.loop._queue.qsize()} loop events queued",
        f"burst {burst}",
        f"driver {vars(driver)}",
        f"last edge {daemon.inflight.last_edge}; sensor edges {daemon.devices.sensor.edges}, "
        f"beam {daemon.devices.sensor.is_active}",
        f"plant hopper {plant.hopper}, ejected {plant.ejected_total}, pending "
        f"{plant._pending_pulses}, beam until {plant._beam_until}, next due {plant.next_due()}, "
        f"outputs {plant._values}",
        *(json.dumps(e) for e in daemon.events[-12:]),
    ]
    return "\n".join(lines) + "\n"


def run_box(config: str, journal: str, plant_state: str, n: int, mode: str, count: str) -> None:
    """The child: one scripted session, dying at write `n` (see the module docstring)."""
    from firmware import config as config_mod
    from firmware.daemon import Daemon
    from firmware.pins import make_factory

    logging.disable(logging.CRITICAL)  # a dying child has nothing to tell
    cfg = config_mod.load(config)
    factory = make_factory(mock=True)
    plant = CrashingPlant(cfg.plant, factory, cfg.pins, state_path=plant_state, kind="solenoid")
    box = CrashingJournal(journal)
    writes = Writes(n, mode)
    daemon = Daemon(cfg, factory=factory, journal=box, plant=plant)
    _live[:] = [daemon, plant]
    box.writes = plant.writes = writes  # from the first write of the boot on
    daemon.start()

    def command(cmd_id: str, op: str, args: dict[str, Any]) -> dict:
        done = threading.Event()
        got: dict[str, dict] = {}
        daemon.submit(op, args, lambda r: (got.update(r=r), done.set()), cmd_id=cmd_id)
        if not done.wait(30):
            raise TimeoutError(f"no reply to {cmd_id} ({op}) within 30 s (state {daemon.state})")
        return got["r"]

    def fires() -> int:
        return sum(1 for e in daemon.events if e["kind"] == "fire")

    (press, dispense, load) = SCRIPT
    command(*press)
    daemon.press()  # the big button, while the host's press fires: queued behind it
    daemon.wait_for(lambda e: fires() >= 2, timeout=30)
    command(*dispense)
    daemon.wait_for(lambda e: fires() >= 3, timeout=30)
    command(*load)
    daemon.wait_for(lambda e: daemon.state == "idle", timeout=30)
    Path(count).write_text(str(writes.count))
    os._exit(0)  # no shutdown: the last write stays the last


def serve() -> None:
    """Read one JSON list of `run_box` arguments per line; fork a child for it, wait, and write
    its exit code as a line. Single-threaded, so forking is safe."""
    for line in sys.stdin:
        args = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                run_box(*args)
            except BaseException:
                # the test names why (next to the count file), with every thread's stack
                with open(Path(args[-1]).with_name("error.txt"), "w") as out:
                    traceback.print_exc(file=out)
                    try:
                        out.write(box_report(*_live) if _live else "(no box yet)\n")
                    except Exception:
                        traceback.print_exc(file=out)
                    out.flush()
                    faulthandler.dump_traceback(out, all_threads=True)
            finally:
                os._exit(4)  # run_box never returns; an exception in it lands here
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        sys.stdout.write(f"{code}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    import firmware.daemon
    import firmware.pins  # noqa: F401

    serve()
