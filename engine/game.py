"""Rounds and games: the only place game state changes.

A `Round` holds the hands, the discard pile, the virtual launcher pile (cards in firing order), the
turn, the direction, the colour in play and the pending obligations ("seat 3 must hit 2 more
times"). Players act through `Action`s; `Round.apply` checks an action completely before changing
anything, so a rejected action (a `RuleError` with a reason a player understands) leaves the round
as it was. `Round.legal_actions(seat)` is the set of actions `apply` accepts from that seat right
now, including out-of-turn ones (UNO calls, catches, jump-ins, stacking answers), except the two
mistakes the rules punish instead of forbidding: a false UNO call (three or more cards) and
accusing a player who does not hold one card. `apply` accepts those and charges the penalty.

What each card does is read from one table, `engine.effects.EFFECTS`; `Round` applies it. The table
referee (engine/table/) drives a hand-blind subclass of `Round` (engine/blind.py), so both follow
the same code for every rule.

A launcher only says how many cards fire (`hit(seat, loaded)`, `dispense(n, loaded)`); the round
takes that many off the top of its pile. `Game` plays rounds to the end in one of the scoring
modes of engine/scoring.py. The rules themselves are described in ../shared/RULES.md and
docs/rules.md.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat, starmap
from typing import Any, Protocol, Self

from engine.cards import (
    ALL_CARDS,
    COLORED_FACES,
    COLORS,
    WILD_FACES,
    Card,
    Deck,
    card_rank,
    format_cards,
)
from engine.effects import EFFECTS, Effect, effect_of, first_card
from engine.errors import InputError, NoMatch, RuleError
from engine.outcomes import (
    BonusTurn,
    Challenged,
    ColourNamed,
    DealerFirst,
    Drew,
    Fired,
    Outcome,
    Owes,
    Passed,
    Penalised,
    Played,
    Reloaded,
    Reversed,
    Served,
    Skipped,
    Traded,
    TurnedBack,
    TurnedUp,
    UnoCalled,
    WentOut,
)
from engine.rules import Rules, player_range
from engine.scoring import SCORING_MODES, judge, round_gains, team_of, teams_problem
from engine.words import seat_label
from i18n import _, ngettext

ACTION_KINDS: tuple[str, ...] = ("play", "hit", "draw", "pass", "uno", "catch", "challenge")

_ALL_COLORS = frozenset(COLORS)
_NUMBERS = frozenset("0123456789")
_NUMBER_CARDS = frozenset(c for c in ALL_CARDS if c.face in _NUMBERS)
# Each card's effect when played, per binding of WC (custom_wild_effect): one dict lookup in the
# hot paths instead of binding WC every time.
_EFFECTS_BY_WC: dict[str, dict[Card, Effect]] = {}


def _effects(custom_wild_effect: str) -> dict[Card, Effect]:
    table = _EFFECTS_BY_WC.get(custom_wild_effect)
    if table is None:
        table = _EFFECTS_BY_WC[custom_wild_effect] = {
            c: effect_of(c.face, custom_wild_effect) for c in ALL_CARDS
        }
    return table


class Launcher(Protocol):
    """What a round needs from a launcher (engine/launchers.py has the real ones)."""

    def hit(self, seat: int, loaded: int) -> int: ...
    def dispense(self, n: int, loaded: int) -> int: ...
    def reload(self, loaded: int) -> None: ...


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a player does. `kind` is one of play, hit, draw, pass, uno, catch, challenge.

    play: `cards` (one card, or several of one face with multi_play), `color` for a wild (and to
    pick the colour among several played), `target` for WAA and TH. catch: `target` is the seat
    caught. Several cards are kept sorted and a non-wild play of one colour gets that colour, so
    equal moves compare equal however they were written.
    """

    kind: str
    seat: int
    cards: tuple[Card, ...] = ()
    color: str | None = None
    target: int | None = None

    def __post_init__(self) -> None:
        if self.kind == "play":
            cards = self.cards
            if len(cards) > 1:
                cards = tuple(sorted(cards, key=card_rank))
                object.__setattr__(self, "cards", cards)
            if self.color is None and cards:
                first = cards[0].color
                if first is not None and all(c.color == first for c in cards):
                    object.__setattr__(self, "color", first)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the shape of a scenario `[[actions]]` entry)."""
        out: dict[str, Any] = {"seat": self.seat}
        if self.kind == "play":
            out["play"] = str(self.cards[0]) if len(self.cards) == 1 else format_cards(self.cards)
            if self.color is not None:
                out["color"] = self.color
            if self.target is not None:
                out["target"] = self.target
        elif self.kind == "catch":
            out["catch"] = self.target
        else:
            out[self.kind] = True
            if self.color is not None:  # a hit or draw naming the colour of a wild turned up
                out["color"] = self.color
        return out


# Shared Action objects: legal_actions returns the same object for the same move, which keeps
# simulations from building thousands of identical frozen dataclasses per round.
_PLAY_CACHE: dict[tuple[int, Card, str | None, int | None], Action] = {}


def _play(seat: int, card: Card, color: str | None, target: int | None) -> Action:
    key = (seat, card, color, target)
    action = _PLAY_CACHE.get(key)
    if action is None:
        action = _PLAY_CACHE[key] = Action("play", seat, (card,), color, target)
    return action


# Every simple action of every seat (at most 10), built once.
_MAX_SEATS = 10
_HIT = [Action("hit", s) for s in range(_MAX_SEATS)]
_DRAW = [Action("draw", s) for s in range(_MAX_SEATS)]
_PASS = [Action("pass", s) for s in range(_MAX_SEATS)]
_UNO = [Action("uno", s) for s in range(_MAX_SEATS)]
_CHALLENGE = [Action("challenge", s) for s in range(_MAX_SEATS)]
_CATCH = [[Action("catch", s, target=t) for t in range(_MAX_SEATS)] for s in range(_MAX_SEATS)]
# A hit or draw that first names the colour (a wild turned up first: RULES.md decisions).
_NAMING = {
    kind: [tuple(Action(kind, s, color=c) for c in COLORS) for s in range(_MAX_SEATS)]
    for kind in ("hit", "draw")
}

# Which cards may be played on what, for one card on your own turn: `_PLAYABLE[color][face]` is
# every card that matches the colour in play `color` (None: a wild turned up first, anything goes)
# or the face `face` on top, wilds included. Precomputed so legal_actions and apply test a card
# with one set lookup instead of comparing colours and faces.
_PLAYABLE: dict[str | None, dict[str, frozenset[Card]]] = {
    color: {
        face: frozenset(
            c
            for c in ALL_CARDS
            if c.color is None or color is None or c.color == color or c.face == face
        )
        for face in COLORED_FACES + WILD_FACES
    }
    for color in (*COLORS, None)
}


class _Seating:
    """What depends only on the seats in play and on what WC does, shared by every round that
    sits the same way: the seat order, each seat's position in it, and per seat every card's
    single plays (one shared Action per colour choice and target, in legal_actions' order)."""

    __slots__ = ("order", "plays", "pos", "succ", "targeted", "valid")

    def __init__(self, players: int, out: frozenset[int], wild_effect: str) -> None:
        self.order: tuple[int, ...] = tuple(s for s in range(players) if s not in out)
        self.pos: dict[int, int] = {s: i for i, s in enumerate(self.order)}
        # The next seat in play after each seat, per direction (1 left, -1 right); -1 for a
        # seat not in play, which never has the turn.
        m = len(self.order)
        self.succ: dict[int, list[int]] = {
            d: [self.order[(self.pos[s] + d) % m] if s in self.pos else -1 for s in range(players)]
            for d in (1, -1)
        }
        # Cards that take a target seat (WC too when it acts as WAA).
        effects = _effects(wild_effect)
        self.targeted: frozenset[Card] = frozenset(c for c in ALL_CARDS if effects[c].aims)
        self.plays: list[dict[Card, tuple[Action, ...]]] = []
        # Per seat, the ids of those shared Actions: apply recognises one of them by identity
        # (they live for ever in _PLAY_CACHE, so an id is never reused).
        self.valid: list[frozenset[int]] = []
        for seat in range(players):
            targets = [s for s in self.order if s != seat] if seat in self.pos else []
            table: dict[Card, tuple[Action, ...]] = {}
            for card in ALL_CARDS:
                colors = COLORS if card.color is None else (card.color,)
                aims: Sequence[int | None] = targets if card in self.targeted else (None,)
                table[card] = tuple(_play(seat, card, col, t) for col in colors for t in aims)
            self.plays.append(table)
            self.valid.append(frozenset(id(a) for acts in table.values() for a in acts))


_SEATINGS: dict[tuple[int, frozenset[int], str], _Seating] = {}


def _seating(players: int, out: frozenset[int], wild_effect: str) -> _Seating:
    key = (players, out, wild_effect)
    seating = _SEATINGS.get(key)
    if seating is None:
        seating = _SEATINGS[key] = _Seating(players, out, wild_effect)
    return seating


class _Due:
    """A pending obligation: `seat` must take `n` hits, hit until a card fires, or draw `n` cards.
    `face` is the card that created it (None for a penalty); `fresh` until the first hit/draw,
    which is when a stacking answer or a challenge is still possible."""

    __slots__ = ("face", "fresh", "kind", "n", "seat")

    def __init__(self, seat: int, kind: str, n: int, face: str | None = None) -> None:
        self.seat = seat
        self.kind = kind  # "hits" | "until_fire" | "draws"
        self.n = n
        self.face = face
        self.fresh = True

    def copy(self) -> _Due:
        due = _Due(self.seat, self.kind, self.n, self.face)
        due.fresh = self.fresh
        return due

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "until_fire":
            return {"seat": self.seat, "until_fire": True}
        return {"seat": self.seat, self.kind: self.n}

    def owed_reason(self) -> str:
        if self.kind == "until_fire":
            return _("hit until a card fires")
        if self.kind == "hits":
            return ngettext("hit {n} more time", "hit {n} more times", self.n).format(n=self.n)
        return ngettext("draw {n} card", "draw {n} cards", self.n).format(n=self.n)


Due = _Due  # for engine/blind.py


def top_of(cards: Sequence[Card], color: str | None) -> Card:
    """Of several cards played at once, the one that ends on top: the first of the colour named
    (the others go under it)."""
    return next((c for c in cards if c.color == color), cards[-1])


class Round:
    """One round: deal, play until a hand is empty and every obligation is served.

    Public state (plain data; `to_dict()` gives the JSON shape): `hands` (list per seat),
    `discard` (top last), `pile` (launcher cards, next to fire first), `turn`, `direction` (1 is
    left/clockwise), `color` (None only while a wild turned up first has not been answered),
    `pending` (obligations, served first to last), `winner` (seat whose hand emptied, or None),
    `over` (a hand is empty and every obligation is served), `actor` (the seat the round waits
    for: the first pending obligation's seat, else the turn; None once the round is over; others
    may still act out of turn: uno, catch, jump-in), `outcomes` (what each move did, as
    engine/outcomes.py records, when the round records them: ``record=True``), `dealer`,
    `out` (seats not in this round, e.g. eliminated), `team` (teams mode: the team of each seat,
    else None), and counters `presses`, `cards_fired`, `turns`. All of it is read-only outside
    this class: `apply` is the way to change it.
    """

    # Slots: a round has more attributes than CPython shares in a key-sharing instance dict
    # (30), so with a plain __dict__ every attribute read in the hot paths took the slow lookup.
    __slots__ = (
        "_attack",
        "_da_choice",
        "_eff",
        "_knockout",
        "_many",
        "_multi",
        "_name_first",
        "_ok",
        "_order",
        "_origin",
        "_plain_draw",
        "_play_again",
        "_play_fired",
        "_plays_of",
        "_pos",
        "_recording",
        "_rng",
        "_stacking",
        "_succ",
        "_succs",
        "_take_kind",
        "_take_name",
        "_takes",
        "_two",
        "_until_playable",
        "_valid",
        "actor",
        "bonus",
        "cards_fired",
        "color",
        "dealer",
        "deck",
        "direction",
        "discard",
        "drawn",
        "finished",
        "fired_play",
        "hands",
        "last_seat",
        "launcher",
        "loser",
        "out",
        "outcomes",
        "pending",
        "pile",
        "players",
        "presses",
        "rules",
        "team",
        "turn",
        "turns",
        "uno_called",
        "wd4_by",
        "wd4_legal",
        "window",
        "winner",
    )

    def __init__(
        self,
        deck: Deck,
        rules: Rules,
        launcher: Launcher,
        *,
        players: int,
        dealer: int = 0,
        seed: int | None = 0,
        out: Iterable[int] = (),
        record: bool = True,
        rng: random.Random | None = None,
        knockout: bool = False,
        teams: int = 0,
    ) -> None:
        """Shuffle `deck` with `seed`, deal `rules.hand_size` cards to every seat in play starting
        left of `dealer`, load the rest into the launcher pile and turn up the first card.

        `rng`, if given, is used (and advanced) instead of a generator seeded with `seed`: a
        simulation can draw all its rounds from one seeded generator, as RLCard's game does,
        instead of seeding a Mersenne Twister for every round. `knockout` (the knockout mode,
        seed 001 淘汰制): a player who goes out leaves the round and the others play on until
        one is left holding cards, the `loser`. `teams` (teams mode): how many teams share the
        table, seat s on team `team_of(s, teams)`; 0 when every player plays for themself.
        """
        self._setup(deck, rules, launcher, players, dealer, seed, out, record, rng, knockout, teams)
        cards = deck.cards()
        _shuffle(cards, self._rng)
        need = rules.hand_size * len(self._order) + 1
        if len(cards) < need:
            raise InputError(
                f"the {deck.name} deck has {len(cards)} cards; {len(self._order)} players of "
                f"{rules.hand_size} need at least {need}"
            )
        # Round-robin from the dealer's left: the k-th seat gets every m-th card from k.
        order = self._order
        m = len(order)
        dealt = rules.hand_size * m
        hands = self.hands
        left = self._pos[dealer] + 1
        for k in range(m):
            hands[order[(left + k) % m]] = cards[k:dealt:m]
        self.pile[:] = cards[dealt:]
        self._turn_up_first()
        self._settle()
        launcher.reload(len(self.pile))

    @classmethod
    def from_position(
        cls,
        deck: Deck,
        rules: Rules,
        launcher: Launcher,
        *,
        hands: Sequence[Sequence[Card]],
        top: Card,
        pile: Sequence[Card] = (),
        color: str | None = None,
        turn: int | None = None,
        direction: int = 1,
        dealer: int = 0,
        seed: int | None = 0,
        out: Iterable[int] = (),
        record: bool = True,
        knockout: bool = False,
        teams: int = 0,
    ) -> Self:
        """A round from a given position (scenarios, tests, a physical table).

        With `turn` None, `top` is the first card turned up: the first-card rules of the preset
        apply and the player left of `dealer` starts; `color` is the colour the first player
        names for a wild turned up. Otherwise play resumes at `turn` with `top` on the pile and
        `color` (default: the top card's colour) in play. `teams` as for a dealt round.
        """
        self = cls.__new__(cls)
        self._setup(
            deck, rules, launcher, len(hands), dealer, seed, out, record, None, knockout, teams
        )
        if direction not in (1, -1):
            raise InputError(f"direction = {direction}: 1 (left) or -1 (right)")
        if color is not None and color not in _ALL_COLORS:
            # The colour in play indexes the playability tables: only the four colours exist.
            raise InputError(f"color = {color!r}: one of R, Y, G, B")
        if color is not None and not top.is_wild and color != top.color:
            raise InputError(
                f"color = {color}: the top card {top} is its own colour; color is only for a "
                "wild on top"
            )
        self.hands = [list(h) for h in hands]
        self.pile = list(pile)
        if turn is None:
            self.pile.insert(0, top)
            self._turn_up_first()
            if color is not None:
                self.color = color
        else:
            if turn in self.out or not 0 <= turn < self.players:
                raise InputError(f"turn = {turn}: a seat in play")
            self.discard = [top]
            self.turn = turn
            self.direction = direction
            self.color = color if color is not None else top.color
        self._settle()
        launcher.reload(len(self.pile))
        return self

    # -- setup ------------------------------------------------------------------------------

    def _setup(
        self,
        deck: Deck,
        rules: Rules,
        launcher: Launcher,
        players: int,
        dealer: int,
        seed: int | None,
        out: Iterable[int],
        record: bool,
        rng: random.Random | None = None,
        knockout: bool = False,
        teams: int = 0,
    ) -> None:
        low, high = player_range(rules.preset)
        if not low <= players <= high:
            raise InputError(f"players = {players}: from {low} to {high} for {rules.preset}")
        self.deck = deck
        self.rules = rules
        self.launcher = launcher
        self.players = players
        self._seat(frozenset(out))
        if len(self._order) < 2:
            raise InputError("a round needs at least two seats in play")
        if dealer not in self._pos:
            raise InputError(f"dealer = {dealer}: a seat in play")
        self.dealer = dealer
        # The team of each seat (teams mode), for the players to tell partners from opponents;
        # the rules of a round do not read it.
        self.team = tuple(team_of(s, teams) for s in range(players)) if teams else None
        self._rng = rng if rng is not None else random.Random(seed)
        self._eff = _effects(rules.custom_wild_effect)
        self.hands: list[list[Card]] = [[] for _ in range(players)]
        self.discard: list[Card] = []
        self.pile: list[Card] = []
        self.direction = 1
        self.turn = self._next(dealer)
        self.color: str | None = None
        self.pending: list[_Due] = []
        self.winner: int | None = None
        # What each move did (engine/outcomes.py), kept only when asked for: a simulation
        # plays millions of moves nobody reads.
        self.outcomes: list[Outcome] = []
        self._recording = record
        self.uno_called = [False] * players
        self._attack = rules.attack
        self._take_kind = "hits" if rules.attack else "draws"
        self._take_name = "hit" if rules.attack else "draw"
        self._takes = _HIT if rules.attack else _DRAW  # the take action of each seat
        self._multi = rules.multi_play
        self._da_choice = rules.discard_all_choice
        # Plays of several cards: several of one face, or a Discard All with cards it takes.
        self._many = rules.multi_play or rules.discard_all_choice
        self._until_playable = rules.draw_until_playable
        # A classic draw is one card that ends the turn unless it plays: apply's fast path.
        self._plain_draw = not rules.attack and not record and not rules.draw_until_playable
        self._stacking = rules.stacking
        self._play_fired = rules.play_fired_card and rules.attack
        self._knockout = knockout
        self.finished: list[int] = []  # seats whose hand emptied, in that order
        self.loser: int | None = None  # knockout: the seat left holding cards at the end
        self.window: int | None = None  # seat that may be caught for a missed UNO
        self.drawn: Card | None = None  # classic: the card just drawn, which alone may be played
        self.fired_play = False  # play_fired_card: after a forced hit, a fired card may be played
        self._name_first = False  # a wild was turned up first: its colour is named first
        self.bonus = False  # the turn seat is in a play-again turn after R or S
        self._origin = 0  # during a bonus turn: the seat "next" counts from (after skips)
        self.wd4_by: int | None = None  # who played the last WD4 and whether it was legal
        self.wd4_legal = True
        self.last_seat: int | None = None  # who made the last play (jump-in needs one)
        self.presses = 0
        self.cards_fired = 0
        self.turns = 0

    def _seat(self, out: frozenset[int]) -> None:
        """Seat the players in play (all but `out`): the order, the plays each may make and what
        depends on how many are in play. Called at the start and when a knockout player leaves."""
        rules = self.rules
        self.out = out
        seating = _seating(self.players, out, rules.custom_wild_effect)
        self._order = seating.order
        self._pos = seating.pos
        self._plays_of = seating.plays
        self._valid = seating.valid
        self._succs = seating.succ
        self._two = len(self._order) == 2 and rules.two_player_rules
        # R/S give a play-again turn (the option, and only with three or more in play).
        self._play_again = rules.skip_reverse_play_again and len(self._order) > 2

    def _turn_up_first(self) -> None:
        """Turn up the first card from the pile and apply its first-card rule (effects table)."""
        classic = not self.rules.attack
        record = self._recording
        while True:
            top = self.pile.pop(0)
            back = first_card(top.face, classic=classic) == "back"
            if not back or not self.pile:
                break
            # TH (attack) and WD4 (classic) go back into the pile at a random place.
            self.pile.insert(self._rng.randrange(len(self.pile) + 1), top)
            if record:
                self.outcomes.append(TurnedBack(top))
        self.discard = [top]
        self.color = top.color  # None for a wild: the first player names it first
        self._name_first = top.is_wild
        # Which way play goes and who starts: the player next to the dealer, or the dealer
        # (options counter_clockwise and dealer_plays_first: seed 001's classic section).
        rules = self.rules
        self.direction = -1 if rules.counter_clockwise else 1
        first = self.dealer if rules.dealer_plays_first else self._next(self.dealer)
        self.turn = first
        if record:
            self.outcomes.append(TurnedUp(self.dealer, top))
        # Turned up, a card has its own effect: WC is a plain wild whatever it is bound to.
        effect = EFFECTS[top.face]
        kind = first_card(top.face, classic=classic)
        if kind == "owe":
            self._owe(self._owed(first, effect, 1))
            self.turn = self._next(first)
        elif kind == "all_but_dealer":
            seat = self._next(self.dealer)
            while seat != self.dealer:
                self._owe(_Due(seat, self._take_kind, effect.take, effect.face))
                seat = self._next(seat)
        elif kind == "skip":
            self.turn = self._next(first)
            if record:
                self.outcomes.append(Skipped(first))
        elif kind == "dealer_right":
            # Dealer plays first, then play goes the other way (right, unless counter_clockwise).
            self.direction = -self.direction
            self.turn = self.dealer
            if record:
                self.outcomes.append(DealerFirst(self.dealer))

    def _owe(self, due: _Due, *, first: bool = False) -> None:
        """Add an obligation, last in line (or `first`: a penalty goes in front)."""
        if first:
            self.pending.insert(0, due)
        else:
            self.pending.append(due)
        if self._recording:
            self.outcomes.append(Owes(due.seat, due.kind, due.n, due.face))

    # -- seats ------------------------------------------------------------------------------

    def _next(self, seat: int, steps: int = 1) -> int:
        order = self._order
        return order[(self._pos[seat] + self.direction * steps) % len(order)]

    @property
    def top(self) -> Card:
        """The card on top of the discard pile."""
        return self.discard[-1]

    @property
    def recording(self) -> bool:
        """Whether the round records its outcomes (`record=True`; a simulation's does not)."""
        return self._recording

    def _settle(self) -> None:
        """Set `actor` from the state: the first pending obligation's seat, else the turn, None
        once the round is over. Called after every change (apply inlines it on its fast paths)."""
        pending = self.pending
        self.actor = pending[0].seat if pending else self.turn if self.winner is None else None
        self._ok = _PLAYABLE[self.color][self.discard[-1].face]
        self._succ = self._succs[self.direction]

    @property
    def over(self) -> bool:
        """True once a hand is empty and every obligation (hits the last card caused) is served."""
        return self.winner is not None and not self.pending

    @property
    def seats(self) -> tuple[int, ...]:
        """Seats in play, in seat order (a tuple shared by every round seated alike: bots ask
        for it on many moves, so it is not copied)."""
        return self._order

    def points(self) -> list[int]:
        """Points left in each seat's hand (0 for seats not in play)."""
        pts = self.deck.points
        return [sum(pts[c] for c in hand) for hand in self.hands]

    # -- what the hands say (engine/blind.py answers these without seeing the cards) ---------

    def _check_holds(self, seat: int, cards: tuple[Card, ...]) -> None:
        """RuleError unless `seat` holds `cards`."""
        hand = self.hands[seat]
        if len(cards) == 1:
            if cards[0] not in hand:
                raise RuleError(
                    _("{seat} does not hold {card}").format(seat=seat_label(seat), card=cards[0])
                )
            return
        have = Counter(hand)
        for card, n in Counter(cards).items():
            if have[card] < n:
                raise RuleError(
                    _("{seat} does not hold {n} × {card}").format(
                        seat=seat_label(seat), n=n, card=card
                    )
                )

    def _shed(self, seat: int, cards: tuple[Card, ...], color: str | None, removed: bool) -> Card:
        """Take the played cards (and a Discard All's colour) out of the hand onto the discard
        pile, all but the card that goes on top, which is returned (the one of the colour named,
        among several). `removed`: apply's fast path took the one card already."""
        hand = self.hands[seat]
        discard = self.discard
        if len(cards) == 1:
            top = cards[0]
            if not removed:
                hand.remove(top)
        else:
            for card in cards:
                hand.remove(card)
            top = self._on_top(cards, color)
            rest = list(cards)
            rest.remove(top)
            discard.extend(rest)
        if self._da_choice:
            return top  # a Discard All took with it the cards played with it, no more
        if self._eff[top].discards_colour:
            same = [c for c in hand if c.color == top.color]
            if same:
                discard.extend(same)
                hand[:] = [c for c in hand if c.color != top.color]
        return top

    def _on_top(self, cards: tuple[Card, ...], color: str | None) -> Card:
        """The card of a play of several that goes on the pile last: with discard_all_choice
        the Discard All, else the one of the colour named."""
        return self._lead(cards) if self._da_choice else top_of(cards, color)

    def _held_none_of(self, seat: int, color: str | None) -> bool:
        """A Wild Draw Four was legal: the player held no card of the colour in play."""
        return color is None or all(c.color != color for c in self.hands[seat])

    def _wd4_verdict(self) -> bool:
        """Whether the Wild Draw Four being challenged was legal."""
        return self.wd4_legal or self.wd4_by is None

    def _could_play(self, seat: int) -> bool:
        """Whether `seat` holds a card it could play now (before a hit)."""
        ok = self._ok
        return any(c in ok for c in self.hands[seat])

    def _offer_taken(self, seat: int, got: list[Card]) -> bool:
        """After a take on the player's own turn: may the player play what came (True; the
        state says which card), or is the turn over (False)?"""
        ok = self._ok
        if self._attack:
            if any(c in ok for c in got):
                self.fired_play = True
                return True
            return False
        if got and got[-1] in ok:
            self.drawn = got[-1]  # the player may play it now, or pass
            return True
        return False

    def _keep_drawing(self, got: list[Card]) -> bool:
        """draw_until_playable: the last card drawn does not play, so another is drawn."""
        return got[-1] not in self._ok

    def _nothing_to_fire(self) -> bool:
        """Nothing is left to fire anywhere: the launcher is empty and so is the discard pile
        but for its top card (hit-until-fire then ends)."""
        return not self.pile and len(self.discard) <= 1

    def _gives_up(self, got: list[Card]) -> bool:
        """An owed draw that brought nothing is dropped (nothing could be drawn)."""
        return not got

    # -- checking ---------------------------------------------------------------------------

    def _owed(self, seat: int, effect: Effect, cards: int, stacked: int = 0) -> _Due:
        """What `seat` owes for `cards` cards of `effect` (plus a stacked penalty)."""
        if effect.until_fire:
            # Classic draws from an exact pile: "until a card fires" is one card.
            if self._attack:
                return _Due(seat, "until_fire", 1, effect.face)
            return _Due(seat, "draws", 1, effect.face)
        n = effect.take * cards if effect.adds_up else effect.take
        return _Due(seat, self._take_kind, n + stacked, effect.face)

    def _playable(self, card: Card) -> bool:
        color = self.color
        return (
            card.color is None
            or color is None
            or card.color == color
            or card.face == self.discard[-1].face
        )

    def _answers(self, due: _Due) -> frozenset[str]:
        """stacking: the faces that may answer `due` now (none once it is being served)."""
        if not self._stacking or not due.fresh or due.face is None or due.kind == "until_fire":
            return frozenset()
        return EFFECTS[due.face].answers

    def _challengeable(self, due: _Due) -> bool:
        return (
            due.fresh
            and due.face is not None
            and EFFECTS[due.face].challengeable
            and self.wd4_by is not None
        )

    def _check(self, action: Action) -> str:
        """Raise RuleError unless `action` is legal now; return the play context
        ("turn", "stack", "jump") for plays, or the kind."""
        seat = action.seat
        if not 0 <= seat < self.players or seat in self.out:
            raise RuleError(f"seat {seat} is not in this round")
        kind = action.kind
        if self.winner is not None and not self.pending:
            raise RuleError(
                _("the round is over: {seat} went out").format(seat=seat_label(self.winner))
            )
        if kind == "play":
            return self._check_play(action)
        if action.cards:
            raise RuleError(f"{kind} takes no cards")
        if kind == "catch":
            if action.color is not None:
                raise RuleError("catch takes no colour")
            self._check_catch(action)
            return kind
        if action.target is not None:
            raise RuleError(f"{kind} takes no target")
        if kind in ("hit", "draw"):
            self._check_take(seat, kind, action.color)
            return kind
        if action.color is not None:
            raise RuleError(f"{kind} takes no colour")
        if kind == "uno":
            self._check_uno(seat)
        elif kind == "pass":
            self._check_pass(seat)
        elif kind == "challenge":
            self._check_challenge(seat)
        else:
            raise RuleError(f"unknown action `{kind}`: one of {', '.join(ACTION_KINDS)}")
        return kind

    def _check_uno(self, seat: int) -> None:
        # Any number of cards is accepted: with three or more it is a false call (penalised).
        if self.winner is not None:
            raise RuleError(
                _("{seat} has gone out; no more UNO calls").format(seat=seat_label(self.winner))
            )
        if self.uno_called[seat]:
            raise RuleError(_("{seat} has already called UNO").format(seat=seat_label(seat)))

    def _check_catch(self, action: Action) -> None:
        target = action.target
        if self.winner is not None:
            raise RuleError(
                _("{seat} has gone out; no more catches").format(seat=seat_label(self.winner))
            )
        if target is None or not 0 <= target < self.players or target in self.out:
            raise RuleError(_("catch needs the seat of a player in the round"))
        if target == action.seat:
            raise RuleError(_("{seat} cannot catch itself").format(seat=seat_label(action.seat)))
        # Accusing a player who holds other than one card, or who called UNO in time, is a
        # wrong accusation: accepted, and penalised. Too late, it is refused (RULES.md).
        if len(self.hands[target]) == 1 and self.window != target:
            raise RuleError(
                _(
                    "too late to catch {seat}: a missed UNO is caught before the next player starts"
                ).format(seat=seat_label(target))
            )

    def _check_take(self, seat: int, kind: str, color: str | None) -> None:
        attack = self._attack
        if kind == "hit" and not attack:
            raise RuleError(_("classic rules draw cards: use draw, not hit"))
        if kind == "draw" and attack:
            raise RuleError(_("UNO Attack has no draw pile: hit the launcher instead"))
        if self.pending:
            due = self.pending[0]
            if due.seat != seat:
                raise RuleError(
                    _("{seat} must {owed} first").format(
                        seat=seat_label(due.seat), owed=due.owed_reason()
                    )
                )
        else:
            if seat != self.turn:
                raise self._not_your_turn(seat)
            self._check_take_again(seat)
        # A wild turned up first: its colour is named before anything else. A hit or draw as
        # the turn's move must name it (it would leave the next player no colour to follow);
        # one owed for the card turned up may name it, else the next player names it. (A
        # scenario resumed with a wild on top and no colour leaves it open: anything goes.)
        if color is not None and color not in _ALL_COLORS:
            raise RuleError(_("colour {colour!r}: name R, Y, G or B").format(colour=color))
        if self.color is None and self.winner is None:
            if color is None and not self.pending and self._name_first:
                raise RuleError(
                    _(
                        "{card} was turned up: {seat} names the colour first ({action} naming R, "
                        "Y, G or B)"
                    ).format(card=self.discard[-1], seat=seat_label(seat), action=kind)
                )
        elif color is not None:
            raise RuleError(
                _("{action} names no colour: only after a wild turned up first").format(action=kind)
            )

    def _not_your_turn(self, seat: int) -> RuleError:
        return RuleError(
            _("it is {turn}'s turn, not {seat}'s").format(
                turn=seat_label(self.turn), seat=seat_label(seat)
            )
        )

    def _check_take_again(self, seat: int) -> None:
        if self.drawn is not None:
            raise RuleError(
                _("{seat} has drawn already: play {card} or pass").format(
                    seat=seat_label(seat), card=self.drawn
                )
            )
        if self.fired_play:
            raise RuleError(
                _("{seat} has hit already: play a card the launcher fired, or pass").format(
                    seat=seat_label(seat)
                )
            )

    def _check_pass(self, seat: int) -> None:
        if self.pending:
            due = self.pending[0]
            raise RuleError(
                _("{seat} must {owed}; no passing").format(
                    seat=seat_label(due.seat), owed=due.owed_reason()
                )
            )
        if seat != self.turn:
            raise self._not_your_turn(seat)
        if self.drawn is None and not self.bonus and not self.fired_play:
            raise RuleError(
                (
                    _("{seat} must play or hit; passing is only after a draw")
                    if self._attack
                    else _("{seat} must play or draw; passing is only after a draw")
                ).format(seat=seat_label(seat))
            )

    def _check_challenge(self, seat: int) -> None:
        if self.winner is not None:
            raise RuleError(
                _("{seat} has gone out; the draw stands").format(seat=seat_label(self.winner))
            )
        due = self.pending[0] if self.pending else None
        if due is None or due.seat != seat or not self._challengeable(due):
            raise RuleError(
                _("{seat} has no Wild Draw Four to challenge").format(seat=seat_label(seat))
            )

    def _check_play(self, action: Action) -> str:
        seat = action.seat
        cards = action.cards
        if not cards:
            raise RuleError(_("play needs a card"))
        if self.winner is not None:
            due = self.pending[0]
            raise RuleError(
                _("{winner} has gone out; {seat} must {owed}").format(
                    winner=seat_label(self.winner),
                    seat=seat_label(due.seat),
                    owed=due.owed_reason(),
                )
            )
        lead = self._lead(cards)
        effect = self._eff[lead]
        face = lead.face
        if len(cards) > 1 and self._da_choice and effect.discards_colour:
            # discard_all_choice: the Discard All takes with it the cards of its colour played
            # with it.
            if any(c.color != lead.color for c in cards):
                raise RuleError(
                    _("{card} takes only cards of its colour with it").format(card=lead)
                )
        elif len(cards) > 1:
            if not self._multi:
                raise RuleError(_("play one card at a time (multi_play is off)"))
            if any(c.face != face for c in cards):
                raise RuleError(_("cards played together must share a number or symbol"))
            if not effect.multi:
                raise RuleError(_("{face} cannot be played several at once").format(face=face))
        # Who may play, and against what.
        if self.pending:
            due = self.pending[0]
            if due.seat != seat:
                raise RuleError(
                    _("{seat} must {owed} before anyone plays").format(
                        seat=seat_label(due.seat), owed=due.owed_reason()
                    )
                )
            answers = self._answers(due)
            if not answers:
                raise RuleError(
                    _("{seat} must {owed} before playing").format(
                        seat=seat_label(seat), owed=due.owed_reason()
                    )
                )
            if effect.face not in answers:
                raise RuleError(
                    _("{seat} must {owed} or answer with {cards}").format(
                        seat=seat_label(seat),
                        owed=due.owed_reason(),
                        cards=_(" or ").join(sorted(answers)),
                    )
                )
            context = "stack"
        elif seat == self.turn:
            if self.drawn is not None and (len(cards) != 1 or cards[0] != self.drawn):
                raise RuleError(
                    _("after drawing, only the drawn {card} may be played").format(card=self.drawn)
                )
            context = "turn"
        else:
            top = self.discard[-1]
            if not (
                self.rules.jump_in
                and len(cards) == 1
                and cards[0] == top
                and top.is_number
                and self.last_seat is not None
                and self.drawn is None
                and not self.fired_play
                and not self.bonus
            ):
                raise self._not_your_turn(seat)
            context = "jump"
        self._check_holds(seat, cards)
        # Several of one face play if one of them matches; a Discard All with cards if it does.
        playing = (lead,) if effect.discards_colour else cards
        if context == "turn" and not any(self._playable(c) for c in playing):
            top = self.discard[-1]
            raise NoMatch(
                (
                    _("{card} does not match {top} (colour {colour}); hit instead")
                    if self._attack
                    else _("{card} does not match {top} (colour {colour}); draw instead")
                ).format(card=lead, top=top, colour=self.color),
                lead,
            )
        # Colour.
        color = action.color
        if effect.wild:
            if color not in _ALL_COLORS:
                raise RuleError(_("name a colour for {card}: R, Y, G or B").format(card=cards[0]))
        elif color is None:
            raise RuleError(_("name the colour to continue with: one of the colours played"))
        elif all(c.color != color for c in cards):
            raise RuleError(_("colour {colour} is not among the cards played").format(colour=color))
        # Target.
        target = action.target
        if effect.aims:
            if (
                target is None
                or target == seat
                or target in self.out
                or not (0 <= target < self.players)
            ):
                raise RuleError(
                    _("{face} needs a target: another seat in the round").format(face=face)
                )
        elif target is not None:
            raise RuleError(_("{face} takes no target").format(face=face))
        # Going out.
        if len(cards) == len(self.hands[seat]):
            if not effect.last_card:
                raise RuleError(_("{face} cannot be your last card").format(face=face))
            if self.rules.last_card_restriction and effect.restricted_last:
                raise RuleError(
                    _("you may not go out on {face} (last_card_restriction)").format(face=face)
                )

        return context

    def _lead(self, cards: tuple[Card, ...]) -> Card:
        """The card whose effect a play has: the first, or with discard_all_choice the Discard
        All the other cards go down with."""
        if len(cards) > 1 and self._da_choice:
            eff = self._eff
            for card in cards:
                if eff[card].discards_colour:
                    return card
        return cards[0]

    # -- applying ---------------------------------------------------------------------------

    def check(self, action: Action) -> None:
        """RuleError (with the reason) unless `apply` would accept `action` now; changes nothing."""
        self._check(action)

    def apply(self, action: Action) -> None:
        """Carry out `action`; RuleError (and no change at all) if it is not legal now."""
        kind = action.kind
        seat = action.seat
        # Fast paths for the common moves, hot in simulations: one card (not the last) played by
        # the seat to move with nothing pending, and a hit/draw the seat owes or takes on its
        # turn. They accept exactly what legal_actions offers for those cases; anything else
        # (and any refusal) takes the full check below, which also words the reason.
        if kind == "play":
            if (
                seat == self.turn
                # One of this seat's shared single-card plays (legal_actions hands out only
                # these): its colour and target are valid by construction.
                and id(action) in self._valid[seat]
                and not self.pending
                and self.winner is None
            ):
                card = action.cards[0]
                hand = self.hands[seat]
                drawn = self.drawn
                if len(hand) > 1 and (drawn is None or drawn is card) and card in self._ok:
                    # Finding the card is also the check that the seat holds it; if it does
                    # not, nothing has changed yet. By identity (cards are interned): the
                    # first `is` match is what hand.remove() would take, without remove()'s
                    # call to Card.__eq__ for every card before it (a Python call: Card
                    # defines an ordering, so its comparisons are all Python-level).
                    i = 0
                    for held in hand:
                        if held is card:
                            break
                        i += 1
                    if i < len(hand):
                        del hand[i]
                        if card in _NUMBER_CARDS and not self.bonus:
                            # A number card: no effect, play passes on.
                            self.drawn = None
                            self.fired_play = False
                            self.discard.append(card)
                            self.color = c = card.color
                            self._ok = _PLAYABLE[c][card.face]
                            self.last_seat = seat
                            if len(hand) == 1:
                                self.window = seat
                            elif self.window != seat:
                                self.window = None
                            if self._recording:
                                self.outcomes.append(Played(seat, (card,), c))
                            self.turn = self.actor = self._succ[seat]
                            self.turns += 1
                            return
                        if self.window != seat:
                            self.window = None
                        self._do_play(action, "turn", removed=True)
                        pending = self.pending  # _settle(), inline
                        self.actor = (
                            pending[0].seat
                            if pending
                            else self.turn
                            if self.winner is None
                            else None
                        )
                        return
        elif (
            kind == self._take_name
            and not action.cards
            and action.color is None
            and self.color is not None
        ):
            pending = self.pending
            if action.target is None and (
                pending[0].seat == seat
                if pending
                else seat == self.turn
                and self.winner is None
                and self.drawn is None
                and not self.fired_play
            ):
                if self.window != seat:
                    self.window = None
                pile = self.pile
                if pile and self._plain_draw and not pending:
                    # The hot path of a classic round: one card off a loaded pile on the
                    # player's own turn (what _do_take does through _draw and _offer_taken).
                    if self.launcher.dispense(1, len(pile)) > 0:
                        card = pile.pop(0)
                        self.hands[seat].append(card)
                        self.uno_called[seat] = False  # the hand now holds two or more
                        self.cards_fired += 1
                        if card in self._ok:
                            self.drawn = card  # the player may play it now, or pass
                            return
                    if self.bonus:
                        self._end_turn()
                    else:
                        # _end_turn(), inline.
                        self.drawn = None
                        self.turn = self._succ[seat]
                        self.turns += 1
                    self.actor = self.turn
                    return
                self._do_take(seat)
                pending = self.pending  # _settle(), inline
                self.actor = (
                    pending[0].seat if pending else self.turn if self.winner is None else None
                )
                return
        context = self._check(action)
        if kind == "uno":
            self._do_uno(seat)
        elif kind == "catch":
            self._do_catch(seat, action.target)  # type: ignore[arg-type]
        else:
            # A move by anyone but the player who just went down to one card closes the UNO
            # window; that player's own bonus card, pass or hit does not (RULES.md decisions).
            if self.window != seat:
                self.window = None
            if kind == "play":
                self._do_play(action, context)
            elif kind in ("hit", "draw"):
                if action.color is not None:
                    # The colour of a wild turned up first, named before the take.
                    self.color = action.color
                    self._ok = _PLAYABLE[action.color][self.discard[-1].face]
                    if self._recording:
                        self.outcomes.append(ColourNamed(seat, action.color))
                self._do_take(seat)
            elif kind == "pass":
                if self._recording:
                    kept = self.drawn is not None or self.fired_play
                    self.outcomes.append(Passed(seat, kept))
                self._end_turn()
            else:
                self._do_challenge(seat)
        self._settle()

    def _penalise(self, seat: int, why: str, other: int | None = None) -> None:
        """`seat` owes the UNO penalty (in front of anything else owed) for `why`: a
        ``false_uno``, ``caught`` by `other`, a ``wrong_accusation`` of `other`."""
        n = self.rules.uno_penalty
        if self._recording:
            held = len(self.hands[seat])
            self.outcomes.append(Penalised(seat, why, n, self._take_kind, other, held))
        if n:
            self._owe(_Due(seat, self._take_kind, n), first=True)

    def _do_uno(self, seat: int) -> None:
        held = len(self.hands[seat])
        if held <= 2:
            self.uno_called[seat] = True
            if self._recording:
                self.outcomes.append(UnoCalled(seat, held))
        else:
            self._penalise(seat, "false_uno")

    def _do_catch(self, seat: int, target: int) -> None:
        if len(self.hands[target]) == 1 and not self.uno_called[target]:
            # _check_catch made sure the window is open on `target`.
            self.window = None
            self._penalise(target, "caught", seat)
        else:
            self._penalise(seat, "wrong_accusation", target)

    def _end_turn(self) -> None:
        if self.bonus:
            # After the bonus turn play goes on past the skipped seats, never back to the player.
            self.turn = self._after(self._origin, 1, self.turn)
            self.bonus = False
        else:
            self.turn = self._succ[self.turn]  # _next(turn): this runs after every draw or hit
        self.drawn = None
        self.fired_play = False
        self.turns += 1

    def _after(self, origin: int, steps: int, player: int | None) -> int:
        """The seat `steps` seats after `origin` in the direction of play, not counting
        `player` (in a bonus turn "next" never comes back to the player who played)."""
        succ = self._succ
        seat = origin
        for _step in range(steps):
            seat = succ[seat]
            if seat == player:
                seat = succ[seat]
        return seat

    def _refill(self) -> int:
        """Cards loaded in the launcher; when it is dry, reshuffle the discard pile (except its
        top card) into it and tell the launcher."""
        if not self.pile and len(self.discard) > 1:
            cards = self.discard[:-1]
            del self.discard[:-1]
            _shuffle(cards, self._rng)
            self.pile = cards
            self.launcher.reload(len(cards))
            if self._recording:
                self.outcomes.append(Reloaded(len(cards)))
        return len(self.pile)

    def _served(self) -> None:
        """The obligation first in line is done."""
        due = self.pending.pop(0)
        if self._recording:
            self.outcomes.append(Served(due.seat))

    def _take(self, seat: int, count: int) -> list[Card]:
        got = self.pile[:count]
        del self.pile[:count]
        hand = self.hands[seat]
        hand.extend(got)
        if len(hand) > 1:
            self.uno_called[seat] = False
        return got

    def _fire(self, seat: int) -> list[Card]:
        """One press of the launcher for `seat`: returns the cards it took."""
        loaded = self._refill()
        count = self.launcher.hit(seat, loaded) if loaded else 0
        count = max(0, min(count, loaded))
        self.presses += 1
        self.cards_fired += count
        got = self._take(seat, count)
        if self._recording:
            self.outcomes.append(Fired(seat, count))
        return got

    def _draw(self, seat: int, n: int) -> list[Card]:
        """Classic: `n` cards from the draw pile (dispensed exactly), refilling as needed."""
        got: list[Card] = []
        while n > 0:
            loaded = self._refill()
            if not loaded:
                break
            count = max(0, min(self.launcher.dispense(min(n, loaded), loaded), loaded))
            if count == 0:
                break
            got.extend(self._take(seat, count))
            n -= count
        self.cards_fired += len(got)
        if self._recording:
            self.outcomes.append(Drew(seat, len(got)))
        return got

    def _do_take(self, seat: int) -> None:
        if self.pending:
            due = self.pending[0]
            due.fresh = False
            if due.kind == "draws":
                got = self._draw(seat, due.n)
                due.n -= len(got)
                if due.n <= 0 or self._gives_up(got):
                    self._served()
            else:
                got = self._fire(seat)
                if due.kind == "hits":
                    due.n -= 1
                    if due.n <= 0:
                        self._served()
                elif got or self._nothing_to_fire():
                    # Hit-until-fire ends on a firing press (or when nothing is left to fire).
                    self._served()
            return
        if self._attack:
            # A hit ends the turn even if a fired card is playable, unless play_fired_card lets
            # a player who could not play (not in a bonus turn) play a card that came.
            forced = self._play_fired and not self.bonus and not self._could_play(seat)
            got = self._fire(seat)
            if forced and self._offer_taken(seat, got):
                return
            self._end_turn()
            return
        got = self._draw(seat, 1)
        if self._until_playable:
            while got and self._keep_drawing(got):
                more = self._draw(seat, 1)
                if not more:
                    break
                got = more
        if not self._offer_taken(seat, got):
            self._end_turn()

    def _do_challenge(self, seat: int) -> None:
        due = self.pending[0]
        due.fresh = False
        offender = self.wd4_by
        assert offender is not None
        if self._wd4_verdict():
            due.n += 2
            if self._recording:
                self.outcomes.append(Challenged(seat, offender, True, due.n, due.kind))
                self.outcomes.append(Owes(seat, due.kind, due.n, due.face))
            return
        # Guilty: the player who played it takes four instead; the challenger keeps the turn.
        if self._recording:
            self.outcomes.append(Challenged(seat, offender, False, 4, due.kind))
        due.n -= 4
        if due.n <= 0:
            self._served()
            self.turn = seat
        self._owe(_Due(offender, due.kind, 4), first=True)
        self.wd4_by = None

    def _do_play(self, action: Action, context: str, *, removed: bool = False) -> None:
        """Carry out a checked play by the card's entry in the effects table (`removed`: apply's
        fast path took the one card already)."""
        seat = action.seat
        cards = action.cards
        color = action.color
        n = len(cards)
        effect = self._eff[self._lead(cards)]
        prev_color = self.color
        record = self._recording
        if record:
            # The hand before the play: what went down with a Discard All is the difference.
            held = len(self.hands[seat]) + removed
        top = self._shed(seat, cards, color, removed)
        self.discard.append(top)
        self.color = color
        self._ok = _PLAYABLE[color][top.face]
        self.drawn = None
        self.fired_play = False
        self.last_seat = seat
        if record:
            discards = held - len(self.hands[seat]) - n
            jump = context == "jump"
            self.outcomes.append(Played(seat, cards, color, action.target, discards, jump))
        # Where "next" counts from: the player, or in a bonus turn the last seat skipped.
        stacked = 0
        # In a bonus turn "next" never comes back to the player (RULES.md decisions).
        player = seat if self.bonus else None
        if context == "stack":
            stacked = self.pending.pop(0).n
            origin = seat
        elif self.bonus:
            origin = self._origin
        else:
            origin = seat
        self.bonus = False
        if effect.challengeable:
            # Legal only if the player held no card of the colour in play (checked on challenge).
            self.wd4_by = seat
            self.wd4_legal = self._held_none_of(seat, prev_color)
        if effect.reverses:
            if n % 2:
                self.direction = -self.direction
                self._succ = self._succs[self.direction]
                if record:
                    self.outcomes.append(Reversed(seat, len(self._order)))
            # A reverse turns play round from the player who played it, also as a bonus card
            # (the seats an earlier S skipped are behind the player now).
            origin = seat
        skips = (effect.two_player_skips if self._two else effect.skips) * n
        owes = effect.owes
        if owes is not None:
            succ = self._succ
            if owes == "next":
                # The victim owes the penalty and loses the turn.
                victim = succ[origin] if player is None else self._after(origin, 1, player)
                self._owe(self._owed(victim, effect, n, stacked))
                skips += 1
            elif owes == "target":
                self._owe(self._owed(action.target, effect, 1))  # type: ignore[arg-type]
            else:
                # Every other player, going round from the next one in the current direction.
                other = succ[seat]
                while other != seat:
                    self._owe(self._owed(other, effect, 1))
                    other = succ[other]
        hands = self.hands
        target = action.target
        if effect.swaps_hands:
            hands[seat], hands[target] = hands[target], hands[seat]  # type: ignore[index]
            self.uno_called[seat] = self.uno_called[target] = False  # type: ignore[index]
        hand = hands[seat]
        if not hand:
            if record and effect.swaps_hands:
                self.outcomes.append(Traded(seat, target))  # type: ignore[arg-type]
            self._go_out(seat, origin, skips)
            return
        if len(hand) == 1:
            self.window = seat
        bonus = effect.play_again and self._play_again and context != "jump"
        if bonus:
            # R/S bonus: the same player may play once more; skips are kept for afterwards.
            self.bonus = True
            self._origin = self._after(origin, skips, seat)
            self.turn = seat
        else:
            self.turn = (
                self._next(origin, 1 + skips)
                if player is None
                else self._after(origin, 1 + skips, player)
            )
            self.turns += 1
        if record:
            end = self._next(self._origin) if bonus else self.turn
            self._record_skips(origin, end, seat)
            if effect.swaps_hands:
                self.outcomes.append(Traded(seat, target))  # type: ignore[arg-type]
            if bonus:
                self.outcomes.append(BonusTurn(seat))

    def _record_skips(self, start: int, end: int, player: int) -> None:
        """Record the seats a play passed over, once each: those after `start` up to (not
        including) `end`, but the `player` and whoever owes for the play (they lose the turn
        to serve what they owe)."""
        owing = {d.seat for d in self.pending}
        succ = self._succ
        seat = succ[start]
        for _step in range(len(self._order)):
            if seat == end:
                break
            if seat != player and seat not in owing:
                self.outcomes.append(Skipped(seat))
            seat = succ[seat]

    def _go_out(self, seat: int, origin: int, skips: int) -> None:
        """`seat` emptied its hand and wins the round. In a knockout round (seed 001 淘汰制:
        "有一人勝出，遊戲仍然繼續") the player leaves and the others play on, play passing as the
        last card says, until one is left holding cards: the loser ("最後有一個人輸")."""
        self.finished.append(seat)
        self.turns += 1
        if self._recording:
            self.outcomes.append(WentOut(seat))
        if not self._knockout:
            self.winner = seat
            return
        left = [s for s in self._order if s != seat]
        if len(left) == 1:
            self.winner = self.finished[0]
            self.loser = left[0]
            return
        # Counted past the seat that leaves (it never has the turn again).
        self.turn = self._after(origin, 1 + skips, seat)
        if self.window == seat:
            self.window = None
        self._seat(self.out | {seat})
        self._succ = self._succs[self.direction]

    # -- legal actions ----------------------------------------------------------------------

    def _take_actions(self, seat: int) -> Sequence[Action]:
        """The seat's hit or draw: one action, or one per colour while a wild turned up first
        waits for its colour (and the bare one too for a hit it owes)."""
        if self.color is None and self.winner is None:
            naming = _NAMING[self._take_name][seat]
            if self.pending or not self._name_first:
                return (self._takes[seat], *naming)
            return naming
        return (self._takes[seat],)

    def _catch_of(self, seat: int) -> Action | None:
        """The catch `seat` may make now: the player in the UNO window, if they did not call."""
        w = self.window
        if w is not None and w != seat and not self.uno_called[w] and len(self.hands[w]) == 1:
            return _CATCH[seat][w]
        return None

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action `apply` accepts from `seat` now (plays in hand order, one per colour and
        target), but for the mistakes apply accepts to penalise them (a false UNO call, a wrong
        accusation).

        Actions are shared objects: the same move is the same object every time. The calls
        (an UNO call, then a catch) come before every other action.
        """
        # The common case first, kept lean because simulations call it for every move: the seat
        # to move, nothing pending, more than one card (no going-out rules), one card per play.
        if (
            seat == self.turn
            and not self.pending
            and self.winner is None
            and (not self._many or self.drawn is not None)
            and self.color is not None
        ):
            hands = self.hands
            hand = hands[seat]
            n = len(hand)
            if n > 1:
                acts: list[Action] = [] if n > 2 or self.uno_called[seat] else [_UNO[seat]]
                if self.window is not None:  # rare: only then is there someone to catch
                    catch = self._catch_of(seat)
                    if catch is not None:
                        acts.append(catch)
                plays = self._plays_of[seat]
                drawn = self.drawn
                if drawn is not None:
                    # After a draw only the drawn card may be played (it is playable, or the
                    # turn would have ended), or the player passes.
                    acts.extend(plays[drawn])
                    acts.append(_PASS[seat])
                    return acts
                # The playable cards, each distinct card once in hand order (dict.fromkeys
                # keeps the first occurrence; a set's order would vary), then their plays.
                # filter() over the set's own test runs in C, no comprehension frame.
                for card in dict.fromkeys(filter(self._ok.__contains__, hand)):
                    acts += plays[card]
                if self.fired_play:
                    acts.append(_PASS[seat])
                    return acts
                acts.append(self._takes[seat])
                if self.bonus:
                    acts.append(_PASS[seat])
                return acts
        else:
            pending = self.pending
            if (
                pending
                and pending[0].seat == seat
                and self.winner is None
                and not self._stacking
                and self.color is not None
            ):
                # The seat owes hits or draws (no stacking answers): take, or challenge a WD4.
                hands = self.hands
                n = len(hands[seat])
                acts = [_UNO[seat]] if n <= 2 and not self.uno_called[seat] else []
                if self.window is not None:
                    catch = self._catch_of(seat)
                    if catch is not None:
                        acts.append(catch)
                acts.append(self._takes[seat])
                if self._challengeable(pending[0]):
                    acts.append(_CHALLENGE[seat])
                return acts
        return self._legal_slow(seat)

    def is_mistake(self, action: Action) -> bool:
        """True when `apply` would accept `action` only to penalise it: a false UNO call (three
        or more cards), or accusing a player who does not hold one card or who called UNO.
        legal_actions leaves these out (no player chooses them)."""
        if action.kind not in ("uno", "catch"):
            return False
        try:
            self._check(action)
        except RuleError:
            return False
        if action.kind == "uno":
            return len(self.hands[action.seat]) > 2
        target: int = action.target  # type: ignore[assignment]
        return len(self.hands[target]) != 1 or self.uno_called[target]

    def _legal_slow(self, seat: int) -> list[Action]:
        """legal_actions for every other case: out of turn, obligations, a last card, several
        cards at once, a finished round, a wild turned up first."""
        pending = self.pending
        if self.winner is not None:
            # Only the hits (or draws) the last card caused are left.
            if pending and pending[0].seat == seat:
                return [self._takes[seat]]
            return []
        if seat not in self._pos:
            return []
        hands = self.hands
        hand = hands[seat]
        acts: list[Action] = []
        if len(hand) <= 2 and not self.uno_called[seat]:
            acts.append(_UNO[seat])
        catch = self._catch_of(seat)
        if catch is not None:
            acts.append(catch)
        if pending:
            due = pending[0]
            if due.seat != seat:
                return acts
            acts.extend(self._take_actions(seat))
            answers = self._answers(due)
            if answers:
                eff = self._eff
                self._plays(acts, seat, hand, lambda c: eff[c].face in answers, need_all=True)
            if self._challengeable(due):
                acts.append(_CHALLENGE[seat])
            return acts
        if seat == self.turn:
            drawn = self.drawn
            if drawn is not None:
                if len(hand) == 1:
                    self._plays(acts, seat, hand, lambda c: c is drawn, single=True)
                else:
                    acts.extend(self._plays_of[seat][drawn])
                acts.append(_PASS[seat])
                return acts
            self._plays(acts, seat, hand, self._playable)
            if self.fired_play:
                acts.append(_PASS[seat])
                return acts
            acts.extend(self._take_actions(seat))
            if self.bonus:
                acts.append(_PASS[seat])
            return acts
        top = self.discard[-1]
        if (
            self.rules.jump_in
            and top.face in _NUMBERS
            and self.last_seat is not None
            and not self.bonus
            and self.drawn is None
            and not self.fired_play
            and top in hand
        ):
            acts.append(_play(seat, top, top.color, None))
        return acts

    def _plays(
        self,
        acts: list[Action],
        seat: int,
        hand: list[Card],
        ok: Any,
        *,
        single: bool = False,
        need_all: bool = False,
    ) -> None:
        """Append every legal play from `hand` whose cards pass `ok` (at least one of them, or all
        with need_all), one Action per colour choice and target."""
        rules = self.rules
        going_out = len(hand)
        restrict = rules.last_card_restriction
        eff = self._eff
        seen: set[Card] = set()
        targets = [s for s in self._order if s != seat]
        for card in hand:
            if card in seen:
                continue
            seen.add(card)
            if not ok(card):
                continue
            if going_out == 1 and (
                not eff[card].last_card or (restrict and eff[card].restricted_last)
            ):
                continue
            self._add_play(acts, seat, (card,), targets)
        if single or going_out < 2:
            return
        if self._da_choice:
            self._discard_all_plays(acts, seat, hand, seen, ok)
        if not rules.multi_play:
            return
        # How many of each card, by face (plain dicts: this runs on every move of a game
        # with multi_play).
        groups: dict[str, dict[Card, int]] = {}
        sizes: dict[str, int] = {}
        for card in hand:
            if eff[card].multi:
                face = card.face
                counter = groups.get(face)
                if counter is None:
                    groups[face] = {card: 1}
                    sizes[face] = 1
                else:
                    counter[card] = counter.get(card, 0) + 1
                    sizes[face] += 1
        for face, counter in groups.items():
            if sizes[face] < 2:
                continue
            kinds = sorted(counter, key=card_rank)
            for combo in _sub_multisets(kinds, [counter[k] for k in kinds]):
                if len(combo) < 2:
                    continue
                if need_all:
                    if not ok(combo[0]):
                        continue
                elif not any(ok(c) for c in combo):
                    continue
                if len(combo) == going_out and (
                    not eff[combo[0]].last_card or (restrict and eff[combo[0]].restricted_last)
                ):
                    continue
                self._add_play(acts, seat, tuple(combo), targets)

    def _discard_all_plays(
        self, acts: list[Action], seat: int, hand: list[Card], seen: set[Card], ok: Any
    ) -> None:
        """discard_all_choice: each Discard All that plays, with every choice of the other cards
        of its colour to go down with it (the DA alone is a single play)."""
        eff = self._eff
        for card in dict.fromkeys(c for c in hand if c in seen and eff[c].discards_colour):
            if not ok(card):
                continue
            others = Counter(c for c in hand if c.color == card.color)
            others[card] -= 1
            kinds = sorted((k for k in others if others[k] > 0), key=card_rank)
            color = card.color
            # A coloured DA and cards of its colour: one play each, in that colour, with no
            # target (what _add_play makes of it), built here because a hand with many cards
            # of one colour has hundreds of such choices, listed on every move.
            plain = color is not None and not eff[card].aims
            for combo in _sub_multisets(kinds, [others[k] for k in kinds]):
                if not combo:
                    continue
                if plain:
                    acts.append(Action("play", seat, (card, *combo), color))
                else:
                    self._add_play(acts, seat, (card, *combo), [])

    def _add_play(
        self, acts: list[Action], seat: int, cards: tuple[Card, ...], targets: list[int]
    ) -> None:
        first = cards[0]
        if first.color is None:
            colors: Iterable[str] = COLORS
        else:
            colors = dict.fromkeys(c.color for c in cards)  # type: ignore[misc]
        need_target = self._eff[first].aims
        single = len(cards) == 1
        for color in colors:
            for t in targets if need_target else (None,):
                if single:
                    acts.append(_play(seat, first, color, t))
                else:
                    acts.append(Action("play", seat, cards, color, t))

    # -- copying and data -------------------------------------------------------------------

    def copy(self) -> Round:
        """An independent copy of the state (sharing the deck, rules and launcher objects)."""
        cls = type(self)
        new = cls.__new__(cls)
        for name in _slots_of(cls):
            setattr(new, name, getattr(self, name))
        new.hands = [list(h) for h in self.hands]
        new.discard = list(self.discard)
        new.pile = list(self.pile)
        new.pending = [d.copy() for d in self.pending]
        new.outcomes = list(self.outcomes)
        new.uno_called = list(self.uno_called)
        new.finished = list(self.finished)
        new._rng = random.Random()
        new._rng.setstate(self._rng.getstate())
        return new

    def to_dict(self) -> dict[str, Any]:
        """The state as plain JSON-able data (the `unoattack scenario` output shape)."""
        return {
            "hands": [format_cards(h) for h in self.hands],
            "top": str(self.discard[-1]),
            "color": self.color,
            "turn": self.turn,
            "direction": self.direction,
            "pending": [d.to_dict() for d in self.pending],
            "round_over": self.over,
            "winner": self.winner,
            "finished": list(self.finished),
            "loser": self.loser,
            "round_points": self.points() if self.over else None,
            "launcher_left": len(self.pile),
            "actor": self.actor,
            "dealer": self.dealer,
            "out": sorted(self.out),
            "uno_called": [s for s, c in enumerate(self.uno_called) if c],
            "bonus": self.bonus,
            "drawn": str(self.drawn) if self.drawn is not None else None,
            "fired_play": self.fired_play,
            "discard": format_cards(self.discard),
            "pile": format_cards(self.pile),
            "presses": self.presses,
            "cards_fired": self.cards_fired,
        }


_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots_of(cls: type) -> tuple[str, ...]:
    """Every slot of a Round class, its subclasses' (engine/blind.py) included."""
    names = _SLOTS.get(cls)
    if names is None:
        names = _SLOTS[cls] = tuple(
            n for k in cls.__mro__ for n in getattr(k, "__slots__", ()) if n != "__weakref__"
        )
    return names


def _shuffle(cards: list[Card], rng: random.Random) -> None:
    """Shuffle in place by sorting on random keys: as uniform as random.shuffle for decks this
    size, seeded by `rng`, and several times faster (random() is one C call per card)."""
    # The key function is C all the way (partial -> next -> starmap -> random), called once per
    # card in list order: the same keys, so the same order, as `key=lambda _: rng.random()`.
    cards.sort(key=partial(next, starmap(rng.random, repeat(()))))


def _sub_multisets(kinds: list[Card], counts: list[int]) -> Iterator[list[Card]]:
    """Every sub-multiset of the multiset kinds × counts (sorted lists)."""
    if not kinds:
        yield []
        return
    for rest in _sub_multisets(kinds[1:], counts[1:]):
        for k in range(counts[0] + 1):
            yield [kinds[0]] * k + rest


def choose_dealer(deck: Deck, seats: Sequence[int], rng: random.Random) -> int:
    """Each seat draws a card; the highest number card deals (ties draw again).

    A deck without two number values can never decide: InputError (load_deck refuses such a
    deck file already). After many tied draws the tied seats draw lots instead.
    """
    if len({c.number for c in deck.counts if c.number is not None}) < 2:
        raise InputError(
            f"the {deck.name} deck needs number cards of at least two values to choose a dealer"
        )
    contenders = list(seats)
    cards = deck.cards()
    for _try in range(1000):
        rng.shuffle(cards)
        drawn = {s: cards[i] for i, s in enumerate(contenders)}
        values = {s: (c.number if c.number is not None else -1) for s, c in drawn.items()}
        best = max(values.values())
        if best < 0:
            continue
        contenders = [s for s in contenders if values[s] == best]
        if len(contenders) == 1:
            return contenders[0]
    return rng.choice(contenders)


@dataclass
class Game:
    """Rounds to the end in a scoring mode (docs/rules.md "Game scoring modes"; the scores are
    engine/scoring.py's).

    Modes: `target` (the round winner scores the points left in the other hands; first to
    `target` wins), `lowest` (everyone scores their own hand; when anyone reaches `target` the
    lowest total wins), `elimination` (as lowest, a player reaching `target` is out; the last one
    left wins), `teams` (`teams` teams, seat s on team s % teams; each team scores its members'
    hands; when a team reaches `target` the lowest team wins and the highest loses), `knockout`
    (one round played on after players go out, until one is left: the loser; the first out
    wins), `chips` (each player stakes `target` chips; each loser pays the round winner chips
    for their points; when a player has none left the most chips wins and the broke player
    loses), `losing` (as lowest; when anyone reaches `target` the most points is the loser). The
    first dealer is chosen by drawing for the highest number; the round winner deals the next
    round.

    Use: `game.start_round()` gives a Round; apply actions until `round.over`; then
    `game.finish_round()` scores it. Repeat until `game.over`.
    """

    deck: Deck
    rules: Rules
    launcher: Launcher
    players: int
    mode: str = "target"
    target: int = 500
    teams: int = 2
    seed: int = 0
    record: bool = True
    scores: list[int] = field(init=False)
    team_scores: list[int] = field(init=False)
    out: set[int] = field(init=False)
    round: Round | None = field(init=False, default=None)
    rounds_played: int = field(init=False, default=0)
    history: list[dict[str, Any]] = field(init=False)
    winners: tuple[int, ...] = field(init=False, default=())
    losers: tuple[int, ...] = field(init=False, default=())
    dealer: int = field(init=False)

    def __post_init__(self) -> None:
        if self.mode not in SCORING_MODES:
            raise InputError(f"unknown mode `{self.mode}`: use {', '.join(SCORING_MODES)}")
        if isinstance(self.target, bool) or not isinstance(self.target, int) or self.target < 1:
            raise InputError(f"target = {self.target!r}: a whole number of points above 0")
        if not 2 <= self.players <= 10:
            raise InputError(f"players = {self.players}: from 2 to 10")
        if self.mode == "teams" and teams_problem(self.players, self.teams):
            raise InputError(
                f"teams mode: {self.players} players cannot sit as {self.teams} teams of two or "
                "more partners"
            )
        self._rng = random.Random(self.seed)
        self.scores = [0] * self.players
        self.team_scores = [0] * self.teams if self.mode == "teams" else []
        self.out = set()
        self.history = []
        self.dealer = choose_dealer(self.deck, range(self.players), self._rng)

    @property
    def over(self) -> bool:
        """True once the game has its result: winner(s), loser(s) or both, as the mode names."""
        return bool(self.winners or self.losers)

    @property
    def winner(self) -> int | None:
        """The winning seat (the lowest seat of the winning team or of tied lowest totals)."""
        return self.winners[0] if self.winners else None

    @property
    def chips(self) -> list[int] | None:
        """Chips mode: the chips each seat holds (its stake, `target`, plus what it won)."""
        if self.mode != "chips":
            return None
        return [self.target + s for s in self.scores]

    def team_of(self, seat: int) -> int:
        """Team of a seat in teams mode (partners sit apart: every `teams`-th seat)."""
        return team_of(seat, self.teams)

    def start_round(self) -> Round:
        """Deal a new round (dealer: drawn at first, then the last round's winner)."""
        if self.over:
            raise RuleError("the game is over")
        if self.round is not None:
            if not self.round.over:
                raise RuleError("the current round is not over yet")
            raise RuleError("the last round is not scored yet: call finish_round() first")
        self.round = Round(
            self.deck,
            self.rules,
            self.launcher,
            players=self.players,
            dealer=self.dealer,
            seed=self._rng.getrandbits(64),
            out=self.out,
            record=self.record,
            knockout=self.mode == "knockout",
            teams=self.teams if self.mode == "teams" else 0,
        )
        return self.round

    def finish_round(self) -> dict[str, Any]:
        """Score the finished round by the mode; returns what each seat (or team) gained."""
        rnd = self.round
        if rnd is None or not rnd.over:
            raise RuleError("the round is not over yet")
        winner = rnd.winner
        assert winner is not None
        left = rnd.points()
        gained = round_gains(
            self.mode, winner, left, self.team_of, scores=self.scores, stake=self.target
        )
        for s in range(self.players):
            self.scores[s] += gained[s]
        if self.mode == "teams":
            for team in range(self.teams):
                self.team_scores[team] += gained[team]  # seat `team` is on team `team`
        self.rounds_played += 1
        self.dealer = winner
        result: dict[str, Any] = {
            "round": self.rounds_played,
            "winner": winner,
            "points_left": left,
            "gained": gained,
        }
        if self.mode == "knockout":
            result["finished"] = list(rnd.finished)
            result["loser"] = rnd.loser
        self.history.append(result)
        active = [s for s in range(self.players) if s not in self.out]
        verdict = judge(
            self.mode,
            self.scores,
            self.target,
            active,
            self.team_of,
            finished=rnd.finished,
            loser=rnd.loser,
        )
        self.winners, self.losers = verdict.winners, verdict.losers
        self.out.update(verdict.gone)
        self.round = None
        return result

    def to_dict(self) -> dict[str, Any]:
        """Scores and progress as plain data."""
        data: dict[str, Any] = {
            "mode": self.mode,
            "target": self.target,
            "scores": list(self.scores),
            "team_scores": list(self.team_scores),
            "out": sorted(self.out),
            "rounds": self.rounds_played,
            "dealer": self.dealer,
            "over": self.over,
            "winners": list(self.winners),
            "losers": list(self.losers),
            "history": list(self.history),
        }
        if self.mode == "teams":
            data["teams"] = self.teams
        if self.mode == "chips":
            data["chips"] = self.chips
        return data
