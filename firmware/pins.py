"""Pin factory choice and the pins lock.

The daemon passes one pin factory explicitly to every device (never the global default), so a test,
the bench and the daemon can each hold their own factory. On a Pi gpiozero picks lgpio (Pi 5) or
RPi.GPIO; with ``--mock`` (or ``GPIOZERO_PIN_FACTORY=mock``) it is gpiozero's ``MockFactory`` with
PWM-capable pins, which the plant (``firmware/plant.py``) drives like the real mechanism.

``claim_pins()`` takes an exclusive lock so two programs (``launcher run`` and ``launcher bench``)
never drive the same header at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import warnings
from pathlib import Path
from typing import Any

from firmware.errors import LauncherError

LOCK_NAME = "launcher-pins.lock"
KEEP_PIN_STATES = 64  # newest states a mock pin remembers (gpiozero's own keeps every one)

log = logging.getLogger(__name__)


def mock_requested(env: dict[str, str] | None = None) -> bool:
    """True when the environment asks gpiozero for mock pins (``GPIOZERO_PIN_FACTORY=mock``)."""
    env = os.environ if env is None else env
    return env.get("GPIOZERO_PIN_FACTORY", "").strip().lower() == "mock"


def is_mock(factory: Any) -> bool:
    """True for gpiozero's ``MockFactory`` (tests, ``--mock``): no real pins behind it."""
    from gpiozero.pins.mock import MockFactory

    return isinstance(factory, MockFactory)


def pins_label(factory: Any, *, simulated: bool = False) -> str:
    """How a status line names the pins: ``mock``, ``lgpio``, ``rpigpio``, ``native``, ...; a
    simulated chip under a real backend (tests, pi-check) says so: ``lgpio, simulated chip``."""
    if is_mock(factory):
        return "mock"
    name = type(factory).__name__.removesuffix("Factory").lower()
    return f"{name}, simulated chip" if simulated else name


def stamps_edges(factory: Any) -> bool:
    """True when ``factory``'s pins hand gpiozero the time the kernel stamped on each input edge
    (lgpio: each alert's timestamp, CLOCK_MONOTONIC), so an input device's ``active_time`` read
    in its callback is the age of the edge, however late the callback runs. Elsewhere (mock
    pins, RPi.GPIO, native) the callback's own time is the best there is."""
    return any(cls.__module__ == "gpiozero.pins.lgpio" for cls in type(factory).__mro__)


def make_factory(*, mock: bool) -> Any:
    """Return a new pin factory: ``MockFactory(pin_class=MockPWMPin)`` or gpiozero's default.

    Raises LauncherError (one line) when no real GPIO library can be loaded.
    """
    if mock:
        from gpiozero.pins.mock import MockFactory

        return MockFactory(pin_class=_bounded_mock_pin())
    from gpiozero import Device
    from gpiozero.exc import BadPinFactory, PinFactoryFallback

    with warnings.catch_warnings(record=True) as fallbacks:
        # gpiozero warns once per library it tries and cannot load; collected here so the
        # user reads one line (the error below, or one log line naming what was skipped).
        warnings.simplefilter("always", PinFactoryFallback)
        try:
            # gpiozero's own choice (lgpio, RPi.GPIO, ...), honouring GPIOZERO_PIN_FACTORY.
            factory = Device._default_pin_factory()
        except BadPinFactory:
            factory = None
    tried = "; ".join(
        str(w.message).removeprefix("Falling back from ")
        for w in fallbacks
        if issubclass(w.category, PinFactoryFallback)
    )
    if factory is None:
        raise LauncherError(
            f"no GPIO library could drive the pins ({tried or 'none found'}); on a Raspberry Pi "
            "install the 'pi' extra, anywhere else use --mock"
        )
    if tried:
        log.info("GPIO: using %s after trying %s", type(factory).__name__, tried)
    return factory


def _bounded_mock_pin() -> type:
    """``MockPWMPin`` whose ``states`` history keeps only the newest `KEEP_PIN_STATES`.

    gpiozero's mock pin appends every change to ``states`` for its own test assertions; a mock
    box that runs for hours would grow by a few hundred bytes per press for ever."""
    from collections import deque

    from gpiozero.pins.mock import MockPWMPin

    class BoundedMockPWMPin(MockPWMPin):
        def clear_states(self) -> None:
            super().clear_states()
            self.states = deque(self.states, maxlen=KEEP_PIN_STATES)

    return BoundedMockPWMPin


def default_lock_path() -> Path:
    """Where the pins lock lives: $XDG_RUNTIME_DIR, else /run/launcher, else /tmp."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        return Path(runtime) / LOCK_NAME
    run_dir = Path("/run/launcher")
    if run_dir.is_dir() and os.access(run_dir, os.W_OK):
        return run_dir / LOCK_NAME
    return Path("/tmp") / LOCK_NAME


class PinsLock:
    """An exclusive ``fcntl`` lock on a file naming the holder's pid. A context manager.

    The kernel drops the lock when the process dies, so a crashed daemon never leaves the pins
    claimed.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        """True until ``release()``."""
        return self._fd is not None

    def release(self) -> None:
        """Release the lock; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> PinsLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim_pins(path: str | os.PathLike[str] | None = None) -> PinsLock:
    """Take the pins lock, or raise LauncherError("pins are held by a running launcher (pid N)")."""
    lock_path = Path(path) if path is not None else default_lock_path()
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise LauncherError(f"cannot open the pins lock {lock_path}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
        finally:
            os.close(fd)
        raise LauncherError(f"pins are held by a running launcher (pid {holder})") from None
    except OSError as exc:
        os.close(fd)
        raise LauncherError(f"cannot lock {lock_path}: {exc.strerror}") from exc
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return PinsLock(lock_path, fd)
