"""The engine's words in the players' language: colours, card names, seats and counted things.

Card notation (`R5`, `WAA`) is the same in every language: people type it. What the table and
the page show beside it is `card_name`, the name printed on the card and the rule sheet of the
player's language (the sheets in ../shared/seeds/; the catalogs note where a sheet's word was a
poor machine translation and a natural one was chosen). The words are looked up when used, so
they follow the language in use (`i18n.use`).
"""

from __future__ import annotations

import re

from i18n import N_, Nn_, _, current, ngettext, number, worded

__all__ = [
    "answer_hint",
    "card_name",
    "colour_name",
    "face_name",
    "owes_phrase",
    "penalty_words",
    "plural",
    "seat_label",
    "seat_pattern",
    "shown",
]

COLOUR_NAMES: dict[str, str] = {
    "R": N_("red"),
    "Y": N_("yellow"),
    "G": N_("green"),
    "B": N_("blue"),
}

FACE_NAMES: dict[str, str] = {
    # i18n: the card names printed on the cards and the rule sheets (UNO Attack and classic UNO)
    "S": N_("Skip"),
    "R": N_("Reverse"),
    "H2": N_("Hit 2"),
    "D2": N_("Draw Two"),
    "DA": N_("Discard All"),
    "TH": N_("Trade Hands"),
    "W": N_("Wild"),
    "WD4": N_("Wild Draw Four"),
    "WH4": N_("Wild Hit 4"),
    "WAA": N_("Wild Attack-Attack"),
    "WC": N_("Wild Customizable"),
    "WAH": N_("Wild All Hit"),
    "WHF": N_("Wild Hit-Fire"),
}

# What `plural(n, word)` counts, each a singular/plural pair for the catalogs.
NOUNS: dict[str, tuple[str, str]] = {
    "card": Nn_("{n} card", "{n} cards"),
    "hit": Nn_("{n} hit", "{n} hits"),
    "point": Nn_("{n} point", "{n} points"),
    "press": Nn_("{n} press", "{n} presses"),
    "time": Nn_("{n} time", "{n} times"),
    "game": Nn_("{n} game", "{n} games"),
    "round": Nn_("{n} round", "{n} rounds"),
}


def plural(n: int, word: str) -> str:
    """`1 card`, `2 cards`, `2 presses` in the language in use (`word` a key of `NOUNS`)."""
    singular, many = NOUNS[word]
    return ngettext(singular, many, n).format(n=number(n))


def colour_name(letter: str | None, default: str = "-") -> str:
    """`red` for `R`; `default` for no colour (a wild turned up, nothing named yet)."""
    return _(COLOUR_NAMES[letter]) if letter in COLOUR_NAMES else default


def face_name(face: str) -> str:
    """`Hit 2` for `H2`, `5` for `5`."""
    return _(FACE_NAMES[face]) if face in FACE_NAMES else face


def card_name(card: object) -> str:
    """The card's name in the language in use: `red Hit 2`, `Wild Attack-Attack`, `blue 5`."""
    color = getattr(card, "color", None)
    face = face_name(str(getattr(card, "face", card)))
    if color is None:
        return face
    return _("{colour} {face}").format(colour=colour_name(color), face=face)


@worded
def shown(*cards: object) -> str:
    """Cards as the table shows them: the notation people type, and in a language other than
    English (whose names the notation abbreviates) the names beside it: `RH2 (Hit 2 สีแดง)`."""
    text = " ".join(map(str, cards))
    if current().code == "en":
        return text
    return f"{text} ({', '.join(map(card_name, cards))})"


def seat_label(seat: int) -> str:
    """How the rules core names a seat in its messages (`seat 2`); the table referee writes the
    player's name instead (`seat_pattern`)."""
    return _("seat {number}").format(number=seat)


def seat_pattern() -> re.Pattern[str]:
    """Matches `seat_label` in the language in use; group 1 is the seat number."""
    return re.compile(re.escape(_("seat {number}")).replace(re.escape("{number}"), r"(\d+)", 1))


def owes_phrase(player: str, kind: str, n: int) -> str:
    """`Bob must hit 2 more times`: what `player` owes, `n` of `kind` (``hits``, ``draws``,
    ``until_fire``), as a whole phrase (the word order differs between languages)."""
    if kind == "draws":
        said = ngettext("{player} draws {n} more card", "{player} draws {n} more cards", n)
    elif kind == "until_fire":
        said = _("{player} must hit until cards fire")
    elif n == 1:
        said = _("{player} must hit once more")
    else:
        said = ngettext("{player} must hit {n} more time", "{player} must hit {n} more times", n)
    return said.format(player=player, n=n)


def answer_hint(*, classic: bool, n: int, answers: frozenset[str], challengeable: bool) -> str:
    """How a player may still answer what they owe (`n` hits or cards): "`challenge` the WD4
    or answer with WD4, or `draw` (4 cards)"."""
    take = _("`draw`") if classic else _("press the button")
    parts = []
    if challengeable:
        parts.append(_("`challenge` the WD4"))
    if answers:
        parts.append(_("answer with {cards}").format(cards=_(" or ").join(sorted(answers))))
    return _("{choices}, or {take} ({owed})").format(
        choices=_(" or ").join(parts), take=take, owed=plural(n, "card" if classic else "hit")
    )


def penalty_words(n: int, *, classic: bool) -> str:
    """What the UNO penalty costs: "hits 2 times", classic "draws 2 cards"."""
    if classic:
        return _("draws {cards}").format(cards=plural(n, "card"))
    return _("hits {times}").format(times=plural(n, "time"))
