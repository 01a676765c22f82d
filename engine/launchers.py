"""Launchers: what decides how many cards a hit fires.

`Round` keeps the virtual launcher pile (the cards, in firing order); a launcher only says how many
of them fire. `VirtualLauncher` asks the jam model (the simulation), `ScriptedLauncher` replays a
list of counts (scenarios, tests). `BoxLauncher` (engine/box.py) presses the real or mock box.

Every launcher here keeps counters (`hits`, `dry_hits`, `hit_cards`, `dispenses`,
`dispensed_cards`) so a simulation can report how the box behaved.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from common.jam import JamModel, JamParams

__all__ = [
    "Launcher",
    "LauncherCounters",
    "ScriptedLauncher",
    "VirtualLauncher",
]


@runtime_checkable
class Launcher(Protocol):
    """Anything that can fire cards from a launcher holding `loaded` cards."""

    def hit(self, seat: int, loaded: int) -> int:
        """One press aimed at `seat`: how many cards fire (0..loaded)."""
        ...

    def dispense(self, n: int, loaded: int) -> int:
        """Exactly `n` cards are asked for (a classic draw, dealing): how many fire (0..n)."""
        ...

    def reload(self, loaded: int) -> None:
        """The discard pile was reshuffled into the launcher, which now holds `loaded` cards."""
        ...


class LauncherCounters:
    """Counters shared by the launchers here: hits, dry hits, cards fired by hits and dispenses."""

    def __init__(self) -> None:
        self.hits = 0
        self.dry_hits = 0
        self.hit_cards = 0
        self.dispenses = 0
        self.dispensed_cards = 0
        self.reloads = 0

    @property
    def cards_fired(self) -> int:
        """Every card that left the launcher, by hit or by dispense."""
        return self.hit_cards + self.dispensed_cards

    def _count_hit(self, fired: int) -> int:
        self.hits += 1
        self.hit_cards += fired
        if fired == 0:
            self.dry_hits += 1
        return fired

    def _count_dispense(self, fired: int) -> int:
        self.dispenses += 1
        self.dispensed_cards += fired
        return fired

    def stats(self) -> dict[str, int]:
        """The counters as a JSON-able dict."""
        return {
            "hits": self.hits,
            "dry_hits": self.dry_hits,
            "hit_cards": self.hit_cards,
            "dispenses": self.dispenses,
            "dispensed_cards": self.dispensed_cards,
            "cards_fired": self.cards_fired,
            "reloads": self.reloads,
        }


def _check_loaded(loaded: int) -> None:
    if loaded < 0:
        raise ValueError(f"loaded must be at least 0, got {loaded}")


class VirtualLauncher(LauncherCounters):
    """A simulated box: each hit fires what the jam model plans for the cards loaded.

    The model's dry streak carries over from hit to hit and from seat to seat, like the real box,
    whose mechanism does not know who pressed it.
    """

    def __init__(self, model: JamModel) -> None:
        super().__init__()
        self.model = model

    @classmethod
    def seeded(cls, seed: int, params: JamParams | None = None) -> VirtualLauncher:
        """A launcher over `params` (default jam parameters) driven by `random.Random(seed)`."""
        return cls(JamModel(params or JamParams(), rng=random.Random(seed)))

    def hit(self, seat: int, loaded: int) -> int:
        """Cards fired by one press: the jam model's plan, never more than `loaded`."""
        if loaded < 0:
            _check_loaded(loaded)
        fired = self.model.plan(hopper=loaded)
        # The model already caps by the hopper; keep the promise even for a custom model.
        if fired > loaded:
            fired = loaded
        elif fired < 0:
            fired = 0
        # Counted inline: this runs for every hit of every simulated round.
        self.hits += 1
        self.hit_cards += fired
        if not fired:
            self.dry_hits += 1
        return fired

    def dispense(self, n: int, loaded: int) -> int:
        """A counted dispense always delivers, as far as the launcher holds cards."""
        if loaded < 0:
            _check_loaded(loaded)
        fired = n if n < loaded else loaded
        if fired < 0:
            fired = 0
        self.dispenses += 1
        self.dispensed_cards += fired
        return fired

    def reload(self, loaded: int) -> None:
        """Nothing to do: the model reads the hopper from `loaded` on every hit."""
        _check_loaded(loaded)
        self.reloads += 1


class ScriptedLauncher(LauncherCounters):
    """Replays fixed counts: the i-th hit fires `counts[i]` (capped by `loaded`), then 0.

    Used by scenario files (`[start] launcher = [...]`) and tests, where every hit's outcome is
    written down in advance. Dispenses do not consume the script.
    """

    def __init__(self, counts: Iterable[int]) -> None:
        super().__init__()
        self.counts: tuple[int, ...] = tuple(counts)
        for i, count in enumerate(self.counts):
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"launcher count {i} must be a whole number >= 0, got {count!r}")
        self.position = 0

    @property
    def remaining(self) -> int:
        """Scripted hits not used yet."""
        return len(self.counts) - self.position

    def hit(self, seat: int, loaded: int) -> int:
        """The next scripted count, capped by the cards loaded; 0 once the script runs out."""
        _check_loaded(loaded)
        if self.position < len(self.counts):
            planned = self.counts[self.position]
            self.position += 1
        else:
            planned = 0
        return self._count_hit(min(planned, loaded))

    def dispense(self, n: int, loaded: int) -> int:
        """Exactly `n` cards, as far as the launcher holds them."""
        _check_loaded(loaded)
        return self._count_dispense(max(0, min(n, loaded)))

    def reload(self, loaded: int) -> None:
        """Nothing to do: the script does not depend on the pile."""
        _check_loaded(loaded)
        self.reloads += 1
