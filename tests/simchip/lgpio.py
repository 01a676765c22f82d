"""The parts of the ``lgpio`` module that gpiozero's ``LGPIOFactory`` calls, on a simulated chip.

Installed as ``sys.modules["lgpio"]`` by ``tests.simchip.install()``, so gpiozero's own
``gpiozero.pins.lgpio`` runs unchanged above it. It behaves as lgpio 0.2 does on a Raspberry
Pi (checked against lgpio's C sources, not copied from them):

- handles: ``gpiochip_open(n)`` returns ``index | n << 16``; a refused device is
  ``error('can not open gpiochip')``; every failure raises ``error(error_text(code))``, whose
  ``str`` is the quoted text, as the real module's is;
- claims: a line another request holds is ``'GPIO busy'``; claiming a line again from the same
  handle replaces the earlier claim; pull flags ``SET_PULL_UP/DOWN/NONE``;
  ``gpio_get_mode`` reports the kernel's bits and lgpio's own (input 256, output 512, alert 1024);
- edges: the chip stamps each edge (CLOCK_MONOTONIC ns); lgpio's alert thread debounces them as
  lgpio does (an edge is reported once the line has been stable for the debounce time, stamped
  ``debounce`` after the edge; with both edges watched, only a level different from the last one
  reported), and reports them in time order once they are 0.5 ms old (lgpio waits that long so
  that reports from several lines come sorted). ``callback(handle, gpio, edge, func)`` calls
  ``func(chip, gpio, level, tick_ns)`` from that thread;
- ``tx_pwm`` (0.1-10 000 Hz, duty 0-100 %, frequency 0 stops it) and ``tx_servo`` (pulse width
  500-2500 µs at 40-500 Hz, width 0 stops it) both come down to lgpio's ``lgTxPulse``: whole
  microseconds high and low each cycle (``tx_pwm`` rounds the duty's share of the cycle to the
  microsecond), on a line lgpio makes an output first if this handle holds it as an input or
  not at all. Stopping pulses that do not run is ``'bad PWM micros'``; stopping them leaves the
  line where lgpio's tx thread left it (see ``SimChip.pulse``). ``tx_servo``'s numbers are C
  ``int``s: a float is a ``TypeError``, as from lgpio's SWIG wrapper; ``tx_pwm``'s are C
  ``float``s (single precision).

What it leaves out: SPI, I2C, serial, groups, waves, watchdogs, and the notification FIFO lgpio
creates in the working directory.
"""

from __future__ import annotations

import contextlib
import itertools
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .chip import (
    BAD_GPIO_NUMBER,
    CANNOT_OPEN_CHIP,
    FALLING,
    GPIO_BUSY,
    GPIO_NOT_ALLOCATED,
    GPIO_NOT_AN_OUTPUT,
    PULL_DOWN,
    PULL_NONE,
    PULL_UP,
    RISING,
    ChipError,
    SimChip,
)

LGPIO_PY_VERSION = 0x00020200  # what the module says it is: lgpio 0.2.2

exceptions = True

OFF = LOW = CLEAR = 0
ON = HIGH = SET = 1
TIMEOUT = 2

SET_ACTIVE_LOW = 4
SET_OPEN_DRAIN = 8
SET_OPEN_SOURCE = 16
SET_PULL_UP = PULL_UP
SET_PULL_DOWN = PULL_DOWN
SET_PULL_NONE = PULL_NONE

RISING_EDGE = RISING
FALLING_EDGE = FALLING
BOTH_EDGES = RISING | FALLING

OKAY = 0
NOT_PERMITTED = -7
BAD_HANDLE = -5
BAD_PWM_MICROS = -86
BAD_SERVO_FREQ = -100
BAD_SERVO_WIDTH = -101
BAD_PWM_FREQ = -102
BAD_PWM_DUTY = -103
BAD_DEBOUNCE_MICS = -98
BAD_GPIOCHIP = -89

_TEXT = {
    OKAY: "No error",
    BAD_HANDLE: "unknown handle",
    NOT_PERMITTED: "GPIO operation not permitted",
    BAD_GPIO_NUMBER: "bad GPIO number",
    CANNOT_OPEN_CHIP: "can not open gpiochip",
    GPIO_BUSY: "GPIO busy",
    GPIO_NOT_ALLOCATED: "GPIO not allocated",
    BAD_GPIOCHIP: "bad gpiochip",
    BAD_DEBOUNCE_MICS: "bad debounce microseconds",
    BAD_PWM_MICROS: "bad PWM micros",
    BAD_SERVO_FREQ: "bad servo frequency",
    BAD_SERVO_WIDTH: "bad servo pulsewidth",
    BAD_PWM_FREQ: "bad PWM frequency",
    BAD_PWM_DUTY: "bad PWM dutycycle",
    GPIO_NOT_AN_OUTPUT: "GPIO not set as an output",
}

