"""What the referee asks before it can apply a command: the part a typed line left out.

A wild needs its colour, a WAA or TH a player, a Discard All how many more cards went down with
it, a challenged Wild Draw Four whether it was legal. Rather than refuse the line, the table
asks, and only when some answer would do: every possible answer is tried on a copy of the
referee (`ask`), and the question lists those it accepts. An answer completes the command
(`answered`); a line that does not answer is refused and the question asked again.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from common.commandline import digits
from engine.cards import COLORS
from engine.effects import effect_of
from engine.errors import RuleError, UnoError
from engine.outcomes import Outcome
from engine.table.commands import COLOR_WORDS, NO, YES, Challenge, Command, Play, line_of
from engine.table.referee import Referee
from engine.words import colour_name
from i18n import N_, _

__all__ = ["Question", "answered", "ask", "attempt", "problem"]

# What a question asks for, and the answers each kind takes.
_HINT = {
    "colour": N_("answer a colour: R, Y, G or B (an empty line cancels)"),
    "target": N_("answer a player's name"),
    "discards": N_("answer how many: 0 or more"),
    "challenge": N_("answer y (the WD4 was legal) or n (it was not)"),
}


@dataclass
class Question:
    """What the referee asks before it can apply `command`: `text` is the question, `kind`
    what answers it (``colour``, ``target``, ``discards`` or ``challenge``) and `answers` the
    words it accepts (each makes the command one it applies, or one it asks about next)."""

    command: Command
    text: str
    kind: str
    answers: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        """The command as a typed line (what an answer completes)."""
        return line_of(self.command)


def attempt(ref: Referee, play: Play) -> list[Outcome]:
    """Apply `play` to `ref` (cards played, or the card turned up before a round)."""
    if ref.phase == "deal":
        if len(play.cards) > 1:
            raise RuleError(_("one card is turned up"))
        return ref.start_round(play.cards[0], play.color)
    return ref.play(
        play.cards if len(play.cards) > 1 else play.cards[0],
        color=play.color,
        target=ref.seat_of(play.target) if play.target is not None else None,
        discarded=play.discards or 0,
        uno=play.uno,
        seat=ref.seat_of(play.jumper) if play.jumper is not None else None,
    )


def ask(ref: Referee, command: Command) -> Question | None:
    """The question `command` leaves open (None when it can be applied as it is); RuleError
    (the first reason met) when no answer would make it one the referee applies."""
    if isinstance(command, Challenge) and command.legal is None:
        return _ask_challenge(ref, command)
    if not isinstance(command, Play):
        return None
    card = command.cards[0]
    if ref.phase == "deal":
        if len(command.cards) > 1 or not card.is_wild or command.color is not None:
            return None
        tries = [(c, _trial(ref, dataclasses.replace(command, color=c))) for c in COLORS]
        text = _("{card} turned up: colour named by the first player").format(card=card)
        return Question(command, text, "colour", _tried(tries))
    if ref.phase != "play":
        return None
    effect = effect_of(card.face, ref.rules.custom_wild_effect)
    missing = []
    if command.color is None and (card.is_wild or len({c.color for c in command.cards}) > 1):
        missing.append("colour")
    if effect.aims and command.target is None:
        missing.append("target")
    if effect.discards_colour and command.discards is None:
        missing.append("discards")
    if not missing:
        return None
    answers = _answers(ref, command, missing)
    kind = missing[0]
    if kind == "colour":
        text = _("colour for {cards} (R Y G B)").format(cards=" ".join(map(str, command.cards)))
    elif kind == "target" and card.is_wild:
        text = _("{card}: player to aim at").format(card=card)
    elif kind == "target":
        text = _("{card}: player to trade hands with").format(card=card)
    else:
        text = _("how many more {colour} cards went down with {card}").format(
            colour=colour_name(card.color, ""), card=card
        )
    return Question(command, text, kind, answers)


def problem(question: Question, text: str, players: list[str]) -> str | None:
    """Why `text` does not answer `question` (None when it does)."""
    words = text.split()
    kind = question.kind
    if kind == "colour":
        ok = len(words) == 1 and words[0].upper() in COLOR_WORDS
    elif kind == "target":
        ok = len(words) == 1 and any(p.lower() == words[0].lower() for p in players)
    elif kind == "discards":
        ok = len(words) == 1 and digits(words[0]) is not None
    else:  # challenge
        ok = text.lower() in (*YES, *NO)
    if ok:
        return None
    hint = _(_HINT[kind])
    if kind == "target":
        hint += f": {', '.join(players)}"
    return "`" + text + "`: " + hint


def answered(question: Question, text: str, players: list[str]) -> Command:
    """`question`'s command completed by `text` (an answer `problem` accepts)."""
    command = question.command
    word = text.strip()
    if question.kind == "challenge":
        return Challenge(word.lower() in YES)
    assert isinstance(command, Play)
    if question.kind == "colour":
        return dataclasses.replace(command, color=COLOR_WORDS[word.upper()])
    if question.kind == "target":
        name = next(p for p in players if p.lower() == word.lower())
        return dataclasses.replace(command, target=name)
    return dataclasses.replace(command, discards=digits(word))


