"""Ctrl-C on `unoattack sim` and `unoattack sweep` with a pool of worker processes (issue 21):
however many SIGINTs reach the process group (once, twice 50 ms apart as `timeout -s INT` and
an impatient user do, three times), the command prints its partial report, exits 130 and leaves
no process behind. Before, the pool deadlocked on the second (a KeyboardInterrupt inside its
locks) and a third left its workers running with parent 1."""

from __future__ import annotations

import csv
import json
import os
import signal
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import psutil
import pytest

from engine import executors
from tests.ctrl_c import interrupt
from tests.wait import wait_until

# Far more games than any machine plays before the test's Ctrl-C: the run is cut, never done.
SIM = ["-m", "engine.cli", "sim", "--games", "1000000", "--workers", "2", "--seed", "3"]
# 40 settings: the first is done long before the last (the test waits for it to be done); a
# setting of 100 games is a fraction of a second of two workers, the 40 about 15 s.
SWEEP = ["-m", "engine.cli", "sweep", "--games", "100", "--workers", "2", "--seed", "3"]
GRID = ["--vary", "players=2,3,4,5", "--vary", "jam.base=" + ",".join(f"0.{i}" for i in range(10))]
PRESSES = [1, 2, 3]


def _ended_cleanly(done: Any) -> None:
    assert done.code is not None, f"still running after the Ctrl-C: {done.terminal[-600:]!r}"
    assert done.left == [], "processes of its group left running"
    assert "Traceback" not in done.terminal, done.terminal
    assert done.code == 130, (done.stdout, done.terminal[-600:])


@pytest.mark.slow
@pytest.mark.parametrize("presses", PRESSES)
def test_ctrl_c_on_a_pooled_sim_reports_and_exits_130(presses: int) -> None:
    done = interrupt([*SIM, "--json"], running=b"sim [", signals=presses)
    _ended_cleanly(done)
    data = json.loads(done.stdout)
    assert data["interrupted"] is True
    assert 0 < data["games"] < 1_000_000
    assert sum(data["wins"]) == data["games"]  # whole games only


@pytest.mark.slow
@pytest.mark.parametrize("presses", PRESSES)
def test_ctrl_c_on_a_pooled_sweep_reports_writes_and_exits_130(
    presses: int, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.csv"
    done = interrupt(
        [*SWEEP, *GRID, "--csv", str(rows)], running=b" 1/40 settings", signals=presses
    )
    _ended_cleanly(done)
    assert "interrupted by Ctrl-C" in done.stdout
    assert f"rows written to {rows}" in done.stdout
    with rows.open(newline="") as handle:
        written = list(csv.DictReader(handle))
    assert 1 <= len(written) < 40  # the settings finished, whole; not the others


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_on_a_pooled_sim_is_taken_as_ctrl_c(stop: signal.Signals) -> None:
    """`kill`, `timeout` or a closed terminal: the parent died by the signal, no report, and
    its workers ran on with parent 1, for ever."""
    done = interrupt([*SIM, "--json"], running=b"sim [", signals=2, stop=stop)
    _ended_cleanly(done)
    data = json.loads(done.stdout)
    assert data["interrupted"] is True and 0 < data["games"] < 1_000_000


@pytest.mark.slow
def test_the_workers_die_with_a_killed_sim() -> None:
    """kill -9 of the command itself: its pool's workers must not run on without it."""
    workers: list[psutil.Process] = []

    def kill_it(pid: int) -> None:
        command = psutil.Process(pid)
        wait_until(lambda: len(command.children()) == 2, 60, what="the two workers started")
        workers.extend(command.children())
        command.kill()

    done = interrupt(SIM, running=b"sim [", signals=0, when_running=kill_it)
    assert done.code == -signal.SIGKILL
    assert done.left == [] and not any(w.is_running() and w.status() != "zombie" for w in workers)


def test_a_run_keeps_a_few_tasks_in_flight_per_worker() -> None:
    """Stopping never waits over thousands of queued tasks: at most two per worker are out."""

    class Counting(executors._Stoppable):
        workers = 3

        def __init__(self) -> None:
            super().__init__()
            self.out = self.most = 0

        def run(self, fn: Any, tasks: Any) -> Any:
            def submit(index: int) -> Future[int]:
                self.out += 1
                self.most = max(self.most, self.out)
                future: Future[int] = Future()
                future.set_result(fn(tasks[index]))
                return future

            def result(future: Future[int]) -> int:
                self.out -= 1
                return future.result()

            yield from self._in_flight(submit, len(tasks), result, lambda flying: None)

    with Counting() as executor:
        got = dict(executor.run(abs, [-i for i in range(1000)]))
    assert got == {i: i for i in range(1000)}
    assert executor.most == 2 * executor.workers


def _dies_at_three(n: int) -> int:
    if n == 3:
        os._exit(1)  # a worker killed mid-run (out of memory, kill -9)
    return n


def test_a_worker_that_dies_is_one_error_not_a_hang() -> None:
    with (
        executors.ProcessExecutor(2) as pool,
        pytest.raises(executors.ExecutorError, match="a worker process died"),
    ):
        list(pool.run(_dies_at_three, list(range(8))))