MAX_DEBOUNCE_US = 5_000_000
MIN_TX_DELAY_US = 10  # lgpio's lgMinTxDelay: a pulse cycle must be longer than this
TX_BUF = 10  # entries of lgpio's PWM queue for one line
REPORT_LAG_NS = 500_000  # lgpio reports an edge once it is this old (so reports come sorted)
LEEWAY_NS = 50_000  # and times a debounce out this much behind now

# lgpio's own line modes, reported by gpio_get_mode shifted up by 8 bits.
_LG_INPUT, _LG_OUTPUT, _LG_ALERT = 1, 2, 4
_KERNEL_USED, _KERNEL_OUTPUT, _KERNEL_INPUT = 1, 2, 65536


class error(Exception):
    """lgpio's exception: ``value`` is the error text; ``str`` is its repr, as in lgpio."""

    def __init__(self, value: str) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return repr(self.value)


def error_text(errnum: int) -> str:
    """The text of an lgpio error number."""
    return _TEXT.get(errnum, "unknown error")


def _fail(code: int) -> None:
    raise error(error_text(code))


# -- the board: the chips this simulated Pi has ----------------------------------------------

BOARD: dict[int, SimChip] = {}
_handles: dict[int, SimChip] = {}  # handle (without the chip bits) -> chip
_next_handle = itertools.count(1)
_lock = threading.RLock()  # the board and the handles
# The callbacks: taken by the alert threads, so never held while joining one.
_cb_lock = threading.Lock()


def fresh_board() -> SimChip:
    """Forget every chip and open handle; a new ``/dev/gpiochip0``. Returns it."""
    with _lock:
        stopping = list(_alerts.values())
        _alerts.clear()
        _handles.clear()
        BOARD.clear()
        BOARD[0] = SimChip(0)
        chip = BOARD[0]
    with _cb_lock:
        _callbacks.clear()
    for alerts in stopping:
        alerts.stop()
    return chip


def plant_side(chip: int) -> SimChip:
    """The world side of ``/dev/gpiochip{chip}``: what the plant drives and watches
    (``firmware.plant.world_of`` asks for it; the real lgpio has no such thing)."""
    return BOARD[chip]


def _chip(handle: int) -> SimChip:
    chip = _handles.get(handle & 0xFFFF)
    if chip is None:
        _fail(BAD_HANDLE)
    assert chip is not None
    return chip


def _call(fn: Callable[[], object]) -> int:
    try:
        fn()
    except ChipError as exc:
        _fail(exc.code)
    return OKAY


# -- GPIO -------------------------------------------------------------------------------------


def gpiochip_open(gpiochip: int) -> int:
    """Open ``/dev/gpiochip{gpiochip}``; a handle (chip number in bits 16 up)."""
    if gpiochip < 0:
        _fail(BAD_GPIOCHIP)
    with _lock:
        chip = BOARD.get(gpiochip)
        if chip is None:
            _fail(CANNOT_OPEN_CHIP)  # no such device
        assert chip is not None
        handle = next(_next_handle)
        _call(lambda: chip.open(handle))
        _handles[handle] = chip
        return handle | (gpiochip << 16)


def gpiochip_close(handle: int) -> int:
    """Close the chip handle: its lines are released, its alerts end."""
    with _lock:
        chip = _chip(handle)
        del _handles[handle & 0xFFFF]
        alerts = _alerts.get(chip.number)
        if alerts is not None:
            alerts.forget_handle(handle & 0xFFFF)
        chip.close(handle & 0xFFFF)
        if alerts is not None and chip.open_handles == 0:
            del _alerts[chip.number]
        else:
            alerts = None
    if alerts is not None:
        alerts.stop()  # the last handle: lgpio's alert thread has nothing left to read
    return OKAY


def gpio_get_mode(handle: int, gpio: int) -> int:
    """The kernel's line bits | lgpio's own mode << 8 (input 256, output 512, alert 1024)."""
    chip = _chip(handle)
    try:
        used, output, bias, edges = chip.mode(gpio)
        owned = chip.owner(gpio) == handle & 0xFFFF
    except ChipError as exc:
        _fail(exc.code)
    status = (_KERNEL_USED if used else 0) | bias
    status |= _KERNEL_OUTPUT if output else _KERNEL_INPUT
    if owned:
        status |= (_LG_OUTPUT if output else _LG_ALERT if edges else _LG_INPUT) << 8
    return status


