"""Cards, their notation, the deck presets, user deck files and point values.

Notation (docs in ../shared/RULES.md): a colour letter `R Y G B` then a face (`0`-`9`, `S`, `R`,
`H2`, `D2`, `DA`, `TH`), or a wild face alone (`W`, `WD4`, `WH4`, `WAA`, `WC`, `WAH`, `WHF`).
Parsing is case-insensitive; printing is upper case.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from common import textfile
from engine.errors import CardError, InputError
from i18n import _

COLORS: tuple[str, ...] = ("R", "Y", "G", "B")
NUMBER_FACES: tuple[str, ...] = tuple(str(n) for n in range(10))
ACTION_FACES: tuple[str, ...] = ("S", "R", "H2", "D2", "DA", "TH")
WILD_FACES: tuple[str, ...] = ("W", "WD4", "WH4", "WAA", "WC", "WAH", "WHF")
COLORED_FACES: tuple[str, ...] = NUMBER_FACES + ACTION_FACES

# Standard points of a face left in a hand; a deck may override them (deck files).
STANDARD_POINTS: dict[str, int] = {
    **{f: int(f) for f in NUMBER_FACES},
    "S": 20,
    "R": 20,
    "H2": 20,
    "D2": 20,
    "DA": 30,
    "TH": 30,
    "WH4": 40,
    "W": 50,
    "WD4": 50,
    "WAA": 50,
    "WC": 50,
    "WAH": 50,
    "WHF": 50,
}

_COLOR_RANK = {c: i for i, c in enumerate(COLORS)}
_FACE_RANK = {f: i for i, f in enumerate(COLORED_FACES + WILD_FACES)}


@functools.total_ordering
@dataclass(frozen=True, slots=True, eq=False)
class Card:
    """One card: `color` is `R`, `Y`, `G`, `B` or None for a wild; `face` as in the notation.

    `str(card)` is the notation ("R5", "YH2", "WAA"). Cards sort by colour (R Y G B, wilds last)
    then face, so a sorted hand reads well. Every card is interned (`Card("R", "5") is
    parse_card("r5")`), so equality and hashing are by identity: fast in hands, sets and dicts.
    """

    color: str | None
    face: str

    def __new__(cls, color: str | None, face: str) -> Card:
        card = _ALL.get(face if color is None else f"{color}{face}")
        if card is not None and card.color == color:
            return card
        if _building:
            return object.__new__(cls)
        raise CardError(f"`{color or ''}{face}` is not a card")

    def __reduce__(self) -> tuple[object, tuple[str | None, str]]:
        # Copies and pickles come back as the interned instance.
        return (Card, (self.color, self.face))

    def __str__(self) -> str:
        return self.face if self.color is None else self.color + self.face

    def __repr__(self) -> str:
        return f"Card({self})"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return _RANK[self] < _RANK[other]

    # Equality is identity (cards are interned), written out: defining __lt__ makes CPython
    # route every comparison through Python-level lookups, and the inherited object.__eq__
    # then answers NotImplemented and is asked again reflected. These answer at once, which
    # makes `card in hand` and `hand.remove(card)` about three times faster.
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return False if isinstance(other, Card) else NotImplemented

    def __ne__(self, other: object) -> bool:
        if self is other:
            return False
        return True if isinstance(other, Card) else NotImplemented

    __hash__ = object.__hash__  # by identity, like the equality (C speed)

    @property
    def is_wild(self) -> bool:
        """True for a wild (no colour)."""
        return self.color is None

    @property
    def is_number(self) -> bool:
        """True for a number card 0-9."""
        return self.face in _NUMBER_SET

    @property
    def number(self) -> int | None:
        """The face value of a number card, else None."""
        return int(self.face) if self.face in _NUMBER_SET else None


_NUMBER_SET = frozenset(NUMBER_FACES)


def _sort_key(card: Card) -> tuple[int, int]:
    return (_COLOR_RANK.get(card.color or "", 4), _FACE_RANK[card.face])


# Every valid card, interned: Card() and parse_card return these instances.
_ALL: dict[str, Card] = {}
_building = True
for _c in COLORS:
    for _f in COLORED_FACES:
        _ALL[_c + _f] = Card(_c, _f)
for _f in WILD_FACES:
    _ALL[_f] = Card(None, _f)
_building = False
del _c, _f

# Every distinct card, in sort order (the engine precomputes per-card tables over these).
ALL_CARDS: tuple[Card, ...] = tuple(sorted(_ALL.values(), key=_sort_key))

# Each card's place in ALL_CARDS: what Card.__lt__ compares, read once per card.
_RANK: dict[Card, int] = {card: i for i, card in enumerate(ALL_CARDS)}

# A card's place in sort order: `sorted(cards, key=card_rank)` sorts as `sorted(cards)` does
# with no Python call per comparison (a dict lookup in C); simulations sort every play of
# several cards they offer.
card_rank: Callable[[Card], int] = _RANK.__getitem__


def card_of(color: str | None, face: str) -> Card:
    """The interned card for (color, face); CardError if no such card exists."""
    return Card(color, face)


def parse_card(text: str, deck: Deck | None = None) -> Card:
    """Parse notation such as "r5", "YH2" or "waa" (case-insensitive, no spaces).

    With `deck`, a card missing from that deck is an error: "`WD4` is not in the attack deck".
    """
    if not isinstance(text, str):
        raise CardError(
            _("a card must be written as text like R5 or WAA, got {text!r}").format(text=text)
        )
    key = text.strip().upper()
    card = _ALL.get(key)
    if card is None:
        raise CardError(
            _(
                "`{text}` is not a card: write a colour R Y G B then 0-9, S, R, H2, D2, DA or "
                "TH, or a wild W, WD4, WH4, WAA, WC, WAH, WHF"
            ).format(text=text)
        )
    if deck is not None and card not in deck.counts:
        raise CardError(_("`{card}` is not in the {deck} deck").format(card=card, deck=deck.name))
    return card


def parse_cards(texts: Iterable[str], deck: Deck | None = None) -> list[Card]:
    """Parse several cards (see parse_card)."""
    return [parse_card(t, deck) for t in texts]


def format_cards(cards: Iterable[Card]) -> list[str]:
    """Notation of each card, in order."""
    return [str(c) for c in cards]


@dataclass(frozen=True, eq=False)
class Deck:
    """A deck: how many of each card it holds and what each is worth left in a hand."""

    name: str
    counts: dict[Card, int]
    points: dict[Card, int]

    @functools.cached_property
    def total(self) -> int:
        """Number of cards in the deck."""
        return sum(self.counts.values())

    @functools.cached_property
    def _cards(self) -> tuple[Card, ...]:
        out: list[Card] = []
        for card in sorted(self.counts):
            out.extend([card] * self.counts[card])
        return tuple(out)

    def cards(self) -> list[Card]:
        """Every card of the deck (each copy once), in a fixed order (sorted); a new list."""
        return list(self._cards)

    def points_of(self, cards: Iterable[Card]) -> int:
        """Points of a hand: the sum of each card's value in this deck."""
        pts = self.points
        return sum(pts[c] for c in cards)

    def __contains__(self, card: object) -> bool:
        return card in self.counts


