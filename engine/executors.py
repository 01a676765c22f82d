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

Ctrl-C (`common.commandline.CtrlC`, which the commands install around the whole run): it never
interrupts an executor's own bookkeeping (a KeyboardInterrupt inside a process pool's locks
deadlocks it). The first one stops the run between two results: `run` submits nothing more and
raises KeyboardInterrupt where the caller reads its next result, the tasks still in flight end
(a task is a short block of games; at most a couple per worker are in flight, so stopping never
waits over thousands) or are cancelled by `close`. A second one gives up the tasks still running
(the pool's workers are ended at once). The workers ignore SIGINT (a terminal sends it to the
whole process group): only this process decides. SIGTERM and SIGHUP are taken as Ctrl-C
(`CtrlC`), and a worker dies with this process however it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from common.commandline import STOP_SIGNALS, CtrlC, die_with_parent, digits
from engine.errors import InputError, UnoError

if TYPE_CHECKING:
    from concurrent.futures import Future

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
_STOP = object()  # what Ctrl-C puts among the finished tasks to wake `run`


class ExecutorError(UnoError):
    """The executor itself failed (a worker process died, the cluster went away): exit 1."""

    exit_code = 1


class Executor(Protocol):
    """Runs tasks somewhere; `workers` is how many can run at once (to size the tasks)."""

    workers: int

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        """`(index, fn(tasks[index]))` for every task, as each finishes. Ctrl-C raises
        KeyboardInterrupt here; an exception in a task is raised here."""
        ...

    def close(self) -> None:
        """Release the workers (idempotent)."""
        ...


class _Stoppable:
    """What the executors share: Ctrl-C taken between tasks (see the module's docstring).

    With no `ctrl_c` given (a library caller), an executor that must not be interrupted mid-way
    installs its own for as long as it is open."""

    workers: int
    _own_ctrl_c = True
    _window_per_worker = 2  # tasks in flight per worker: one running, one waiting behind it

    def __init__(self, ctrl_c: CtrlC | None = None) -> None:
        self._stack = contextlib.ExitStack()
        if ctrl_c is None and self._own_ctrl_c:
            ctrl_c = self._stack.enter_context(CtrlC())
        self._ctrl_c = ctrl_c
        self._wake: SimpleQueue[Any] | None = None
        if ctrl_c is not None:
            self._stack.enter_context(ctrl_c.listen(self._on_ctrl_c))

    def _stopped(self) -> bool:
        return self._ctrl_c is not None and self._ctrl_c.count > 0

    def _on_ctrl_c(self, count: int) -> None:
        # In the main thread, from the signal handler: wake `run`, never raise.
        wake = self._wake
        if wake is not None:
            wake.put(_STOP)
        if count > 1:
            self._give_up()

    def _give_up(self) -> None:
        """A second Ctrl-C: end the tasks running now (from a signal handler)."""

    def _in_flight(
        self,
        submit: Callable[[int], Any],
        count: int,
        result: Callable[[Any], R],
        forget: Callable[[list[Any]], None],
    ) -> Iterator[tuple[int, R]]:
        """Tasks 0 to `count - 1`, at most `window` in flight: `submit(index)` starts one and
        returns its future, `result(future)` reads a finished one; each `(index, result)` as it
        finishes. Ctrl-C raises KeyboardInterrupt here, between two results; leaving early calls
        `forget` with the futures still in flight."""
        finished: SimpleQueue[Any] = SimpleQueue()  # a done callback's put: from any thread
        window = max(1, self._window_per_worker * self.workers)
        flying: dict[Any, int] = {}
        submitted = 0
        self._wake = finished
        try:
            while submitted < count or flying:
                while submitted < count and len(flying) < window and not self._stopped():
                    future = submit(submitted)
                    flying[future] = submitted
                    submitted += 1
                    future.add_done_callback(finished.put)
                if self._stopped():
                    raise KeyboardInterrupt
                future = finished.get()
                if future is _STOP:
                    raise KeyboardInterrupt
                yield flying.pop(future), result(future)
        finally:
            self._wake = None
            if flying:
                forget(list(flying))

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the workers (idempotent), then Ctrl-C is no longer this executor's."""
        try:
            self._release()
        finally:
            self._stack.close()

    def _release(self) -> None:
        pass


class InlineExecutor(_Stoppable):
    """Every task in this process, in order."""

    workers = 1
    _own_ctrl_c = False  # nothing to deadlock: without a CtrlC, Python's KeyboardInterrupt is fine

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        for index, task in enumerate(tasks):
            if self._stopped():
                raise KeyboardInterrupt
            yield index, fn(task)