def gpio_claim_input(handle: int, gpio: int, lFlags: int = 0) -> int:
    """Claim ``gpio`` as an input with ``lFlags`` (pull flags)."""
    chip = _chip(handle)
    _forget_alert(chip, gpio)
    return _call(lambda: chip.claim_input(handle & 0xFFFF, gpio, lFlags))


def gpio_claim_output(handle: int, gpio: int, level: int = 0, lFlags: int = 0) -> int:
    """Claim ``gpio`` as an output driving ``level``."""
    chip = _chip(handle)
    _forget_alert(chip, gpio)
    return _call(lambda: chip.claim_output(handle & 0xFFFF, gpio, level, lFlags))


def gpio_free(handle: int, gpio: int) -> int:
    """Release ``gpio``."""
    chip = _chip(handle)
    _forget_alert(chip, gpio)
    return _call(lambda: chip.free(handle & 0xFFFF, gpio))


def gpio_read(handle: int, gpio: int) -> int:
    """0 or 1 (an unclaimed line is claimed as an input first, as lgpio does)."""
    chip = _chip(handle)
    if chip.owner(gpio) is None:
        gpio_claim_input(handle, gpio)
    try:
        return chip.read(handle & 0xFFFF, gpio)
    except ChipError as exc:
        _fail(exc.code)
    raise AssertionError  # unreachable


def gpio_write(handle: int, gpio: int, level: int) -> int:
    """Drive an output (an unclaimed line becomes an output first, as lgpio does)."""
    chip = _chip(handle)
    _used, output, _bias, _edges = chip.mode(gpio)
    if not output:
        return gpio_claim_output(handle, gpio, level)
    return _call(lambda: chip.write(handle & 0xFFFF, gpio, level))


def tx_pwm(
    handle: int,
    gpio: int,
    pwm_frequency: float,
    pwm_duty_cycle: float,
    pulse_offset: int = 0,
    pulse_cycles: int = 0,
) -> int:
    """Software PWM: ``pwm_frequency`` Hz (0 stops it, 0.1-10 000), duty 0-100 %; entries
    left in the line's PWM queue."""
    frequency, duty = _c_float(pwm_frequency), _c_float(pwm_duty_cycle)
    chip = _chip(handle)
    if frequency == 0:
        return _tx_pulse(handle, chip, gpio, 0, 0)
    if not 0.1 <= frequency <= 1e4:
        _fail(BAD_PWM_FREQ)
    if not 0 <= duty <= 100:
        _fail(BAD_PWM_DUTY)
    micros = int(1e6 / frequency + 0.5)
    on = int(duty / 100 * micros + 0.5)
    return _tx_pulse(handle, chip, gpio, on, micros - on)


def tx_servo(
    handle: int,
    gpio: int,
    pulse_width: int,
    servo_frequency: int = 50,
    pulse_offset: int = 0,
    pulse_cycles: int = 0,
) -> int:
    """Servo pulses: ``pulse_width`` µs high (0 stops them, 500-2500) ``servo_frequency``
    times a second (40-500); entries left in the line's PWM queue."""
    for number in (handle, gpio, pulse_width, servo_frequency, pulse_offset, pulse_cycles):
        if not isinstance(number, int):  # SWIG's int arguments take no float
            raise TypeError(f"in method '_tx_servo', expected an int, got {number!r}")
    chip = _chip(handle)
    if pulse_width == 0:
        return _tx_pulse(handle, chip, gpio, 0, 0)
    if not 40 <= servo_frequency <= 500:
        _fail(BAD_SERVO_FREQ)
    if not 500 <= pulse_width <= 2500:
        _fail(BAD_SERVO_WIDTH)
    micros = int(1e6 / servo_frequency + 0.5)
    if micros < pulse_width:
        _fail(BAD_SERVO_WIDTH)
    return _tx_pulse(handle, chip, gpio, pulse_width, micros - pulse_width)


