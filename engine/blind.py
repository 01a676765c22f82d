"""A round seen from the referee's desk: the hands are counts, not cards.

The table referee (engine/table/) cannot see hands. `BlindRound` is `Round` (engine/game.py)
with the few questions only the cards could answer put to the table instead:

- a card played: it is in the deck and the hand holds enough cards (not that it holds *that* card);
- a Discard All: how many more cards of its colour went down with it (the table says);
- a Wild Draw Four: whether it was legal is asked only when it is challenged (the table shows
  the hand and says);
- a hit or a dispense: how many cards came is what the box (or the table) reports;
- after a hit or a draw: whether a card that came plays is the player's word: they play it or pass.

Everything else, every rule of every card and option, is `Round`'s own code: the referee decides
nothing twice. tests/engine/test_table_differential.py feeds every move of seeded bot rounds to
both and checks that they agree after each one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.cards import Card, Deck
from engine.effects import EFFECTS
from engine.errors import RuleError
from engine.game import Action, Due, Round
from engine.outcomes import Drew, Fired
from engine.rules import Rules
from engine.words import plural, seat_label
from i18n import _

__all__ = ["UNSEEN", "BlindRound"]


class _Unseen:
    """A card in a hand that nobody at the referee's desk has seen."""

    __slots__ = ()
    color = None  # never read by the rules: BlindRound answers every question about hands

    def __repr__(self) -> str:
        return "UNSEEN"


UNSEEN: Any = _Unseen()


class _NoLauncher:
    """The box is the referee's business: a blind round is told what each press fired."""

    def hit(self, seat: int, loaded: int) -> int:  # pragma: no cover - never called
        raise AssertionError("a blind round is told what a hit fired")

    def dispense(self, n: int, loaded: int) -> int:  # pragma: no cover - never called
        raise AssertionError("a blind round is told what a dispense fired")

    def reload(self, loaded: int) -> None:
        pass