def _worker_signals() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (a terminal sends it to the whole
    group), SIGTERM and SIGHUP end the worker (the pool's own way of ending one, and a worker
    forked from the parent has the parent's handlers for them), and the worker dies with the
    parent (`kill -9` of the command leaves no worker behind). It was started with the three
    held back (`_signals_held`); a SIGINT that came meanwhile is dropped with the ignoring."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    die_with_parent(signal.SIGKILL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """The stop signals held back in this thread while it may start worker processes: a new
    worker inherits the hold and keeps it until its initializer has set its own handling, so a
    Ctrl-C at that moment neither kills it half-started nor runs this process's handler in it.
    One that arrives meanwhile is delivered here on release."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


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


class ProcessExecutor(_Stoppable):
    """A pool of `workers` local processes."""

    def __init__(self, workers: int, ctrl_c: CtrlC | None = None) -> None:
        # Imported here: every command line (`unoattack --help`, `sim --workers 1`) would pay
        # for the process pool's modules otherwise.
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        context = multiprocessing.get_context(_start_method())
        if context.get_start_method() == "forkserver":
            # The server imports the games once; each worker is then forked with them loaded.
            context.set_forkserver_preload(["engine.sim"])
        self._pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_worker_signals
        )
        super().__init__(ctrl_c)

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        from concurrent.futures.process import BrokenProcessPool

        def submit(index: int) -> Future[R]:
            try:
                with _signals_held():  # the pool starts its workers in `submit`
                    return self._pool.submit(fn, tasks[index])
            except BrokenProcessPool:
                raise self._broken() from None

        def result(future: Future[R]) -> R:
            try:
                return future.result()
            except BrokenProcessPool:
                raise self._broken() from None

        # Tasks left in flight are not cancelled here: the pool cancels those not started in
        # `close` (a future cancelled from outside can break the pool's own clean-up on 3.11).
        yield from self._in_flight(submit, len(tasks), result, lambda flying: None)

    def _broken(self) -> BaseException:
        """What a broken pool means: the workers ended by a second Ctrl-C, or one died."""
        if self._stopped():
            return KeyboardInterrupt()
        return ExecutorError(
            "a worker process died (killed, or out of memory?): run again, with fewer "
            "--workers if memory is short"
        )

    def _give_up(self) -> None:
        # `_processes` is the pool's table of its workers (Python 3.14 adds terminate_workers()
        # for this); the pool sees them end and fails what they were running, its clean-up.
        processes = getattr(self._pool, "_processes", None) or {}
        for process in list(processes.values()):
            with contextlib.suppress(Exception):
                process.terminate()

    def _release(self) -> None:
        # Cancels the tasks not started; waits for the running ones (short), or for their
        # workers to be ended by a second Ctrl-C.
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(_Stoppable):
    """The workers of the Dask cluster whose scheduler listens at `address` (tcp://HOST:PORT)."""

    def __init__(self, address: str, ctrl_c: CtrlC | None = None) -> None:
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
        super().__init__(ctrl_c)

    def run(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[tuple[int, R]]:
        client = self._client

        def submit(index: int) -> Any:
            # pure=False: each task is its own key (equal tasks are still separate work).
            return client.submit(fn, tasks[index], pure=False)

        def result(future: Any) -> R:
            try:
                return future.result()
            except (OSError, TimeoutError) as exc:
                raise ExecutorError(f"the Dask cluster at {self.address}: {_reason(exc)}") from None

        # The cluster's tasks are not ours to wait for: those in flight are cancelled at once.
        yield from self._in_flight(submit, len(tasks), result, client.cancel)

    def _release(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            del self._client  # released once
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
        number = digits(port)  # ("²" passed isdigit, then failed int: a traceback)
        if sep and host and number is not None and 0 < number < 65536 and "/" not in rest:
            return f"tcp://{rest}"
    raise InputError(f"--executor {spec}: use local or {DASK_SCHEME}HOST:PORT")


def executor_for(
    address: str | None, workers: int, tasks: int, ctrl_c: CtrlC | None = None
) -> Executor:
    """The executor for checked `--executor` / `--workers` values and a run of `tasks` tasks:
    Dask at `address`, else a process pool (no more processes than tasks), else inline; each
    stops on the command's `ctrl_c`."""
    if address is not None:
        return DaskExecutor(address, ctrl_c)
    workers = min(workers, tasks)
    if workers <= 1:
        return InlineExecutor(ctrl_c)
    return ProcessExecutor(workers, ctrl_c)
