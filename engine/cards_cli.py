"""`unoattack deck` (composition and point values) and `unoattack score` (a hand's points)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from engine.cards import Card, Deck, load_deck, parse_card
from engine.errors import CardError, InputError
from engine.words import face_name, plural, shown
from i18n import _
from i18n.layout import columns

COLORS = ("R", "Y", "G", "B")


def register(subparsers: Any) -> None:
    """Add the `deck` and `score` subcommands."""
    deck = subparsers.add_parser(
        "deck",
        help=_("show a deck's composition and point values"),
        description=_("Show a deck preset's (or a deck file's) cards, counts and point values."),
    )
    add_deck_argument(deck)
    deck.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    deck.set_defaults(func=run_deck)

    score = subparsers.add_parser(
        "score",
        help=_("points of the cards left in a hand"),
        description=_("Add up the points of a hand, e.g. `unoattack score R5 WAA BH2`."),
    )
    add_deck_argument(score)
    score.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    score.add_argument(
        "cards", nargs="+", metavar="CARD", help=_("cards in notation (R5, BS, WAA)")
    )
    score.set_defaults(func=run_score)


def add_deck_argument(parser: Any) -> None:
    """`--deck PRESET|FILE` (a parser or an argument group: deck, score, sim, schedule)."""
    parser.add_argument(
        "--deck",
        default="attack",
        metavar="PRESET",
        help=_("attack (default), attack-1998, classic, or a deck TOML file"),
    )


def open_deck(name_or_path: str) -> Deck:
    """Load a preset or deck file; a file that is not text is a usage error (exit 2) too."""
    try:
        return load_deck(name_or_path)
    except UnicodeDecodeError:
        # load_deck covers missing files and bad TOML; a binary file fails before parsing.
        raise InputError(
            _("{deck}: not a text deck file (UTF-8 TOML)").format(deck=name_or_path)
        ) from None


def deck_to_dict(deck: Deck) -> dict[str, Any]:
    """The `unoattack deck --json` shape: deck name, total, counts and points by notation."""
    return {
        "deck": deck.name,
        "total": deck.total,
        "cards": {str(card): count for card, count in deck.counts.items()},
        "points": {str(card): deck.points[card] for card in deck.counts},
    }


def deck_table(deck: Deck) -> str:
    """A readable grid: one row per face, a column per colour, then wilds and points."""
    faces: list[str] = []
    counts: dict[tuple[str | None, str], int] = {}
    points: dict[str, set[int]] = {}
    for card, count in deck.counts.items():
        if card.face not in points:
            faces.append(card.face)
            points[card.face] = set()
        counts[(card.color, card.face)] = count
        points[card.face].add(deck.points[card])
    colored = [f for f in faces if any((c, f) in counts for c in COLORS)]
    wild = [f for f in faces if f not in colored]

    def cell(key: tuple[str | None, str]) -> str:
        return str(counts.get(key, "-"))

    def pts(face: str) -> str:
        # A user deck may price the same face differently per colour.
        return ",".join(str(p) for p in sorted(points[face]))

    lines = [
        _("{deck} deck: {cards}").format(deck=deck.name, cards=plural(deck.total, "card")),
        "",
    ]
    # The face in notation, its name as the rule sheet of the language in use prints it.
    rows = [[_("face"), *COLORS, _("points"), _("name")]]
    for face in colored:
        name = "" if face.isdigit() else face_name(face)
        rows.append([face, *(cell((c, face)) for c in COLORS), pts(face), name])

    lines += columns(rows, right={1, 2, 3, 4, 5})
    if wild:
        rows = [[_("wild"), _("count"), _("points"), _("name")]]
        rows += [[face, cell((None, face)), pts(face), face_name(face)] for face in wild]
        lines += ["", *columns(rows, right={1, 2})]
    return "\n".join(lines)


def run_deck(args: argparse.Namespace) -> int:
    """`unoattack deck`."""
    deck = open_deck(args.deck)
    if args.json:
        print(json.dumps(deck_to_dict(deck)))
    else:
        print(deck_table(deck))
    return 0


def score_hand(deck: Deck, names: list[str]) -> tuple[list[Card], int]:
    """Parse a hand against `deck` and add up its points.

    A hand cannot hold more copies of a card than the deck has: that is a typo, not a hand.
    """
    cards = [parse_card(name, deck) for name in names]
    for card, held in Counter(cards).items():
        have = deck.counts.get(card, 0)
        if held > have:
            raise CardError(
                _("the {deck} deck has only {have} {card}, the hand lists {held}").format(
                    deck=deck.name, have=have, card=card, held=held
                )
            )
    return cards, deck.points_of(cards)


def run_score(args: argparse.Namespace) -> int:
    """`unoattack score`."""
    deck = open_deck(args.deck)
    cards, points = score_hand(deck, args.cards)
    if args.json:
        print(json.dumps({"points": points, "cards": [str(c) for c in cards]}))
    else:
        print(
            _("{points} ({cards}, {deck} deck)").format(
                points=plural(points, "point"), cards=shown(*cards), deck=deck.name
            )
        )

    return 0
