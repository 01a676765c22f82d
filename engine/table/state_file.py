"""The table's state file: a game at a table, saved after every step, read back checked.

The file (`--state FILE`, JSON) holds the referee (`Referee.to_dict`), the undo steps, the last
box event applied (the box replays everything after it), and the classic dispense in flight.
`StateStore.save` writes it atomically (temporary file, fsync, rename), having first read what
it writes with the loader: nothing is saved that a restart could not load (`StateNotSaved`
otherwise, and nothing written). `load_state` reads it.

A state file is the user's: it may be from an older version, edited by hand, or something else
altogether. Every field is checked for type and range before anything is built from it, and the
first bad one is named in one line ("not a table state: `hand` must be a list of 3 whole numbers
from 0 to 112, got [7]"). Version 1 referees (before the referee played on `BlindRound`) are
upgraded (`upgrade_v1`).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import textfile
from common.commandline import digits
from engine.blind import BlindRound
from engine.cards import COLORS, CardError, parse_card
from engine.effects import EFFECTS
from engine.errors import InputError, UnoError
from engine.table.moves import TableRound
from engine.table.referee import PHASES, STATE_VERSION, Referee
from i18n import _, message_of

__all__ = [
    "StateFile",
    "StateNotSaved",
    "StateStore",
    "check_state_folder",
    "load_state",
    "read_referee",
    "read_state",
    "state_data",
    "unsaved",
    "upgrade_v1",
    "write_json_atomic",
]

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
    if isinstance(value, bool) or not isinstance(value, int) or value not in seats:
        allowed = ", ".join(map(str, seats))
        raise _bad(
            where + key, f"a seat in play ({allowed}){' or null' if optional else ''}", value
        )
    return value


def _color(data: dict[str, Any], key: str, where: str = "") -> str | None:
    value = data.get(key)
    if value is not None and value not in COLORS:
        raise _bad(where + key, "one of R, Y, G, B or null", value)
    return value


def read_referee(data: Any) -> Referee:
    """A `Referee` from saved data (`Referee.to_dict`, or version 1); InputError naming the
    first bad field."""
    if not isinstance(data, dict):
        raise InputError("not a table state: the referee is not a JSON object")
    version = data.get("version")
    if version == 1:
        data = upgrade_v1(data)
    else:
        if version != STATE_VERSION:
            raise InputError(f"not a table state: version {version!r}: expected {STATE_VERSION}")
    try:
        return _read(data)
    except _Bad:
        raise
    except UnoError as exc:  # players, deck, mode, target or options: worded by the Referee
        raise InputError(f"not a table state: {exc}") from None


def _read(data: dict[str, Any]) -> Referee:
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
    teams = _int(data, "teams", 2, 10) if "teams" in data else 2  # older files: two teams
    span = _span(data.get("span"))
    ref = Referee(
        players,
        deck=data["deck"],
        mode=data["mode"],
        target=target,
        teams=teams,
        options=options,
        span=span,
    )
    n = len(players)
    seats = list(range(n))
    # Chips mode: a score is the chips won (negative: lost) against the stake of `target`.
    ref.scores = _ints(data, "scores", n, -target if ref.mode == "chips" else 0, _BIG)
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
    ref.round_no = _int(data, "round", *(span or (1, _BIG)))
    phase = data.get("phase")
    if phase not in PHASES:
        raise _bad("phase", f"one of {', '.join(PHASES)}", phase)
    ref.phase = phase
    # A game over may have ended with its dealer out (elimination): any seat then.
    dealing = in_game if phase != "over" else seats
    ref.dealer = _seat(data, "dealer", dealing)  # type: ignore[assignment]
    for key in ("fired", "presses", "fired_game", "presses_game"):
        setattr(ref, key, _ints(data, key, n, 0, _BIG))
    wd4_color = _color(data, "wd4_color")
    ref.hands_left = _hands_left(ref, data.get("hands_left"))
    rounds = data.get("rounds")
    if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
        raise _bad("rounds", "a list of round results", rounds)
    ref.rounds = rounds
    winners = data.get("game_winners")
    if not isinstance(winners, list) or any(w not in seats or isinstance(w, bool) for w in winners):
        raise _bad("game_winners", "a list of seats", winners)
    ref.game_winners = list(winners)
    losers = data.get("game_losers", [])
    if not isinstance(losers, list) or any(w not in seats or isinstance(w, bool) for w in losers):
        raise _bad("game_losers", "a list of seats", losers)
    ref.game_losers = list(losers)
    play = data.get("play")
    if phase in ("play", "score"):
        if not isinstance(play, dict):
            raise _bad("play", f"the round in play (phase {phase})", play)
        blind = _round(ref, play, in_game)
        ref.playing = TableRound(
            blind, ref.players, ref.deck, classic=ref.classic, wd4_color=wd4_color
        )
    elif play is not None:
        raise _bad("play", f"null in phase {phase}", play)
    taking = _seat(data, "taking", in_game, optional=True)
    rnd = ref.round
    if taking is not None and (phase != "play" or rnd is None or rnd.pending):
        raise _bad("taking", "null unless a player waits for the launcher", taking)
    if ref.playing is not None:
        ref.playing.taking = taking
    if phase == "play" and rnd is not None and rnd.over:
        raise _bad("phase", "score once the round is over", phase)
    if phase == "score" and (rnd is None or not rnd.over):
        raise _bad("phase", "play while nobody has gone out", phase)
    return ref


def _span(value: Any) -> tuple[int, int] | None:
    """A game of a fixed number of rounds: [first, last] (older files and games to a target:
    null or absent)."""
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
        or not 1 <= value[0] <= value[1] <= _BIG
    ):
        raise _bad("span", "null or [first, last]: round numbers from 1", value)
    return value[0], value[1]


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
    finished = play.get("finished", [])
    if (
        not isinstance(finished, list)
        or (ref.mode != "knockout" and finished not in ([], [winner]))
        or any(s not in in_game or isinstance(s, bool) or hand[s] for s in finished)
        or len(set(finished)) != len(finished)
        or len(finished) >= len(in_game)
    ):
        raise _bad(
            w + "finished", "the seats out of a knockout round (0 cards), in order", finished
        )
    return BlindRound.restore(
        ref.deck,
        ref.rules,
        play,
        dealer=ref.dealer,
        out=[s for s in range(n) if s not in in_game],
        top=top,
        knockout=ref.mode == "knockout",
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
    wd4: dict[str, Any] = data["wd4"] if isinstance(data.get("wd4"), dict) else {}
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


# -- the session's file -------------------------------------------------------------------------


@dataclass
class StateFile:
    """What a state file holds, read and checked (`load_state`): the `referee`, the undo
    `history` (referee data, oldest first) and the `undo_floor` (steps below it cannot be
    undone), the `last_event` applied (``{"stream", "seq", "hitter"}``), and the classic
    `dispensing` in flight (``{"seat", "cards", "press_id"}``, or ``{"hold": true}``)."""

    referee: Referee
    history: list[dict[str, Any]]
    last_event: dict[str, Any]
    dispensing: dict[str, Any] | None
    undo_floor: int
    night: dict[str, Any] | None = None  # a table of a night: {"file", "table" (from 1)}


def state_data(state: StateFile) -> dict[str, Any]:
    """The file's JSON data."""
    return {
        "referee": state.referee.to_dict(),
        "history": state.history,
        "undo_floor": state.undo_floor,
        "last_event": state.last_event,
        "dispensing": state.dispensing,
        "night": state.night,
    }


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that a crash leaves either the old file or the new one, never half."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_state_folder(state: Path) -> None:
    """The state file's folder must exist before the game starts: finding out at the first save
    would lose that action (and the message would name a temporary file)."""
    folder = state.parent
    if not folder.exists():
        raise InputError(
            _(
                "--state {path}: folder {folder} does not exist; create it or give another FILE"
            ).format(path=state, folder=folder)
        )
    if not folder.is_dir():
        raise InputError(
            _("--state {path}: {folder} is not a folder; give another FILE").format(
                path=state, folder=folder
            )
        )


