"""The burst in flight: the press being fired, its cards at the beam, its end.

A burst starts when the press queue serves a press that plans cards, waits for a card still in
the beam to leave it, spins the flywheel up (if fitted), hands the feed to the ejector's burst
driver (``firmware/drivers.py``) and counts every card the exit sensor reports. It ends with the
press's ``fire``: ``fired`` when the planned cards are out (a feed motor then keeps counting for
``settle_ms``, motor off: a coasting card joins the burst as ``extra``), ``jammed`` when no card
comes for ``card_timeout_ms`` after ``unjam_retries`` retries, ``empty`` when the hopper runs out,
``fault`` or ``stopping``. Its progress is journaled card by card, so a restart answers it with
the cards it counted.

Loop events: ``card`` (every card at the beam; one with no burst counting is the hopper's
``stray``), ``beam_clear``, ``sensor_blocked``, ``flywheel_ready``, ``card_timeout``, ``settled``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from firmware.feature import Feature
from firmware.loop import Event

if TYPE_CHECKING:
    from firmware.daemon import Daemon
    from firmware.patterns import Step
    from firmware.presses import Press

_MS = 1_000_000
# the in-flight record's own timer names, and the motion pattern's steps (firmware/motion.py)
BURST_TIMERS = ("burst", "card_timeout", "motion")


@dataclass
class Burst:
    """The press being fired right now."""

    press: Press
    planned: int
    dry_streak: int
    started_ns: int
    feed_ns: int | None = None  # feed motor on / first solenoid pulse
    spun_ns: int | None = None  # end of spin-up
    cards: list[int] = field(default_factory=list)  # ns of each card at the beam
    retries: int = 0  # unjam retries so far (reported in the fire event)
    waiting_beam: bool = False  # spin-up waits for a card still in the beam to leave it
    settling: bool = False  # planned cards out, feed off: still counting until ``settle_ms``
    pattern: str | None = None  # the motion pattern dressing it (reported in the fire)
    steps: list[Step] = field(default_factory=list)  # its resolved steps (firmware/motion.py)
    step: int = 0  # the next step to run
    feed_to: int | None = None  # the feed step running stops at this many cards (None: planned)
    feed_speed: float = 1.0  # speed of a feed resumed after a pause
    retract_ns: list[int] = field(default_factory=list)  # reverse phase: [on] or [on, off]

    def card_ms(self) -> list[int]:
        """Milliseconds from feed start to each card."""
        start = self.feed_ns if self.feed_ns is not None else self.started_ns
        return [max(0, (t - start) // _MS) for t in self.cards]

    @property
    def left(self) -> int:
        """Cards the feed running now is still to bring: the planned cards not counted yet, up
        to the end of the pattern's feed step (0 while a pattern pauses the feed)."""
        end = self.planned if self.feed_to is None else min(self.planned, self.feed_to)
        return max(0, end - len(self.cards))

    def retract_ms(self) -> int | None:
        """How long the reverse phase ran (None: none ran)."""
        if len(self.retract_ns) < 2:
            return None
        return (self.retract_ns[1] - self.retract_ns[0]) // _MS


