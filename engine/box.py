"""`BoxLauncher`: the engine's launcher over a real (or mock) box.

`Round` keeps the virtual launcher pile; a launcher only says how many cards one press fires.
Here that number comes from the box: each `hit` is one real press over the serial link and the
answer is the `ejected` count of that press's fire event. The box's hopper is kept equal to the
virtual pile (`reload` sends `load total=`), so the box can never fire a card the engine does not
have; a fire event that says otherwise is a broken invariant and raises `BoxError`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from engine.launchers import LauncherCounters
from wire.client import BoxClient, BoxError

__all__ = ["BoxLauncher"]

# Fire reasons after which the box latches a state that must be cleared before the next press.
_LATCHING = frozenset({"jammed", "empty"})


class BoxLauncher(LauncherCounters):
    """A `Launcher` that presses the box over `client` (a connected `BoxClient`).

    `on_fire(seat, event)` is called with every fire event, `on_event(event)` with every other
    event the box sent (state changes, jams, refills) in the order they arrived. `fire_timeout`
    bounds the wait for one press's result. `fires` keeps every fire event, in order.
    """

    def __init__(
        self,
        client: BoxClient,
        *,
        fire_timeout: float = 30.0,
        on_fire: Callable[[int, dict[str, Any]], None] | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        aim: bool = True,
    ) -> None:
        super().__init__()
        self.client = client
        self.fire_timeout = fire_timeout
        self.on_fire = on_fire
        self.on_event = on_event
        self.servo = aim  # turned off the first time the box says it has no servo
        self.fires: list[dict[str, Any]] = []
        self.jams = 0
        self.strays = 0  # cards that left the box after their burst was reported
        self._unclaimed = 0  # cards of `stray` events not yet given to a hit or dispense
        self.presses_sent = 0
        self._aimed: int | None = None

    # -- Launcher protocol ------------------------------------------------------------------
    def hit(self, seat: int, loaded: int) -> int:
        """Press the box once, aimed at `seat`; the cards its fire event says were ejected."""
        _check_loaded(loaded)
        self._aim(seat)
        press_id = self.client.press()
        self.presses_sent += 1
        event = self._fire_of(press_id, seat)
        fired = self._checked(event, loaded)
        if fired or event.get("reason") not in ("dry", "locked"):
            # The feed ran: a card may still have slipped out behind the burst. It belongs to
            # the player who hit (RULES.md), so it is counted with this hit.
            strays = self._strays(loaded - fired)
            if strays:
                event = {**event, "strays": strays}
                fired += strays
        self._report(seat, event)
        return self._count_hit(fired)

    def dispense(self, n: int, loaded: int) -> int:
        """Ask the box for exactly `n` cards (as far as the pile holds them)."""
        _check_loaded(loaded)
        want = max(0, min(n, loaded))
        if want == 0:
            return self._count_dispense(0)
        press_id = self.client.dispense(want)
        self.presses_sent += 1
        event = self._fire_of(press_id, None)
        # A card the feed still pushed out after the n-th is in `ejected` (the fire's `extra`).
        fired = self._checked(event, loaded)
        strays = self._strays(loaded - fired)
        if strays:
            event = {**event, "strays": strays}
        self._report(-1, event)
        return self._count_dispense(min(loaded, fired + strays))

    def reload(self, loaded: int) -> None:
        """The pile was rebuilt and holds `loaded` cards: make the hopper hold exactly that."""
        _check_loaded(loaded)
        self.load(loaded)
        self.reloads += 1

    # -- helpers ----------------------------------------------------------------------------
    def load(self, total: int) -> int:
        """Set the hopper to `total` cards (leaving a latched `empty`); returns the hopper."""
        reply = self.client.load(total=total)
        self._clear_latch()
        self.drain()
        return int(reply.get("hopper", total))

    def drain(self) -> None:
        """Hand every event already received (but not yet shown) to `on_event`."""
        for event in self.client.events(timeout=0):
            self._deliver(event)

    def _deliver(self, event: dict[str, Any]) -> None:
        if event.get("kind") == "fire":
            return  # fire events reach on_fire through wait_fire, with the seat attached
        if event.get("kind") == "jam":
            self.jams += 1
        elif event.get("kind") == "stray":
            self._unclaimed += int(event.get("count") or 0)
        if self.on_event is not None:
            self.on_event(event)

    def _aim(self, seat: int) -> None:
        if not self.servo or self._aimed == seat:
            return
        try:
            self.client.aim(seat)
            self._aimed = seat
        except BoxError as exc:
            if exc.code != "BAD_ARG":
                raise
            self.servo = False  # no servo, or fewer seats than players: press unaimed

    def _fire_of(self, press_id: int, seat: int | None) -> dict[str, Any]:
        event = self.client.wait_fire(press_id, self.fire_timeout)
        self.drain()  # state changes that came before the fire, in order
        self.fires.append(event)
        if event.get("reason") in _LATCHING:
            self._clear_latch()
        return event

    def _report(self, seat: int, event: dict[str, Any]) -> None:
        if self.on_fire is not None:
            self.on_fire(seat, event)

    def _strays(self, expect: int) -> int:
        """Wait for the box to settle after a burst and return how many cards left it beyond
        those its fire event counted (a card already on its way when the feed stopped): the
        box's `stray` events, at most `expect` (the cards the pile still held)."""
        deadline = time.monotonic() + self.fire_timeout
        while True:
            status = self.client.status()
            if status.get("state") not in ("spinup", "ejecting", "cooldown"):
                break
            left = deadline - time.monotonic()
            if left <= 0:
                raise BoxError("TIMEOUT", f"the box stayed busy ({status.get('state')})")
            # Wait for the next state change rather than polling blindly.
            for event in self.client.events(timeout=min(left, 0.5)):
                self._deliver(event)
                if event.get("kind") == "state":
                    break
        self.drain()  # the box sends every event due before the status reply ahead of it
        strays = min(self._unclaimed, max(0, expect))
        self._unclaimed = 0
        self.strays += strays
        return strays

    def _clear_latch(self) -> None:
        """Leave `jammed`/`empty`, as the person at the box would after clearing it."""
        status = self.client.status()
        if status.get("state") in ("jammed", "empty"):
            with contextlib.suppress(BoxError):
                self.client.clear()

    @staticmethod
    def _checked(event: dict[str, Any], loaded: int) -> int:
        ejected = int(event.get("ejected") or 0)
        if ejected < 0 or ejected > loaded:
            raise BoxError(
                "CONSERVATION",
                f"press {event.get('press_id')} fired {ejected} cards "
                f"but the launcher held {loaded}",
            )
        return ejected


def _check_loaded(loaded: int) -> None:
    if loaded < 0:
        raise ValueError(f"loaded must be at least 0, got {loaded}")
