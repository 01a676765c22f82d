"""One readable line for each box event: what ``unoattack watch`` and ``launcher send`` print.

``describe(event)`` is the line of any event (``#seq  t  kind  what happened``);
``fire_result(fire)`` is the short answer to a ``press`` or ``dispense``. Messages about a box
event for a person live here only, so a translation has one place to look.
"""

from __future__ import annotations

import json
from typing import Any


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value} ms"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _fire(event: dict[str, Any]) -> str:
    ejected = int(event.get("ejected") or 0)
    reason = event.get("reason")
    if reason == "dry":
        what = "dry (nothing fired)"
    elif reason == "fired":
        what = f"fired {_plural(ejected, 'card')}"
    else:
        what = f"{reason}: {ejected} of {event.get('planned')} fired"
    timing = ""
    if ejected:
        timing = (
            f"; spin-up {_ms(event.get('spinup_ms'))}, first card "
            f"{_ms(event.get('first_card_ms'))}, total {_ms(event.get('total_ms'))}"
        )
    retries = int(event.get("retries") or 0)
    if retries:
        timing += f"; unjam {'retry' if retries == 1 else 'retries'} {retries}"
    return (
        f"press {event.get('press_id')} ({event.get('source')}): {what}, "
        f"dry streak {event.get('dry_streak')}, hopper {event.get('hopper')}{timing}"
    )


def _what(event: dict[str, Any]) -> str | None:
    kind = event.get("kind")
    if kind == "hello":
        return (
            f"box {event.get('name')} up: {event.get('ejector')} ejector, "
            f"hopper {event.get('hopper')}, config {event.get('config')}"
        )
    if kind == "state":
        why = f" ({event['why']})" if event.get("why") else ""
        return f"{event.get('from')} -> {event.get('to')}{why}"
    if kind == "press":
        return f"press {event.get('press_id')} from the {event.get('source')}"
    if kind == "fire":
        return _fire(event)
    if kind == "jam":
        return (
            f"JAM on press {event.get('press_id')} after {event.get('retries')} unjam retries: "
            "clear the cards, then `clear`"
        )
    if kind == "empty":
        return f"hopper empty (press {event.get('press_id')}, hopper {event.get('hopper')})"
    if kind == "fault":
        return f"FAULT on {event.get('output')}: {event.get('why')}"
    if kind == "refill":
        return f"{event.get('added')} cards added, hopper {event.get('hopper')}"
    if kind == "stray":
        after = event.get("after_press_id")
        behind = f" behind press {after}" if after is not None else ""
        return (
            f"{_plural(int(event.get('count') or 0), 'card')} left the box{behind} "
            f"with no burst counting, hopper {event.get('hopper')}"
        )
    return None


def describe(event: dict[str, Any]) -> str:
    """One line for a person: ``#seq  t  kind  details``."""
    kind = event.get("kind", "?")
    head = f"#{event.get('seq', '?'):<5} {event.get('t_ms', 0) / 1000:>9.3f}s  {kind:<6} "
    what = _what(event)
    if what is None:
        extra = {k: v for k, v in event.items() if k not in ("v", "type", "seq", "boot", "stream")}
        what = json.dumps(extra, separators=(",", ":"))
    return head + what


def fire_result(event: dict[str, Any]) -> str:
    """``press 7: fired 3 of 3 cards (dry streak 2, hopper 97)``: the answer to one press."""
    extras = [f"dry streak {event['dry_streak']}"] if "dry_streak" in event else []
    if event.get("hopper") is not None:
        extras.append(f"hopper {event['hopper']}")
    if event.get("retries"):
        extras.append(f"unjam retries {event['retries']}")
    if event.get("pattern"):
        extras.append(f"pattern {event['pattern']}")
    if event.get("cut"):
        extras.append(f"{event['cut']} cut for rapid presses")
    tail = f" ({', '.join(extras)})" if extras else ""
    return (
        f"press {event.get('press_id')}: {event.get('reason')}"
        f" {event.get('ejected')} of {event.get('planned')} cards{tail}"
    )
