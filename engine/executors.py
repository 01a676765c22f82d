"""Executors: where the games of a `sim` or a `sweep` run.

Work is a list of tasks, each a picklable argument to one module-level function (a block of
seeded games); an executor runs them and hands back each result with its task's index as it
finishes, in any order. Results never depend on the executor: every game is seeded from the run's
seed and its own index, and what is merged (sums, rows kept by game index) does not depend on the
order results come back in.

- `InlineExecutor`: in this process, one task after the other (`--workers 1`).
- `ProcessExecutor`: a pool of local worker processes (`--workers N`, default every core).
- `DaskExecutor`: the workers of a Dask cluster (`--executor dask://HOST:PORT`; the `dask`
  extra). Each worker needs this package installed, the same version as here.

Ctrl-C: the workers ignore SIGINT (the terminal sends it to the whole process group), so only
the caller sees it; leaving `run` early cancels every task not started yet and lets the running
ones end (a task is a short block of games).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol, TypeVar

from engine.errors import InputError, UnoError

__all__ = [
    "DaskExecutor",
    "Executor",
    "ExecutorError",
    "InlineExecutor",
    "ProcessExecutor",
    "cpu_count",
    "executor_for",
]

T = TypeVar("T")
R = TypeVar("R")

MAX_WORKERS = 256
DASK_SCHEME = "dask://"
DASK_HINT = "pip install 'unoattack-launcher[dask]'"
# How long to wait for a Dask scheduler to answer before saying it cannot be reached.
DASK_CONNECT_S = 10


class ExecutorError(UnoError):
    """The executor itself failed (a worker process died, the cluster went away): exit 1."""

    exit_code = 1


class Executor(Protocol):
    """Runs tasks somewhere; `workers` is how many can run at once (to size the tasks)."""

    workers: int

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        """`(index, fn(tasks[index]))` for every task, as each finishes. Closing the iterator
        early cancels the tasks not started; an exception in a task is raised here."""
        ...

    def close(self) -> None:
        """Release the workers (idempotent)."""
        ...


class _Closing:
    """Context-manager support for the executors here."""

    def close(self) -> None:  # pragma: no cover - overridden
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InlineExecutor(_Closing):
    """Every task in this process, in order."""

    workers = 1

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        for index, task in enumerate(tasks):
            yield index, fn(task)


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_method() -> str:
    """`fork` where it is safe (Linux, this process has one thread): workers start at once with
    everything imported. Otherwise `forkserver` (or `spawn`): a fork with threads running may
    deadlock, and macOS's system libraries do not survive one."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and _threads() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _threads() -> int:
    """Threads of this process, those not started by `threading` too (a test runner's, a
    library's): the kernel's count where it can be read."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # pragma: no cover - not Linux
        return threading.active_count()


class ProcessExecutor(_Closing):
    """A pool of `workers` local processes."""

    def __init__(self, workers: int) -> None:
        import multiprocessing

        self.workers = workers
        context = multiprocessing.get_context(_start_method())
        if context.get_start_method() == "forkserver":
            # The server imports the games once; each worker is then forked with them loaded.
            context.set_forkserver_preload(["engine.sim"])
        self._pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_ignore_sigint
        )

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        futures: dict[Future[R], int] = {}
        pending: set[Future[R]] = set()
        try:
            for index, task in enumerate(tasks):
                future = self._pool.submit(fn, task)
                futures[future] = index
                pending.add(future)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                # In submission order, so a run that finishes several at once merges them
                # in the same order every time (the results do not depend on it anyway).
                for future in sorted(done, key=futures.__getitem__):
                    yield futures[future], future.result()
        except BrokenProcessPool:
            raise ExecutorError(
                "a worker process died (killed, or out of memory?): run again, with fewer "
                "--workers if memory is short"
            ) from None
        finally:
            for future in pending:
                future.cancel()

    def close(self) -> None:
        # Tasks not started were cancelled by `run`; the running ones are short.
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(_Closing):
    """The workers of the Dask cluster whose scheduler listens at `address` (tcp://HOST:PORT)."""

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise InputError(
                f"--executor {DASK_SCHEME}...: needs the dask extra: {DASK_HINT}"
            ) from None
        self.address = address
        try:
            self._client = Client(address, timeout=DASK_CONNECT_S, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(
                f"cannot reach the Dask scheduler at {address}: {_reason(exc)}"
            ) from None
        threads = sum(self._client.nthreads().values())
        self.workers = max(1, threads)

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        from distributed import as_completed

        # pure=False: each task is its own key (equal tasks are still separate work).
        futures = self._client.map(fn, list(tasks), pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        try:
            for future in as_completed(futures, loop=self._client.loop):
                yield index[future.key], future.result()
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(f"the Dask cluster at {self.address}: {_reason(exc)}") from None
        finally:
            self._client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            client.close()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def cpu_count() -> int:
    """The cores this process may use (its CPU affinity where the system says)."""
    counted = getattr(os, "process_cpu_count", None)  # Python 3.13
    if counted is not None:
        return counted() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def check_workers(workers: int | None) -> int:
    """`--workers`: None means every core; InputError (exit 2) outside 1..MAX_WORKERS."""
    if workers is None:
        return cpu_count()
    if not 1 <= workers <= MAX_WORKERS:
        raise InputError(f"--workers {workers}: from 1 to {MAX_WORKERS}")
    return workers


def check_executor(spec: str | None) -> str | None:
    """`--executor`: `local` (None) or `dask://HOST:PORT`; the Dask scheduler address, or None."""
    if spec is None or spec == "local":
        return None
    if spec.startswith(DASK_SCHEME):
        rest = spec[len(DASK_SCHEME) :]
        host, sep, port = rest.rpartition(":")
        if sep and host and port.isdigit() and 0 < int(port) < 65536 and "/" not in rest:
            return f"tcp://{rest}"
    raise InputError(f"--executor {spec}: use local or {DASK_SCHEME}HOST:PORT")


def executor_for(address: str | None, workers: int, tasks: int) -> Executor:
    """The executor for checked `--executor` / `--workers` values and a run of `tasks` tasks:
    Dask at `address`, else a process pool (no more processes than tasks), else inline."""
    if address is not None:
        return DaskExecutor(address)
    workers = min(workers, tasks)
    if workers <= 1:
        return InlineExecutor()
    return ProcessExecutor(workers)
