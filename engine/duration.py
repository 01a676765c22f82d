"""How long a game takes at a real table: the box's timings from its config, plus the players.

The estimate adds up, for a simulated game:

- every turn: `turn_seconds` (a player looks, plays a card or walks up to the button);
- every press: `press_seconds` (pressing the button; a dry press costs nothing more, the box
  answers it at once);
- every burst (a press or a classic draw that fires at least one card): the box's fixed time,
  then its time per card.

The box's times come from the config file (hardware/launcher.toml or yours): a motor box spins the
flywheel up (`[ejector] flywheel_spinup_ms`, if a flywheel pin is fitted), ramps the feed
(`soft_start_ms`, if `ejector_enable` is fitted), needs `[plant] spinup_ms` before the first card
moves and `[plant] feed_interval_ms` per card, then counts late cards for `[timing] settle_ms`; a
solenoid box takes `pulse_ms + recovery_ms` per card. Every burst ends with `[timing]
cooldown_ms`. `[plant]` describes the mechanism; `launcher bench` on the real box measures what to
put there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the box's config reader is the caller's to import (`sweep` does)
    from common.boxconfig import HostConfig

# Defaults for the players' part of the estimate (seconds); a sweep may set its own.
TURN_SECONDS = 4.0
PRESS_SECONDS = 1.0


@dataclass(frozen=True)
class BoxTimes:
    """Milliseconds the box spends per burst (`burst_ms`) and per card fired (`card_ms`)."""

    burst_ms: float
    card_ms: float

    @classmethod
    def from_config(cls, cfg: HostConfig) -> BoxTimes:
        """The box's times, read from a box's config (`common.boxconfig.read_for_host`; the
        box's own `Config` has the same sections)."""
        ejector, timing, plant = cfg.ejector, cfg.timing, cfg.plant
        burst = float(timing.cooldown_ms)
        if cfg.pins.flywheel is not None:
            burst += ejector.flywheel_spinup_ms
        if ejector.kind == "solenoid":
            card = float(ejector.pulse_ms + ejector.recovery_ms)
        else:
            if cfg.pins.ejector_enable is not None:
                burst += ejector.soft_start_ms
            burst += plant.spinup_ms + timing.settle_ms
            card = float(plant.feed_interval_ms)
        return cls(burst_ms=burst, card_ms=card)


def game_seconds(
    box: BoxTimes,
    *,
    turns: int,
    presses: int,
    bursts: int,
    cards: int,
    turn_seconds: float = TURN_SECONDS,
    press_seconds: float = PRESS_SECONDS,
) -> float:
    """Estimated seconds at the table for `turns` turns, `presses` presses of the button, and
    `bursts` bursts (presses and draws that fired) of `cards` cards in all."""
    players = turns * turn_seconds + presses * press_seconds
    return players + (bursts * box.burst_ms + cards * box.card_ms) / 1000.0
