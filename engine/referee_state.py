"""Reading a saved referee (`Referee.to_dict`) back, checking every field.

A state file is the user's: it may be from an older version, edited by hand, or something else
altogether. Every field is checked for type and range before anything is built from it, and the
first bad one is named in one line ("not a table state: `hand` must be a list of 3 whole numbers
from 0 to 112, got [7]"). Version 1 states (before the referee played on `BlindRound`) are
upgraded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.blind import BlindRound
from engine.cards import COLORS, CardError, parse_card
from engine.effects import EFFECTS
from engine.errors import InputError, UnoError
from firmware.commandline import digits

if TYPE_CHECKING:
    from engine.referee import Referee

__all__ = ["read_state", "upgrade_v1"]

_BIG = 10**9  # no score, count or round number gets near this in a real game


class _Bad(InputError):
    pass


def _bad(field: str, what: str, value: Any) -> _Bad:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return _Bad(f"not a table state: `{field}` must be {what}, got {shown}")


def _int(data: dict[str, Any], key: str, low: int, high: int, where: str = "") -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _bad(where + key, f"a whole number from {low} to {high}", value)
    return value


def _ints(
    data: dict[str, Any], key: str, n: int, low: int, high: int, where: str = ""
) -> list[int]:
    value = data.get(key)
    if (
        not isinstance(value, list)
        or len(value) != n
        or any(isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high for v in value)
    ):
        raise _bad(where + key, f"a list of {n} whole numbers from {low} to {high}", value)
    return list(value)


def _seat(
    data: dict[str, Any], key: str, seats: Sequence[int], where: str = "", *, optional: bool = False
) -> int | None:
    value = data.get(key)
    if optional and value is None:
        return None
    if type(value) is not int or value not in seats:  # (1.0 == 1: a float seat was an index)
        allowed = ", ".join(map(str, seats))
        raise _bad(
            where + key, f"a seat in play ({allowed}){' or null' if optional else ''}", value
        )
    return int(value)


def _color(data: dict[str, Any], key: str, where: str = "") -> str | None:
    value = data.get(key)
    if value is not None and value not in COLORS:
        raise _bad(where + key, "one of R, Y, G, B or null", value)
    return value


def read_state(cls: type[Referee], data: Any) -> Referee:
    """A `cls` (Referee) from saved data; InputError naming the first bad field."""
    if not isinstance(data, dict):
        raise InputError("not a table state: the referee is not a JSON object")
    version = data.get("version")
    if version == 1:
        data = upgrade_v1(data)
    else:
        from engine.referee import STATE_VERSION

        if version != STATE_VERSION:
            raise InputError(f"not a table state: version {version!r}: expected {STATE_VERSION}")
    try:
        return _read(cls, data)
    except _Bad:
        raise
    except UnoError as exc:  # players, deck, mode, target or options: worded by the Referee
        raise InputError(f"not a table state: {exc}") from None


def _read(cls: type[Referee], data: dict[str, Any]) -> Referee:
    from engine.referee import PHASES

    players = data.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise _bad("players", "a list of names", players)
    options = data.get("options")
    if not isinstance(options, dict):
        raise _bad("options", "a table of rule options", options)
    for key in ("deck", "mode"):
        if not isinstance(data.get(key), str):
            raise _bad(key, "text", data.get(key))
    target = _int(data, "target", 1, _BIG)
    ref = cls(players, deck=data["deck"], mode=data["mode"], target=target, options=options)
    n = len(players)
    seats = list(range(n))
    ref.scores = _ints(data, "scores", n, 0, _BIG)
    active = data.get("active")
    if (
        not isinstance(active, list)
        or len(active) != n
        or not all(a is True or a is False for a in active)
    ):
        raise _bad("active", f"a list of {n} true/false", active)
    if not any(active):
        raise _bad("active", "true for at least one player", active)
    ref.active = [bool(a) for a in active]
    in_game = [s for s in seats if ref.active[s]]
    ref.round_no = _int(data, "round", 1, _BIG)
    phase = data.get("phase")
    if phase not in PHASES:
        raise _bad("phase", f"one of {', '.join(PHASES)}", phase)
    ref.phase = phase
    ref.dealer = _seat(data, "dealer", in_game)  # type: ignore[assignment]
    for key in ("fired", "presses", "fired_game", "presses_game"):
        setattr(ref, key, _ints(data, key, n, 0, _BIG))
    ref.wd4_color = _color(data, "wd4_color")
    ref.hands_left = _hands_left(ref, data.get("hands_left"))
    rounds = data.get("rounds")
    if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
        raise _bad("rounds", "a list of round results", rounds)
    ref.rounds = rounds
    winners = data.get("game_winners")
    if not isinstance(winners, list) or any(w not in seats or isinstance(w, bool) for w in winners):
        raise _bad("game_winners", "a list of seats", winners)
    ref.game_winners = list(winners)
    play = data.get("play")
    if phase in ("play", "score"):
        if not isinstance(play, dict):
            raise _bad("play", f"the round in play (phase {phase})", play)
        ref.round = _round(ref, play, in_game)
    elif play is not None:
        raise _bad("play", f"null in phase {phase}", play)
    ref.taking = _seat(data, "taking", in_game, optional=True)
    rnd = ref.round
    if ref.taking is not None and (phase != "play" or rnd is None or rnd.pending):
        raise _bad("taking", "null unless a player waits for the launcher", ref.taking)
    if phase == "play" and rnd is not None and rnd.over:
        raise _bad("phase", "score once the round is over", phase)
    if phase == "score" and (rnd is None or not rnd.over):
        raise _bad("phase", "play while nobody has gone out", phase)
    return ref


def _hands_left(ref: Referee, value: Any) -> dict[int, list[str]]:
    if not isinstance(value, dict):
        raise _bad("hands_left", "a table of seat = cards", value)
    out: dict[int, list[str]] = {}
    for key, cards in value.items():
        # ASCII digits only: "²" passed isdigit and failed int (a traceback)
        seat = digits(key) if isinstance(key, str) else None
        if seat is None or seat >= len(ref.players):
            raise _bad("hands_left", "seats as keys", key)
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise _bad(f"hands_left.{key}", "a list of cards", cards)
        try:
            out[seat] = [str(parse_card(c, ref.deck)) for c in cards]
        except CardError as exc:
            raise InputError(f"not a table state: `hands_left.{key}`: {exc}") from None
    return out


def _round(ref: Referee, play: dict[str, Any], in_game: list[int]) -> BlindRound:
    w = "play."
    n = len(ref.players)
    total = ref.deck.total
    hand = _ints(play, "hand", n, 0, total, w)
    if sum(hand) > total:
        raise _bad(w + "hand", f"counts adding up to at most {total} (the deck)", hand)
    if any(hand[s] for s in range(n) if s not in in_game):
        raise _bad(w + "hand", "0 for a player out of the game", hand)
    _seat(play, "turn", in_game, w)
    direction = play.get("direction")
    if type(direction) is not int or direction not in (1, -1):
        raise _bad(w + "direction", "1 (left) or -1 (right)", direction)
    _color(play, "color", w)
    top_text = play.get("top")
    try:
        if not isinstance(top_text, str):
            raise CardError("")
        top = parse_card(top_text, ref.deck)
    except CardError:
        raise _bad(w + "top", f"a card of the {ref.deck.name} deck", top_text) from None
    if play.get("color") is None and not top.is_wild:
        raise _bad(w + "color", f"the colour in play (top {top})", None)
    pending = play.get("pending")
    if not isinstance(pending, list):
        raise _bad(w + "pending", "a list of obligations", pending)
    for i, due in enumerate(pending):
        _due(due, f"{w}pending[{i}].", in_game, attack=ref.rules.attack)
    bonus = play.get("bonus")
    if bonus is not None:
        if not isinstance(bonus, dict):
            raise _bad(w + "bonus", "null or {seat, anchor}", bonus)
        _seat(bonus, "seat", in_game, w + "bonus.")
        _seat(bonus, "anchor", in_game, w + "bonus.")
    for key in ("window", "wd4_by", "last_seat", "winner"):
        _seat(play, key, in_game, w, optional=True)
    called = play.get("uno_called", [])
    if not isinstance(called, list) or any(type(c) is not int or c not in in_game for c in called):
        raise _bad(w + "uno_called", "a list of seats in play", called)
    if not isinstance(play.get("fired_play", False), bool):
        raise _bad(w + "fired_play", "true or false", play.get("fired_play"))
    winner = play.get("winner")
    if winner is not None and hand[winner] != 0:
        raise _bad(w + "hand", f"0 cards for the winner (seat {winner})", hand)
    return BlindRound.restore(
        ref.deck,
        ref.rules,
        play,
        dealer=ref.dealer,
        out=[s for s in range(n) if s not in in_game],
        top=top,
    )


def _due(due: Any, where: str, seats: list[int], *, attack: bool) -> None:
    if not isinstance(due, dict):
        raise _bad(where[:-1], "an obligation {seat, hits | until_fire | cards}", due)
    _seat(due, "seat", seats, where)
    kinds = [k for k in ("hits", "until_fire", "cards") if k in due]
    if len(kinds) != 1:
        raise _bad(where[:-1], "exactly one of hits, until_fire, cards", due)
    kind = kinds[0]
    if kind == "until_fire":
        if due["until_fire"] is not True:
            raise _bad(where + "until_fire", "true", due["until_fire"])
    else:
        _int(due, kind, 1, 1000, where)
    if (kind == "cards") == attack:
        raise _bad(where[:-1], "hits in UNO Attack, cards in classic", due)
    face = due.get("face")
    if face is not None and (not isinstance(face, str) or face not in EFFECTS):  # ([] unhashable)
        raise _bad(where + "face", "a card face or null", face)
    if not isinstance(due.get("fresh", False), bool):
        raise _bad(where + "fresh", "true or false", due.get("fresh"))


def upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A version 1 referee state as version 2 (wrong types are left for the checks to name)."""
    from engine.referee import STATE_VERSION

    out = {
        k: data.get(k)
        for k in (
            "players",
            "deck",
            "mode",
            "target",
            "options",
            "scores",
            "active",
            "round",
            "dealer",
            "phase",
            "fired",
            "presses",
            "fired_game",
            "presses_game",
            "hands_left",
            "rounds",
            "game_winners",
        )
    }
    out["version"] = STATE_VERSION
    wd4 = data.get("wd4") if isinstance(data.get("wd4"), dict) else {}
    out["wd4_color"] = wd4.get("color")
    out["taking"] = None
    out["play"] = None
    if data.get("phase") not in ("play", "score"):
        return out
    pending = []
    raw = data.get("pending")
    for ob in raw if isinstance(raw, list) else []:
        if not isinstance(ob, dict):
            pending.append(ob)
            continue
        if ob.get("ends_turn") or ob.get("draw"):
            out["taking"] = ob.get("seat")  # a hit or draw typed, waiting for the box
            continue
        due = {k: ob[k] for k in ("seat", "hits", "until_fire", "cards") if k in ob}
        due["face"] = "WD4" if ob.get("open") else None
        due["fresh"] = bool(ob.get("open"))
        pending.append(due)
    uno = data.get("uno") if isinstance(data.get("uno"), dict) else None
    called = []
    if uno and uno.get("called"):
        called.append(uno.get("seat"))
    if data.get("uno_early") is not None:
        called.append(data.get("uno_early"))
    out["play"] = {
        "hand": data.get("hand"),
        "turn": data.get("turn"),
        "direction": data.get("direction"),
        "color": data.get("color"),
        "top": data.get("top"),
        "pending": pending,
        "bonus": data.get("bonus"),
        "window": uno.get("seat") if uno else None,
        "uno_called": called,
        "fired_play": data.get("drawn") is not None,
        "wd4_by": wd4.get("by"),
        "last_seat": None,
        "winner": data.get("winner"),
    }
    return out
