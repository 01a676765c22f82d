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
from engine.errors import InputError, RuleError, UnoError
from engine.game import Action
from engine.rules import PRESET_NAMES, Rules, rules_for
from engine.scoring import SCORING_MODES, decide, round_gains

__all__ = ["COLOR_NAMES", "MODES", "STATE_VERSION", "Referee", "check_names", "plural"]

STATE_VERSION = 2  # 1: the referee before it played on BlindRound (read and upgraded)
MODES: tuple[str, ...] = SCORING_MODES
COLOR_NAMES = {"R": "red", "Y": "yellow", "G": "green", "B": "blue"}
COLOR_WORDS = {**{c: c for c in COLORS}, **{v.upper(): k for k, v in COLOR_NAMES.items()}}
TEAMS = 2  # at a table, partners sit alternately: two teams
PHASES = ("deal", "play", "score", "over")
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
_SEAT = re.compile(r"\bseat (\d+)('s)?")


def plural(n: int, word: str) -> str:
    """`1 card`, `2 cards`, `2 presses`."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}es" if word.endswith("s") else f"{n} {word}s"


def check_names(names: list[str]) -> None:
    """Player names: 2 to 10, letters/digits/-/_, starting with a letter, no colour or command."""
    if not 2 <= len(names) <= 10:
        raise InputError(f"{len(names)} players: a table seats 2 to 10 (--players Ann,Bob,...)")
    seen: set[str] = set()
    for name in names:
        key = name.lower()
        if not name or not name[0].isalpha() or not all(c.isalnum() or c in "-_" for c in name):
            raise InputError(
                f"player name `{name}`: letters, digits, - or _, starting with a letter"
            )
        if key.upper() in COLOR_WORDS or key in COMMANDS:
            raise InputError(f"player name `{name}` is a colour or a command: choose another")
        if key in seen:
            raise InputError(f"player name `{name}` is used twice")
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
            raise InputError(f"unknown mode `{mode}`: use {', '.join(MODES)}")
        if mode == "teams" and (len(names) < 4 or len(names) % 2):
            raise InputError("mode teams needs an even number of players, at least 4")
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            raise InputError(f"target = {target!r}: a whole number of points, at least 1")
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
                f"the {self.deck.name} deck has {self.deck.total} cards; {len(names)} players "
                f"of {self.rules.hand_size} need at least {need}"
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
        raise RuleError(f"no player called `{name}`: players are {', '.join(self.players)}")

    def active_seats(self) -> list[int]:
        """Seats still in the game (all but eliminated players)."""
        return [s for s in range(len(self.players)) if self.active[s]]

    def named(self, text: str) -> str:
        """`text` (a message of the rules core) with `seat N` written as the player's name."""

        def name(m: re.Match[str]) -> str:
            seat = int(m.group(1))
            if seat >= len(self.players):
                return m.group(0)
            return self.players[seat] + (m.group(2) or "")

        return _SEAT.sub(name, text)

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
            return "1 card to come from the launcher" if self.classic else "1 more hit"
        due = rnd.pending[0]
        if rnd.answerable():
            return self._answer_hint()
        if due.kind == "draws":
            return f"{plural(due.n, 'card')} to come from the launcher"
        if due.kind == "until_fire":
            return "hits until cards fire"
        return "1 more hit" if due.n == 1 else f"{due.n} more hits"

    def _answer_hint(self) -> str:
        rnd = self.round
        assert rnd is not None
        due = rnd.pending[0]
        take = "`draw`" if self.classic else "press the button"
        parts = []
        if rnd.challengeable():
            parts.append("`challenge` the WD4")
        if rnd.answers():
            parts.append(f"answer with {' or '.join(sorted(rnd.answers()))}")
        return (
            f"{' or '.join(parts)}, or {take} ({plural(due.n, 'card' if self.classic else 'hit')})"
        )

    # -- round start ------------------------------------------------------------------------
    def set_dealer(self, seat: int) -> list[str]:
        """Choose who deals this round (before the first card is turned up)."""
        self._need_phase("deal", "the dealer can only change before the first card is turned up")
        if not self.active[seat]:
            raise RuleError(f"{self.name(seat)} is out of the game and cannot deal")
        self.dealer = seat
        return [f"{self.name(seat)} deals round {self.round_no}"]

    def start_round(self, card: Card, color: str | None = None) -> list[str]:
        """The dealer turned up `card`; for a wild, `color` is what the first player names."""
        self._need_phase("deal", "a round is already under way")
        self._check_in_deck(card)
        if first_card(card.face, classic=self.classic) == "back":
            raise RuleError(f"{card} goes back into the launcher: turn up another card")
        if card.is_wild:
            if color is None:
                raise RuleError(f"{card} turned up: the first player names a colour (`{card} G`)")
        elif color is not None:
            raise RuleError(f"{card} has a colour of its own: only a wild takes a named colour")
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
        msgs = [f"round {self.round_no}: {self.name(self.dealer)} dealt, {card} turned up"]
        if rnd.direction == -1:
            msgs.append(f"{self.name(self.dealer)} plays first, going right")
        else:
            owing = {d.seat for d in rnd.pending}
            skipped = self._walk(rnd.next_seat(self.dealer), rnd.turn)
            msgs.extend(f"{self.name(s)} is skipped" for s in skipped if s not in owing)
        msgs.extend(self._owed_msgs(f"{card} turned up"))
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
            raise RuleError("a play needs a card")
        for c in cards:
            self._check_in_deck(c)
        if self.taking is not None:
            raise RuleError(self._taking_hint())
        player = rnd.actor if seat is None else seat
        assert player is not None
        if seat is not None and seat == rnd.actor:
            raise RuleError(f"it is {self.name(seat)}'s turn: type the card without `jump`")
        first = cards[0]
        if color is None and not first.is_wild:
            colours = {c.color for c in cards}
            if len(colours) > 1:
                raise RuleError(
                    f"name the colour to continue with: one of {', '.join(sorted(colours))}"
                )
        if color is not None and not first.is_wild and all(c.color != color for c in cards):
            raise RuleError(
                f"{first} is {COLOR_NAMES[first.color or 'R']}: only a wild names a colour"
            )
        if discarded < 0:
            raise RuleError(f"a DA discards 0 or more other cards, not {discarded}")
        if uno:
            # A call made with the card: with more than two cards left it would be a false call,
            # far more likely a slip of the keyboard than of the tongue; refused, nothing lost.
            held = rnd.counts[player]
            left = rnd.counts[target] if first.face == "TH" and target is not None else None
            if left is None:
                left = held - len(cards) - discarded
            if left > 2:
                raise RuleError(
                    f"{' '.join(map(str, cards))} uno: {self.name(player)} would hold "
                    f"{plural(left, 'card')}; UNO is called with one or two left (a false call: "
                    f"type `uno {self.name(player)}` on its own line)"
                )
        before = self._snapshot()
        prev_color = rnd.color
        if color is None and not first.is_wild:
            color = first.color
        self._apply(lambda: rnd.play(player, cards, color=color, target=target, discards=discarded))
        if EFFECTS[first.face].challengeable:
            self.wd4_color = prev_color
        who = self.name(player)
        text = " ".join(str(c) for c in cards)
        msgs = [
            f"{who} {'jumps in with' if seat is not None else 'plays'} {text}"
            + (f" and {discarded} more" if discarded else "")
        ]
        if first.is_wild:
            msgs.append(f"colour is now {COLOR_NAMES[rnd.color or 'R']}")
        elif len({c.color for c in cards}) > 1:
            msgs.append(f"colour is {COLOR_NAMES[rnd.color or 'R']}")
        msgs.extend(self._after_play(player, before, target))
        if uno and rnd.winner is None and not rnd.uno_called[player]:
            msgs.extend(self.call_uno(player))
        msgs.extend(self._maybe_end_round())
        return msgs

    def hit(self) -> list[str]:
        """Attack: the player whose turn it is hits the launcher once (the next press)."""
        rnd = self._need_round()
        if self.classic:
            raise RuleError("classic: nobody hits; type `draw` and the launcher dispenses a card")
        self._start_take("hit")
        return [f"{self.name(rnd.turn)} hits: press the button once"]

    def draw(self) -> list[str]:
        """Classic: the player whose turn it is draws one card (dispensed by the launcher), then
        may play it or `pass`. Typed by the victim of a Wild Draw Four (or, with stacking, of a
        Draw Two), it takes the cards instead of answering."""
        rnd = self._need_round()
        if not self.classic:
            raise RuleError("`draw` is for the classic deck: in UNO Attack type `hit`")
        if rnd.pending and rnd.answerable():
            due = rnd.pending[0]
            self._apply(lambda: rnd.take(due.seat, 0))
            what = "the WD4" if due.face == "WD4" else f"the {due.face}"
            return [f"{self.name(due.seat)} takes {what}: {plural(due.n, 'card')}"]
        self._start_take("draw")
        return [f"{self.name(rnd.turn)} draws a card"]

    def _start_take(self, kind: str) -> None:
        rnd = self._need_round()
        if self.taking is not None:
            raise RuleError(self._taking_hint())
        if rnd.pending:
            due = rnd.pending[0]
            raise RuleError(
                f"{self.name(due.seat)} {self._owes_phrase(due.kind, due.n)}: "
                + ("the launcher dispenses them" if self.classic else "press the button")
            )
        self._apply(lambda: rnd.check(Action(kind, rnd.turn)))
        self.taking = rnd.turn

    def challenge(self, legal: bool) -> list[str]:
        """Classic: the victim of a Wild Draw Four challenges it; `legal` is the table's answer
        (the player held no card of the colour in play). Legal: the challenger draws 6 and is
        skipped; not legal: the player who played it draws 4 and the challenger keeps the turn."""
        rnd = self._need_round()
        if self.wd4 is None:
            raise RuleError("there is no Wild Draw Four to challenge now")
        victim, by = rnd.pending[0].seat, rnd.wd4_by
        assert by is not None
        self._apply(lambda: rnd.challenge(victim, legal))
        if legal:
            msgs = [f"the WD4 was legal: {self.name(victim)} draws {rnd.pending[0].n}"]
        else:
            msgs = [f"the WD4 was not legal: {self.name(by)} draws 4 instead"]
        return msgs + self._owed_msgs("WD4 challenged")

    def pass_turn(self) -> list[str]:
        """Decline the extra card after `R`/`S`, or keep what a hit or draw brought."""
        rnd = self._need_round()
        if self.taking is not None:
            raise RuleError(self._taking_hint())
        seat = rnd.turn
        kept = rnd.fired_play
        self._apply(lambda: rnd.apply(Action("pass", seat)))
        if kept:
            what = "the drawn card" if self.classic else "the cards fired"
            return [f"{self.name(seat)} keeps {what} and passes"]
        return [f"{self.name(seat)} passes"]

    def press(self, ejected: int, note: str = "") -> list[str]:
        """The box fired `ejected` cards at the seat that must hit (one press) or dispensed them
        (classic); `note` is appended to the first message (press id, dry streak)."""
        rnd = self._need_round()
        if ejected < 0:
            raise RuleError(f"a press fires 0 or more cards, not {ejected}")
        seat = self.hitter()
        if seat is None:
            raise RuleError("nobody owes a hit now")
        if rnd.pending and self.classic and rnd.answerable():
            raise RuleError(f"{self.name(seat)} must {self._answer_hint()}")
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
        got = f"{who} takes {plural(ejected, 'card')}" if ejected else f"{who}: dry"
        msgs = [f"{got} (holds {rnd.counts[seat]})" + (f" [{note}]" if note else "")]
        msgs.extend(self._after_take(seat, before))
        msgs.extend(self._maybe_end_round())
        return msgs

    def stray(self, seat: int, cards: int) -> list[str]:
        """`cards` slipped out of the box after `seat`'s last burst was reported: they go to
        that player (RULES.md: cards left sticking out go to the player who hit)."""
        if cards < 1:
            raise RuleError(f"a stray is 1 card or more, not {cards}")
        if self.phase != "play" or self.round is None:
            return [
                f"{plural(cards, 'card')} slipped out after {self.name(seat)}'s last hit, "
                "after the round ended: put them back into the launcher"
            ]
        self.round.give(seat, cards)
        self.fired[seat] += cards
        self.fired_game[seat] += cards
        return [
            f"{plural(cards, 'card')} slipped out after {self.name(seat)}'s last hit: "
            f"{self.name(seat)} takes them (holds {self.round.counts[seat]})"
        ]

    def set_hand(self, seat: int, cards: int) -> list[str]:
        """Correct the tracked size of `seat`'s hand (a card dropped, a miscount at the table)."""
        rnd = self._need_round()
        if not self.active[seat]:
            raise RuleError(f"{self.name(seat)} is out of the game")
        if not 0 < cards <= self.deck.total:
            raise RuleError(f"a hand in play holds 1 to {self.deck.total} cards, not {cards}")
        old = rnd.counts[seat]
        rnd.set_count(seat, cards)
        return [f"{self.name(seat)} holds {plural(cards, 'card')} (was {old})"]

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
                raise RuleError("who called UNO? `uno NAME`")
        if not self.active[seat]:
            raise RuleError(f"{self.name(seat)} is out of the game")
        false = rnd.counts[seat] > 2
        self._apply(lambda: rnd.apply(Action("uno", seat)))
        if false:
            return [
                f"{self.name(seat)}: false UNO call ({plural(rnd.counts[seat], 'card')}), "
                f"{self._penalty_words()}"
            ]
        return [f"{self.name(seat)} calls UNO" + (": safe" if rnd.counts[seat] == 1 else "")]

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
                why = "called UNO" if held == 1 else f"holds {plural(held, 'card')}"
                raise RuleError(
                    f"{who} {why}: that would be a wrong accusation; `catch {who} BY` charges "
                    "the player who said it"
                )
        if accuser == seat:
            raise RuleError(f"{who} cannot catch themselves")
        wrong = rnd.is_mistake(Action("catch", accuser, target=seat))
        self._apply(lambda: rnd.apply(Action("catch", accuser, target=seat)))
        if wrong:
            return [f"{self.name(accuser)}: wrong accusation of {who}, {self._penalty_words()}"]
        return [f"{who} is caught without UNO: {self._penalty_words()}"]

    def _penalty_words(self) -> str:
        n = self.rules.uno_penalty
        return f"draws {plural(n, 'card')}" if self.classic else f"hits {plural(n, 'time')}"

    # -- round end ----------------------------------------------------------------------------
    def to_enter(self) -> list[int]:
        """Seats whose cards left in hand are still to be entered (phase ``score``)."""
        if self.phase != "score":
            return []
        return [s for s in self.active_seats() if s != self.winner and s not in self.hands_left]

    def enter_hand(self, seat: int, cards: Sequence[Card], *, force: bool = False) -> list[str]:
        """The cards left in `seat`'s hand at the end of the round. The count must match what the
        referee tracked unless `force`; the whole table may not hold more copies than the deck."""
        self._need_phase("score", "hands are entered when a round is over")
        if seat not in self.to_enter():
            raise RuleError(f"{self.name(seat)}'s hand is not asked for")
        for card in cards:
            self._check_in_deck(card)
        if len(cards) != self.hand[seat] and not force:
            raise RuleError(
                f"{self.name(seat)} should hold {plural(self.hand[seat], 'card')}, "
                f"got {len(cards)}: enter them all (end the line with ! to overrule)"
            )
        seen = Counter(parse_card(c) for hand in self.hands_left.values() for c in hand)
        seen.update(cards)
        for card, count in seen.items():
            if count > self.deck.counts[card]:
                raise RuleError(
                    f"the {self.deck.name} deck has {self.deck.counts[card]} x {card}, "
                    f"the hands entered hold {count}"
                )
        self.hands_left[seat] = [str(c) for c in cards]
        pts = self.deck.points_of(cards)
        msgs = [f"{self.name(seat)}: {plural(pts, 'point')}"]
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
        msgs = [f"round {self.round_no} to {self.name(won)}: " + self._gained_text(gained)]
        winners, gone = decide(
            self.mode, self.scores, self.target, self.active_seats(), self.team_of
        )
        for s in gone:
            self.active[s] = False
            msgs.append(f"{self.name(s)} reaches {self.target} and is out")
        self.game_winners = list(winners)
        self.round = None
        if winners:
            self.phase = "over"
            msgs.append(self._winner_text())
        else:
            self.round_no += 1
            self.dealer = won if self.active[won] else self.active_seats()[0]
            self.phase = "deal"
            msgs.append(f"round {self.round_no}: {self.name(self.dealer)} deals")
        return msgs

    def _gained_text(self, gained: list[int]) -> str:
        parts = [f"{self.name(s)} +{g}" for s, g in enumerate(gained) if g]
        return ", ".join(parts) if parts else "no points"

    def _winner_text(self) -> str:
        names = " & ".join(self.name(s) for s in self.game_winners)
        return f"game over: {names} win{'s' if len(self.game_winners) == 1 else ''}"

    # -- views ------------------------------------------------------------------------------
    def scoreboard(self) -> list[str]:
        """One line per player: score, and (elimination) whether they are out."""
        lines = []
        order = sorted(range(len(self.players)), key=lambda s: (-self.scores[s], s))
        if self.mode in ("lowest", "elimination"):
            order = sorted(range(len(self.players)), key=lambda s: (self.scores[s], s))
        width = max(len(p) for p in self.players)
        for s in order:
            out = "" if self.active[s] else "  (out)"
            lines.append(f"  {self.name(s):<{width}}  {self.scores[s]:>4}{out}")
        return lines

    def status(self) -> list[str]:
        """A few lines describing the table now."""
        lines = [
            f"round {self.round_no} ({self.phase}), {self.mode} mode, game to {self.target} points"
        ]
        if self.phase in ("play", "score") and self.round is not None:
            arrow = "left (clockwise)" if self.direction == 1 else "right (counter-clockwise)"
            colour = COLOR_NAMES.get(self.color or "", "-")
            lines.append(f"top {self.top}, colour {colour}, play goes {arrow}")
            for s in self.active_seats():
                mark = ">" if s == self.turn and self.phase == "play" else " "
                lines.append(
                    f" {mark}{self.name(s)}: {plural(self.hand[s], 'card')}, "
                    f"fired {self.fired[s]} in {plural(self.presses[s], 'press')}"
                )
            lines.extend(f"  owed: {line}" for line in self.owes())
        lines.extend(self.scoreboard())
        return lines

    def owes(self) -> list[str]:
        """Who owes what, first to last, one line each ("Cat must hit 2 more times")."""
        if self.phase != "play" or self.round is None:
            return []
        return [
            f"{self.name(due.seat)} {self._owes_phrase(due.kind, due.n)}"
            for due in self.round.pending
        ]

    def summary(self) -> dict[str, Any]:
        """The game as JSON-able data for whoever watches it: the state of `unoattack table
        --json` and of the web page (`TableSession.view` adds the session's part). Read-only
        answers of the referee (who must hit, what is owed, in words) are in it, so that no
        reader has to work them out."""
        rnd = self.round
        return {
            "deck": self.deck_name,
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
            return f"round {self.round_no} has not started: type the card turned up"
        if self.phase == "score":
            return "the round is over: enter the cards left in each hand"
        if self.phase == "over":
            return "the game is over"
        return "not now"

    def _taking_hint(self) -> str:
        who = self.name(self.taking or 0)
        if self.classic:
            return f"{who}'s card is coming from the launcher first"
        return f"{who} is hitting: press the button (or `undo`)"

    @staticmethod
    def _owes_phrase(kind: str, n: int) -> str:
        if kind == "draws":
            return "draws 1 more card" if n == 1 else f"draws {n} more cards"
        if kind == "until_fire":
            return "must hit until cards fire"
        return "must hit once more" if n == 1 else f"must hit {n} more times"

    def _check_in_deck(self, card: Card) -> None:
        if card not in self.deck.counts:
            raise RuleError(f"`{card}` is not in the {self.deck.name} deck")

    def _apply(self, step: Callable[[], None]) -> None:
        """Run a step of the round (a refused one changes nothing); its RuleError is worded
        with the players' names."""
        try:
            step()
        except RuleError as exc:
            raise RuleError(self._reworded(str(exc))) from None

    def _reworded(self, text: str) -> str:
        text = self.named(text)
        top = self.round.top if self.round is not None else None
        if top is not None and "does not match" in text:
            colour = COLOR_NAMES.get(self.color or "", "?")
            face = "" if top.is_wild else f", a {top.face}"
            card = text.split(" ", 1)[0]
            return f"{card} does not go on {top} ({colour}): play a {colour} card{face} or a wild"
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
        for _ in range(len(self.players)):
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
            msgs.append("direction reversed")
        start = seat if reversed_ or not before["bonus"] else before["origin"]
        owing = {d.seat for d in rnd.pending}
        if rnd.winner is None:
            # The seats passed over: up to the turn, or in a bonus turn up to the last skipped.
            end = rnd.next_seat(rnd.origin) if rnd.bonus else rnd.turn
            skipped = self._walk(rnd.next_seat(start), end)
            msgs.extend(f"{self.name(s)} is skipped" for s in skipped if s not in owing)
        if target is not None and rnd.top.face == "TH":
            msgs.append(f"{self.name(seat)} and {self.name(target)} trade hands")
        if rnd.winner is not None:
            msgs.append(f"{self.name(seat)} is out!")
        elif rnd.bonus:
            msgs.append(f"{self.name(seat)} may play one more card (or `pass`)")
        if [(d.seat, d.kind, d.n) for d in rnd.pending] != before["pending"]:
            msgs.extend(self._owed_msgs(str(rnd.top)))
        return msgs

    def _after_take(self, seat: int, before: dict[str, Any]) -> list[str]:
        rnd = self.round
        assert rnd is not None
        who = self.name(seat)
        if before["pending"] and len(rnd.pending) == len(before["pending"]):
            due = rnd.pending[0]  # the same obligation, not served yet
            return [f"{who} {self._owes_phrase(due.kind, due.n)}"]
        if self.taking == seat:  # classic: the card did not come
            return [f"{who} still draws 1 card: it comes after `clear` (jam) or `load N`"]
        if rnd.fired_play and rnd.turn == seat and not rnd.pending:
            what = "the drawn card" if self.classic else "a card the launcher fired"
            return [f"{who} may play {what}, or `pass`"]
        return self._owed_msgs("")

    def _owed_msgs(self, why: str) -> list[str]:
        rnd = self.round
        if rnd is None or not rnd.pending:
            return []
        due = rnd.pending[0]
        if rnd.answerable() and self.classic:
            return [f"{self.name(due.seat)} must {self._answer_hint()}"]
        reason = f" ({why})" if why else ""
        if due.face is None:
            reason = " (UNO)"
        return [f"{self.name(due.seat)} {self._owes_phrase(due.kind, due.n)}{reason}"]

    def _maybe_end_round(self) -> list[str]:
        rnd = self.round
        if rnd is None or not rnd.over or self.phase != "play":
            return []
        self.phase = "score"
        self.taking = None
        msgs = [f"round {self.round_no} is over: {self.name(rnd.winner or 0)} went out"]
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