def load_state(path: Path) -> StateFile:
    """Read a state file written by the session; InputError (one line, naming the file and
    the field) for anything else."""
    try:
        data = textfile.parse_json(textfile.read_text(path))  # a BOM allowed; not /dev/zero
    except OSError as exc:
        raise InputError(textfile.cannot_read(path, exc).render()) from None
    except UnicodeDecodeError:
        # A binary file given by mistake: name it, not the codec.
        raise InputError(
            f"{path}: not a table state file (binary, not JSON text); give another --state "
            "FILE, or --new to start a new game in it"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            _("{path}: not a table state file: {exc}").format(path=path, exc=exc)
        ) from None
    if not isinstance(data, dict) or "referee" not in data:
        raise InputError(_("{path}: not a table state file").format(path=path))
    try:
        return read_state(data)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def step_key(step: dict[str, Any]) -> str:
    """An undo step as one string (to know it was read back already)."""
    return json.dumps(step, sort_keys=True)


def read_state(data: dict[str, Any], *, checked: Collection[str] = ()) -> StateFile:
    """The state a state file holds, from its JSON data, every field checked; InputError
    naming the field. `StateStore.save` reads what it is about to write with it: nothing is
    saved that this would not load. `checked`: undo steps read before (`step_key`), not read
    again."""
    if "referee" not in data:
        raise InputError("not a table state: `referee` is missing")
    ref = read_referee(data["referee"])
    history = data.get("history") or []
    if not isinstance(history, list):
        raise InputError("not a table state: `history` must be a list of states")
    for i, step in enumerate(history):
        if checked and step_key(step) in checked:
            continue
        try:
            read_referee(step)  # undo must find what it needs
        except InputError as exc:
            raise InputError(f"history[{i}]: {exc}") from None
    last = data.get("last_event") or {}
    if not isinstance(last, dict):
        raise InputError("not a table state: `last_event` must be a box event position")
    seq = last.get("seq", 0)
    stream = last.get("stream")
    if (isinstance(seq, bool) or not isinstance(seq, int | None)) or not isinstance(
        stream, str | None
    ):
        raise InputError("not a table state: `last_event` must hold a stream and a seq")
    for key in ("hopper", "hitter"):  # hopper: written by older versions, not read
        value = last.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError(
                _("not a table state: `last_event.{key}` must be a whole number").format(key=key)
            )
    if last.get("hitter") is not None and not 0 <= last["hitter"] < len(ref.players):
        raise InputError("not a table state: `last_event.hitter` must be a seat")
    dispensing = data.get("dispensing")
    if dispensing is not None and not _dispensing_ok(dispensing, len(ref.players)):
        raise InputError(
            "not a table state: `dispensing` must be null or {seat, cards, press_id, hold}"
        )
    floor = data.get("undo_floor", 0)
    if isinstance(floor, bool) or not isinstance(floor, int) or floor < 0:
        raise InputError("not a table state: `undo_floor` must be a whole number")
    night = data.get("night")
    if night is not None and not (
        isinstance(night, dict)
        and isinstance(night.get("file"), str)
        and isinstance(night.get("table"), int)
        and not isinstance(night.get("table"), bool)
        and night["table"] >= 1
        and ref.span is not None
    ):
        raise InputError(
            "not a table state: `night` must be null or {file, table} (a game of a night's rounds)"
        )
    position = {k: last[k] for k in ("stream", "seq", "hitter") if k in last}
    return StateFile(ref, list(history), position, dispensing, floor, night)