def _preset(name: str, per_color: Mapping[str, int], wilds: Mapping[str, int]) -> Deck:
    counts: dict[Card, int] = {}
    for color in COLORS:
        for face, n in per_color.items():
            counts[_ALL[color + face]] = n
    for face, n in wilds.items():
        counts[_ALL[face]] = n
    points = {card: STANDARD_POINTS[card.face] for card in counts}
    return Deck(name, counts, points)


_ONE_TO_NINE_TWICE = {str(n): 2 for n in range(1, 10)}

PRESETS: dict[str, Deck] = {
    # Seeds 000/003/004: no zeros, one R, two H2, two S, two DA per colour.
    "attack": _preset(
        "attack",
        {**_ONE_TO_NINE_TWICE, "R": 1, "H2": 2, "S": 2, "DA": 2},
        {"W": 4, "WAA": 4, "WC": 3, "WH4": 1},
    ),
    # Seed 001 (擊卡樂) plus the Mattel sheet.
    "attack-1998": _preset(
        "attack-1998",
        {**_ONE_TO_NINE_TWICE, "H2": 2, "R": 2, "S": 2, "DA": 1, "TH": 1},
        {"W": 4, "WAH": 2, "WHF": 2},
    ),
    "classic": _preset(
        "classic",
        {"0": 1, **_ONE_TO_NINE_TWICE, "S": 2, "R": 2, "D2": 2},
        {"W": 4, "WD4": 4},
    ),
}