class BlindRound(Round):
    """A `Round` over hand counts. Build one with `deal`; act with `play`, `take`, `call`,
    `catch`, `challenge`, `pass_turn`; `counts` are the hand sizes; `state()` / `restore()`
    round-trip it as JSON-able data."""

    __slots__ = ("_discards", "_fired", "_legal")

    @classmethod
    def deal(
        cls,
        deck: Deck,
        rules: Rules,
        *,
        players: int,
        dealer: int,
        top: Card,
        color: str | None,
        out: Iterable[int] = (),
        knockout: bool = False,
    ) -> BlindRound:
        """Every seat in play holds `rules.hand_size` unseen cards; `top` was turned up (a card
        that goes back is the table's to replace first) and, for a wild, `color` named.
        `knockout`: the round goes on after a player goes out (`Round`'s knockout)."""
        out = frozenset(out)
        hands = [[] if s in out else [UNSEEN] * rules.hand_size for s in range(players)]
        rnd = cls.from_position(
            deck,
            rules,
            _NoLauncher(),
            hands=hands,
            top=top,
            color=color,
            dealer=dealer,
            out=out,
            knockout=knockout,
        )
        rnd._told()
        return rnd

    def _seat(self, out: frozenset[int]) -> None:
        super()._seat(out)
        # No fast paths: they test the cards in hand, which a blind round does not have.
        self._valid = [frozenset()] * self.players

    def _told(self, fired: int = 0, discards: int = 0, legal: bool = True) -> None:
        self._fired = fired
        self._discards = discards
        self._legal = legal

    # -- what the table does ------------------------------------------------------------------

    def play(
        self,
        seat: int,
        cards: tuple[Card, ...],
        *,
        color: str | None = None,
        target: int | None = None,
        discards: int = 0,
    ) -> None:
        """`seat` plays `cards` (with a Discard All, `discards` more cards of its colour)."""
        self._told(discards=discards)
        try:
            self.apply(Action("play", seat, cards, color, target))
        finally:
            self._told()

    def take(self, seat: int, fired: int, *, color: str | None = None) -> None:
        """One press (Attack) or dispense (classic) for `seat` brought `fired` cards."""
        if fired < 0:
            raise RuleError(_("a press fires 0 or more cards, not {count}").format(count=fired))
        kind = "hit" if self.rules.attack else "draw"
        self._told(fired=fired)
        try:
            self.apply(Action(kind, seat, color=color))
        finally:
            self._told()

    def challenge(self, seat: int, legal: bool) -> None:
        """`seat` challenges the Wild Draw Four; `legal` is what the hand shown proved."""
        self._told(legal=legal)
        try:
            self.apply(Action("challenge", seat))
        finally:
            self._told()

    def give(self, seat: int, cards: int) -> None:
        """`cards` more unseen cards went to `seat` (a card that slipped out behind a burst)."""
        hand = self.hands[seat]
        hand.extend([UNSEEN] * cards)
        if len(hand) > 1:
            self.uno_called[seat] = False

    def set_count(self, seat: int, cards: int) -> None:
        """The table says `seat` really holds `cards` cards."""
        self.hands[seat] = [UNSEEN] * cards
        if cards > 1:
            self.uno_called[seat] = False

    @property
    def counts(self) -> list[int]:
        """How many cards each seat holds."""
        return [len(h) for h in self.hands]

    @property
    def origin(self) -> int:
        """In a bonus turn, the seat "next" counts from (the last one skipped)."""
        return self._origin

    def nothing_left(self) -> bool:
        """Every card but the top one is in a hand: the launcher cannot fire any."""
        return self._nothing_to_fire()

    def answers(self) -> frozenset[str]:
        """Faces that may answer the first obligation now (stacking), or none."""
        return self._answers(self.pending[0]) if self.pending else frozenset()

    def challengeable(self) -> bool:
        """The first obligation is a Wild Draw Four its seat may still challenge."""
        return bool(self.pending) and self._challengeable(self.pending[0])

    def answerable(self) -> bool:
        """The first obligation may still be answered by its seat (a stacking card or a
        challenge): nothing is dispensed for it until that seat says what it does."""
        return bool(self.answers()) or self.challengeable()

    def to_front(self, seat: int) -> None:
        """Serve `seat`'s owed draw first (its cards already came, see Referee.serve_first)."""
        mine = next(
            (i for i, d in enumerate(self.pending) if d.seat == seat and d.kind == "draws"), None
        )
        if mine:
            self.pending.insert(0, self.pending.pop(mine))
            self._settle()

    # -- what the hands would say, asked of the table instead ----------------------------------

    def _check_holds(self, seat: int, cards: tuple[Card, ...]) -> None:
        for card in cards:
            if card not in self.deck.counts:
                raise RuleError(
                    _("`{card}` is not in the {deck} deck").format(card=card, deck=self.deck.name)
                )
        held = len(self.hands[seat])
        discards = self._discards
        if discards and not self._eff[cards[0]].discards_colour:
            raise RuleError(
                _("only a DA discards other cards with it, not {card}").format(card=cards[0])
            )
        if len(cards) + discards > held:
            if self._eff[cards[0]].discards_colour:
                raise RuleError(
                    _("{seat} holds {cards}: with {card} they can discard 0 to {most} more").format(
                        seat=seat_label(seat),
                        cards=plural(held, "card"),
                        card=cards[0],
                        most=max(held - 1, 0),
                    )
                )
            raise RuleError(
                _("{seat} holds {cards}").format(seat=seat_label(seat), cards=plural(held, "card"))
            )

    def _shed(self, seat: int, cards: tuple[Card, ...], color: str | None, removed: bool) -> Card:
        del self.hands[seat][: len(cards) + self._discards]
        if len(cards) == 1:
            return cards[0]
        top = self._on_top(cards, color)
        rest = list(cards)
        rest.remove(top)
        self.discard.extend(rest)
        return top

    def _held_none_of(self, seat: int, color: str | None) -> bool:
        return True  # asked when challenged

    def _wd4_verdict(self) -> bool:
        return self._legal

    def _fire(self, seat: int) -> list[Card]:
        got = self._unseen(seat, self._fired)
        self.presses += 1
        if self._recording:
            self.outcomes.append(Fired(seat, len(got)))
        return got

    def _draw(self, seat: int, n: int) -> list[Card]:
        got = self._unseen(seat, min(self._fired, n))
        if self._recording:
            self.outcomes.append(Drew(seat, len(got)))
        return got

    def _unseen(self, seat: int, count: int) -> list[Card]:
        self.cards_fired += count
        got = [UNSEEN] * count
        self.give(seat, count)
        return got

    def _could_play(self, seat: int) -> bool:
        return False  # a player who hits says they had to; only they know

    def _offer_taken(self, seat: int, got: list[Card]) -> bool:
        # Whatever came may play: the player plays it or passes.
        if got:
            self.fired_play = True
            return True
        return False

    def _keep_drawing(self, got: list[Card]) -> bool:
        return False  # draw_until_playable: the player types `draw` again

    def _check_take_again(self, seat: int) -> None:
        if self.fired_play and self._until_playable:
            return  # the drawn card did not play: draw again
        super()._check_take_again(seat)

    def _nothing_to_fire(self) -> bool:
        return sum(len(h) for h in self.hands) >= self.deck.total - 1

    def _gives_up(self, got: list[Card]) -> bool:
        # A short dispense (a jam, an empty launcher) leaves the rest owed, unless every card
        # is in a hand already.
        return not got and self._nothing_to_fire()

    # -- data ----------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The round as JSON-able data (the referee's state file)."""
        return {
            "hand": self.counts,
            "turn": self.turn,
            "direction": self.direction,
            "color": self.color,
            "top": str(self.discard[-1]),
            "pending": [_due_data(d) for d in self.pending],
            "bonus": {"seat": self.turn, "anchor": self._origin} if self.bonus else None,
            "window": self.window,
            "uno_called": [s for s, c in enumerate(self.uno_called) if c],
            "fired_play": self.fired_play,
            "wd4_by": self.wd4_by,
            "last_seat": self.last_seat,
            "winner": self.winner,
            "finished": list(self.finished),
        }

    @classmethod
    def restore(
        cls,
        deck: Deck,
        rules: Rules,
        data: dict[str, Any],
        *,
        dealer: int,
        out: Iterable[int],
        top: Card,
        knockout: bool = False,
    ) -> BlindRound:
        """A round from `state()` data (already checked by the referee's state reader); in a
        knockout round the seats that went out (`finished`) are out of play."""
        players = len(data["hand"])
        finished = list(data.get("finished", ()))
        rnd = cls.__new__(cls)
        rnd._setup(deck, rules, _NoLauncher(), players, dealer, 0, out, True, None, knockout)
        if knockout and finished:  # seated as `Round._go_out` left them (dealer among them too)
            rnd._seat(frozenset({*out, *finished}))
        rnd.finished = finished
        rnd._told()
        rnd.hands = [[UNSEEN] * n for n in data["hand"]]
        rnd.discard = [top]
        rnd.turn = data["turn"]
        rnd.direction = data["direction"]
        rnd.color = data["color"]
        rnd.pending = [_due_of(d) for d in data["pending"]]
        bonus = data.get("bonus")
        rnd.bonus = bool(bonus)
        rnd._origin = bonus["anchor"] if bonus else 0
        rnd.window = data.get("window")
        rnd.uno_called = [s in set(data.get("uno_called", ())) for s in range(players)]
        rnd.fired_play = bool(data.get("fired_play"))
        rnd.wd4_by = data.get("wd4_by")
        rnd.last_seat = data.get("last_seat")
        rnd.winner = data.get("winner")
        rnd._settle()
        return rnd


def _due_data(due: Due) -> dict[str, Any]:
    out = due.to_dict()
    if due.kind == "draws":  # the referee's files say cards, as the box dispenses them
        out["cards"] = out.pop("draws")
    out["face"] = due.face
    out["fresh"] = due.fresh
    return out


def _due_of(data: dict[str, Any]) -> Due:
    if data.get("until_fire"):
        kind, n = "until_fire", 1
    elif "cards" in data:
        kind, n = "draws", int(data["cards"])
    else:
        kind, n = "hits", int(data["hits"])
    face = data.get("face")
    due = Due(int(data["seat"]), kind, n, face if face in EFFECTS else None)
    due.fresh = bool(data.get("fresh", False))
    return due
