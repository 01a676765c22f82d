"""`unoattack scenario FILE.toml`: replay a written-down round and print the resulting state.

A scenario fixes a position (hands, top card, launcher pile and what each hit fires) and a list
of actions; the engine replays them and prints the state as JSON. It is how rule behaviour is
tested and how users report rule bugs. The format is documented in docs/scenarios.md.
"""

from __future__ import annotations

import argparse
import json
import random
import tomllib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from common import textfile
from common.commandline import say_error
from engine.cards import Card, Deck, load_deck, parse_card
from engine.errors import CardError, InputError, RuleError
from engine.game import Action, Round
from engine.launchers import ScriptedLauncher
from engine.narrate import log_lines
from engine.rules import PRESET_NAMES, rules_for
from engine.scoring import SCORING_MODES
from i18n import _

TOP_KEYS = ("deck", "rules", "players", "dealer", "seed", "mode", "options", "start", "actions")
START_KEYS = ("hands", "top", "color", "turn", "direction", "launcher", "pile")
ACTION_VERBS = ("play", "hit", "draw", "pass", "uno", "catch", "challenge")
ACTION_KEYS = ("seat", *ACTION_VERBS, "color", "target")

EXIT_ILLEGAL = 1
EXIT_MALFORMED = 2


class Scenario:
    """A parsed, validated scenario: `round` (ready to replay) and `actions`."""

    def __init__(self, rnd: Round, actions: list[Action], launcher: ScriptedLauncher) -> None:
        self.round = rnd
        self.actions = actions
        self.launcher = launcher

    def run(self) -> tuple[dict[str, Any], int]:
        """Replay every action; returns (output, exit code): the state, or on the first illegal
        action {"error": {"action": INDEX, "message": ...}, "state": ...} with exit code 1."""
        rnd = self.round
        for index, action in enumerate(self.actions):
            try:
                rnd.apply(action)
            except RuleError as exc:
                error = {"action": index, "message": str(exc)}
                return {"error": error, "state": state_of(rnd)}, EXIT_ILLEGAL
        return state_of(rnd), 0


def state_of(rnd: Round) -> dict[str, Any]:
    """The round's state as a scenario prints it: `Round.to_dict()` with the log of its moves
    (engine/narrate.py) after `launcher_left`."""
    out: dict[str, Any] = {}
    for key, value in rnd.to_dict().items():
        out[key] = value
        if key == "launcher_left":
            out["log"] = log_lines(rnd.outcomes)
    return out