def _dispensing_ok(record: Any, players: int) -> bool:
    if not isinstance(record, dict):
        return False
    if record.get("hold") is True and "seat" not in record:
        return True
    seat, cards, press_id = record.get("seat"), record.get("cards"), record.get("press_id")
    return (
        isinstance(seat, int)
        and not isinstance(seat, bool)
        and 0 <= seat < players
        and isinstance(cards, int)
        and not isinstance(cards, bool)
        and 0 < cards <= 1000
        and (press_id is None or (isinstance(press_id, int) and not isinstance(press_id, bool)))
    )


# -- saving -------------------------------------------------------------------------------------


class StateNotSaved(UnoError):
    """The state file could not be written, or what would be written could not be loaded."""


def unsaved(exc: Exception) -> str:
    """Why a save failed, in one line (an OSError from below the save included)."""
    if isinstance(exc, OSError):
        return _("cannot save the game: {error}").format(error=exc.strerror or exc)
    return message_of(exc)


class StateStore:
    """Where a table's state is saved: `path` (None: nowhere), named `label` in what the table
    says (a web page's readers are not told the server's paths). It writes only when something
    but the last box event's number changed since the last write: box events that change
    nothing (a burst's passing states, a press's own event) are not worth an fsync each; after
    a crash the box replays them from the last event saved, and they change nothing again."""

    def __init__(self, path: Path | None, label: str | None = None) -> None:
        self.path = path
        self.label = label or str(path)
        self._saved: str | None = None  # what the file holds (its key, see `save`)
        self._checked: set[str] = set()  # undo steps read back already (`step_key`)
        # The loader refused the game as it is (until it is saved again): no undo step of it.
        self.unloadable = False

    def save(self, state: StateFile, *, force: bool = False) -> None:
        """Write `state` atomically (temp file, fsync, rename) when it changed (or `force`),
        having read it back with the loader. StateNotSaved (nothing written) when it would not
        load, or the file cannot be written (a full SD card, a read-only remount, no file
        descriptor left)."""
        if self.path is None:
            return
        data = state_data(state)
        # What a replayed event cannot bring back: all of it but the event's number.
        last = state.last_event
        key = json.dumps(
            {
                **data,
                "history": len(state.history),
                "last_event": [last.get(k) for k in ("stream", "hitter")],
            },
            sort_keys=True,
        )
        if key == self._saved and not force:
            return
        try:
            read_state(json.loads(json.dumps(data)), checked=self._checked)
        except InputError as exc:
            self.unloadable = True
            raise StateNotSaved(
                _("that would leave a game that cannot be loaded again ({problem})").format(
                    problem=message_of(exc)
                )
            ) from None
        try:
            write_json_atomic(self.path, data)
        except OSError as exc:
            raise StateNotSaved(
                _("cannot save the game in {path}: {error}").format(
                    path=self.label, error=exc.strerror or exc
                )
            ) from None
        self._saved = key
        self.unloadable = False
        # Undo steps read back once are not read again at every save.
        self._checked = {step_key(step) for step in state.history}
