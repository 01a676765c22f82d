"""`sim --workers` and executors: the same results for every worker count and block order,
one progress bar, Ctrl-C keeps the blocks finished, one-line errors for bad values."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

import engine.executors as executors
import engine.sim as sim
from engine.cli import main
from engine.executors import InlineExecutor, ProcessExecutor
from tests.engine.test_sim import TIMING

ARGS = ["--games", "6", "--seed", "11", "--players", "3", "--bots", "heuristic,random,heuristic"]


def sim_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["sim", *ARGS, *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""  # one progress bar at most, and none when stderr is not a terminal
    return {k: v for k, v in json.loads(out).items() if k not in TIMING}


def test_every_worker_count_gives_the_same_results(capsys: pytest.CaptureFixture[str]) -> None:
    one = sim_json(capsys, "--workers", "1")
    assert one["games"] == 6
    assert sim_json(capsys, "--workers", "2") == one
    assert sim_json(capsys, "--workers", "3", "--option", "jump_in=true") != one  # not vacuous
    assert sim_json(capsys, "--workers", "4", "--executor", "local") == one


class _Reversed:
    """Runs the blocks last first, as a cluster may finish them."""

    workers = 4

    def run(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        for index in reversed(range(len(tasks))):
            yield index, fn(tasks[index])

    def close(self) -> None:
        pass


def _settings(games: int = 9) -> sim.SimSettings:
    return sim.build_settings(**{**_kwargs(), "games": games})


def test_results_do_not_depend_on_the_order_blocks_finish_in() -> None:
    settings = _settings()
    inline = sim.run_sim(settings, executor=InlineExecutor(), keep_rows=True)
    backwards = sim.run_sim(settings, executor=_Reversed(), keep_rows=True)
    assert len(sim.blocks(settings, _Reversed.workers)) > 1
    for stats in (inline, backwards):
        stats.elapsed_s = 0.0
    assert backwards == inline
    assert [row.index for row in inline.rows or ()] == list(range(9))


def test_a_process_pool_plays_the_same_games() -> None:
    settings = _settings(5)
    with ProcessExecutor(2) as pool:
        pooled = sim.run_sim(settings, executor=pool, keep_rows=True)
    inline = sim.run_sim(settings, keep_rows=True)
    pooled.elapsed_s = inline.elapsed_s = 0.0
    assert pooled == inline


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_one_progress_bar_for_many_workers() -> None:
    tty = _Tty()
    bar = sim.ProgressBar(tty)
    with ProcessExecutor(2) as pool:
        sim.run_sim(_settings(20), executor=pool, progress=bar)
    text = tty.getvalue()
    assert text.count("\n") == 1 and text.endswith("20/20 games\n")
    counts = [int(part.split("/")[0].split()[-1]) for part in text.strip().split("\r") if part]
    assert counts == sorted(counts)  # one bar moving forward, never two interleaved


class _InterruptAfter:
    """Hands over `n` results of the wrapped executor, then Ctrl-C arrives."""

    def __init__(self, inner: Any, n: int) -> None:
        self.inner, self.n, self.workers = inner, n, inner.workers
        self.closed = False

    def run(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        results = self.inner.run(fn, tasks)
        try:
            for _ in range(self.n):
                yield next(results)
            raise KeyboardInterrupt
        finally:
            results.close()

    def close(self) -> None:
        self.closed = True
        self.inner.close()


def test_ctrl_c_keeps_the_blocks_finished() -> None:
    settings = _settings(12)
    executor = _InterruptAfter(InlineExecutor(), 5)  # inline blocks are single games
    stats = sim.run_sim(settings, executor=executor, keep_rows=True)
    assert stats.interrupted
    assert stats.games == 5
    whole = sim.run_sim(_settings(5), keep_rows=True)
    assert stats.rows == whole.rows  # the first five games, whole


def _kwargs() -> dict[str, Any]:
    return dict(
        players=4,
        games=12,
        seed=5,
        deck="attack",
        rules=None,
        mode="target",
        target=300,
        bots=["heuristic", "random", "random", "heuristic"],
        options={},
    )


def test_ctrl_c_from_the_command_line_reports_and_exits_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[_InterruptAfter] = []

    def interrupting(args: Any, tasks: int, ctrl_c: Any) -> _InterruptAfter:
        opened.append(_InterruptAfter(InlineExecutor(), 2))
        return opened[0]

    monkeypatch.setattr(sim, "open_executor", interrupting)
    code = main(["sim", *ARGS, "--json"])
    out, _err = capsys.readouterr()
    assert code == 130
    data = json.loads(out)
    assert data["interrupted"] is True
    assert data["games"] == 2
    assert opened[0].closed  # the workers were released


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--workers", "0"], "--workers 0: from 1 to 256"),
        (["--workers", "257"], "--workers 257"),
        (["--workers", "two"], "expected a whole number"),
        (["--executor", "threads"], "--executor threads: use local or dask://HOST:PORT"),
        (["--executor", "dask://localhost"], "dask://HOST:PORT"),
        (["--executor", "dask://:8786"], "dask://HOST:PORT"),
        (["--executor", "dask://host:99999"], "dask://HOST:PORT"),
    ],
)
def test_bad_workers_or_executor_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    try:
        code = main(["sim", "--games", "1", *argv])
    except SystemExit as exc:  # argparse's own checks (a value that is not a number)
        code = exc.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert needle in err


def test_an_unreachable_dask_scheduler_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executors, "DASK_CONNECT_S", 1)
    # Port 9 (discard) on this machine: nothing listens there.
    code = main(["sim", "--games", "1", "--executor", "dask://127.0.0.1:9"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err


def test_default_workers_is_every_core() -> None:
    assert executors.check_workers(None) == executors.cpu_count() >= 1
    assert isinstance(executors.executor_for(None, 8, 1), InlineExecutor)  # one task: no pool
