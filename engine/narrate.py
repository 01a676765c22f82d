"""The narrator: what happened, in words. The only place a move is worded.

Outcomes (engine/outcomes.py) are what the rules core, the table referee and the box did, as
data. This module turns them into the lines people read:

- `log_lines(outcomes)`: the scenario log (`unoattack scenario`), plain English lines about
  seats ("seat 1 hits: 2 cards"), the same in every language (it is machine output).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.cards import format_cards
from engine.outcomes import (
    Challenged,
    ColourNamed,
    Drew,
    Fired,
    Outcome,
    Passed,
    Penalised,
    Played,
    Reloaded,
    TurnedBack,
    TurnedUp,
    UnoCalled,
    WentOut,
)

__all__ = ["log_lines"]


# -- the scenario log: English, about seats --------------------------------------------------


def _cards(n: int) -> str:
    return f"{n} card{'s' if n != 1 else ''}"


def _owed_log(kind: str, n: int) -> str:
    if kind == "until_fire":
        return "hit until a card fires"
    if kind == "hits":
        return f"hit {n} more time{'s' if n != 1 else ''}"
    return f"draw {_cards(n)}"


def _played_log(o: Played) -> list[str]:
    text = f"seat {o.seat} plays {' '.join(format_cards(o.cards))}"
    if o.cards[0].is_wild and o.color:
        text += f" naming {o.color}"
    if o.target is not None:
        text += f" at seat {o.target}"
    return [text]


def _penalised_log(o: Penalised) -> list[str]:
    lines = []
    if o.why == "caught":
        lines.append(f"seat {o.other} catches seat {o.seat}")
    elif o.why == "wrong_accusation":
        lines.append(f"seat {o.seat} accuses seat {o.other} wrongly")
    why = {"false_uno": "false UNO call", "caught": "caught without UNO"}.get(
        o.why, "wrong accusation"
    )
    lines.append(f"seat {o.seat}: {why}, {o.n} {'hits' if o.kind == 'hits' else 'cards'}")
    return lines


def _challenged_log(o: Challenged) -> list[str]:
    if o.legal:
        return [f"seat {o.seat} challenges the WD4 and loses: {_owed_log(o.kind, o.n)}"]
    return [f"seat {o.seat} challenges the WD4 and wins: seat {o.offender} draws 4"]


_LOG: dict[type[Outcome], Callable[..., list[str]]] = {
    TurnedBack: lambda o: [f"{o.card} turned up: back into the pile"],
    TurnedUp: lambda o: [f"seat {o.dealer} deals; {o.card} turned up"],
    Played: _played_log,
    ColourNamed: lambda o: [f"seat {o.seat} names {o.color}"],
    Passed: lambda o: [f"seat {o.seat} passes"],
    UnoCalled: lambda o: [f"seat {o.seat} calls UNO"],
    Penalised: _penalised_log,
    Reloaded: lambda o: [f"launcher reloaded with {o.cards} cards from the discard pile"],
    Fired: lambda o: [f"seat {o.seat} hits: {_cards(o.count)}"],
    Drew: lambda o: [f"seat {o.seat} draws {_cards(o.count)}"],
    Challenged: _challenged_log,
    WentOut: lambda o: [f"seat {o.seat} goes out"],
}


def log_lines(outcomes: Iterable[Outcome]) -> list[str]:
    """The scenario log of `outcomes`: one English line per thing a reader of a replay wants
    (plays, takes, calls, penalties, reloads); the rest (skips, obligations) is in the state."""
    lines: list[str] = []
    for outcome in outcomes:
        said = _LOG.get(type(outcome))
        if said is not None:
            lines.extend(said(outcome))
    return lines