DECK_FILE_KEYS = ("name", "cards", "points")


def load_deck(name_or_path: str | Path) -> Deck:
    """A preset by name ("attack", "attack-1998", "classic") or a user deck file (TOML).

    A deck file looks like::

        name = "home box"          # optional, defaults to the file name
        [cards]                    # card = how many copies (required, each 1..100)
        R1 = 2
        WAA = 4
        [points]                   # optional: card = points (default: the standard value)
        WAA = 40

    Raises InputError with one line naming the file and key for anything else.
    """
    key = str(name_or_path)
    if key in PRESETS:
        return PRESETS[key]
    path = Path(key)
    if not path.suffix == ".toml" and not path.exists():
        raise InputError(
            _("unknown deck `{deck}`: use {presets} or the path of a .toml deck file").format(
                deck=key, presets=", ".join(PRESETS)
            )
        )

    try:
        data = textfile.parse_toml(textfile.read_text(path))  # UTF-8, a BOM allowed
    except OSError as exc:
        raise InputError(textfile.cannot_read(path, exc).render()) from None
    except UnicodeDecodeError:
        # A binary file (an image, a zip) given by mistake: name it rather than the codec.
        raise InputError(
            f"{path}: not a deck file (not UTF-8 text); "
            "a deck file is TOML: name, [cards], [points]"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(_("{path}: not valid TOML: {exc}").format(path=path, exc=exc)) from None
    return deck_from_mapping(data, source=str(path), default_name=path.stem)


def deck_from_mapping(data: Mapping[str, object], *, source: str, default_name: str) -> Deck:
    """Build and validate a Deck from a parsed deck file (see load_deck)."""
    for k in data:
        if k not in DECK_FILE_KEYS:
            raise InputError(
                _("{source}: unknown key `{k}`: allowed are name, [cards], [points]").format(
                    source=source, k=k
                )
            )
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise InputError(_("{source}: name must be a non-empty string").format(source=source))
    cards = data.get("cards")
    if not isinstance(cards, Mapping) or not cards:
        raise InputError(
            _("{source}: [cards] is required: card = count, e.g. R1 = 2").format(source=source)
        )
    counts: dict[Card, int] = {}
    for text, n in cards.items():
        try:
            card = parse_card(text)
        except CardError as exc:
            raise InputError(_("{source}: [cards] {exc}").format(source=source, exc=exc)) from None
        if card in counts:
            raise InputError(
                _("{source}: [cards] `{card}` is listed twice").format(source=source, card=card)
            )
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100:
            raise InputError(
                _("{source}: [cards] {text} = {n!r}: a count from 1 to 100").format(
                    source=source, text=text, n=n
                )
            )
        counts[card] = n
    points = {card: STANDARD_POINTS[card.face] for card in counts}
    extra = data.get("points", {})
    if not isinstance(extra, Mapping):
        raise InputError(
            _("{source}: [points] must be a table of card = points").format(source=source)
        )
    for text, p in extra.items():
        try:
            card = parse_card(text)
        except CardError as exc:
            raise InputError(_("{source}: [points] {exc}").format(source=source, exc=exc)) from None
        if card not in counts:
            raise InputError(
                _("{source}: [points] `{card}` is not in [cards]").format(source=source, card=card)
            )
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 1000:
            raise InputError(
                _("{source}: [points] {text} = {p!r}: points from 0 to 1000").format(
                    source=source, text=text, p=p
                )
            )
        points[card] = p
    total = sum(counts.values())
    if total < 16:
        # Two players of seven cards plus a first card: anything smaller cannot even deal.
        raise InputError(
            _("{source}: [cards] holds {total} cards; a deck needs at least 16").format(
                source=source, total=total
            )
        )
    values = {card.number for card in counts if card.number is not None}
    if len(values) < 2:
        # The dealer is the highest number card drawn: with one value (or none) every draw ties.
        found = f"only {sorted(values)[0]}s" if values else "none"
        raise InputError(
            f"{source}: [cards] needs number cards of at least two values to choose the dealer "
            f"(found {found})"
        )
    return Deck(name.strip(), counts, points)