def _tx_pulse(handle: int, chip: SimChip, gpio: int, on_us: int, off_us: int) -> int:
    # lgTxPulse: a line this handle holds as an input, or nobody holds, becomes an output (low)
    # first; pulses replace the running ones (at the end of their cycle: two queue entries
    # until then) or start; both 0 stops them, and there must be some to stop.
    if not 0 <= gpio < len(chip.lines):
        _fail(BAD_GPIO_NUMBER)
    _used, output, _bias, _edges = chip.mode(gpio)
    if not output and chip.owner(gpio) in (None, handle & 0xFFFF):
        with contextlib.suppress(error):
            gpio_claim_output(handle, gpio, 0)
    running = chip.pulsing(gpio)
    if on_us == off_us == 0:
        if not running:
            _fail(BAD_PWM_MICROS)
    elif on_us + off_us <= MIN_TX_DELAY_US:
        _fail(BAD_PWM_MICROS)
    _call(lambda: chip.pulse(handle & 0xFFFF, gpio, on_us, off_us))
    if on_us == off_us == 0:
        return OKAY
    return TX_BUF - (2 if running else 1)


def _c_float(value: float) -> float:
    # lgpio's C float: single precision (SWIG takes an int or a float).
    if not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return struct.unpack("f", struct.pack("f", value))[0]


def gpio_set_debounce_micros(handle: int, gpio: int, debounce_micros: int) -> int:
    """An alert is reported once the line has been stable this long (0-5 s)."""
    chip = _chip(handle)
    if not 0 <= debounce_micros <= MAX_DEBOUNCE_US:
        _fail(BAD_DEBOUNCE_MICS)
    return _call(lambda: chip.set_debounce(gpio, debounce_micros * 1000))


def gpio_claim_alert(
    handle: int,
    gpio: int,
    eFlags: int,
    lFlags: int = 0,
    notify_handle: int | None = None,
) -> int:
    """Claim ``gpio`` as an input reporting ``eFlags`` edges to the callbacks."""
    chip = _chip(handle)
    _forget_alert(chip, gpio)
    _call(lambda: chip.claim_alert(handle & 0xFFFF, gpio, eFlags, lFlags))
    with _lock:
        alerts = _alerts.get(chip.number)
        if alerts is None:
            alerts = _alerts[chip.number] = _Alerts(chip)
        alerts.add(handle & 0xFFFF, gpio, eFlags)
    return OKAY


class _Callback:
    """What ``callback()`` returns: ``cancel()`` stops it."""

    def __init__(self, chip: int, gpio: int, edge: int, func: Callable[..., None] | None) -> None:
        self.chip, self.gpio, self.edge = chip, gpio, edge
        self.count = 0
        self.func = func if func is not None else self._tally
        with _cb_lock:
            _callbacks.append(self)

    def _tally(self, chip: int, gpio: int, level: int, tick: int) -> None:
        self.count += 1

    def tally(self) -> int:
        """Edges counted (a callback made without ``func``)."""
        return self.count

    def cancel(self) -> None:
        """Stop calling back."""
        with _cb_lock, contextlib.suppress(ValueError):
            _callbacks.remove(self)


def callback(
    handle: int, gpio: int, edge: int = RISING_EDGE, func: Callable[..., None] | None = None
) -> _Callback:
    """Call ``func(chip, gpio, level, tick_ns)`` for each alert of ``gpio``."""
    return _Callback(handle >> 16, gpio, edge, func)


_callbacks: list[_Callback] = []


# -- lgpio's alert thread ---------------------------------------------------------------------


@dataclass
class _Report:
    t_ns: int
    gpio: int
    level: int


class _AlertRecord:
    """lgpio's record of one alert line: its debounce state."""

    def __init__(self, handle: int, gpio: int, edges: int) -> None:
        self.handle, self.gpio, self.edges = handle, gpio, edges
        self.last_edge_ns = 0
        self.last_edge_level = 0
        self.settled = True  # no edge waiting for its debounce time
        self.last_reported = -1  # no level reported yet

    def step(self, now_ns: int, debounce_ns: int, edge: tuple[int, int] | None) -> list[_Report]:
        """What lgpio reports at ``now_ns`` (an edge's stamp, or a time-out check), before
        taking ``edge`` ``(level, t_ns)`` in."""
        reports = []
        if debounce_ns and not self.settled and now_ns - self.last_edge_ns > debounce_ns:
            # stable for the debounce time: report it, stamped when it became stable
            self.settled = True
            if self.edges != BOTH_EDGES or self.last_reported != self.last_edge_level:
                reports.append(
                    _Report(self.last_edge_ns + debounce_ns, self.gpio, self.last_edge_level)
                )
                self.last_reported = self.last_edge_level
        if edge is not None:
            self.last_edge_level, self.last_edge_ns = edge
            self.settled = False
            if not debounce_ns:  # no debounce: reported as it came
                self.settled = True
                self.last_reported = self.last_edge_level
                reports.append(_Report(self.last_edge_ns, self.gpio, self.last_edge_level))
        return reports

    def due_ns(self, debounce_ns: int) -> int | None:
        """When a debounce time-out may report something (None: nothing waits)."""
        if not debounce_ns or self.settled:
            return None
        return self.last_edge_ns + debounce_ns + LEEWAY_NS + 1


