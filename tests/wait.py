"""The one wait-until helper of the test suite: a condition polled (or a source pumped) until it
holds, with a deadline that names what never came. Generous timeouts are fine: on a healthy
machine the condition holds in milliseconds, and a busy one must not fail the test."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

WAIT = 20.0  # seconds a helper waits for what a test expects


def wait_until(
    condition: Callable[[], T],
    timeout: float = WAIT,
    *,
    what: str | Callable[[], str] = "the condition",
    step: Callable[[], object] | None = None,
    poll: float = 0.005,
) -> T:
    """Return the first truthy value of ``condition()``; between tries run ``step()`` (which
    should block briefly on what brings the change, e.g. reading events) or sleep ``poll`` s.
    Raises ``AssertionError`` naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            told = what() if callable(what) else what
            raise AssertionError(f"{told} did not happen within {timeout:g} s")
        if step is not None:
            step()
        else:
            time.sleep(poll)


def read_lines(stream: Any) -> queue.Queue[Any]:
    """Lines of a child's text ``stream`` as they come, read by a thread (``get(timeout=)``
    never hangs a test on a child that stays quiet); an empty line once it ends."""
    lines: queue.Queue[Any] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put(b"" if "b" in getattr(stream, "mode", "") else "")

    threading.Thread(target=pump, daemon=True).start()
    return lines
