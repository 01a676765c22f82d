"""A simulated gpiochip: the kernel's GPIO character device and the wires of the header.

The kernel here has no GPIO simulator (no gpio-sim, no gpio-mockup), so this stands in for
``/dev/gpiochipN`` under the simulated ``lgpio`` module (``lgpio.py`` beside it). It has three
sides:

- **the library side**, what lgpio's C code asks of the kernel through its ioctls: lines
  requested as inputs, outputs or inputs with edge detection, with bias (pull) flags, their
  values, their line info; and the pulse train lgpio's tx thread keeps up on an output (software
  PWM and servo pulses: whole microseconds high, then low, each cycle);
- **the edge stamps**: an edge on an input line is stamped with ``time.monotonic_ns()`` the moment
  the world makes it (CLOCK_MONOTONIC, the kernel's default event clock, which lgpio keeps) and,
  on a line requested with edge detection, queued for the library's alert thread. However late
  that thread runs, the stamp says when the edge happened; every stamp is kept in ``edges``, the
  true edge times a test compares the box's figures with;
- **the world side**, what the plant (``firmware/plant.py``) and a test's finger do: drive an
  input high or low (or let go of it: the pull decides), bounce it, see what an output does
  (level, or its pulses: width, duty and frequency), be told when it changes, hold a line for
  another program (busy), refuse the device (permission denied).

Only tests and ``make pi-check`` load it (``python -m tests.simchip``); nothing in the product
imports it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

LINES = 58  # gpiochip0 of a BCM2711 (Pi 4) has 58 lines; the header uses 2-27
KEEP_EDGES = 4096  # newest edge stamps kept (a soak runs for hours)

# Bias as lgpio's line flags ask for it (lgpio.SET_PULL_UP ...).
PULL_UP, PULL_DOWN, PULL_NONE = 32, 64, 128
RISING, FALLING = 1, 2


@dataclass(frozen=True)
class Edge:
    """A level change of an input line: ``level`` after it, ``t_ns`` when (monotonic ns)."""

    offset: int
    level: int
    t_ns: int


class ChipError(Exception):
    """A request the kernel refuses; ``code`` is lgpio's error number for it."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


# lgpio's error numbers for what the kernel refuses (lgpio.h).
CANNOT_OPEN_CHIP = -78
GPIO_BUSY = -79
GPIO_NOT_ALLOCATED = -80
BAD_GPIO_NUMBER = -73
GPIO_NOT_AN_OUTPUT = -104


class Line:
    """One line of the chip."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.owner: int | None = None  # the open chip handle that requested it
        self.consumer: str | None = None  # another program that holds it (busy)
        self.output = False
        self.alert = False  # requested with edge detection
        self.edge_flags = 0  # RISING | FALLING
        self.bias = PULL_NONE
        self.level = 0  # what an output drives (0/1)
        # (µs high, µs low) of each cycle while lgpio's tx thread pulses the line
        self.pulses: tuple[int, int] | None = None
        self.driven: int | None = None  # what the world drives onto it (None: nothing)
        self.debounce_ns = 0  # lgpio keeps it with the line, for its alerts
        self.watchers: list[Callable[[float], None]] = []

    def input_level(self) -> int:
        """What an input reads: the world's level, else the pull (a floating line reads 0)."""
        if self.driven is not None:
            return self.driven
        return 1 if self.bias == PULL_UP else 0

    def value(self) -> float:
        """What the line does as seen from outside: an output's level or its pulses' duty
        (0-1), else the input's level."""
        if self.output:
            if self.pulses is not None:
                on, off = self.pulses
                return on / (on + off)
            return float(self.level)
        return float(self.input_level())


