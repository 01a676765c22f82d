"""Motion: the burst in flight run as a pattern's steps (``firmware/patterns.py``).

The press queue asks :meth:`Motion.choose` for a pattern when it serves a press (never for a
``dispense``, and only while ``patterns.enabled`` is on); the in-flight record carries the
resolved steps on its :class:`~firmware.inflight.Burst` and hands control here at two points:

- :meth:`lead`, on entering ``spinup``: the pauses and whirs before the first feed run first.
  A dry press dressed in a pattern (a fake start, a suspense pause) is a burst of 0 cards that
  only runs its lead, then fires ``dry``: presses behind it wait, as they do behind any burst.
- :meth:`between`, when the cards of one feed step are out and more are due: the feed stops
  (the sensor's cutoff stopped it on that card), the steps up to the next feed run, and the feed
  resumes for the next step's cards (``BurstDriver.resume_feed``).

Every output a step turns on goes through the safety guard like any burst's: a whir is the
feed motor turned backwards, its ``max_on_ms`` deadline armed as it turns on, its own end a
loop timer shorter than that limit (the config checks it); a resumed feed re-arms the card
timeout and the jam retries. Whatever ends the burst (a trip, the door, shutdown) turns every
output off and drops the ``motion`` timer with the burst's.

Loop events: ``motion_step`` (the timer of a pause or whir).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from firmware.devices import MotorEjector
from firmware.feature import Feature
from firmware.loop import Event
from firmware.patterns import FEED, PatternChooser, Step, outcome, resolve

if TYPE_CHECKING:
    from firmware.daemon import Daemon
    from firmware.inflight import Burst
    from firmware.presses import Press

TIMER = "motion"
STEP = "motion_step"


class Motion(Feature):
    """Chooses patterns and runs their pause and whir steps (``box.motion``)."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        cfg = box.config
        self.chooser = PatternChooser(
            cfg.patterns.patterns, seed=cfg.patterns.seed, motor=cfg.ejector.kind == "motor"
        )
        self._whirring = False
        self._then: str | None = None  # "spin" (lead done) or "feed" (pause done)
        box.on_event(STEP, self._on_step)

    def choose(self, press: Press, planned: int) -> tuple[str, list[Step]] | None:
        """The pattern name and steps for ``press``, or None (plain burst, or plain dry)."""
        box = self.box
        if press.source == "dispense" or not box.settings.value("patterns.enabled"):
            return None
        pattern = self.chooser.choose(outcome(planned, box.config.feedback.big_burst))
        if pattern is None:
            return None
        steps = resolve(pattern, planned)
        if planned == 0 and not steps:
            return None  # nothing to show: an ordinary dry press
        return pattern.name, steps

    # ------------------------------------------------------------------ running steps

    def lead(self, burst: Burst) -> bool:
        """Entered ``spinup``: run the steps before the first feed; True while they run (the
        in-flight record goes on with :meth:`~firmware.inflight.InFlight.begin_spinup` after)."""
        # A new burst: nothing of one that a trip or the door ended mid-step carries over.
        self._then, self._whirring = None, False
        if not self._next_is_action(burst):
            self._open_feed(burst)
            return False
        self._then = "spin"
        self._run(burst)
        return True

    def between(self, burst: Burst) -> bool:
        """The cards of a feed step are out and more are due: pause the feed and run the
        steps up to the next feed; True when it did (False: no pattern, feed on)."""
        if self._then is not None:
            return True  # a card that coasted in during the pause: the pause goes on
        if not burst.steps or burst.step >= len(burst.steps):
            return False
        box = self.box
        devices = box.devices_built()
        devices.sensor.disarm_cutoff()
        box.driver.stop()
        box.loop.cancel_timer("card_timeout")
        devices.ejector.off()  # the flywheel (if any) keeps spinning through a pause
        self._then = "feed"
        self._run(burst)
        return True

    def _next_is_action(self, burst: Burst) -> bool:
        return burst.step < len(burst.steps) and burst.steps[burst.step].action != FEED

    def _open_feed(self, burst: Burst) -> None:
        """The next step is a feed (or there are none): let the driver feed its cards."""
        if burst.step < len(burst.steps):
            step = burst.steps[burst.step]
            burst.step += 1
            burst.feed_to = min(burst.planned, len(burst.cards) + step.cards)
            burst.feed_speed = step.speed
            if step.cue:
                self.box.sound.cue(step.cue)
        else:
            burst.feed_to = burst.planned

    def _run(self, burst: Burst) -> None:
        """Run the next pause or whir step, or go on when the next step is a feed."""
        box = self.box
        if self._next_is_action(burst):
            step = burst.steps[burst.step]
            burst.step += 1
            if step.cue:
                box.sound.cue(step.cue)
            if step.action == "whir":
                # backwards: the roller pulls the stack in; it cannot push a card out
                ejector = box.devices_built().ejector
                # a pattern with whirs is only chosen for a motor (PatternChooser(motor=...))
                assert isinstance(ejector, MotorEjector), "a whir needs a motor ejector"
                ejector.backward(step.speed)
                self._whirring = True
            box.loop.set_timer(TIMER, step.ms, STEP)
            return
        then, self._then = self._then, None
        if burst.planned == 0:
            box.inflight.finish("dry", trigger="burst_done")
        elif then == "spin":
            self._open_feed(burst)
            box.inflight.begin_spinup(lead_done=True)
        else:
            self._open_feed(burst)
            box.driver.resume_feed(burst)

    def _on_step(self, event: Event) -> None:
        box = self.box
        burst = box.inflight.counting()
        if self._whirring:
            self._whirring = False
            box.devices_built().ejector.off()
        if burst is None:
            return  # the burst ended meanwhile (trip, door, shutdown): outputs are off
        self._run(burst)
