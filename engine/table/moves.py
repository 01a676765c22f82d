"""The round being played at a table: what the table says of a move, turned into the round's
actions.

A `TableRound` is a `BlindRound` (engine/blind.py: `Round` on hand counts) and the little the
referee adds while it is played: the seat that said `hit` (or, classic, `draw`) and waits for
the box, and the colour in play before the last Wild Draw Four (the challenge question names
it). Every move either applies and returns what happened (outcomes: the round's own, and what
is owed first now), or raises `RuleError` with the reason in the players' words and changes
nothing. The game around the round (phases, scores, the tallies of presses) is the referee's
(engine/table/referee.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from engine.blind import BlindRound
from engine.cards import Card, Deck
from engine.effects import EFFECTS, first_card
from engine.errors import NoMatch, RuleError
from engine.game import Action
from engine.outcomes import (
    DrawStarted,
    HandSet,
    HitStarted,
    MayPlayTaken,
    Outcome,
    Owes,
    Owing,
    PenaltyAccepted,
    PressNote,
    Served,
    StillDraws,
    StillOwes,
    Stray,
    Took,
)
from engine.rules import Rules
from engine.words import answer_hint, colour_name, owes_phrase, plural, seat_pattern
from i18n import _, message_of, reworded

__all__ = ["TableRound"]


class TableRound:
    """`blind` played at a table of `names` with `deck`; `classic`: every draw is dispensed.
    `taking`: the seat that said `hit`/`draw` and waits for the box; `wd4_color`: the colour
    in play before the last Wild Draw Four."""

    def __init__(
        self,
        blind: BlindRound,
        names: Sequence[str],
        deck: Deck,
        *,
        classic: bool,
        taking: int | None = None,
        wd4_color: str | None = None,
    ) -> None:
        self.blind = blind
        self.names = list(names)
        self.deck = deck
        self.classic = classic
        self.taking = taking
        self.wd4_color = wd4_color

    @classmethod
    def deal(
        cls,
        names: Sequence[str],
        deck: Deck,
        rules: Rules,
        *,
        dealer: int,
        top: Card,
        color: str | None,
        out: Sequence[int],
        knockout: bool = False,
    ) -> tuple[TableRound, list[Outcome]]:
        """The round `dealer` dealt, with `top` turned up (for a wild, `color` is what the
        first player names); and what the card turned up did (skips, obligations), and what is
        owed first. RuleError for a card that cannot start a round. `knockout`: the round goes
        on after a player goes out, until one is left."""
        classic = not rules.attack
        if top not in deck.counts:
            raise RuleError(
                _("`{card}` is not in the {deck} deck").format(card=top, deck=deck.name)
            )
        if first_card(top.face, classic=classic) == "back":
            raise RuleError(
                _("{card} goes back into the launcher: turn up another card").format(card=top)
            )
        if top.is_wild and color is None:
            raise RuleError(
                _("{card} turned up: the first player names a colour (`{card} G`)").format(card=top)
            )
        if not top.is_wild and color is not None:
            raise RuleError(
                _("{card} has a colour of its own: only a wild takes a named colour").format(
                    card=top
                )
            )
        blind = BlindRound.deal(
            deck,
            rules,
            players=len(names),
            dealer=dealer,
            top=top,
            color=color,
            out=out,
            knockout=knockout,
        )
        playing = cls(blind, names, deck, classic=classic)
        return playing, _taken(blind) + playing.owing("turned_up", top)

    def copy(self) -> TableRound:
        """An independent copy (to try a move on)."""
        blind = self.blind.copy()
        assert isinstance(blind, BlindRound)
        return TableRound(
            blind,
            self.names,
            self.deck,
            classic=self.classic,
            taking=self.taking,
            wd4_color=self.wd4_color,
        )

    # -- what the box should do ---------------------------------------------------------------
    def hitter(self) -> int | None:
        """The seat the launcher owes cards now (presses it, in Attack), or None."""
        rnd = self.blind
        return rnd.pending[0].seat if rnd.pending else self.taking

    def dispense_due(self) -> tuple[int, int] | None:
        """Classic: (seat, cards) the launcher must dispense now, or None (nothing owed, or a
        penalty its victim may still answer or challenge)."""
        seat = self.hitter()
        if not self.classic or seat is None:
            return None
        rnd = self.blind
        if rnd.pending:
            return None if rnd.answerable() else (seat, rnd.pending[0].n)
        return seat, 1

    # -- moves --------------------------------------------------------------------------------
    def play(
        self,
        cards: tuple[Card, ...],
        *,
        color: str | None,
        target: int | None,
        discarded: int,
        uno: bool,
        seat: int | None,
    ) -> list[Outcome]:
        """`cards` played by the seat the round waits for (`seat`: a jump-in); see
        `Referee.play`."""
        rnd = self.blind
        if not cards:
            raise RuleError(_("a play needs a card"))
        for c in cards:
            self.check_in_deck(c)
        if self.taking is not None:
            raise RuleError(self.taking_reason())
        player = rnd.actor if seat is None else seat
        assert player is not None
        if seat is not None and seat == rnd.actor:
            raise RuleError(
                _("it is {player}'s turn: type the card without `jump`").format(
                    player=self.names[seat]
                )
            )
        first = cards[0]
        if color is None and not first.is_wild:
            colours = {c.color for c in cards}
            if len(colours) > 1:
                raise RuleError(
                    _("name the colour to continue with: one of {colours}").format(
                        colours=", ".join(sorted(c for c in colours if c is not None))
                    )
                )
        if color is not None and not first.is_wild and all(c.color != color for c in cards):
            raise RuleError(
                _("{card} is {colour}: only a wild names a colour").format(
                    card=first, colour=colour_name(first.color)
                )
            )
        if discarded < 0:
            raise RuleError(
                _("a DA discards 0 or more other cards, not {count}").format(count=discarded)
            )
        if uno:
            self._check_uno_with(player, cards, target, discarded)
        prev_color = rnd.color
        if color is None and not first.is_wild:
            color = first.color
        told = self._step(
            lambda: rnd.play(player, cards, color=color, target=target, discards=discarded)
        )
        if EFFECTS[first.face].challengeable:
            self.wd4_color = prev_color
        if _owes_changed(told):
            told += self.owing("play", rnd.top)
        if uno and rnd.winner is None and not rnd.uno_called[player]:
            told += self.call_uno(player)
        return told

    def _check_uno_with(
        self, player: int, cards: tuple[Card, ...], target: int | None, discarded: int
    ) -> None:
        """A call made with the card: with more than two cards left it would be a false call,
        far more likely a slip of the keyboard than of the tongue; refused, nothing lost."""
        counts = self.blind.counts
        left = counts[target] if cards[0].face == "TH" and target is not None else None
        if left is None:
            left = counts[player] - len(cards) - discarded
        if left > 2:
            raise RuleError(
                _(
                    "{cards} uno: {player} would hold {held}; UNO is called with one or two "
                    "left (a false call: type `uno {player}` on its own line)"
                ).format(
                    cards=" ".join(map(str, cards)),
                    player=self.names[player],
                    held=plural(left, "card"),
                )
            )

    def hit(self) -> list[Outcome]:
        """Attack: the player whose turn it is hits the launcher once (the next press)."""
        if self.classic:
            raise RuleError(
                _("classic: nobody hits; type `draw` and the launcher dispenses a card")
            )
        self._start_take("hit")
        return [HitStarted(self.blind.turn)]

    def draw(self) -> list[Outcome]:
        """Classic: the player to move draws a card, or takes a penalty instead of answering
        it; see `Referee.draw`."""
        rnd = self.blind
        if not self.classic:
            raise RuleError(_("`draw` is for the classic deck: in UNO Attack type `hit`"))
        if rnd.pending and rnd.answerable():
            due = rnd.pending[0]
            told: list[Outcome] = [PenaltyAccepted(due.seat, due.face, due.n)]
            return told + self._step(lambda: rnd.take(due.seat, 0))
        self._start_take("draw")
        return [DrawStarted(rnd.turn)]

    def _start_take(self, kind: str) -> None:
        rnd = self.blind
        if self.taking is not None:
            raise RuleError(self.taking_reason())
        if rnd.pending:
            due = rnd.pending[0]
            owes = owes_phrase(self.names[due.seat], due.kind, due.n)
            raise RuleError(
                _("{owes}: the launcher dispenses them").format(owes=owes)
                if self.classic
                else _("{owes}: press the button").format(owes=owes)
            )
        self._step(lambda: rnd.check(Action(kind, rnd.turn)))
        self.taking = rnd.turn

    def challenge(self, legal: bool) -> list[Outcome]:
        """Classic: the Wild Draw Four challenged; see `Referee.challenge`."""
        rnd = self.blind
        if not rnd.challengeable():
            raise RuleError(_("there is no Wild Draw Four to challenge now"))
        victim = rnd.pending[0].seat
        return self._step(lambda: rnd.challenge(victim, legal)) + self.owing("challenge")

    def pass_turn(self) -> list[Outcome]:
        """Decline the extra card after `R`/`S`, or keep what a hit or draw brought."""
        if self.taking is not None:
            raise RuleError(self.taking_reason())
        seat = self.blind.turn
        return self._step(lambda: self.blind.apply(Action("pass", seat)))

    def press(self, ejected: int, note: PressNote | None) -> list[Outcome]:
        """The box fired `ejected` cards for the seat that owes them; `Took` says whose."""
        rnd = self.blind
        if ejected < 0:
            raise RuleError(_("a press fires 0 or more cards, not {count}").format(count=ejected))
        seat = self.hitter()
        if seat is None:
            raise RuleError(_("nobody owes a hit now"))
        if rnd.pending and self.classic and rnd.answerable():
            raise RuleError(
                _("{player} must {choices}").format(
                    player=self.names[seat], choices=self.answer_hint()
                )
            )
        owed = bool(rnd.pending)
        if rnd.pending:
            told = self._step(lambda: rnd.take(seat, ejected))
        elif self.classic and ejected == 0 and not rnd.nothing_left():
            told = []  # a dispense that brought nothing (jam, empty launcher): still owed
        else:
            told = self._step(lambda: rnd.take(seat, ejected))
            self.taking = None
        told.append(Took(seat, ejected, rnd.counts[seat], note))
        if owed and not any(isinstance(o, Served) for o in told):
            due = rnd.pending[0]  # the same obligation, not served yet
            told.append(StillOwes(due.seat, due.kind, due.n))
        elif self.taking == seat:  # classic: the card did not come
            told.append(StillDraws(seat))
        elif rnd.fired_play and rnd.turn == seat and not rnd.pending:
            told.append(MayPlayTaken(seat))
        else:
            told += self.owing("take")
        return told

    def stray(self, seat: int, cards: int) -> list[Outcome]:
        """`cards` slipped out of the box after `seat`'s last burst: theirs."""
        self.blind.give(seat, cards)
        return [Stray(seat, cards, self.blind.counts[seat])]

    def set_hand(self, seat: int, cards: int) -> list[Outcome]:
        """The table says `seat` really holds `cards`; see `Referee.set_hand`."""
        rnd = self.blind
        if seat not in rnd.seats:  # knockout: gone out of this round, holding nothing
            raise RuleError(
                _("{player} has gone out of this round").format(player=self.names[seat])
            )
        if not 0 < cards <= self.deck.total:
            raise RuleError(
                _("a hand in play holds 1 to {most} cards, not {count}").format(
                    most=self.deck.total, count=cards
                )
            )
        # The hands and the card turned up come out of one deck (the state file's loader
        # refuses a game whose hands add up to more).
        others = sum(rnd.counts) - rnd.counts[seat]
        most = self.deck.total - others - 1
        if cards > most:
            raise RuleError(
                _(
                    "{player} cannot hold {count}: the other hands hold {others} and one card is "
                    "turned up, of the {deck} deck's {total}; at most {most}"
                ).format(
                    player=self.names[seat],
                    count=cards,
                    others=others,
                    deck=self.deck.name,
                    total=self.deck.total,
                    most=max(most, 0),
                )
            )
        old = rnd.counts[seat]
        rnd.set_count(seat, cards)
        return [HandSet(seat, cards, old)]

    def call_uno(self, seat: int | None = None) -> list[Outcome]:
        """UNO said (by `seat`, or whoever it fits); see `Referee.call_uno`."""
        rnd = self.blind
        if seat is None:
            window = rnd.window
            if window is not None and not rnd.uno_called[window]:
                seat = window
            elif rnd.counts[rnd.turn] <= 2 and not rnd.uno_called[rnd.turn]:
                seat = rnd.turn
            else:
                raise RuleError(_("who called UNO? `uno NAME`"))
        called = seat
        return self._step(lambda: rnd.apply(Action("uno", called)))

    def catch(self, seat: int, accuser: int | None) -> list[Outcome]:
        """`accuser` says `seat` did not call UNO in time; see `Referee.catch`."""
        rnd = self.blind
        who = self.names[seat]
        if accuser is None:
            accuser = next(s for s in rnd.seats if s != seat)
            if rnd.is_mistake(Action("catch", accuser, target=seat)):
                held = rnd.counts[seat]
                raise RuleError(
                    (
                        _(
                            "{player} called UNO: that would be a wrong accusation; `catch "
                            "{player} BY` charges the player who said it"
                        )
                        if held == 1
                        else _(
                            "{player} holds {cards}: that would be a wrong accusation; `catch "
                            "{player} BY` charges the player who said it"
                        )
                    ).format(player=who, cards=plural(held, "card"))
                )
        if accuser == seat:
            raise RuleError(_("{player} cannot catch themselves").format(player=who))
        by = accuser
        return self._step(lambda: rnd.apply(Action("catch", by, target=seat)))

    # -- what is said ---------------------------------------------------------------------------
    def owing(self, why: str, card: Card | None = None) -> list[Outcome]:
        """What is owed first now (nothing when nothing is), after a move of kind `why`."""
        rnd = self.blind
        if not rnd.pending:
            return []
        due = rnd.pending[0]
        answers = tuple(sorted(rnd.answers()))
        return [Owing(due.seat, due.kind, due.n, due.face, why, card, answers, rnd.challengeable())]

    def answer_hint(self) -> str:
        """How the seat that owes may still answer (a refusal's words)."""
        rnd = self.blind
        return answer_hint(
            classic=self.classic,
            n=rnd.pending[0].n,
            answers=rnd.answers(),
            challengeable=rnd.challengeable(),
        )

    def taking_reason(self) -> str:
        """Why nothing but the box's press may come now (a refusal's words)."""
        who = self.names[self.taking or 0]
        if self.classic:
            return _("{player}'s card is coming from the launcher first").format(player=who)
        return _("{player} is hitting: press the button (or `undo`)").format(player=who)

    def check_in_deck(self, card: Card) -> None:
        """RuleError unless `card` is in this game's deck."""
        if card not in self.deck.counts:
            raise RuleError(
                _("`{card}` is not in the {deck} deck").format(card=card, deck=self.deck.name)
            )

    def _step(self, step: Callable[[], None]) -> list[Outcome]:
        """Run a step of the round (a refused one changes nothing; its RuleError is worded
        with the players' names) and return what it did."""
        rnd = self.blind
        rnd.outcomes.clear()
        try:
            step()
        except RuleError as exc:
            raise RuleError(_table_reason(exc, self.names, rnd)) from None
        return _taken(rnd)


def _table_reason(exc: RuleError, names: Sequence[str], rnd: BlindRound) -> str:
    """A refusal of the rules core said at the table: `seat N` is the player's name, and a
    card that does not match says what would."""
    top = rnd.top
    if isinstance(exc, NoMatch):
        said = (
            _("{card} does not go on {top} ({colour}): play a {colour} card or a wild")
            if top.is_wild
            else _(
                "{card} does not go on {top} ({colour}): play a {colour} card, a {face} or a wild"
            )
        )
        return said.format(
            card=exc.card, top=top, colour=colour_name(rnd.color, "?"), face=top.face
        )

    def name(m: re.Match[str]) -> str:
        seat = int(m.group(1))
        return names[seat] if seat < len(names) else m.group(0)

    return reworded(message_of(exc), lambda said: seat_pattern().sub(name, said))


def _taken(rnd: BlindRound) -> list[Outcome]:
    """What the round recorded since it was last asked (and forget it)."""
    told = list(rnd.outcomes)
    rnd.outcomes.clear()
    return told


def _owes_changed(told: list[Outcome]) -> bool:
    """Whether a step added an obligation or served one (what is owed first may be new)."""
    return any(isinstance(o, Owes | Served) for o in told)
