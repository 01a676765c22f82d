"""One readable line for each box event: what ``unoattack watch`` and ``launcher send`` print.

``describe(event)`` is the line of any event (``#seq  t  kind  what happened``);
``fire_result(fire)`` is the short answer to a ``press`` or ``dispense``; ``news(event)`` is the
line a game (``unoattack demo``, the ``unoattack table`` referee) shows for a box event that
changes play. Messages about a box event for a person live here only, so a translation has one
place to look. They go through the
catalogs (``i18n``); the event kind and the values the box sent (states, reasons, sources) stay
as the wire protocol spells them.
"""

from __future__ import annotations

import json
from typing import Any

from i18n import _, ngettext


def _ms(value: Any) -> str:
    return "-" if value is None else _("{ms} ms").format(ms=value)


def _cards(n: int) -> str:
    return ngettext("{n} card", "{n} cards", n).format(n=n)


def _fire(event: dict[str, Any]) -> str:
    ejected = int(event.get("ejected") or 0)
    reason = event.get("reason")
    if reason == "dry":
        what = _("dry (nothing fired)")
    elif reason == "fired":
        what = _("fired {cards}").format(cards=_cards(ejected))
    else:
        what = _("{reason}: {ejected} of {planned} fired").format(
            reason=reason, ejected=ejected, planned=event.get("planned")
        )
    timing = ""
    if ejected:
        timing = _("; spin-up {spinup}, first card {first}, total {total}").format(
            spinup=_ms(event.get("spinup_ms")),
            first=_ms(event.get("first_card_ms")),
            total=_ms(event.get("total_ms")),
        )
    retries = int(event.get("retries") or 0)
    if retries:
        timing += ngettext("; unjam retry {n}", "; unjam retries {n}", retries).format(n=retries)
    return _(
        "press {press_id} ({source}): {what}, dry streak {dry_streak}, hopper {hopper}{timing}"
    ).format(
        press_id=event.get("press_id"),
        source=event.get("source"),
        what=what,
        dry_streak=event.get("dry_streak"),
        hopper=event.get("hopper"),
        timing=timing,
    )


def _what(event: dict[str, Any]) -> str | None:
    kind = event.get("kind")
    if kind == "hello":
        return _("box {name} up: {ejector} ejector, hopper {hopper}, config {config}").format(
            name=event.get("name"),
            ejector=event.get("ejector"),
            hopper=event.get("hopper"),
            config=event.get("config"),
        )
    if kind == "state":
        return state_change(event)
    if kind == "press":
        return _("press {press_id} from the {source}").format(
            press_id=event.get("press_id"), source=event.get("source")
        )
    if kind == "fire":
        return _fire(event)
    if kind == "jam":
        return ngettext(
            "JAM on press {press_id} after {n} unjam retry: clear the cards, then `clear`",
            "JAM on press {press_id} after {n} unjam retries: clear the cards, then `clear`",
            int(event.get("retries") or 0),
        ).format(press_id=event.get("press_id"), n=event.get("retries"))
    if kind == "empty":
        return _("hopper empty (press {press_id}, hopper {hopper})").format(
            press_id=event.get("press_id"), hopper=event.get("hopper")
        )
    if kind == "fault":
        return _("FAULT on {output}: {why}").format(
            output=event.get("output"), why=event.get("why")
        )
    if kind == "refill":
        added = int(event.get("added") or 0)
        return ngettext(
            "{n} card added, hopper {hopper}", "{n} cards added, hopper {hopper}", added
        ).format(n=added, hopper=event.get("hopper"))
    if kind == "stray":
        after = event.get("after_press_id")
        cards = _cards(int(event.get("count") or 0))
        if after is not None:
            text = _(
                "{cards} left the box behind press {after} with no burst counting, hopper {hopper}"
            )
        else:
            text = _("{cards} left the box with no burst counting, hopper {hopper}")
        return text.format(cards=cards, after=after, hopper=event.get("hopper"))
    return None


def state_change(event: dict[str, Any], *, why: bool = True) -> str:
    """``ejecting -> jammed (card timeout)``: a ``state`` event (state names as the wire spells
    them), with its reason unless ``why`` is false."""
    reason = f" ({event['why']})" if why and event.get("why") else ""
    return f"{event.get('from')} -> {event.get('to')}{reason}"


# Where a game takes notice of a state change: the box stops serving presses until a person acts.
_LATCHED = ("jammed", "empty", "fault")


def news(event: dict[str, Any]) -> str | None:
    """The line a game shows for a box event that changes play: the hopper loaded or empty, a
    fault, a move into a latched state; None for the rest. (A game tells presses and fires in
    its own terms, and a jam with what its person or the demo does about it.)"""
    kind = event.get("kind")
    if kind == "refill":
        return _("box hopper loaded: {count} cards").format(count=event.get("hopper"))
    if kind == "empty":
        return _("box hopper empty")
    if kind == "fault":
        return _("box: FAULT on {output}: {why}").format(
            output=event.get("output"), why=event.get("why")
        )
    if kind == "state" and event.get("to") in _LATCHED:
        return "box: " + state_change(event, why=False)
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
    extras = []
    if "dry_streak" in event:
        extras.append(_("dry streak {n}").format(n=event["dry_streak"]))
    if event.get("hopper") is not None:
        extras.append(_("hopper {n}").format(n=event["hopper"]))
    if event.get("retries"):
        extras.append(_("unjam retries {n}").format(n=event["retries"]))
    if event.get("pattern"):
        extras.append(_("pattern {name}").format(name=event["pattern"]))
    if event.get("cut"):
        extras.append(_("{n} cut for rapid presses").format(n=event["cut"]))
    tail = f" ({', '.join(extras)})" if extras else ""
    planned = int(event.get("planned") or 0)
    return ngettext(
        "press {press_id}: {reason} {ejected} of {planned} card{tail}",
        "press {press_id}: {reason} {ejected} of {planned} cards{tail}",
        planned,
    ).format(
        press_id=event.get("press_id"),
        reason=event.get("reason"),
        ejected=event.get("ejected"),
        planned=event.get("planned"),
        tail=tail,
    )