def _ask_challenge(ref: Referee, command: Challenge) -> Question:
    wd4 = ref.wd4
    if wd4 is None:
        raise RuleError(_("there is no Wild Draw Four to challenge now"))
    # The referee cannot see hands: the players show them and say.
    by = ref.name(int(wd4["by"]))
    colour = colour_name(wd4.get("color"), _("the colour in play"))
    answers = _tried(
        [
            ("y", lambda: ref.copy().challenge(True)),
            ("n", lambda: ref.copy().challenge(False)),
        ]
    )
    text = _("was {player}'s WD4 legal ({player} held no {colour} card)? y/n").format(
        player=by, colour=colour
    )
    return Question(command, text, "challenge", answers)


def _trial(ref: Referee, play: Play) -> Callable[[], Any]:
    return lambda: attempt(ref.copy(), play)


def _answers(ref: Referee, play: Play, missing: list[str]) -> list[str]:
    """The words that answer the first of the `missing` questions: those with which some
    answer to the others makes the play legal, tried on copies of the referee (the most a DA
    can take along is the cards its player holds). RuleError (the first reason met) when none
    does: a question is asked only when it can be answered."""
    actor = ref.round.actor if ref.round is not None else None
    player = ref.seat_of(play.jumper) if play.jumper is not None else actor
    held = ref.hand[player] if player is not None else 0
    choices: dict[str, list[tuple[str, Any]]] = {
        "colour": [(c, c) for c in COLORS],
        "target": [(ref.name(s), ref.name(s)) for s in ref.active_seats()],
        "discards": [(str(n), n) for n in range(held + 1)],
    }
    fields = {"colour": "color", "target": "target", "discards": "discards"}
    first, rest = missing[0], missing[1:]

    def legal(value: Any) -> None:
        error: UnoError | None = None
        for combo in itertools.product(*(choices[k] for k in rest)):
            values = {fields[first]: value}
            values.update({fields[k]: v for k, (_w, v) in zip(rest, combo, strict=True)})
            try:
                attempt(ref.copy(), dataclasses.replace(play, **values))
            except UnoError as exc:
                error = error or exc
            else:
                return
        assert error is not None
        raise error

    return _tried([(word, partial(legal, value)) for word, value in choices[first]])


def _tried(tries: list[tuple[str, Callable[[], Any]]]) -> list[str]:
    """The words whose trial (a change made on a copy of the referee) is accepted;
    RuleError (the first reason met) when none is."""
    accepted: list[str] = []
    first_error: UnoError | None = None
    for word, trial in tries:
        try:
            trial()
        except UnoError as exc:
            first_error = first_error or exc
        else:
            accepted.append(word)
    if not accepted:
        assert first_error is not None
        raise first_error
    return accepted
