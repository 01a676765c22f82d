"""Pin factory choice, what a factory gives (edge stamps, a name), its failures, and the pins lock.

The daemon passes one pin factory explicitly to every device (never the global default), so a test,
the bench and the daemon can each hold their own factory. On a Pi gpiozero picks lgpio (Pi 5,
Bookworm) or RPi.GPIO; with ``--mock`` (or ``GPIOZERO_PIN_FACTORY=mock``) it is gpiozero's
``MockFactory`` with PWM-capable pins, which the plant (``firmware/plant.py``) drives like the real
mechanism. A factory or a pin that cannot be had is one line (hardware/gpio.md): the library
missing, not a Pi, the GPIO chip refused, a pin another program holds.

``claim_pins()`` takes an exclusive lock so two programs (``launcher run`` and ``launcher bench``)
never drive the same header at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import i18n
from common.errors import LauncherError, UsageError

LOCK_NAME = "launcher-pins.lock"
KEEP_PIN_STATES = 64  # newest states a mock pin remembers (gpiozero's own keeps every one)

log = logging.getLogger(__name__)


def mock_requested(env: Mapping[str, str] | None = None) -> bool:
    """True when the environment asks gpiozero for mock pins (``GPIOZERO_PIN_FACTORY=mock``)."""
    asked = (os.environ if env is None else env).get("GPIOZERO_PIN_FACTORY", "")
    return asked.strip().lower() == "mock"


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


def is_lgpio(factory: Any) -> bool:
    """True for gpiozero's lgpio backend (``LGPIOFactory``: Raspberry Pi OS Bookworm, Pi 5),
    whatever chip is under it."""
    return any(cls.__module__ == "gpiozero.pins.lgpio" for cls in type(factory).__mro__)


def stamps_edges(factory: Any) -> bool:
    """True when ``factory``'s pins hand gpiozero the time the kernel stamped on each input edge
    (lgpio: each alert's timestamp, CLOCK_MONOTONIC), so an input device's ``active_time`` read
    in its callback is the age of the edge, however late the callback runs. Elsewhere (mock
    pins, RPi.GPIO, native) the callback's own time is the best there is."""
    return is_lgpio(factory)


def make_factory(*, mock: bool) -> Any:
    """Return a new pin factory: ``MockFactory(pin_class=MockPWMPin)`` or gpiozero's default.

    Raises one line: UsageError (exit 2) when ``GPIOZERO_PIN_FACTORY`` names no pin factory;
    LauncherError (exit 1) when the one it names, or every one gpiozero tries, cannot drive
    the pins here (library missing, not a Raspberry Pi, ``/dev/gpiochip*`` not allowed).
    """
    if mock:
        from gpiozero.pins.mock import MockFactory

        return MockFactory(pin_class=_bounded_mock_pin())
    from gpiozero import Device
    from gpiozero.exc import BadPinFactory, PinFactoryFallback

    named = os.environ.get("GPIOZERO_PIN_FACTORY")
    if named is not None:
        known = factory_names()
        if named.strip().lower() not in known:
            raise UsageError(
                i18n._(
                    "GPIOZERO_PIN_FACTORY={name!r} names no pin factory; use one of {factories}, "
                    "or unset it to let gpiozero choose"
                ).format(name=named, factories=", ".join(sorted(known)))
            )
    with warnings.catch_warnings(record=True) as fallbacks:
        # gpiozero warns once per library it tries and cannot load; collected here so the
        # user reads one line (the error below, or one log line naming what was skipped).
        warnings.simplefilter("always", PinFactoryFallback)
        try:
            # gpiozero's own choice (lgpio, RPi.GPIO, ...), honouring GPIOZERO_PIN_FACTORY.
            factory = Device._default_pin_factory()
        except BadPinFactory:
            factory = None
        except Exception as exc:
            # A factory named in GPIOZERO_PIN_FACTORY is loaded without gpiozero's fallbacks,
            # so its own failure arrives here.
            raise LauncherError(
                i18n._(
                    "GPIOZERO_PIN_FACTORY={name}: {reason}; unset it to let gpiozero choose, or "
                    "use --mock"
                ).format(name=named, reason=library_failure(exc))
            ) from None
    tried = "; ".join(
        _fallback_reason(str(w.message).removeprefix("Falling back from "))
        for w in fallbacks
        if issubclass(w.category, PinFactoryFallback)
    )
    if factory is None:
        raise LauncherError(
            i18n._(
                "no GPIO library could drive the pins ({tried}); on a Raspberry Pi install the "
                "'pi' extra, anywhere else use --mock"
            ).format(tried=tried or i18n._("none found"))
        )
    if tried:
        log.info("GPIO: using %s after trying %s", type(factory).__name__, tried)
    return factory


def factory_names() -> set[str]:
    """The pin factories gpiozero knows (its ``gpiozero_pin_factories`` entry points)."""
    from importlib.metadata import entry_points

    return {ep.name.lower() for ep in entry_points(group="gpiozero_pin_factories")}


def _chip_denied() -> str:
    # lgpio's 'can not open gpiochip': open() of /dev/gpiochipN failed
    return i18n._(
        "cannot open the GPIO chip /dev/gpiochip*: it is missing, or this user may not use it "
        "(add it to the gpio group)"
    )


def _not_a_pi() -> str:
    return i18n._(
        "this is not a Raspberry Pi (gpiozero finds no board revision in /proc/device-tree "
        "or /proc/cpuinfo)"
    )


def _not_installed(module: str) -> str:
    return i18n._("the {module} module is not installed").format(module=module)


def library_failure(exc: BaseException) -> str:
    """Why a pin library failed, in one line: its module missing, not a Pi, the GPIO chip not
    allowed, or the library's own words."""
    from gpiozero.exc import PinUnknownPi

    if isinstance(exc, ImportError):
        missing = getattr(exc, "name", None)
        return _not_installed(missing) if missing else _one_line(exc)
    if isinstance(exc, PinUnknownPi):
        return _not_a_pi()
    if isinstance(exc, PermissionError):
        if exc.filename:
            return i18n._("permission denied on {path} (add this user to the gpio group)").format(
                path=exc.filename
            )
        return i18n._("permission denied (add this user to the gpio group)")
    text = _one_line(exc)
    if text == "can not open gpiochip":
        return _chip_denied()
    return text


def _fallback_reason(text: str) -> str:
    # gpiozero's "lgpio: 'can not open gpiochip'" said as library_failure says it.
    name, _, reason = text.partition(": ")
    reason = reason.strip("'\"")
    if reason == "can not open gpiochip":
        return f"{name}: {_chip_denied()}"
    if reason.startswith("unable to locate Pi revision"):  # gpiozero's PinUnknownPi
        return f"{name}: {_not_a_pi()}"
    if reason.startswith("No module named "):
        module = reason.removeprefix("No module named ").strip("'")
        return f"{name}: {_not_installed(module)}"
    return text


def _one_line(exc: BaseException) -> str:
    # lgpio's error quotes its text (its __str__ is repr(text)); the first line of anything.
    text = str(exc).strip().strip("'\"").splitlines()
    return text[0] if text else type(exc).__name__


def _refuses(factory: Any, number: int) -> bool:
    try:
        factory.pin(number)
    except Exception:
        return True
    return False


def pin_failure(exc: BaseException, factory: Any, pins: dict[str, int]) -> LauncherError | None:
    """The one-line error for a part of the box whose ``pins`` (``[pins]`` name -> GPIO) the pin
    library refused while it was being built, or None when ``exc`` is not a pin library's
    refusal (a bug, which keeps its traceback).

    Which of a part's pins failed is found by asking the factory for each again, in order: the
    ones already built come back, the refused one refuses again."""
    from gpiozero.exc import GPIOZeroError

    library_error = getattr(sys.modules.get("lgpio"), "error", None)
    refusals: tuple[type[BaseException], ...] = (GPIOZeroError, OSError, RuntimeError)
    if isinstance(library_error, type) and issubclass(library_error, BaseException):
        refusals += (library_error,)
    if isinstance(exc, LauncherError) or not isinstance(exc, refusals):
        return None
    first = next(iter(pins.items()), ("?", -1))
    name, number = next(((n, pin) for n, pin in pins.items() if _refuses(factory, pin)), first)
    reason = library_failure(exc)
    if reason == "GPIO busy":  # lgpio: the kernel's EBUSY, another request holds the line
        return LauncherError(
            i18n._(
                "GPIO {number} ([pins] {name}) is busy: another program holds it (a second "
                "launcher, gpioset or gpiomon, a device-tree overlay); stop it or wire {name} "
                "to another pin"
            ).format(number=number, name=name)
        )
    return LauncherError(
        i18n._("GPIO {number} ([pins] {name}) cannot be used: {reason}").format(
            number=number, name=name, reason=reason
        )
    )


def _bounded_mock_pin() -> type:
    """``MockPWMPin`` whose ``states`` history keeps only the newest `KEEP_PIN_STATES`.

    gpiozero's mock pin appends every change to ``states`` for its own test assertions; a mock
    box that runs for hours would grow by a few hundred bytes per press for ever."""
    from collections import deque

    from gpiozero.pins.mock import MockPWMPin

    class BoundedMockPWMPin(MockPWMPin):
        states: deque[Any]

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
        raise LauncherError(
            i18n._("cannot open the pins lock {path}: {reason}").format(
                path=lock_path, reason=exc.strerror
            )
        ) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
        finally:
            os.close(fd)
        raise LauncherError(
            i18n._("pins are held by a running launcher (pid {pid})").format(pid=holder)
        ) from None
    except OSError as exc:
        os.close(fd)
        raise LauncherError(
            i18n._("cannot lock {path}: {reason}").format(path=lock_path, reason=exc.strerror)
        ) from exc
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return PinsLock(lock_path, fd)