class _Alerts:
    """lgpio's alert thread for one chip: reads the chip's stamped edges, debounces them and
    calls the callbacks, in time order, once each report is ``REPORT_LAG_NS`` old."""

    def __init__(self, chip: SimChip) -> None:
        self.chip = chip
        self.records: dict[int, _AlertRecord] = {}  # gpio -> record (guarded by chip.cond)
        self.errors: list[BaseException] = []
        self._pending: list[_Report] = []
        self._delivering = False
        self._stopped = False
        self._thread = threading.Thread(
            target=self._run, name=f"lgpio-alerts-{chip.number}", daemon=True
        )
        self._thread.start()

    def add(self, handle: int, gpio: int, edges: int) -> None:
        with self.chip.cond:
            self.records[gpio] = _AlertRecord(handle, gpio, edges)
            self.chip.cond.notify_all()

    def forget(self, gpio: int) -> None:
        with self.chip.cond:
            self.records.pop(gpio, None)

    def forget_handle(self, handle: int) -> None:
        with self.chip.cond:
            for gpio in [g for g, r in self.records.items() if r.handle == handle]:
                del self.records[gpio]

    def stop(self) -> None:
        with self.chip.cond:
            self._stopped = True
            self.chip.cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(5)

    def quiet(self) -> bool:
        with self.chip.cond:
            return (
                not self.chip.has_events()
                and not self._pending
                and not self._delivering
                and self._next_wake() is None
            )

    def _next_wake(self) -> int | None:
        times = [r.t_ns + REPORT_LAG_NS for r in self._pending]
        for gpio, record in self.records.items():
            due = record.due_ns(self.chip.debounce_ns(gpio))
            if due is not None:
                times.append(due)
        return min(times) if times else None

    def _run(self) -> None:
        cond = self.chip.cond
        while True:
            with cond:
                while True:
                    if self._stopped:
                        return
                    events = self.chip.take_events()
                    wake = self._next_wake()
                    now = time.monotonic_ns()
                    if events or (wake is not None and wake <= now):
                        break
                    cond.wait(None if wake is None else (wake - now) / 1e9)
                for edge in events:
                    record = self.records.get(edge.offset)
                    if record is not None:
                        debounce = self.chip.debounce_ns(edge.offset)
                        self._pending += record.step(edge.t_ns, debounce, (edge.level, edge.t_ns))
                now = time.monotonic_ns()
                for gpio, record in self.records.items():
                    debounce = self.chip.debounce_ns(gpio)
                    self._pending += record.step(now - LEEWAY_NS, debounce, None)
                self._pending.sort(key=lambda r: r.t_ns)
                due = [r for r in self._pending if r.t_ns <= now - REPORT_LAG_NS]
                self._pending = self._pending[len(due) :]
                self._delivering = bool(due)
            for report in due:
                self._deliver(report)
            with cond:
                self._delivering = False

    def _deliver(self, report: _Report) -> None:
        with _cb_lock:
            targets = [
                cb for cb in _callbacks if cb.chip == self.chip.number and cb.gpio == report.gpio
            ]
        for cb in targets:
            try:
                cb.func(self.chip.number, report.gpio, report.level, report.t_ns)
            except BaseException as exc:
                # lgpio's callback thread dies with the exception: no callback runs again.
                self.errors.append(exc)
                raise


_alerts: dict[int, _Alerts] = {}


def _forget_alert(chip: SimChip, gpio: int) -> None:
    # Claiming a line again (as input or output) ends its alert record, as lgpio's auto-free does.
    alerts = _alerts.get(chip.number)
    if alerts is not None:
        alerts.forget(gpio)


def quiet(chip: int = 0) -> bool:
    """True when lgpio has reported every edge of ``chip`` it will report: none unread, none
    waiting for its debounce time or its turn."""
    alerts = _alerts.get(chip)
    return alerts is None or alerts.quiet()


def alert_errors(chip: int = 0) -> list[BaseException]:
    """Exceptions raised by callbacks on ``chip`` (the first one ended its alert thread)."""
    alerts = _alerts.get(chip)
    return list(alerts.errors) if alerts is not None else []


fresh_board()