class InFlight(Feature):
    """Owns the running :class:`Burst` (or None) and every card the exit sensor counts."""

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.burst: Burst | None = None
        self.last_edge = 0  # beam edge number of the last card handled (the feed cutoff)
        self.last_press_id: int | None = None  # the press of the last burst (``stray``)
        box.on_event("card", self._on_card)
        box.on_event("beam_clear", self._on_beam_clear)
        box.on_event("sensor_blocked", self._on_sensor_blocked)
        box.on_event("flywheel_ready", lambda event: self.start_feed())
        box.on_event("card_timeout", self._on_card_timeout)
        box.on_event("settled", lambda event: self.settled())

    def start(
        self,
        press: Press,
        planned: int,
        dry_streak: int,
        *,
        pattern: tuple[str, list[Step]] | None = None,
    ) -> None:
        """Fire ``press``: ``planned`` cards (the press queue's plan), dressed in ``pattern``
        (its name and steps, from ``box.motion.choose``) if given."""
        box = self.box
        self.burst = Burst(press, planned, dry_streak, started_ns=box.clock())
        if pattern is not None:
            self.burst.pattern, self.burst.steps = pattern[0], list(pattern[1])
        why = "button press" if press.press_id is None else f"press {press.press_id}"
        box.model.start_burst(why=why)  # the ejector starts here
        box.presses.register(press)
        if self.burst is not None:  # (a trip during start-up has answered it already)
            self.save_progress()

    def save_progress(self) -> None:
        """Record how far the running burst got, so a restart reports the cards it counted."""
        burst = self.burst
        if burst is None or burst.press.press_id is None:
            return
        self.box.journal.update_press(
            burst.press.press_id,
            planned=burst.planned,
            ejected=len(burst.cards),
            dry_streak=burst.dry_streak,
            card_ms=burst.card_ms(),
        )

    def counting(self) -> Burst | None:
        """The burst while it still moves cards (not settling), in ``spinup`` / ``ejecting``."""
        burst = self.burst
        if burst is None or burst.settling or not self.box.may("burst_done"):
            return None
        return burst

    # ------------------------------------------------------------------ spin-up

    def begin_spinup(self, *, lead_done: bool = False) -> None:
        """Entered ``spinup``: the pattern's lead (pauses, whirs), then wait for a clear beam,
        the flywheel (if fitted), then the feed."""
        box = self.box
        assert self.burst is not None
        if not lead_done and box.motion.lead(self.burst):
            return  # motion calls back here once its lead is done
        if box.devices_built().sensor.is_active:
            # The last card may still be in the beam; feed only once it clears, or a card would
            # go uncounted. A beam that stays broken is a stuck sensor (``sensor_blocked``).
            assert self.burst is not None
            self.burst.waiting_beam = True
            box.loop.set_timer("burst", box.config.timing.card_timeout_ms, "sensor_blocked")
            return
        self._spin()

    def _spin(self) -> None:
        box = self.box
        if self.burst is not None:
            self.burst.waiting_beam = False
        flywheel = box.devices_built().flywheel
        if flywheel is not None:
            flywheel.on()
            box.loop.set_timer("burst", box.config.ejector.flywheel_spinup_ms, "flywheel_ready")
        else:
            self.start_feed()

    def _on_beam_clear(self, event: Event) -> None:
        # Waiting in spinup for a card to leave the beam: go now.
        burst = self.burst
        if burst is not None and burst.waiting_beam and self.box.may("spun_up"):
            self.box.loop.cancel_timer("burst")
            self._spin()

    def _on_sensor_blocked(self, event: Event) -> None:
        if self.burst is None or not self.box.may("spun_up") or not self.burst.waiting_beam:
            return
        if self.box.devices_built().sensor.is_active:
            self.box.safety.trip(
                "sensor", "exit beam blocked before the feed started (sensor stuck high?)"
            )
        else:
            self._spin()

    def start_feed(self) -> None:
        """The feed starts (the driver's); ``spun_up`` when it is at speed."""
        burst = self.burst
        if burst is None or not self.box.may("spun_up"):
            return
        burst.feed_ns = self.box.clock()
        if self.box.driver.start_feed(burst):
            self.box.model.spun_up(why="feed at speed")

    def begin_feed(self) -> None:
        """Entered ``ejecting``: the feed is at speed."""
        burst = self.burst
        assert burst is not None
        burst.spun_ns = self.box.clock()
        self.box.driver.at_speed(burst)

    def arm_card_timeout(self) -> None:
        """(Re)start the wait for the next card (``card_timeout_ms``)."""
        timing = self.box.config.timing
        self.box.loop.set_timer("card_timeout", timing.card_timeout_ms, "card_timeout")

    # ------------------------------------------------------------------ cards

    def _on_card(self, event: Event) -> None:
        box = self.box
        edge = event.data.get("edge")
        if edge is not None and edge <= self.last_edge:
            return  # claimed by the burst that ended before this event came (``finish``)
        self.last_edge = max(self.last_edge, int(edge if edge is not None else self.last_edge + 1))
        box.hopper.took_card()
        burst = self.burst
        if burst is None or not box.may("burst_done"):  # no burst running: a stray card
            box.hopper.stray(self.last_press_id)
            return
        burst.cards.append(event.t_ns)
        self.save_progress()
        if burst.settling:
            return  # a card behind the burst: counted in it as ``extra``; the settle timer ends it
        if len(burst.cards) >= burst.planned:
            self._burst_done()
            return
        if burst.left == 0 and box.motion.between(burst):
            return  # the pattern pauses the feed between two of its feed steps
        box.driver.card(burst)

    def _burst_done(self) -> None:
        """The planned cards are out: stop the feed, then keep counting for ``settle_ms``.

        A feed roller coasts, and a loop that reacted late may have let it push one more card;
        such a card reaches the beam after the motor stops. Counting it in this burst (the fire
        event's ``extra``) keeps the host's count equal to what left the hopper. A solenoid moves
        one card per pulse and stops dead, so its burst ends at once.
        """
        burst = self.burst
        assert burst is not None
        settle = self.box.config.timing.settle_ms
        if settle <= 0 or not self.box.driver.coasts:
            self.finish("fired", trigger="burst_done")
            return
        self.outputs_off()  # feed (and flywheel) off now; the state stays until the fire
        burst.settling = True
        # The reverse phase (``retract_ms``) pulls a half-ejected card back; the burst ends
        # once it is over too, so the fire comes with every output off.
        retract = self.box.driver.retract(burst)
        self.box.loop.set_timer("settle", max(settle, retract), "settled")

    def settled(self) -> bool:
        """End a settling burst (``fired``); True when there was one."""
        burst = self.burst
        if burst is not None and burst.settling:
            self.finish("fired", trigger="burst_done")
            return True
        return False

    def _on_card_timeout(self, event: Event) -> None:
        burst = self.counting()
        if burst is None:
            return
        box = self.box
        if box.hopper.runs_dry():
            self.finish("empty", trigger="run_empty")
            return
        if burst.retries < box.config.limits.unjam_retries:
            burst.retries += 1
            box.driver.unjam(burst)
            return
        box.emit("jam", press_id=burst.press.press_id, retries=burst.retries)
        self.finish("jammed", trigger="jam")

    # ------------------------------------------------------------------ the end

    def _claim_queued(self, burst: Burst) -> None:
        """Count in ``burst`` the cards the beam saw before it ended whose ``card`` events are
        still queued: a loop that is behind (a busy machine, a stop or a trip handled late)
        must not turn cards of the burst into strays, nor lose them at shutdown."""
        devices = self.box.devices
        if devices is None:
            return
        for edge, t_ns in devices.sensor.crossed_after(self.last_edge):
            self.last_edge = edge
            self.box.hopper.took_card()
            burst.cards.append(t_ns)

    def outputs_off(self) -> None:
        """Ejector and flywheel off, burst timers dropped (machine ``before`` callback)."""
        box = self.box
        for name in BURST_TIMERS:
            box.loop.cancel_timer(name)
        box.driver.stop()
        if box.devices is not None:
            box.devices.sensor.disarm_cutoff()
            box.devices.power_off()

    def finish(self, reason: str, trigger: str | None) -> None:
        """End the burst: outputs off, the fire event (the journal closes the press with it)."""
        burst = self.burst
        assert burst is not None
        box = self.box
        self.outputs_off()
        box.loop.cancel_timer("settle")
        if reason != "fired" or burst.settling:
            # Cut short, or at the end of the settle window: what the beam saw before now is
            # this burst's. (A burst that ends at its planned card leaves what follows a stray.)
            self._claim_queued(burst)
        if len(burst.retract_ns) == 1:
            burst.retract_ns.append(box.clock())  # cut short (the motor is off now)
        self.burst = None
        self.last_press_id = burst.press.press_id
        if burst.settling:
            # Every planned card was out before whatever ends the settle window early (empty
            # hopper, fault, shutdown): the press fired.
            reason = "fired"
        box.presses.fire(
            burst.press,
            planned=burst.planned,
            ejected=len(burst.cards),
            reason=reason,
            dry_streak=burst.dry_streak,
            burst=burst,
        )
        if trigger == "run_empty":
            box.hopper.enter_empty(burst.press.press_id)
        elif trigger is not None:
            box.model.trigger(trigger, why=reason)
