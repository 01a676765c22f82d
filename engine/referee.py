"""The table referee's state: a game at a physical table, refereed without seeing the hands.

`Referee` keeps what a careful person at the table could keep: the scores and rounds, how many
cards each player holds, how many the box fired at each seat and in how many presses, and the
round itself as a `BlindRound` (engine/blind.py), which is `Round` on hand counts. Every rule,
what a card does, whose turn it is, who owes what, the UNO window, is `Round`'s: the referee
turns what the table says into the round's actions and the round's state into words.

Every method either changes the state and returns messages for the table, or raises `RuleError`
(or `InputError`) and changes nothing. `to_dict` / `from_dict` round-trip it as JSON; `from_dict`
checks every field and names the first bad one. engine/table.py is its I/O.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from engine.blind import BlindRound
from engine.cards import COLORS, Card, Deck, load_deck, parse_card
from engine.effects import EFFECTS, first_card
from engine.errors import InputError, NoMatch, RuleError, UnoError
from engine.game import Action
from engine.rules import PRESET_NAMES, Rules, rules_for
from engine.scoring import SCORING_MODES, decide, round_gains
from engine.words import COLOUR_NAMES, colour_name, plural, seat_pattern, shown
from i18n import _, message_of, ngettext, reworded

__all__ = ["MODES", "STATE_VERSION", "Referee", "check_names", "plural"]

STATE_VERSION = 2  # 1: the referee before it played on BlindRound (read and upgraded)
# The modes the table referee plays so far (the seed 001 systems knockout, chips and losing are
# the simulator's until the table stack of issue 22 lands).
MODES: tuple[str, ...] = SCORING_MODES[:4]
# What a player may type for a colour: the letter or the English word (typed like notation).
COLOR_WORDS = {**{c: c for c in COLORS}, **{v.upper(): k for k, v in COLOUR_NAMES.items()}}
TEAMS = 2  # at a table, partners sit alternately: two teams
PHASES = ("deal", "play", "score", "over")
MAX_NAME = 32  # characters in a player's name: room for a long name, not for a page of text
# Words a player's name may not be: the referee's commands and "none".
COMMANDS = frozenset(
    {
        "hand",
        "hit",
        "draw",
        "challenge",
        "resend",
        "pass",
        "uno",
        "catch",
        "jump",
        "press",
        "fired",
        "dealer",
        "status",
        "scores",
        "help",
        "undo",
        "quit",
        "load",
        "clear",
        "none",
    }
)


def check_names(names: list[str]) -> None:
    """Player names: 2 to 10, letters/digits/-/_, starting with a letter, no colour or command."""
    if not 2 <= len(names) <= 10:
        raise InputError(
            _("{count} players: a table seats 2 to 10 (--players Ann,Bob,...)").format(
                count=len(names)
            )
        )
    seen: set[str] = set()
    for name in names:
        key = name.lower()
        if len(name) > MAX_NAME:  # (a name is shown on every line and quoted in refusals)
            raise InputError(
                _("player name `{start}...`: at most {most} characters").format(
                    start=name[:20], most=MAX_NAME
                )
            )
        if not name or not name[0].isalpha() or not all(c.isalnum() or c in "-_" for c in name):
            raise InputError(
                _("player name `{name}`: letters, digits, - or _, starting with a letter").format(
                    name=name
                )
            )
        if key.upper() in COLOR_WORDS or key in COMMANDS:
            raise InputError(
                _("player name `{name}` is a colour or a command: choose another").format(name=name)
            )
        if key in seen:
            raise InputError(_("player name `{name}` is used twice").format(name=name))
        seen.add(key)


class Referee:
    """A refereed game. Phases: ``deal`` (waiting for the card turned up), ``play``, ``score``
    (waiting for the cards left in each hand) and ``over``. Seats are numbered from 0 in the
    order of `players`, clockwise (to the left)."""

    def __init__(
        self,
        players: Sequence[str],
        *,
        deck: str = "attack",
        mode: str = "target",
        target: int = 500,
        options: dict[str, object] | None = None,
    ) -> None:
        names = [p.strip() for p in players]
        check_names(names)
        if mode not in MODES:
            raise InputError(
                _("unknown mode `{mode}`: use {modes}").format(mode=mode, modes=", ".join(MODES))
            )
        if mode == "teams" and (len(names) < 4 or len(names) % 2):
            raise InputError(_("mode teams needs an even number of players, at least 4"))
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            raise InputError(
                _("target = {target!r}: a whole number of points, at least 1").format(target=target)
            )
        if not isinstance(deck, str):
            raise InputError(f"deck = {deck!r}: a preset name or a deck file")
        self.deck_name = deck
        self.deck: Deck = load_deck(deck)
        preset = deck if deck in PRESET_NAMES else "attack"
        # Classic: every draw is a number of cards the referee itself dispenses from the
        # launcher (used as the draw pile), so it knows which hand they went to; nobody presses.
        self.classic = preset == "classic"
        if not isinstance(options, dict | None):
            raise InputError(f"options = {options!r}: a table of rule options")
        self.options: dict[str, object] = dict(options or {})
        self.rules: Rules = rules_for(preset, len(names), **self.options)
        need = self.rules.hand_size * len(names) + 1
        if self.deck.total < need:
            raise InputError(
                _(
                    "the {deck} deck has {total} cards; {players} players of {size} need at "
                    "least {need}"
                ).format(
                    deck=self.deck.name,
                    total=self.deck.total,
                    players=len(names),
                    size=self.rules.hand_size,
                    need=need,
                )
            )
        self.players: list[str] = names
        self.mode = mode
        self.target = target
        n = len(names)
        self.scores: list[int] = [0] * n
        self.active: list[bool] = [True] * n
        self.round_no = 1
        self.dealer = 0
        self.phase = "deal"
        self.round: BlindRound | None = None
        self.fired: list[int] = [0] * n  # cards the box fired at each seat this round
        self.presses: list[int] = [0] * n  # presses (fire events) of each seat this round
        self.fired_game: list[int] = [0] * n
        self.presses_game: list[int] = [0] * n
        # The seat that said `hit` (Attack) or `draw` (classic) and waits for the box.
        self.taking: int | None = None
        self.wd4_color: str | None = None  # the colour in play before the last WD4
        self.hands_left: dict[int, list[str]] = {}
        self.rounds: list[dict[str, Any]] = []
        self.game_winners: list[int] = []

    # -- seats ------------------------------------------------------------------------------
    def name(self, seat: int) -> str:
        """The player's name at `seat`."""
        return self.players[seat]

    def seat_of(self, name: str) -> int:
        """The seat of a player named `name` (case-insensitive); RuleError if none."""
        key = name.strip().lower()
        for seat, player in enumerate(self.players):
            if player.lower() == key:
                return seat
        raise RuleError(
            _("no player called `{name}`: players are {players}").format(
                name=name, players=", ".join(self.players)
            )
        )

    def active_seats(self) -> list[int]:
        """Seats still in the game (all but eliminated players)."""
        return [s for s in range(len(self.players)) if self.active[s]]

    def named(self, text: str) -> str:
        """`text` (a message of the rules core) with `seat N` written as the player's name."""

        def name(m: re.Match[str]) -> str:
            seat = int(m.group(1))
            if seat >= len(self.players):
                return m.group(0)
            return self.players[seat]

        return reworded(text, lambda said: seat_pattern().sub(name, said))

    # -- the round, read ---------------------------------------------------------------------
    @property
    def hand(self) -> list[int]:
        """How many cards each seat holds (by the referee's count)."""
        return self.round.counts if self.round is not None else [0] * len(self.players)

    @property
    def turn(self) -> int:
        """Whose turn it is (once obligations are served)."""
        return self.round.turn if self.round is not None else self.dealer

    @property
    def actor(self) -> int | None:
        """The seat the round waits for: the first obligation's, else the turn's."""
        if self.phase != "play" or self.round is None:
            return None
        return self.round.actor

    @property
    def direction(self) -> int:
        """1: play goes left (clockwise); -1: right."""
        return self.round.direction if self.round is not None else 1

    @property
    def color(self) -> str | None:
        """The colour in play."""
        return self.round.color if self.round is not None else None

    @property
    def top(self) -> str | None:
        """The card on the discard pile, in notation."""
        return str(self.round.top) if self.round is not None else None

    @property
    def pending(self) -> list[dict[str, Any]]:
        """What is owed, first to last: {"seat", "hits" | "until_fire" | "cards", ...}."""
        return self.round.state()["pending"] if self.round is not None else []

    @property
    def bonus(self) -> dict[str, int] | None:
        """The R/S play-again turn: {"seat", "anchor"}, or None."""
        return self.round.state()["bonus"] if self.round is not None else None

    @property
    def uno(self) -> dict[str, Any] | None:
        """The UNO catch window: {"seat", "called"}, or None."""
        rnd = self.round
        if rnd is None or rnd.window is None:
            return None
        return {"seat": rnd.window, "called": rnd.uno_called[rnd.window]}

    @property
    def winner(self) -> int | None:
        """The seat that went out this round."""
        return self.round.winner if self.round is not None else None

    @property
    def wd4(self) -> dict[str, Any] | None:
        """A Wild Draw Four that may be challenged now: {"by", "color"}."""
        rnd = self.round
        if rnd is None or not rnd.challengeable():
            return None
        return {"by": rnd.wd4_by, "color": self.wd4_color}

    def may_play_taken(self) -> bool:
        """The player to move has hit or drawn and may play what came, or pass."""
        return self.round is not None and self.round.fired_play

    # -- what the box should do ------------------------------------------------------------
    def hitter(self) -> int | None:
        """The seat the launcher owes cards now (presses it, in Attack), or None."""
        if self.phase != "play" or self.round is None:
            return None
        if self.round.pending:
            return self.round.pending[0].seat
        return self.taking

    def dispense_due(self) -> tuple[int, int] | None:
        """Classic: (seat, cards) the launcher must dispense now, or None (nothing owed, or a
        penalty its victim may still answer or challenge)."""
        if not self.classic or self.hitter() is None:
            return None
        rnd = self.round
        assert rnd is not None
        if rnd.pending:
            due = rnd.pending[0]
            if rnd.answerable():
                return None
            return due.seat, due.n
        return self.taking, 1  # type: ignore[return-value]

    def owed(self) -> str:
        """What the current hitter still owes, in words ("2 more hits", "hits until cards fire")."""
        rnd = self.round
        if rnd is None or self.hitter() is None:
            return ""
        if not rnd.pending:
            return _("1 card to come from the launcher") if self.classic else _("1 more hit")
        due = rnd.pending[0]
        if rnd.answerable():
            return self._answer_hint()
        if due.kind == "draws":
            return _("{cards} to come from the launcher").format(cards=plural(due.n, "card"))
        if due.kind == "until_fire":
            return _("hits until cards fire")
        return ngettext("{n} more hit", "{n} more hits", due.n).format(n=due.n)

    def _answer_hint(self) -> str:
        rnd = self.round
        assert rnd is not None
        due = rnd.pending[0]
        take = _("`draw`") if self.classic else _("press the button")
        parts = []
        if rnd.challengeable():
            parts.append(_("`challenge` the WD4"))
        if rnd.answers():
            parts.append(
                _("answer with {cards}").format(cards=_(" or ").join(sorted(rnd.answers())))
            )
        return _("{choices}, or {take} ({owed})").format(
            choices=_(" or ").join(parts),
            take=take,
            owed=plural(due.n, "card" if self.classic else "hit"),
        )

    # -- round start ------------------------------------------------------------------------
    def set_dealer(self, seat: int) -> list[str]:
        """Choose who deals this round (before the first card is turned up)."""
        self._need_phase("deal", _("the dealer can only change before the first card is turned up"))
        if not self.active[seat]:
            raise RuleError(
                _("{player} is out of the game and cannot deal").format(player=self.name(seat))
            )
        self.dealer = seat
        return [
            _("{player} deals round {round}").format(player=self.name(seat), round=self.round_no)
        ]

    def start_round(self, card: Card, color: str | None = None) -> list[str]:
        """The dealer turned up `card`; for a wild, `color` is what the first player names."""
        self._need_phase("deal", _("a round is already under way"))
        self._check_in_deck(card)
        if first_card(card.face, classic=self.classic) == "back":
            raise RuleError(
                _("{card} goes back into the launcher: turn up another card").format(card=card)
            )
        if card.is_wild:
            if color is None:
                raise RuleError(
                    _("{card} turned up: the first player names a colour (`{card} G`)").format(
                        card=card
                    )
                )
        elif color is not None:
            raise RuleError(
                _("{card} has a colour of its own: only a wild takes a named colour").format(
                    card=card
                )
            )
        rnd = BlindRound.deal(
            self.deck,
            self.rules,
            players=len(self.players),
            dealer=self.dealer,
            top=card,
            color=color,
            out=[s for s in range(len(self.players)) if not self.active[s]],
        )
        n = len(self.players)
        self.round = rnd
        self.fired = [0] * n
        self.presses = [0] * n
        self.taking = None
        self.wd4_color = None
        self.hands_left = {}
        self.phase = "play"
        msgs = [
            _("round {round}: {dealer} dealt, {card} turned up").format(
                round=self.round_no, dealer=self.name(self.dealer), card=shown(card)
            )
        ]
        if rnd.direction == -1:
            msgs.append(
                _("{player} plays first, going right").format(player=self.name(self.dealer))
            )
        else:
            owing = {d.seat for d in rnd.pending}
            skipped = self._walk(rnd.next_seat(self.dealer), rnd.turn)
            msgs.extend(
                _("{player} is skipped").format(player=self.name(s))
                for s in skipped
                if s not in owing
            )
        msgs.extend(self._owed_msgs(_("{card} turned up").format(card=card)))
        return msgs

    # -- moves ------------------------------------------------------------------------------
    def play(
        self,
        card: Card | Sequence[Card],
        *,
        color: str | None = None,
        target: int | None = None,
        discarded: int = 0,
        uno: bool = False,
        seat: int | None = None,
    ) -> list[str]:
        """The seat the round waits for plays `card` (several cards with multi_play); `seat` is
        given for a jump-in (out of turn).

        `color` names the next colour for a wild (or picks one of several colours played);
        `target` is the seat a `WAA` aims at or a `TH` trades with; `discarded` is how many more
        cards of its colour went down with a `DA`; `uno` says the player called UNO with it.
        """
        rnd = self._need_round()
        cards = (card,) if isinstance(card, Card) else tuple(card)
        if not cards:
            raise RuleError(_("a play needs a card"))
        for c in cards:
            self._check_in_deck(c)
        if self.taking is not None:
            raise RuleError(self._taking_hint())
        player = rnd.actor if seat is None else seat
        assert player is not None
        if seat is not None and seat == rnd.actor:
            raise RuleError(
                _("it is {player}'s turn: type the card without `jump`").format(
                    player=self.name(seat)
                )
            )
        first = cards[0]
        if color is None and not first.is_wild:
            colours = {c.color for c in cards}
            if len(colours) > 1:
                raise RuleError(
                    _("name the colour to continue with: one of {colours}").format(
                        colours=", ".join(sorted(colours))  # type: ignore[arg-type]
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
            # A call made with the card: with more than two cards left it would be a false call,
            # far more likely a slip of the keyboard than of the tongue; refused, nothing lost.
            held = rnd.counts[player]
            left = rnd.counts[target] if first.face == "TH" and target is not None else None
            if left is None:
                left = held - len(cards) - discarded
            if left > 2:
                raise RuleError(
                    _(
                        "{cards} uno: {player} would hold {held}; UNO is called with one or two "
                        "left (a false call: type `uno {player}` on its own line)"
                    ).format(
                        cards=" ".join(map(str, cards)),
                        player=self.name(player),
                        held=plural(left, "card"),
                    )
                )
        before = self._snapshot()
        prev_color = rnd.color
        if color is None and not first.is_wild:
            color = first.color
        self._apply(lambda: rnd.play(player, cards, color=color, target=target, discards=discarded))
        if EFFECTS[first.face].challengeable:
            self.wd4_color = prev_color
        who = self.name(player)
        text = shown(*cards)
        if seat is not None:
            said = _("{player} jumps in with {cards}")
        elif discarded:
            said = _("{player} plays {cards} and {count} more")
        else:
            said = _("{player} plays {cards}")
        msgs = [said.format(player=who, cards=text, count=discarded)]
        if first.is_wild:
            msgs.append(_("colour is now {colour}").format(colour=colour_name(rnd.color)))
        elif len({c.color for c in cards}) > 1:
            msgs.append(_("colour is {colour}").format(colour=colour_name(rnd.color)))
        msgs.extend(self._after_play(player, before, target))
        if uno and rnd.winner is None and not rnd.uno_called[player]:
            msgs.extend(self.call_uno(player))
        msgs.extend(self._maybe_end_round())
        return msgs

    def hit(self) -> list[str]:
        """Attack: the player whose turn it is hits the launcher once (the next press)."""
        rnd = self._need_round()
        if self.classic:
            raise RuleError(
                _("classic: nobody hits; type `draw` and the launcher dispenses a card")
            )
        self._start_take("hit")
        return [_("{player} hits: press the button once").format(player=self.name(rnd.turn))]

    def draw(self) -> list[str]:
        """Classic: the player whose turn it is draws one card (dispensed by the launcher), then
        may play it or `pass`. Typed by the victim of a Wild Draw Four (or, with stacking, of a
        Draw Two), it takes the cards instead of answering."""
        rnd = self._need_round()
        if not self.classic:
            raise RuleError(_("`draw` is for the classic deck: in UNO Attack type `hit`"))
        if rnd.pending and rnd.answerable():
            due = rnd.pending[0]
            self._apply(lambda: rnd.take(due.seat, 0))
            return [
                _("{player} takes the {card}: {cards}").format(
                    player=self.name(due.seat), card=due.face, cards=plural(due.n, "card")
                )
            ]
        self._start_take("draw")
        return [_("{player} draws a card").format(player=self.name(rnd.turn))]

    def _start_take(self, kind: str) -> None:
        rnd = self._need_round()
        if self.taking is not None:
            raise RuleError(self._taking_hint())
        if rnd.pending:
            due = rnd.pending[0]
            owes = self._owes_phrase(self.name(due.seat), due.kind, due.n)
            raise RuleError(
                _("{owes}: the launcher dispenses them").format(owes=owes)
                if self.classic
                else _("{owes}: press the button").format(owes=owes)
            )
        self._apply(lambda: rnd.check(Action(kind, rnd.turn)))
        self.taking = rnd.turn

    def challenge(self, legal: bool) -> list[str]:
        """Classic: the victim of a Wild Draw Four challenges it; `legal` is the table's answer
        (the player held no card of the colour in play). Legal: the challenger draws 6 and is
        skipped; not legal: the player who played it draws 4 and the challenger keeps the turn."""
        rnd = self._need_round()
        if self.wd4 is None:
            raise RuleError(_("there is no Wild Draw Four to challenge now"))
        victim, by = rnd.pending[0].seat, rnd.wd4_by
        assert by is not None
        self._apply(lambda: rnd.challenge(victim, legal))
        if legal:
            msgs = [
                _("the WD4 was legal: {player} draws {count}").format(
                    player=self.name(victim), count=rnd.pending[0].n
                )
            ]
        else:
            msgs = [
                _("the WD4 was not legal: {player} draws 4 instead").format(player=self.name(by))
            ]
        return msgs + self._owed_msgs(_("WD4 challenged"))

    def pass_turn(self) -> list[str]:
        """Decline the extra card after `R`/`S`, or keep what a hit or draw brought."""
        rnd = self._need_round()
        if self.taking is not None:
            raise RuleError(self._taking_hint())
        seat = rnd.turn
        kept = rnd.fired_play
        self._apply(lambda: rnd.apply(Action("pass", seat)))
        if kept:
            said = (
                _("{player} keeps the drawn card and passes")
                if self.classic
                else _("{player} keeps the cards fired and passes")
            )
            return [said.format(player=self.name(seat))]
        return [_("{player} passes").format(player=self.name(seat))]

    def press(self, ejected: int, note: str = "") -> list[str]:
        """The box fired `ejected` cards at the seat that must hit (one press) or dispensed them
        (classic); `note` is appended to the first message (press id, dry streak)."""
        rnd = self._need_round()
        if ejected < 0:
            raise RuleError(_("a press fires 0 or more cards, not {count}").format(count=ejected))
        seat = self.hitter()
        if seat is None:
            raise RuleError(_("nobody owes a hit now"))
        if rnd.pending and self.classic and rnd.answerable():
            raise RuleError(
                _("{player} must {choices}").format(
                    player=self.name(seat), choices=self._answer_hint()
                )
            )
        before = self._snapshot()
        if rnd.pending:
            self._apply(lambda: rnd.take(seat, ejected))
        elif self.classic and ejected == 0 and not rnd.nothing_left():
            pass  # a dispense that brought nothing (jam, empty launcher): the card is still owed
        else:
            self._apply(lambda: rnd.take(seat, ejected))
            self.taking = None
        self.fired[seat] += ejected
        self.fired_game[seat] += ejected
        self.presses[seat] += 1
        self.presses_game[seat] += 1
        who = self.name(seat)
        got = (
            _("{player} takes {cards} (holds {held})")
            if ejected
            else _("{player}: dry (holds {held})")
        ).format(player=who, cards=plural(ejected, "card"), held=rnd.counts[seat])
        msgs = [got + (" [" + note + "]" if note else "")]
        msgs.extend(self._after_take(seat, before))
        msgs.extend(self._maybe_end_round())
        return msgs

    def stray(self, seat: int, cards: int) -> list[str]:
        """`cards` slipped out of the box after `seat`'s last burst was reported: they go to
        that player (RULES.md: cards left sticking out go to the player who hit)."""
        if cards < 1:
            raise RuleError(_("a stray is 1 card or more, not {count}").format(count=cards))
        if self.phase != "play" or self.round is None:
            return [
                _(
                    "{cards} slipped out after {player}'s last hit, after the round ended: put "
                    "them back into the launcher"
                ).format(cards=plural(cards, "card"), player=self.name(seat))
            ]
        self.round.give(seat, cards)
        self.fired[seat] += cards
        self.fired_game[seat] += cards
        return [
            _(
                "{cards} slipped out after {player}'s last hit: {player} takes them (holds {held})"
            ).format(
                cards=plural(cards, "card"), player=self.name(seat), held=self.round.counts[seat]
            )
        ]

    def set_hand(self, seat: int, cards: int) -> list[str]:
        """Correct the tracked size of `seat`'s hand (a card dropped, a miscount at the table)."""
        rnd = self._need_round()
        if not self.active[seat]:
            raise RuleError(_("{player} is out of the game").format(player=self.name(seat)))
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
                    player=self.name(seat),
                    count=cards,
                    others=others,
                    deck=self.deck.name,
                    total=self.deck.total,
                    most=max(most, 0),
                )
            )
        old = rnd.counts[seat]
        rnd.set_count(seat, cards)
        return [
            _("{player} holds {cards} (was {old})").format(
                player=self.name(seat), cards=plural(cards, "card"), old=old
            )
        ]

    def call_uno(self, seat: int | None = None) -> list[str]:
        """A player says UNO. With one or two cards it is a call; with three or more it is a
        false call, which costs `uno_penalty` (RULES.md decisions). Without a name: the player
        just down to one card, else the player to move if they hold two."""
        rnd = self._need_round()
        if seat is None:
            window = rnd.window
            if window is not None and not rnd.uno_called[window]:
                seat = window
            elif rnd.counts[rnd.turn] <= 2 and not rnd.uno_called[rnd.turn]:
                seat = rnd.turn
            else:
                raise RuleError(_("who called UNO? `uno NAME`"))
        if not self.active[seat]:
            raise RuleError(_("{player} is out of the game").format(player=self.name(seat)))
        false = rnd.counts[seat] > 2
        self._apply(lambda: rnd.apply(Action("uno", seat)))
        if false:
            return [
                _("{player}: false UNO call ({cards}), {penalty}").format(
                    player=self.name(seat),
                    cards=plural(rnd.counts[seat], "card"),
                    penalty=self._penalty_words(),
                )
            ]
        said = _("{player} calls UNO: safe") if rnd.counts[seat] == 1 else _("{player} calls UNO")
        return [said.format(player=self.name(seat))]

    def catch(self, seat: int, accuser: int | None = None) -> list[str]:
        """`accuser` says `seat` did not call UNO in time. Caught: `seat` owes `uno_penalty`. A
        player who does not hold one card (or called UNO) was accused wrongly: the accuser owes
        it (name them: `catch NAME BY`). Too late (the next player started): refused."""
        rnd = self._need_round()
        who = self.name(seat)
        if accuser is None:
            accuser = next(s for s in rnd.seats if s != seat)
            wrong = rnd.is_mistake(Action("catch", accuser, target=seat))
            if wrong:
                held = rnd.counts[seat]
                said = (
                    _(
                        "{player} called UNO: that would be a wrong accusation; `catch {player} "
                        "BY` charges the player who said it"
                    )
                    if held == 1
                    else _(
                        "{player} holds {cards}: that would be a wrong accusation; `catch "
                        "{player} BY` charges the player who said it"
                    )
                )
                raise RuleError(said.format(player=who, cards=plural(held, "card")))
        if accuser == seat:
            raise RuleError(_("{player} cannot catch themselves").format(player=who))
        wrong = rnd.is_mistake(Action("catch", accuser, target=seat))
        self._apply(lambda: rnd.apply(Action("catch", accuser, target=seat)))
        if wrong:
            return [
                _("{accuser}: wrong accusation of {player}, {penalty}").format(
                    accuser=self.name(accuser), player=who, penalty=self._penalty_words()
                )
            ]
        return [
            _("{player} is caught without UNO: {penalty}").format(
                player=who, penalty=self._penalty_words()
            )
        ]

    def _penalty_words(self) -> str:
        n = self.rules.uno_penalty
        if self.classic:
            return _("draws {cards}").format(cards=plural(n, "card"))
        return _("hits {times}").format(times=plural(n, "time"))

    # -- round end ----------------------------------------------------------------------------
    def to_enter(self) -> list[int]:
        """Seats whose cards left in hand are still to be entered (phase ``score``)."""
        if self.phase != "score":
            return []
        return [s for s in self.active_seats() if s != self.winner and s not in self.hands_left]

    def enter_hand(self, seat: int, cards: Sequence[Card], *, force: bool = False) -> list[str]:
        """The cards left in `seat`'s hand at the end of the round. The count must match what the
        referee tracked unless `force`; the whole table may not hold more copies than the deck."""
        self._need_phase("score", _("hands are entered when a round is over"))
        if seat not in self.to_enter():
            raise RuleError(_("{player}'s hand is not asked for").format(player=self.name(seat)))
        for card in cards:
            self._check_in_deck(card)
        if len(cards) != self.hand[seat] and not force:
            raise RuleError(
                _(
                    "{player} should hold {cards}, got {count}: enter them all (end the line "
                    "with ! to overrule)"
                ).format(
                    player=self.name(seat), cards=plural(self.hand[seat], "card"), count=len(cards)
                )
            )
        seen = Counter(parse_card(c) for hand in self.hands_left.values() for c in hand)
        seen.update(cards)
        for card, count in seen.items():
            if count > self.deck.counts[card]:
                raise RuleError(
                    _("the {deck} deck has {most} x {card}, the hands entered hold {count}").format(
                        deck=self.deck.name, most=self.deck.counts[card], card=card, count=count
                    )
                )
        self.hands_left[seat] = [str(c) for c in cards]
        pts = self.deck.points_of(cards)
        msgs = [self.name(seat) + ": " + plural(pts, "point")]
        if not self.to_enter():
            msgs.extend(self._score_round())
        return msgs

    def team_of(self, seat: int) -> int:
        """Teams mode: partners sit alternately."""
        return seat % TEAMS

    def _score_round(self) -> list[str]:
        won = self.winner
        assert won is not None
        points = [0] * len(self.players)
        for seat, cards in self.hands_left.items():
            points[int(seat)] = self.deck.points_of(parse_card(c) for c in cards)
        gained = round_gains(self.mode, won, points, self.team_of)
        for s, g in enumerate(gained):
            self.scores[s] += g
        self.rounds.append(
            {
                "round": self.round_no,
                "winner": won,
                "points": points,
                "gained": gained,
                "fired": list(self.fired),
                "presses": list(self.presses),
            }
        )
        msgs = [
            _("round {round} to {player}: {gains}").format(
                round=self.round_no, player=self.name(won), gains=self._gained_text(gained)
            )
        ]
        winners, gone = decide(
            self.mode, self.scores, self.target, self.active_seats(), self.team_of
        )
        for s in gone:
            self.active[s] = False
            msgs.append(
                _("{player} reaches {target} and is out").format(
                    player=self.name(s), target=self.target
                )
            )
        self.game_winners = list(winners)
        self.round = None
        if winners:
            self.phase = "over"
            msgs.append(self._winner_text())
        else:
            self.round_no += 1
            self.dealer = won if self.active[won] else self.active_seats()[0]
            self.phase = "deal"
            msgs.append(
                _("round {round}: {dealer} deals").format(
                    round=self.round_no, dealer=self.name(self.dealer)
                )
            )
        return msgs

    def _gained_text(self, gained: list[int]) -> str:
        parts = [f"{self.name(s)} +{g}" for s, g in enumerate(gained) if g]
        return ", ".join(parts) if parts else _("no points")

    def _winner_text(self) -> str:
        names = " & ".join(self.name(s) for s in self.game_winners)
        return ngettext(
            "game over: {names} wins", "game over: {names} win", len(self.game_winners)
        ).format(names=names)

    # -- views ------------------------------------------------------------------------------
    def scoreboard(self) -> list[str]:
        """One line per player: score, and (elimination) whether they are out."""
        lines = []
        order = sorted(range(len(self.players)), key=lambda s: (-self.scores[s], s))
        if self.mode in ("lowest", "elimination"):
            order = sorted(range(len(self.players)), key=lambda s: (self.scores[s], s))
        width = max(len(p) for p in self.players)
        for s in order:
            out = "" if self.active[s] else "  " + _("(out)")
            lines.append(f"  {self.name(s):<{width}}  {self.scores[s]:>4}" + out)
        return lines

    def status(self) -> list[str]:
        """A few lines describing the table now."""
        phase = {
            "deal": _("deal"),
            "play": _("play"),
            "score": _("score"),
            "over": _("over"),
        }[self.phase]
        lines = [
            _("round {round} ({phase}), {mode} mode, game to {target} points").format(
                round=self.round_no, phase=phase, mode=self.mode, target=self.target
            ),
            # The deck's own name, never a file's path (the web page's watchers read it too).
            _("{deck} deck, {rules} rules").format(deck=self.deck.name, rules=self.rules.preset),
        ]
        if self.phase in ("play", "score") and self.round is not None:
            arrow = _("left (clockwise)") if self.direction == 1 else _("right (counter-clockwise)")
            lines.append(
                _("top {card}, colour {colour}, play goes {way}").format(
                    card=shown(self.round.top), colour=colour_name(self.color), way=arrow
                )
            )
            for s in self.active_seats():
                mark = ">" if s == self.turn and self.phase == "play" else " "
                lines.append(
                    f" {mark}"
                    + _("{player}: {cards}, fired {fired} in {presses}").format(
                        player=self.name(s),
                        cards=plural(self.hand[s], "card"),
                        fired=self.fired[s],
                        presses=plural(self.presses[s], "press"),
                    )
                )
            lines.extend("  " + _("owed: {owes}").format(owes=line) for line in self.owes())
        lines.extend(self.scoreboard())
        return lines

    def owes(self) -> list[str]:
        """Who owes what, first to last, one line each ("Cat must hit 2 more times")."""
        if self.phase != "play" or self.round is None:
            return []
        return [
            self._owes_phrase(self.name(due.seat), due.kind, due.n) for due in self.round.pending
        ]

    def summary(self) -> dict[str, Any]:
        """The game as JSON-able data for whoever watches it: the state of `unoattack table
        --json` and of the web page (`TableSession.view` adds the session's part). Read-only
        answers of the referee (who must hit, what is owed, in words) are in it, so that no
        reader has to work them out."""
        rnd = self.round
        return {
            "deck": self.deck.name,  # its name, never the path of a deck file
            "mode": self.mode,
            "target": self.target,
            "classic": self.classic,
            "rules": self.rules.to_dict(),
            "phase": self.phase,
            "round": self.round_no,
            "players": list(self.players),
            "dealer": self.dealer,
            "hands": self.hand,
            "turn": self.turn if rnd is not None else None,
            "actor": self.actor,
            "direction": self.direction,
            "color": self.color,
            "top": self.top,
            "pending": self.pending,
            "uno": self.uno,
            "bonus": self.bonus,
            "taking": self.taking,
            "winner": self.winner,
            "wd4": self.wd4,
            "may_play_taken": self.may_play_taken(),
            "hitter": self.hitter(),
            "owed": self.owed(),
            "owes": self.owes(),
            "to_enter": self.to_enter(),
            "fired": list(self.fired),
            "presses": list(self.presses),
            "fired_game": list(self.fired_game),
            "presses_game": list(self.presses_game),
            "scores": list(self.scores),
            "active": list(self.active),
            "hands_left": {str(k): list(v) for k, v in self.hands_left.items()},
            "rounds": copy.deepcopy(self.rounds),
            "game_winners": list(self.game_winners),
        }

    def copy(self) -> Referee:
        """An independent copy (to try a move on)."""
        new = copy.copy(self)
        for key in ("scores", "active", "fired", "presses", "fired_game", "presses_game"):
            setattr(new, key, list(getattr(self, key)))
        new.hands_left = {k: list(v) for k, v in self.hands_left.items()}
        new.rounds = list(self.rounds)
        new.game_winners = list(self.game_winners)
        new.round = self.round.copy() if self.round is not None else None  # type: ignore[assignment]
        return new

    def serve_first(self, seat: int) -> None:
        """Classic: the cards of a dispense sent for `seat` came while another obligation was
        put in front (a UNO penalty typed meanwhile): serve `seat`'s draw first, as it was."""
        if self.round is not None:
            self.round.to_front(seat)

    # -- persistence ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Everything needed to resume the game, as JSON-able data."""
        return {
            "version": STATE_VERSION,
            "players": list(self.players),
            "deck": self.deck_name,
            "mode": self.mode,
            "target": self.target,
            "options": dict(self.options),
            "scores": list(self.scores),
            "active": list(self.active),
            "round": self.round_no,
            "dealer": self.dealer,
            "phase": self.phase,
            "fired": list(self.fired),
            "presses": list(self.presses),
            "fired_game": list(self.fired_game),
            "presses_game": list(self.presses_game),
            "play": self.round.state() if self.round is not None else None,
            "taking": self.taking,
            "wd4_color": self.wd4_color,
            "hands_left": {str(k): list(v) for k, v in self.hands_left.items()},
            "rounds": copy.deepcopy(self.rounds),
            "game_winners": list(self.game_winners),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Referee:
        """Rebuild a referee saved by `to_dict` (or by the version 1 referee); InputError naming
        the first field that is missing, of the wrong type or out of range."""
        from engine.referee_state import read_state  # the checks live with the file format

        return read_state(cls, data)

    # -- internals --------------------------------------------------------------------------
    def _need_phase(self, phase: str, hint: str) -> None:
        if self.phase != phase:
            raise RuleError(hint)

    def _need_round(self) -> BlindRound:
        self._need_phase("play", self._phase_hint())
        assert self.round is not None
        return self.round

    def _phase_hint(self) -> str:
        if self.phase == "deal":
            return _("round {round} has not started: type the card turned up").format(
                round=self.round_no
            )
        if self.phase == "score":
            return _("the round is over: enter the cards left in each hand")
        if self.phase == "over":
            return _("the game is over")
        return _("not now")

    def _taking_hint(self) -> str:
        who = self.name(self.taking or 0)
        if self.classic:
            return _("{player}'s card is coming from the launcher first").format(player=who)
        return _("{player} is hitting: press the button (or `undo`)").format(player=who)

    @staticmethod
    def _owes_phrase(player: str, kind: str, n: int) -> str:
        """`Bob must hit 2 more times`: what `player` owes, a whole phrase (word order differs)."""
        if kind == "draws":
            said = ngettext("{player} draws {n} more card", "{player} draws {n} more cards", n)
        elif kind == "until_fire":
            said = _("{player} must hit until cards fire")
        elif n == 1:
            said = _("{player} must hit once more")
        else:
            said = ngettext(
                "{player} must hit {n} more time", "{player} must hit {n} more times", n
            )
        return said.format(player=player, n=n)

    def _check_in_deck(self, card: Card) -> None:
        if card not in self.deck.counts:
            raise RuleError(
                _("`{card}` is not in the {deck} deck").format(card=card, deck=self.deck.name)
            )

    def _apply(self, step: Callable[[], None]) -> None:
        """Run a step of the round (a refused one changes nothing); its RuleError is worded
        with the players' names."""
        try:
            step()
        except RuleError as exc:
            raise RuleError(self._reworded(exc)) from None

    def _reworded(self, exc: RuleError) -> str:
        text = self.named(message_of(exc))

        top = self.round.top if self.round is not None else None
        if top is not None and isinstance(exc, NoMatch):
            said = (
                _("{card} does not go on {top} ({colour}): play a {colour} card or a wild")
                if top.is_wild
                else _(
                    "{card} does not go on {top} ({colour}): play a {colour} card, a {face} or a "
                    "wild"
                )
            )
            return said.format(
                card=exc.card, top=top, colour=colour_name(self.color, "?"), face=top.face
            )
        return text

    def _snapshot(self) -> dict[str, Any]:
        rnd = self.round
        assert rnd is not None
        return {
            "direction": rnd.direction,
            "pending": [(d.seat, d.kind, d.n) for d in rnd.pending],
            "bonus": rnd.bonus,
            "origin": rnd.origin,
        }

    def _walk(self, start: int, end: int) -> list[int]:
        """Seats from `start` up to (not including) `end` in the direction of play."""
        rnd = self.round
        assert rnd is not None
        out: list[int] = []
        seat = start
        for _step in range(len(self.players)):
            if seat == end:
                break
            out.append(seat)
            seat = rnd.next_seat(seat)
        return out

    def _after_play(self, seat: int, before: dict[str, Any], target: int | None) -> list[str]:
        """What a play did, in words: reverse, skips, trade, obligations, bonus, out."""
        rnd = self.round
        assert rnd is not None
        msgs: list[str] = []
        reversed_ = rnd.direction != before["direction"]
        if reversed_ and len(rnd.seats) > 2:
            msgs.append(_("direction reversed"))
        start = seat if reversed_ or not before["bonus"] else before["origin"]
        owing = {d.seat for d in rnd.pending}
        if rnd.winner is None:
            # The seats passed over: up to the turn, or in a bonus turn up to the last skipped.
            end = rnd.next_seat(rnd.origin) if rnd.bonus else rnd.turn
            skipped = self._walk(rnd.next_seat(start), end)
            msgs.extend(
                _("{player} is skipped").format(player=self.name(s))
                for s in skipped
                if s not in owing
            )
        if target is not None and rnd.top.face == "TH":
            msgs.append(
                _("{player} and {other} trade hands").format(
                    player=self.name(seat), other=self.name(target)
                )
            )
        if rnd.winner is not None:
            msgs.append(_("{player} is out!").format(player=self.name(seat)))
        elif rnd.bonus:
            msgs.append(
                _("{player} may play one more card (or `pass`)").format(player=self.name(seat))
            )
        if [(d.seat, d.kind, d.n) for d in rnd.pending] != before["pending"]:
            msgs.extend(self._owed_msgs(str(rnd.top)))
        return msgs

    def _after_take(self, seat: int, before: dict[str, Any]) -> list[str]:
        rnd = self.round
        assert rnd is not None
        who = self.name(seat)
        if before["pending"] and len(rnd.pending) == len(before["pending"]):
            due = rnd.pending[0]  # the same obligation, not served yet
            return [self._owes_phrase(who, due.kind, due.n)]
        if self.taking == seat:  # classic: the card did not come
            return [
                _("{player} still draws 1 card: it comes after `clear` (jam) or `load N`").format(
                    player=who
                )
            ]
        if rnd.fired_play and rnd.turn == seat and not rnd.pending:
            said = (
                _("{player} may play the drawn card, or `pass`")
                if self.classic
                else _("{player} may play a card the launcher fired, or `pass`")
            )
            return [said.format(player=who)]
        return self._owed_msgs("")

    def _owed_msgs(self, why: str) -> list[str]:
        rnd = self.round
        if rnd is None or not rnd.pending:
            return []
        due = rnd.pending[0]
        if rnd.answerable() and self.classic:
            return [
                _("{player} must {choices}").format(
                    player=self.name(due.seat), choices=self._answer_hint()
                )
            ]
        reason = " (" + why + ")" if why else ""
        if due.face is None:
            reason = " (UNO)"
        return [self._owes_phrase(self.name(due.seat), due.kind, due.n) + reason]

    def _maybe_end_round(self) -> list[str]:
        rnd = self.round
        if rnd is None or not rnd.over or self.phase != "play":
            return []
        self.phase = "score"
        self.taking = None
        msgs = [
            _("round {round} is over: {player} went out").format(
                round=self.round_no, player=self.name(rnd.winner or 0)
            )
        ]

        if not self.to_enter():  # nobody else holds cards (cannot happen at a real table)
            msgs.extend(self._score_round())
        return msgs


def is_card(word: str) -> bool:
    """True when `word` is card notation."""
    try:
        parse_card(word)
    except UnoError:
        return False
    return True
