"""`--executor dask://HOST:PORT` against a local Dask cluster this test starts: the same seeds give
the same results as on this machine, for sim and sweep.

Lean on purpose (2 busy cores): one worker process with two threads, no dashboard, a few games.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from engine.cli import main
from tests.ctrl_c import interrupt
from tests.engine.test_sim import TIMING

SIM = ["sim", "--games", "4", "--seed", "3", "--bots", "heuristic,random,random,heuristic"]
SWEEP = ["sweep", "--games", "2", "--seed", "3", "--vary", "jam.base=0.1,0.4", "--set", "players=3"]


def _data(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _without_timing(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in (*TIMING, "games_per_s")}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Dask cluster for the module: its `--executor` spec."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=True,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as running:
        yield "dask://" + running.scheduler_address.removeprefix("tcp://")


@pytest.mark.timeout(180)
def test_a_dask_cluster_gives_the_same_results_as_local(
    capsys: pytest.CaptureFixture[str], cluster: str
) -> None:
    local_sim = _data(capsys, [*SIM, "--workers", "1"])
    local_sweep = _data(capsys, [*SWEEP, "--workers", "1"])
    dask_sim = _data(capsys, [*SIM, "--executor", cluster])
    dask_sweep = _data(capsys, [*SWEEP, "--executor", cluster])
    assert dask_sim["games"] == 4
    assert _without_timing(dask_sim) == _without_timing(local_sim)
    assert dask_sweep["finished"] == 2
    for mine, theirs in zip(dask_sweep["results"], local_sweep["results"], strict=True):
        assert mine == theirs


@pytest.mark.timeout(180)
def test_two_ctrl_c_on_a_dask_run_report_and_exit_130(cluster: str) -> None:
    argv = ["-m", "engine.cli", "sim", "--games", "1000000", "--executor", cluster, "--json"]
    done = interrupt(argv, running=b"sim [", signals=2)
    assert (done.code, done.left) == (130, []), done.terminal[-600:]
    assert "Traceback" not in done.terminal
    data = json.loads(done.stdout)
    assert data["interrupted"] is True and 0 < data["games"] < 1_000_000