def _int(value: object, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{where} = {value!r}: a whole number from {low} to {high}")
    return value


def _card(value: object, where: str, deck: Deck) -> Card:
    if not isinstance(value, str):
        raise InputError(f"{where} = {value!r}: a card like R5 or WAA")
    try:
        return parse_card(value, deck)
    except CardError as exc:
        raise InputError(f"{where}: {exc}") from None


def _cards(value: object, where: str, deck: Deck) -> list[Card]:
    if not isinstance(value, list):
        raise InputError(f'{where} must be a list of cards like ["R5", "WAA"]')
    return [_card(v, f"{where}[{i}]", deck) for i, v in enumerate(value)]


def _color(value: object, where: str) -> str:
    if not isinstance(value, str) or value.upper() not in ("R", "Y", "G", "B"):
        raise InputError(f"{where} = {value!r}: one of R, Y, G, B")
    return value.upper()


def parse_scenario(data: Mapping[str, Any], *, base: Path | None = None) -> Scenario:
    """Validate a scenario mapping (a parsed TOML file) and build its round and actions.

    Raises InputError with one line naming the field for anything malformed: an unknown field,
    a bad card, a card not in the deck (or more copies than the deck has), a bad type or range.
    """
    for key in data:
        if key not in TOP_KEYS:
            raise InputError(f"unknown field `{key}`: allowed are {', '.join(TOP_KEYS)}")
    deck_name = data.get("deck", "attack")
    if not isinstance(deck_name, str):
        raise InputError(f"deck = {deck_name!r}: a preset name or a deck file path")
    looks_like_path = deck_name.endswith(".toml") or "/" in deck_name
    if looks_like_path and base is not None and not Path(deck_name).is_absolute():
        deck_name = str(base / deck_name)
    try:
        deck = load_deck(deck_name)
    except (InputError, CardError) as exc:
        raise InputError(f"deck: {exc}") from None
    except UnicodeDecodeError:
        # engine.cards reads the file; a binary one fails before its own checks.
        raise InputError(f"deck: {deck_name}: not a text deck file (UTF-8 TOML)") from None
    preset = data.get("rules", deck.name if deck.name in PRESET_NAMES else "attack")
    if preset not in PRESET_NAMES:
        raise InputError(f"rules = {preset!r}: one of {', '.join(PRESET_NAMES)}")
    if "players" not in data:
        raise InputError("players is required: the number of seats, 2 to 10")
    players = _int(data["players"], "players", 2, 10)
    dealer = _int(data.get("dealer", 0), "dealer", 0, players - 1)
    seed = _int(data.get("seed", 0), "seed", 0, 2**63)
    options = data.get("options", {})
    if not isinstance(options, Mapping):
        raise InputError("[options] must be a table of rule options")
    try:
        rules = rules_for(preset, players, **dict(options))
    except InputError as exc:
        raise InputError(f"[options] {exc}") from None
    # A scenario is one round: of the scoring modes only knockout changes how a round is played
    # (it goes on after a player goes out, until one is left).
    mode = data.get("mode", "target")
    if mode not in SCORING_MODES:
        raise InputError(f"mode = {mode!r}: one of {', '.join(SCORING_MODES)}")
    knockout = mode == "knockout"
    start = data.get("start")
    if start is None:
        # No position given: deal a round from the seed, like a simulation would.
        launcher = ScriptedLauncher(())
        rnd = Round(
            deck, rules, launcher, players=players, dealer=dealer, seed=seed, knockout=knockout
        )
    else:
        rnd, launcher = _start(start, deck, rules, players, dealer, seed, knockout)
    actions = _actions(data.get("actions", []), deck, players)
    return Scenario(rnd, actions, launcher)


def _start(
    start: object, deck: Deck, rules: Any, players: int, dealer: int, seed: int, knockout: bool
) -> tuple[Round, ScriptedLauncher]:
    if not isinstance(start, Mapping):
        raise InputError("[start] must be a table")
    for key in start:
        if key not in START_KEYS:
            raise InputError(f"unknown field `start.{key}`: allowed are {', '.join(START_KEYS)}")
    hands_raw = start.get("hands")
    if not isinstance(hands_raw, list) or len(hands_raw) != players:
        raise InputError(f"start.hands must be a list of {players} card lists, one per seat")
    hands = [_cards(h, f"start.hands[{i}]", deck) for i, h in enumerate(hands_raw)]
    for i, hand in enumerate(hands):
        if not hand:
            raise InputError(f"start.hands[{i}] is empty: every seat starts with a card")
    if "top" not in start:
        raise InputError("start.top is required: the card on the discard pile")
    top = _card(start["top"], "start.top", deck)
    color = _color(start["color"], "start.color") if "color" in start else None
    turn = _int(start["turn"], "start.turn", 0, players - 1) if "turn" in start else None
    direction = start.get("direction", 1)
    if direction not in (1, -1) or isinstance(direction, bool):
        raise InputError(f"start.direction = {direction!r}: 1 (left) or -1 (right)")
    counts = start.get("launcher", [])
    if not isinstance(counts, list):
        raise InputError("start.launcher must be a list of counts, one per hit")
    for i, n in enumerate(counts):
        _int(n, f"start.launcher[{i}]", 0, 200)
    used = Counter([top])
    for hand in hands:
        used.update(hand)
    if "pile" in start:
        pile = _cards(start["pile"], "start.pile", deck)
        used.update(pile)
        field_name = "start.pile"
    else:
        # The rest of the deck, shuffled by the seed: cards are conserved.
        rest = Counter(deck.counts) - used
        pile = sorted(rest.elements())
        random.Random(seed).shuffle(pile)
        field_name = "start.hands"
    for card, n in used.items():
        if n > deck.counts[card]:
            raise InputError(
                f"{field_name}: `{card}` is used {n} times but the {deck.name} deck has "
                f"{deck.counts[card]}"
            )
    if color is not None and not top.is_wild and color != top.color:
        # A coloured top card sets the colour in play itself (docs/scenarios.md).
        raise InputError(
            f"start.color = {color!r} with top {top}: a coloured top card is its own colour; "
            "color is for a wild on top"
        )
    if color is not None and turn is None and not top.is_wild:
        raise InputError("start.color without start.turn: only a wild turned up first needs it")
    launcher = ScriptedLauncher(counts)
    try:
        rnd = Round.from_position(
            deck,
            rules,
            launcher,
            hands=hands,
            top=top,
            pile=pile,
            color=color,
            turn=turn,
            direction=direction,
            dealer=dealer,
            seed=seed,
            knockout=knockout,
        )
    except InputError as exc:
        raise InputError(f"[start] {exc}") from None
    return rnd, launcher


def _actions(raw: object, deck: Deck, players: int) -> list[Action]:
    if not isinstance(raw, list):
        raise InputError("actions must be [[actions]] tables")
    out: list[Action] = []
    for i, entry in enumerate(raw):
        where = f"actions[{i}]"
        if not isinstance(entry, Mapping):
            raise InputError(f"{where} must be a table")
        for key in entry:
            if key not in ACTION_KEYS:
                raise InputError(
                    f"unknown field `{where}.{key}`: allowed are {', '.join(ACTION_KEYS)}"
                )
        if "seat" not in entry:
            raise InputError(f"{where}.seat is required")
        seat = _int(entry["seat"], f"{where}.seat", 0, players - 1)
        verbs = [v for v in ACTION_VERBS if v in entry]
        if len(verbs) != 1:
            raise InputError(f"{where} needs exactly one of {', '.join(ACTION_VERBS)}")
        verb = verbs[0]
        value = entry[verb]
        color = _color(entry["color"], f"{where}.color") if "color" in entry else None
        target = (
            _int(entry["target"], f"{where}.target", 0, players - 1) if "target" in entry else None
        )
        if target is not None and verb != "play":
            raise InputError(f"{where}: target goes with play only")
        if color is not None and verb not in ("play", "hit", "draw"):
            raise InputError(
                f"{where}: color goes with play (or with hit/draw, naming the colour of a wild "
                "turned up first)"
            )
        if verb == "play":
            cards = (
                _cards(value, f"{where}.play", deck)
                if isinstance(value, list)
                else [_card(value, f"{where}.play", deck)]
            )
            if not cards:
                raise InputError(f"{where}.play is an empty list")
            out.append(Action("play", seat, tuple(cards), color, target))
        elif verb == "catch":
            caught = _int(value, f"{where}.catch", 0, players - 1)
            out.append(Action("catch", seat, target=caught))
        else:
            if value is not True:
                raise InputError(f"{where}.{verb} = {value!r}: write {verb} = true")
            out.append(Action(verb, seat, color=color))
    return out


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file (InputError, one line, for anything malformed)."""
    path = Path(path)
    try:
        text = textfile.read_text(path)  # UTF-8, a BOM allowed
    except OSError as exc:
        raise InputError(textfile.cannot_read(path, exc).render()) from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file: a scenario is UTF-8 TOML") from None
    try:
        data = textfile.parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    try:
        return parse_scenario(data, base=path.parent)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def run_file(path: str | Path) -> tuple[dict[str, Any], int]:
    """Load and replay a scenario file: (output, exit code 0 or 1)."""
    return load_scenario(path).run()


def _handler(args: argparse.Namespace) -> int:
    try:
        out, code = run_file(args.file)
    except InputError as exc:
        say_error("unoattack scenario", exc)
        return EXIT_MALFORMED
    # The output is JSON either way: one line with --json, indented for reading without it.
    print(json.dumps(out) if args.json else json.dumps(out, indent=2))
    return code


def register(subparsers: Any) -> None:
    """Add `unoattack scenario FILE [--json]`."""
    parser = subparsers.add_parser(
        "scenario",
        help=_("replay a TOML scenario and print the resulting state"),
        description=_(
            "Replay a scenario (docs/scenarios.md) and print the resulting round state. "
            "Exit 1 with the error and state when an action is illegal, 2 for a malformed file."
        ),
    )
    parser.add_argument("file", metavar="FILE.toml", help=_("the scenario file"))
    parser.add_argument(
        "--json", action="store_true", help=_("one line of JSON (default: indented)")
    )
    parser.set_defaults(func=_handler)
