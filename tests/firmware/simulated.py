"""A box and its mechanism on one fake clock: no loop thread, no plant thread, no wall time.

`SimulatedBox` starts the daemon and its plant without their threads
(``Daemon.start(thread=False)``) on one ``FakeClock``. The test moves the clock from one thing due
to the next: a loop timer (spin-up, card timeout, settle window, max-on deadline, cooldown) or
the plant's next card. Whatever is due runs at its instant, the loop's events and timers and the
plant's cards in turn, until neither has anything left there. On mock pins the sensor's callbacks
run in the plant's step, as on a real box they run in gpiozero's thread: they post to the loop
and the feed cutoff stops the motor at once.

So the mechanism's timings cost nothing, and a run is the same on any machine: a test can let
seconds of the box's time pass, and make the loop late on purpose (`lag`) instead of hoping a
busy machine does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firmware.daemon import Daemon
from firmware.loop import FakeClock
from firmware.plant import Plant

_MS = 1_000_000


class SimulatedBox:
    """A started daemon and its plant on mock pins, on one ``FakeClock`` the test moves."""

    def __init__(self, config: Any, factory: Any, **daemon_args: Any) -> None:
        self.config = config
        self.clock = FakeClock()
        self.plant = Plant(
            config.plant, factory, config.pins, clock=self.clock, kind=config.ejector.kind
        )
        self.daemon = Daemon(
            config, factory=factory, plant=self.plant, clock=self.clock, **daemon_args
        )
        self.daemon.start(thread=False)
        self.run()

    def run(self) -> None:
        """Do everything due by now: the loop's events and timers, the plant's cards, in turn
        until neither has anything left at this instant."""
        while self.daemon.loop.run_pending() + self.plant.run_due():
            pass

    def next_due(self) -> int | None:
        """When the next loop timer or plant step is due (clock ns), or None."""
        due = [self.daemon.loop.next_deadline(), self.plant.next_due()]
        return min((t for t in due if t is not None), default=None)

    def run_until(self, done: Callable[[], bool], within_ms: float = 60_000) -> bool:
        """Move the clock from one thing due to the next until ``done()`` (True), or until
        ``within_ms`` of the box's time have passed (then whether ``done()``)."""
        end = self.clock() + round(within_ms * _MS)
        self.run()
        while not done():
            due = self.next_due()
            if due is None or due > end:
                self.clock.advance_to(end)
                self.run()
                return done()
            self.clock.advance_to(due)
            self.run()
        return True

    def run_for(self, ms: float) -> None:
        """Let ``ms`` of the box's time pass."""
        self.run_until(lambda: False, within_ms=ms)

    def lag(self, ms: float) -> None:
        """The loop is late by ``ms`` (a busy machine): the plant moves on alone, its sensor
        callbacks post their events (and the feed cutoff acts), and the loop runs what came
        and what fell due only at the end."""
        end = self.clock() + round(ms * _MS)
        while (due := self.plant.next_due()) is not None and due <= end:
            self.clock.advance_to(due)
            self.plant.run_due()
        self.clock.advance_to(end)
        self.run()

    def command(self, op: str, **args: Any) -> dict:
        """Run command ``op`` on the loop; its reply."""
        got: list[dict] = []
        self.daemon.submit(op, args, got.append)
        assert self.run_until(lambda: bool(got)), f"no reply to {op}"
        return got[0]

    def stop(self) -> None:
        """Stop the daemon (every output off, pending presses answered) and the plant."""
        self.daemon.stop()