class SimChip:
    """``/dev/gpiochip{number}`` with ``LINES`` lines; see the module docstring. Thread-safe."""

    def __init__(self, number: int = 0, lines: int = LINES, label: str = "pinctrl-bcm2711") -> None:
        self.number = number
        self.label = label
        self.lines = [Line(i) for i in range(lines)]
        self.permitted = True  # False: opening the device is refused (not in the gpio group)
        self.edges: deque[Edge] = deque(maxlen=KEEP_EDGES)
        self.cond = threading.Condition()  # guards all state; wakes the alert thread
        self._events: deque[Edge] = deque()  # stamped edges for the alert thread
        self._handles: set[int] = set()

    # -- the library side ---------------------------------------------------------------------

    def open(self, handle: int) -> None:
        """Open the device for ``handle``; ``ChipError(CANNOT_OPEN_CHIP)`` when refused."""
        with self.cond:
            if not self.permitted:
                raise ChipError(CANNOT_OPEN_CHIP)
            self._handles.add(handle)

    def close(self, handle: int) -> None:
        """Close ``handle``: the kernel releases every line it held (they become inputs)."""
        changed = []
        with self.cond:
            self._handles.discard(handle)
            for line in self.lines:
                if line.owner == handle:
                    changed.append(self._release(line))
        self._tell(changed)

    @property
    def open_handles(self) -> int:
        """How many handles have the device open."""
        with self.cond:
            return len(self._handles)

    def _line(self, offset: int) -> Line:
        if not 0 <= offset < len(self.lines):
            raise ChipError(BAD_GPIO_NUMBER)
        return self.lines[offset]

    def _request(self, handle: int, offset: int) -> Line:
        line = self._line(offset)
        if line.consumer is not None or (line.owner is not None and line.owner != handle):
            raise ChipError(GPIO_BUSY)  # the kernel's EBUSY: another request holds the line
        return line

    def claim_input(self, handle: int, offset: int, flags: int) -> None:
        """Request the line as an input (lgpio frees its own earlier request of it first)."""
        with self.cond:
            line = self._request(handle, offset)
            before = self._stop_output(line)
            line.owner, line.alert, line.edge_flags = handle, False, 0
            self._set_bias(line, flags)
        self._tell([before])

    def claim_alert(self, handle: int, offset: int, edges: int, flags: int) -> None:
        """Request the line as an input reporting ``edges`` (RISING | FALLING)."""
        with self.cond:
            line = self._request(handle, offset)
            before = self._stop_output(line)
            line.owner, line.alert, line.edge_flags = handle, True, edges
            self._set_bias(line, flags)
        self._tell([before])

    def claim_output(self, handle: int, offset: int, level: int, flags: int) -> None:
        """Request the line as an output driving ``level``."""
        with self.cond:
            line = self._request(handle, offset)
            was = line.value() if line.output else None
            line.owner, line.alert, line.edge_flags = handle, False, 0
            line.output, line.pulses, line.level = True, None, 1 if level else 0
            now = line.value()
        self._tell([(line, now)] if now != was else [])

    def free(self, handle: int, offset: int) -> None:
        """Release the line (it stays as it was until requested again, an input)."""
        with self.cond:
            line = self._line(offset)
            changed = self._release(line) if line.owner == handle else None
        self._tell([changed])

    def _release(self, line: Line) -> tuple[Line, float] | None:
        before = self._stop_output(line)
        line.owner, line.alert, line.edge_flags = None, False, 0
        return before

    def _stop_output(self, line: Line) -> tuple[Line, float] | None:
        # An output requested again as an input stops driving: outside, it reads as 0 (the
        # box's pull-downs on every driver input).
        if not line.output:
            return None
        was = line.value()
        line.output, line.pulses, line.level = False, None, 0
        return (line, 0.0) if was else None

    def _set_bias(self, line: Line, flags: int) -> None:
        before = line.input_level()
        for bias in (PULL_UP, PULL_DOWN, PULL_NONE):
            if flags & bias:
                line.bias = bias  # no bias flag: as it was (the kernel's "as is")
        self._changed_input(line, before)

    def mode(self, offset: int) -> tuple[bool, bool, int, int]:
        """(requested, output, bias flag, edge flags) of the line."""
        with self.cond:
            line = self._line(offset)
            used = line.owner is not None or line.consumer is not None
            return used, line.output, line.bias, line.edge_flags if line.alert else 0

    def owner(self, offset: int) -> int | None:
        """The handle that requested the line (None: free or another program's)."""
        with self.cond:
            return self._line(offset).owner

    def read(self, handle: int, offset: int) -> int:
        """The line's level: an output's own, an input's from the world or its pull."""
        with self.cond:
            line = self._line(offset)
            if line.owner != handle:
                raise ChipError(GPIO_NOT_ALLOCATED)
            if line.output:
                return line.level
            return line.input_level()

    def write(self, handle: int, offset: int, level: int) -> None:
        """Drive an output high or low. While lgpio's tx thread pulses the line, the write
        lasts only until the thread's next edge: the pulses go on (lgGpioWrite leaves them)."""
        with self.cond:
            line = self._line(offset)
            if line.owner != handle or not line.output:
                raise ChipError(GPIO_NOT_AN_OUTPUT)
            was = line.value()
            line.level = 1 if level else 0
            now = line.value()
        self._tell([(line, now)] if now != was else [])

    def pulse(self, handle: int, offset: int, on_us: int, off_us: int) -> None:
        """lgpio's tx thread pulses an output: ``on_us`` high, ``off_us`` low, every cycle
        (both 0: it stops). It stops wherever it is in the cycle and writes nothing more, so
        the line keeps the last level it wrote; the chip takes the worst case: high, when the
        pulses had any high time (a driver drives the line low itself after stopping them)."""
        with self.cond:
            line = self._line(offset)
            if line.owner != handle or not line.output:
                raise ChipError(GPIO_NOT_AN_OUTPUT)
            was = line.value()
            if on_us == off_us == 0:
                if line.pulses is not None:
                    line.level = 1 if line.pulses[0] else 0
                line.pulses = None
            else:
                line.pulses = (int(on_us), int(off_us))
            now = line.value()
        self._tell([(line, now)] if now != was else [])

    def pulsing(self, offset: int) -> bool:
        """True while lgpio's tx thread pulses the line (its tx record is active)."""
        with self.cond:
            return self._line(offset).pulses is not None

    def set_debounce(self, offset: int, debounce_ns: int) -> None:
        """Keep the line's debounce time (lgpio applies it to the line's alerts)."""
        with self.cond:
            self._line(offset).debounce_ns = int(debounce_ns)
            self.cond.notify_all()

    def debounce_ns(self, offset: int) -> int:
        """The line's debounce time."""
        with self.cond:
            return self._line(offset).debounce_ns

    def has_events(self) -> bool:
        """True while stamped edges wait for the alert thread. Call with ``cond`` held."""
        return bool(self._events)

    def take_events(self) -> list[Edge]:
        """The stamped edges of lines with edge detection not taken yet (the alert thread's
        read of the request's file descriptor). Call with ``cond`` held."""
        events = list(self._events)
        self._events.clear()
        return events

    # -- the world side -----------------------------------------------------------------------

    def drive(self, offset: int, high: bool | None) -> None:
        """The world drives the line high or low (``None``: lets go, the pull decides). On an
        output nothing changes (the box drives it)."""
        with self.cond:
            line = self._line(offset)
            before = line.input_level()
            line.driven = None if high is None else int(bool(high))
            if not line.output:
                self._changed_input(line, before)

    def bounce(self, offset: int, levels: Sequence[bool], spacing_ns: int) -> None:
        """A contact that bounces: the line takes ``levels`` in turn, ``spacing_ns`` apart,
        the last one now. Stamped as the kernel would have stamped them, all at once, so the
        train is the same however busy the machine is."""
        with self.cond:
            line = self._line(offset)
            now = time.monotonic_ns()
            for i, high in enumerate(levels):
                before = line.input_level()
                line.driven = int(bool(high))
                if not line.output:
                    self._changed_input(line, before, now - (len(levels) - 1 - i) * spacing_ns)

    def value(self, offset: int) -> float:
        """What the line does as seen from outside (an output's level, or its pulses' duty 0-1:
        the share of each cycle it is high)."""
        with self.cond:
            return self._line(offset).value()

    def frequency(self, offset: int) -> float | None:
        """Cycles per second of the pulses on the line (None: none), from their whole
        microseconds (440 Hz asked is 1e6 / 2273 µs)."""
        with self.cond:
            pulses = self._line(offset).pulses
            return 1e6 / sum(pulses) if pulses is not None else None

    def pulse_us(self, offset: int) -> int | None:
        """How long each pulse on the line is high, in microseconds (None: no pulses): a
        servo's angle."""
        with self.cond:
            pulses = self._line(offset).pulses
            return pulses[0] if pulses is not None else None

    def is_input(self, offset: int) -> bool:
        """True unless the box drives the line as an output."""
        with self.cond:
            return not self._line(offset).output

    def watch(self, offset: int, fn: Callable[[float], None]) -> None:
        """Call ``fn(value)`` whenever what the line does from outside changes (an output
        written, pulses set, or stopped). Called in the writer's thread, with no lock held."""
        with self.cond:
            self._line(offset).watchers.append(fn)

    def unwatch(self, offset: int, fn: Callable[[float], None]) -> None:
        """Stop calling ``fn``."""
        with self.cond:
            watchers = self._line(offset).watchers
            if fn in watchers:
                watchers.remove(fn)

    def hold(self, offset: int, consumer: str) -> None:
        """Another program (``consumer``) requests the line: the box's request of it is busy."""
        with self.cond:
            self._line(offset).consumer = consumer

    def let_go(self, offset: int) -> None:
        """The other program releases the line."""
        with self.cond:
            self._line(offset).consumer = None

    def edges_of(self, offset: int) -> list[Edge]:
        """The kept edge stamps of one line, oldest first."""
        with self.cond:
            return [e for e in self.edges if e.offset == offset]

    # -- internals ----------------------------------------------------------------------------

    def _changed_input(self, line: Line, before: int, t_ns: int | None = None) -> None:
        # cond held. The kernel stamps the edge now (an interrupt, not a thread that may run
        # late) and queues it for the request's reader when the edge is one it asked for.
        level = line.input_level()
        if level == before:
            return
        edge = Edge(line.offset, level, time.monotonic_ns() if t_ns is None else t_ns)
        self.edges.append(edge)
        if line.alert and line.edge_flags & (RISING if level else FALLING):
            self._events.append(edge)
            self.cond.notify_all()

    def _tell(self, changed: list[tuple[Line, float] | None]) -> None:
        for item in changed:
            if item is None:
                continue
            line, value = item
            with self.cond:
                watchers = list(line.watchers)
            for fn in watchers:
                fn(value)
