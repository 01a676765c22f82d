"""Fixtures shared by every test package."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / "hardware" / "launcher.toml"

# Seeded, bounded hypothesis runs: same examples on every machine, no flaky deadlines on a
# loaded 2-core CI box.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# A suite started in the background of a script (`make test &` in a shell without job control)
# inherits SIGINT ignored, and so would every command a test starts: the Ctrl-C tests would test
# the shell, not the commands. Tests press Ctrl-C the way a user at a terminal does.
# Likewise a suite started under `nohup` inherits SIGHUP ignored (and some runners SIGTERM):
# the tests that close a terminal or stop a command send those on purpose.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
for _stop in (signal.SIGTERM, signal.SIGHUP):
    if signal.getsignal(_stop) is signal.SIG_IGN:
        signal.signal(_stop, signal.SIG_DFL)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` run first (in their collection order), the quick ones after them.

    `make test` shares them out with `-n 2 --dist worksteal`: a worker that runs dry takes half
    of what the other has not started. With the long tests at the front, what is left at the end
    is the quick ones, so the two workers finish together instead of one running a 15 s test
    alone at the end. Every xdist worker sorts its collection the same way (a stable sort)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def mock_factory() -> Iterator[object]:
    """A fresh gpiozero MockFactory with PWM-capable pins, reset after the test."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    factory = MockFactory(pin_class=MockPWMPin)
    previous = Device.pin_factory
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        Device.pin_factory = previous


@pytest.fixture
def simulated_chip() -> Iterator[object]:
    """``/dev/gpiochip0`` of a simulated Pi 4 (tests/simchip), ``import lgpio`` its module, for
    the test; afterwards no callback may have raised (it would have ended lgpio's alert thread)."""
    from tests import simchip
    from tests.simchip import lgpio as sim

    with simchip.installed() as chip:
        yield chip
        assert sim.alert_errors() == []


@pytest.fixture
def lgpio_factory(simulated_chip: object) -> Iterator[object]:
    """gpiozero's own ``LGPIOFactory`` on the simulated chip; closed after the test."""
    from gpiozero.pins.lgpio import LGPIOFactory

    factory = LGPIOFactory()
    try:
        yield factory
    finally:
        factory.close()
        # gpiozero keeps the reservation of a device whose pin refused to open (GPIODevice
        # reserves before it opens), in a table every LocalPiFactory shares: a test that
        # provoked a refusal must not leave its pins "in use" for the next one.
        type(factory)._reservations.clear()


PIN_FACTORIES = ("mock", "lgpio")
"""The pin factories a behaviour test runs on: ``pytest.mark.parametrize("pins", PIN_FACTORIES,
indirect=True)``."""


@pytest.fixture
def pins(request: pytest.FixtureRequest) -> str:
    """Which pin factory the test's box uses: ``mock`` unless the test is parametrized."""
    return str(getattr(request, "param", "mock"))


@pytest.fixture
def pin_factory(pins: str, request: pytest.FixtureRequest) -> object:
    """The pin factory ``pins`` names: MockFactory, or gpiozero's LGPIOFactory on the simulated
    chip."""
    return request.getfixturevalue("mock_factory" if pins == "mock" else "lgpio_factory")


def run_main(
    main: Callable[[list[str]], int], argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of a command line's `main(ARGV)` in this process
    (argparse's own errors and --version exit through SystemExit)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_unoattack(
    *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`unoattack ARGS` as a user runs it: a process of its own in `cwd`, `stdin` piped in;
    its exit code and output (text)."""
    return subprocess.run(
        [sys.executable, "-m", "engine.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def default_config_path() -> Path:
    """Path of the documented default config, hardware/launcher.toml."""
    return DEFAULT_CONFIG


# Every test speaks English unless it asks for another language: the machine's LANG must not
# decide what the messages say (subprocesses inherit this too).
os.environ["LANGUAGE"] = "en"


@pytest.fixture(autouse=True)
def _english_after_each_test() -> Iterator[None]:
    """A command line run in-process with --lang leaves its language in use: back to English."""
    yield
    import i18n

    i18n.use("en")


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture(autouse=True)
def _stop_signals_after_each_test() -> Iterator[None]:
    """A command run in-process takes the stop signals (CtrlC ignores them once stopping):
    the handlers are put back after each test, so that the commands later tests start in
    this worker do not inherit an ignored SIGTERM or SIGINT."""
    handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    yield
    for sig, handler in handlers.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)
