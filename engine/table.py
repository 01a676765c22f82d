"""`unoattack table`: a referee for a real table with a real box.

The referee cannot see hands. It keeps what a careful person at the table could keep: whose turn
it is, the direction, the current colour and top card, how many cards each player holds, how
many cards the box fired at each seat, and who still owes hits ("Bob hits 2 more times",
"Carl hits until cards come"). Players type what they played in card notation; the referee checks
it as far as it can, locks the box's button when nobody should press, unlocks it (and aims the
servo) for the seat that must hit, and counts the box's fire events against that obligation.
With the classic deck nobody presses: the referee dispenses every draw owed itself (`dispense N`)
and adds the cards each dispense ejected to that hand.

Two layers, so the rules can be tested without a box:

- `Referee` is pure state: every method either changes the state and returns messages for the
  table, or raises `RuleError` and changes nothing. `to_dict` / `from_dict` round-trip it as JSON.
- `TableSession` is the I/O: it parses typed lines, feeds box events in, keeps the button's lock
  and aim in step with `Referee.hitter()`, and saves the state file after every action.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import queue
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from engine.cards import COLORS, Card, Deck, load_deck, parse_card
from engine.errors import InputError, RuleError, UnoError
from engine.rules import PRESET_NAMES, Rules, rules_for

STATE_VERSION = 1
MODES: tuple[str, ...] = ("target", "lowest", "elimination", "teams")
COLOR_NAMES = {"R": "red", "Y": "yellow", "G": "green", "B": "blue"}
_COLOR_WORDS = {**{c: c for c in COLORS}, **{v.upper(): k for k, v in COLOR_NAMES.items()}}
# Fire reasons that mean "nothing was pressed": the press never reached the mechanism. A press
# refused by a latched box (`jammed`, `empty`, `fault`) says so with `planned` 0, while a burst
# cut short by a jam or an empty hopper was planned: it was a hit.
NOT_A_HIT = frozenset({"locked", "queue_full", "stopping"})
REFUSED_WHEN_UNPLANNED = frozenset({"jammed", "empty", "fault"})


def refused(event: dict[str, Any]) -> bool:
    """True when a fire event is a press the box refused (it counts for nobody)."""
    reason = event.get("reason")
    if reason in NOT_A_HIT:
        return True
    return (
        reason in REFUSED_WHEN_UNPLANNED and not event.get("planned") and not event.get("ejected")
    )


HISTORY_LIMIT = 30  # undo steps kept in the state file


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}es" if word.endswith("s") else f"{n} {word}s"


class Referee:
    """The state of a refereed game at a physical table, and the rules that move it.

    Phases: ``deal`` (waiting for the card turned up to start a round), ``play``, ``score``
    (waiting for the cards left in each hand) and ``over``. Seats are numbered from 0 in the order
    of `players`, clockwise (to the left).
    """

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
        _check_names(names)
        if mode not in MODES:
            raise InputError(f"unknown mode `{mode}`: use {', '.join(MODES)}")
        if mode == "teams" and (len(names) < 4 or len(names) % 2):
            raise InputError("mode teams needs an even number of players, at least 4")
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            raise InputError(f"target = {target!r}: a whole number of points, at least 1")
        self.deck_name = deck
        self.deck: Deck = load_deck(deck)
        preset = deck if deck in PRESET_NAMES else "attack"
        # Classic: every draw is a number of cards the referee itself dispenses from the
        # launcher (used as the draw pile), so it knows which hand they went to; nobody presses.
        self.classic = preset == "classic"
        self.options: dict[str, object] = dict(options or {})
        self.rules: Rules = rules_for(preset, len(names), **self.options)
        self.players: list[str] = names
        self.mode = mode
        self.target = target
        n = len(names)
        self.scores: list[int] = [0] * n
        self.active: list[bool] = [True] * n
        self.round_no = 1
        self.dealer = 0
        self.phase = "deal"
        self.hand: list[int] = [0] * n
        self.fired: list[int] = [0] * n  # cards the box fired at each seat this round
        self.presses: list[int] = [0] * n  # presses (fire events) of each seat this round
        self.fired_game: list[int] = [0] * n
        self.presses_game: list[int] = [0] * n
        self.turn = 0
        self.direction = 1
        self.color: str | None = None
        self.top: str | None = None
        self.pending: list[dict[str, Any]] = []
        self.bonus: dict[str, int] | None = None  # {"seat", "anchor"}: may play one more card
        self.uno: dict[str, Any] | None = None  # {"seat", "called"}: the catch window
        self.uno_early: int | None = None  # seat that said UNO before playing its 2nd-last card
        self.drawn: int | None = None  # classic: seat that drew and may play that card or pass
        self.wd4: dict[str, Any] | None = None  # classic: {"by", "color"} of a challengeable WD4
        self.winner: int | None = None  # the round's winner (hand empty)
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

    def _next(self, seat: int, steps: int = 1, direction: int | None = None) -> int:
        d = self.direction if direction is None else direction
        n = len(self.players)
        for _ in range(steps):
            seat = (seat + d) % n
            while not self.active[seat]:
                seat = (seat + d) % n
        return seat

    def _two_players(self) -> bool:
        return len(self.active_seats()) == 2 and self.rules.two_player_rules

    # -- what the box should do ------------------------------------------------------------
    def hitter(self) -> int | None:
        """The seat that must press the box now, or None when nobody should press."""
        if self.phase == "play" and self.pending:
            return int(self.pending[0]["seat"])
        return None

    def dispense_due(self) -> tuple[int, int] | None:
        """Classic: (seat, cards) the launcher must dispense now, or None (nothing owed, or a
        Wild Draw Four still waiting for `challenge` or `draw`)."""
        if self.phase != "play" or not self.pending:
            return None
        ob = self.pending[0]
        if "cards" not in ob or ob.get("open"):
            return None
        return int(ob["seat"]), int(ob["cards"])

    def owed(self) -> str:
        """What the current hitter still owes, in words ("2 more hits", "hits until cards fire")."""
        if not self.pending:
            return ""
        ob = self.pending[0]
        if "cards" in ob:
            if ob.get("open"):
                return "`challenge` the WD4 or `draw` 4"
            return f"{_plural(ob['cards'], 'card')} to come from the launcher"
        if ob.get("until_fire"):
            return "hits until cards fire"
        return "1 more hit" if ob["hits"] == 1 else f"{ob['hits']} more hits"

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
        if card.face == "TH":
            raise RuleError("TH goes back into the launcher: turn up another card")
        if card.face == "WD4":
            raise RuleError("WD4 goes back into the launcher: turn up another card")
        if card.is_wild:
            if color is None:
                raise RuleError(f"{card} turned up: the first player names a colour (`{card} G`)")
        elif color is not None:
            raise RuleError(f"{card} has a colour of its own: only a wild takes a named colour")
        n = len(self.players)
        size = self.rules.hand_size
        self.hand = [size if self.active[s] else 0 for s in range(n)]
        self.fired = [0] * n
        self.presses = [0] * n
        self.direction = 1
        self.pending = []
        self.bonus = None
        self.uno = None
        self.uno_early = None
        self.drawn = None
        self.wd4 = None
        self.winner = None
        self.hands_left = {}
        self.top = str(card)
        self.color = card.color or color
        self.phase = "play"
        first = self._next(self.dealer)
        effect = self._effect(card)
        msgs = [f"round {self.round_no}: {self.name(self.dealer)} dealt, {card} turned up"]
        if effect in ("H2", "WH4", "WAA"):
            hits = 4 if effect == "WH4" else 2
            self._owe(first, hits=hits, why=f"{card} turned up")
            self.turn = self._next(first)
        elif effect == "WHF":
            self._owe(first, until_fire=True, why=f"{card} turned up")
            self.turn = self._next(first)
        elif effect == "D2":
            self._owe(first, cards=2, why=f"{card} turned up")
            self.turn = self._next(first)
        elif effect == "WAH":
            for seat in self._around(self.dealer, include_self=False):
                self._owe(seat, hits=1, why=f"{card} turned up")
            self.turn = first
        elif effect == "S":
            msgs.append(f"{self.name(first)} is skipped")
            self.turn = self._next(first)
        elif effect == "R":
            # The dealer plays first, then play goes right.
            self.direction = -1
            self.turn = self.dealer
        else:
            self.turn = first
        msgs.extend(self._obligation_msgs())
        return msgs

    # -- a turn -----------------------------------------------------------------------------
    def play(
        self,
        card: Card,
        *,
        color: str | None = None,
        target: int | None = None,
        discarded: int = 0,
        uno: bool = False,
    ) -> list[str]:
        """The player whose turn it is plays `card`.

        `color` names the next colour for a wild; `target` is the seat a `WAA` aims at or a `TH`
        trades with; `discarded` is how many more cards of its colour went down with a `DA`;
        `uno` says the player called UNO with this card.
        """
        self._need_phase("play", self._phase_hint())
        self._check_in_deck(card)
        if self.pending:
            raise RuleError(f"{self._pending_hint()} before anyone plays")
        seat = self.turn
        who = self.name(seat)
        effect = self._effect(card)
        if self.hand[seat] < 1:
            raise RuleError(f"{who} holds no cards by the referee's count: `hand {who} N` fixes it")
        if not self._matches(card):
            raise RuleError(self._mismatch(card))
        if card.is_wild and color not in COLORS:
            raise RuleError(f"{card} needs a colour: `{card} G` (R, Y, G or B)")
        if not card.is_wild and color is not None:
            raise RuleError(
                f"{card} is {COLOR_NAMES[card.color or 'R']}: only a wild names a colour"
            )
        needs_target = effect == "WAA" or card.face == "TH"
        if needs_target:
            if target is None:
                verb = "aim at" if effect == "WAA" else "trade hands with"
                raise RuleError(f"{card}: name the player to {verb} (`{card} ... NAME`)")
            if target == seat or not self.active[target]:
                raise RuleError(f"{card} must name another player still in the game")
        elif target is not None:
            raise RuleError(f"{card} does not take a player")
        if card.face == "DA":
            if not 0 <= discarded <= self.hand[seat] - 1:
                raise RuleError(
                    f"{who} holds {_plural(self.hand[seat], 'card')}: with {card} they can discard "
                    f"0 to {self.hand[seat] - 1} more"
                )
        elif discarded:
            raise RuleError(f"only a DA discards other cards with it, not {card}")
        left = self.hand[seat] - 1 - discarded
        if left == 0:
            if card.face == "TH":
                raise RuleError("nobody may go out on TH: it counts as unplayable as a last card")
            if self.rules.last_card_restriction and (card.is_wild or card.face in ("R", "S")):
                raise RuleError(f"no going out on {card} (last_card_restriction)")

        # Checks passed: from here the state changes.
        msgs = [f"{who} plays {card}" + (f" and {discarded} more" if discarded else "")]
        color_before = self.color
        self.drawn = None  # a player who drew plays the drawn card (the referee cannot see it)
        self.wd4 = None
        self._close_uno_window(seat)
        self.hand[seat] = left
        self.top = str(card)
        self.color = card.color or color
        origin = self.bonus["anchor"] if self.bonus else seat
        self.bonus = None
        bonus_rule = self.rules.skip_reverse_play_again and len(self.active_seats()) > 2
        two = self._two_players()
        if card.is_wild:
            msgs.append(f"colour is now {COLOR_NAMES[self.color or 'R']}")

        if effect == "R" and not two:
            self.direction = -self.direction
            msgs.append("direction reversed")
            self.turn = self._next(origin)
            if bonus_rule and left:
                self.bonus = {"seat": seat, "anchor": origin}
                self.turn = seat
        elif effect in ("S", "R"):
            skipped = self._next(origin)
            msgs.append(f"{self.name(skipped)} is skipped")
            self.turn = self._next(skipped)
            if bonus_rule and left:
                self.bonus = {"seat": seat, "anchor": skipped}
                self.turn = seat
        elif effect in ("H2", "WH4"):
            victim = self._next(origin)
            self._owe(victim, hits=4 if effect == "WH4" else 2, why=str(card))
            self.turn = self._next(victim)
        elif effect == "WHF":
            victim = self._next(origin)
            self._owe(victim, until_fire=True, why=str(card))
            self.turn = self._next(victim)
        elif effect == "D2":
            victim = self._next(origin)
            self._owe(victim, cards=2, why=str(card))
            self.turn = self._next(victim)
        elif effect == "WD4":
            # The victim may challenge: nothing is dispensed until they `challenge` or `draw`.
            victim = self._next(origin)
            self._owe(victim, cards=4, why=str(card), open_wd4=True)
            self.wd4 = {"by": seat, "color": color_before}
            self.turn = self._next(victim)
        elif effect == "WAA":
            assert target is not None
            self._owe(target, hits=2, why=str(card))
            self.turn = self._next(origin)
        elif effect == "WAH":
            for other in self._around(seat, include_self=False):
                self._owe(other, hits=1, why=str(card))
            self.turn = self._next(origin)
        elif card.face == "TH":
            assert target is not None
            self.hand[seat], self.hand[target] = self.hand[target], self.hand[seat]
            msgs.append(f"{who} and {self.name(target)} trade hands")
            self.turn = self._next(origin)
        else:
            self.turn = self._next(origin)

        if self.hand[seat] == 1:
            called = uno or self.uno_early == seat
            self.uno = {"seat": seat, "called": called}
            if called:
                msgs.append(f"{who} calls UNO")
        self.uno_early = None
        if self.hand[seat] == 0:
            self.winner = seat
            self.bonus = None
            msgs.append(f"{who} is out!")
        if self.bonus:
            msgs.append(f"{who} may play one more card (or `pass`)")
        msgs.extend(self._obligation_msgs())
        msgs.extend(self._maybe_end_round())
        return msgs

    def hit(self) -> list[str]:
        """The player whose turn it is chooses (or has) to hit the launcher once."""
        self._need_phase("play", self._phase_hint())
        if self.classic:
            raise RuleError("classic: nobody hits; type `draw` and the launcher dispenses a card")
        if self.pending:
            raise RuleError(f"{self._pending_hint()} first")
        if self.bonus:
            raise RuleError(f"{self.name(self.turn)} may play one more card or `pass`, not hit")
        seat = self.turn
        self._close_uno_window(seat)
        self._owe(seat, hits=1, why="hit", ends_turn=True)
        return [f"{self.name(seat)} hits: press the button once"]

    def draw(self) -> list[str]:
        """Classic: the player whose turn it is draws one card (dispensed by the launcher), then
        may play it if it is playable, or `pass`. Typed by the victim of a Wild Draw Four, it
        accepts the four cards instead of challenging."""
        self._need_phase("play", self._phase_hint())
        if not self.classic:
            raise RuleError("`draw` is for the classic deck: in UNO Attack type `hit`")
        ob = self._open_wd4()
        if ob is not None:
            ob.pop("open")
            self.wd4 = None
            return [f"{self.name(ob['seat'])} takes the WD4: 4 cards"]
        if self.pending:
            raise RuleError(f"{self._pending_hint()} first")
        seat = self.turn
        if self.drawn == seat:
            raise RuleError(f"{self.name(seat)} has drawn: play the drawn card or `pass`")
        self._close_uno_window(seat)
        self._owe(seat, cards=1, why="draw", draw=True)
        return [f"{self.name(seat)} draws a card"]

    def challenge(self, legal: bool) -> list[str]:
        """Classic: the victim of a Wild Draw Four challenges it; `legal` is the table's answer
        (the player held no card of the colour in play). Legal: the challenger draws 6 and is
        skipped; not legal: the player who played it draws 4 and the challenger keeps the turn."""
        self._need_phase("play", self._phase_hint())
        ob = self._open_wd4()
        if ob is None or self.wd4 is None:
            raise RuleError("there is no Wild Draw Four to challenge now")
        by, victim = int(self.wd4["by"]), int(ob["seat"])
        self.wd4 = None
        if legal:
            ob.pop("open")
            ob["cards"] = 6
            msgs = [f"the WD4 was legal: {self.name(victim)} draws 6"]
        else:
            self.pending.remove(ob)
            self.pending.insert(0, {"seat": by, "cards": 4, "why": "WD4 challenged"})
            self.turn = victim
            msgs = [f"the WD4 was not legal: {self.name(by)} draws 4 instead"]
        msgs.extend(self._obligation_msgs())
        return msgs

    def pass_turn(self) -> list[str]:
        """Decline the extra card after `R`/`S` (skip_reverse_play_again), or (classic) keep
        the card just drawn."""
        self._need_phase("play", self._phase_hint())
        if self.drawn is not None and not self.pending:
            who = self.name(self.drawn)
            self.turn = self._next(self.drawn)
            self.drawn = None
            return [f"{who} keeps the drawn card and passes"]
        if not self.bonus:
            raise RuleError("`pass` only declines the extra card after R or S; otherwise `hit`")
        who = self.name(self.bonus["seat"])
        self.turn = self._next(self.bonus["anchor"])
        self.bonus = None
        return [f"{who} passes"]

    def press(self, ejected: int, note: str = "") -> list[str]:
        """The box fired `ejected` cards at the seat that must hit (one press); `note` is
        appended to the first message (the session puts the press id and dry streak there)."""
        if ejected < 0:
            raise RuleError(f"a press fires 0 or more cards, not {ejected}")
        seat = self.hitter()
        if seat is None:
            raise RuleError("nobody owes a hit now")
        ob = self.pending[0]
        who = self.name(seat)
        if ob.get("open"):
            raise RuleError(f"{who} must `challenge` the WD4 or `draw` 4 first")
        if self.uno and self.uno["seat"] != seat:
            self.uno = None  # the next player has started: too late to catch
        self.hand[seat] += ejected
        self.fired[seat] += ejected
        self.fired_game[seat] += ejected
        self.presses[seat] += 1
        self.presses_game[seat] += 1
        got = f"{who} takes {_plural(ejected, 'card')}" if ejected else f"{who}: dry"
        msgs = [f"{got} (holds {self.hand[seat]})" + (f" [{note}]" if note else "")]
        if "cards" in ob:  # classic: a dispense; a short one (jam, empty) leaves the rest owed
            ob["cards"] -= ejected
            if ob["cards"] > 0:
                msgs.append(f"{who} {self._owes_phrase(ob)}")
                return msgs
            self.pending.pop(0)
            if ob.get("draw"):
                self.drawn = seat
                msgs.append(f"{who} may play the drawn card, or `pass`")
            msgs.extend(self._obligation_msgs())
            msgs.extend(self._maybe_end_round())
            return msgs
        done = ejected > 0 if ob.get("until_fire") else ob["hits"] <= 1
        if not done:
            if not ob.get("until_fire"):
                ob["hits"] -= 1
            msgs.append(f"{who} {self._owes_phrase(ob)}")
            return msgs
        self.pending.pop(0)
        if ob.get("ends_turn"):
            self.turn = self._next(seat)
        msgs.extend(self._obligation_msgs())
        msgs.extend(self._maybe_end_round())
        return msgs

    def stray(self, seat: int, cards: int) -> list[str]:
        """`cards` slipped out of the box after `seat`'s last burst was reported: they go to
        that player (RULES.md: cards left sticking out go to the player who hit)."""
        if cards < 1:
            raise RuleError(f"a stray is 1 card or more, not {cards}")
        if self.phase != "play":
            return [
                f"{_plural(cards, 'card')} slipped out after {self.name(seat)}'s last hit, "
                "after the round ended: put them back into the launcher"
            ]
        self.hand[seat] += cards
        self.fired[seat] += cards
        self.fired_game[seat] += cards
        return [
            f"{_plural(cards, 'card')} slipped out after {self.name(seat)}'s last hit: "
            f"{self.name(seat)} takes them (holds {self.hand[seat]})"
        ]

    def set_hand(self, seat: int, cards: int) -> list[str]:
        """Correct the tracked size of `seat`'s hand (a card dropped, a miscount at the table)."""
        self._need_phase("play", self._phase_hint())
        if not 0 < cards <= self.deck.total:
            raise RuleError(f"a hand in play holds 1 to {self.deck.total} cards, not {cards}")
        old, self.hand[seat] = self.hand[seat], cards
        return [f"{self.name(seat)} holds {_plural(cards, 'card')} (was {old})"]

    def call_uno(self, seat: int | None = None) -> list[str]:
        """A player says UNO: right after going down to one card, or while holding two on their
        turn (before playing the second-to-last card)."""
        self._need_phase("play", self._phase_hint())
        if self.uno and not self.uno["called"] and seat in (None, self.uno["seat"]):
            self.uno["called"] = True
            return [f"{self.name(self.uno['seat'])} calls UNO: safe"]
        me = self.turn if seat is None else seat
        if me == self.turn and not self.pending and self.hand[me] == 2:
            self.uno_early = me
            return [f"{self.name(me)} calls UNO"]
        if self.classic and seat is not None and self.uno and self.uno["seat"] == seat:
            raise RuleError(f"{self.name(seat)} already called UNO")
        if self.classic and seat is not None and self.rules.uno_penalty:
            # A false UNO call costs cards in classic; without a name it is a typing slip.
            return self._penalty(seat, "false UNO call")
        raise RuleError(
            "UNO is called by the player who has just gone down to one card "
            "(or who holds two on their turn)"
        )

    def catch(self, seat: int, accuser: int | None = None) -> list[str]:
        """Someone called UNO on `seat` first: that player hits `uno_penalty` times (classic:
        draws that many cards). Classic: a wrong accusation by a named `accuser` costs them
        the same."""
        self._need_phase("play", self._phase_hint())
        who = self.name(seat)
        wrong = not self.uno or self.uno["seat"] != seat or self.uno["called"]
        if self.classic and wrong and accuser is not None and accuser != seat:
            return self._penalty(accuser, f"wrong accusation of {who}")
        if not self.uno or self.uno["seat"] != seat:
            raise RuleError(
                f"{who} cannot be caught now: only right after going down to one card, "
                "before the next player starts"
            )
        if self.uno["called"]:
            raise RuleError(f"{who} already called UNO")
        self.uno = None
        penalty = self.rules.uno_penalty
        if self.classic:
            return self._penalty(seat, "caught without UNO")
        if penalty:
            self.pending.insert(0, {"seat": seat, "hits": penalty, "why": "caught without UNO"})
        return [f"{who} is caught without UNO: hits {_plural(penalty, 'time')}"]

    def _penalty(self, seat: int, why: str) -> list[str]:
        """Classic: `seat` draws `uno_penalty` cards, dispensed before anything else."""
        n = self.rules.uno_penalty
        if n:
            self.pending.insert(0, {"seat": seat, "cards": n, "why": why})
        return [f"{self.name(seat)}: {why}, draws {_plural(n, 'card')}"]

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
                f"{self.name(seat)} should hold {_plural(self.hand[seat], 'card')}, "
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
        msgs = [f"{self.name(seat)}: {_plural(pts, 'point')}"]
        if not self.to_enter():
            msgs.extend(self._score_round())
        return msgs

    def _score_round(self) -> list[str]:
        assert self.winner is not None
        won = self.winner
        points = [0] * len(self.players)
        for seat, cards in self.hands_left.items():
            points[int(seat)] = self.deck.points_of(parse_card(c) for c in cards)
        gained = [0] * len(self.players)
        if self.mode == "target":
            gained[won] = sum(points)
        elif self.mode == "teams":
            team = won % 2
            total = sum(p for s, p in enumerate(points) if s % 2 != team)
            for s in range(len(self.players)):
                if s % 2 == team:
                    gained[s] = total
        else:  # lowest, elimination: each scores their own hand
            gained = points
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
        msgs.extend(self._check_game_over())
        if self.phase != "over":
            self.round_no += 1
            self.dealer = won
            self.phase = "deal"
            msgs.append(f"round {self.round_no}: {self.name(won)} deals")
        return msgs

    def _gained_text(self, gained: list[int]) -> str:
        parts = [f"{self.name(s)} +{g}" for s, g in enumerate(gained) if g]
        return ", ".join(parts) if parts else "no points"

    def _check_game_over(self) -> list[str]:
        t = self.target
        if self.mode in ("target", "teams"):
            if max(self.scores) >= t:
                best = max(self.scores)
                self.game_winners = [s for s, v in enumerate(self.scores) if v == best]
        elif self.mode == "lowest":
            if max(self.scores) >= t:
                low = min(self.scores)
                self.game_winners = [s for s, v in enumerate(self.scores) if v == low]
        else:  # elimination
            out = [s for s in self.active_seats() if self.scores[s] >= t]
            for s in out:
                self.active[s] = False
            left = self.active_seats()
            msgs = [f"{self.name(s)} reaches {t} and is out" for s in out]
            if len(left) == 1:
                self.game_winners = left
            elif not left:  # everyone out at once: the lowest of them wins
                low = min(self.scores[s] for s in out)
                self.game_winners = [s for s in out if self.scores[s] == low]
            if not self.game_winners:
                return msgs
            self.phase = "over"
            return [*msgs, self._winner_text()]
        if self.game_winners:
            self.phase = "over"
            return [self._winner_text()]
        return []

    def _winner_text(self) -> str:
        names = " & ".join(self.name(s) for s in self.game_winners)
        if self.mode == "teams":
            team = self.game_winners[0] % 2
            names = " & ".join(self.name(s) for s in range(len(self.players)) if s % 2 == team)
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
        if self.phase in ("play", "score"):
            arrow = "left (clockwise)" if self.direction == 1 else "right (counter-clockwise)"
            colour = COLOR_NAMES.get(self.color or "", "-")
            lines.append(f"top {self.top}, colour {colour}, play goes {arrow}")
            for s in self.active_seats():
                mark = ">" if s == self.turn and self.phase == "play" else " "
                lines.append(
                    f" {mark}{self.name(s)}: {_plural(self.hand[s], 'card')}, "
                    f"fired {self.fired[s]} in {_plural(self.presses[s], 'press')}"
                )
            for ob in self.pending:
                lines.append(f"  owed: {self.name(ob['seat'])} {self._owes_phrase(ob)}")
        lines.extend(self.scoreboard())
        return lines

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
            "hand": list(self.hand),
            "fired": list(self.fired),
            "presses": list(self.presses),
            "fired_game": list(self.fired_game),
            "presses_game": list(self.presses_game),
            "turn": self.turn,
            "direction": self.direction,
            "color": self.color,
            "top": self.top,
            "pending": copy.deepcopy(self.pending),
            "bonus": dict(self.bonus) if self.bonus else None,
            "uno": dict(self.uno) if self.uno else None,
            "uno_early": self.uno_early,
            "drawn": self.drawn,
            "wd4": dict(self.wd4) if self.wd4 else None,
            "winner": self.winner,
            "hands_left": {str(k): list(v) for k, v in self.hands_left.items()},
            "rounds": copy.deepcopy(self.rounds),
            "game_winners": list(self.game_winners),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Referee:
        """Rebuild a referee saved by `to_dict`; InputError if the data is not such a state."""
        try:
            if data.get("version") != STATE_VERSION:
                raise InputError(f"state version {data.get('version')!r}: expected {STATE_VERSION}")
            ref = cls(
                data["players"],
                deck=data["deck"],
                mode=data["mode"],
                target=data["target"],
                options=data["options"],
            )
            for key, attr in (
                ("scores", "scores"),
                ("active", "active"),
                ("round", "round_no"),
                ("dealer", "dealer"),
                ("phase", "phase"),
                ("hand", "hand"),
                ("fired", "fired"),
                ("presses", "presses"),
                ("fired_game", "fired_game"),
                ("presses_game", "presses_game"),
                ("turn", "turn"),
                ("direction", "direction"),
                ("color", "color"),
                ("top", "top"),
                ("pending", "pending"),
                ("bonus", "bonus"),
                ("uno", "uno"),
                ("uno_early", "uno_early"),
                ("winner", "winner"),
                ("rounds", "rounds"),
                ("game_winners", "game_winners"),
            ):
                setattr(ref, attr, copy.deepcopy(data[key]))
            ref.hands_left = {int(k): list(v) for k, v in data["hands_left"].items()}
            ref.drawn = data.get("drawn")  # absent from states written before classic
            ref.wd4 = copy.deepcopy(data.get("wd4"))
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"not a table state: missing or bad field {exc}") from None
        if ref.phase not in ("deal", "play", "score", "over"):
            raise InputError(f"not a table state: phase {ref.phase!r}")
        return ref

    # -- internals --------------------------------------------------------------------------
    def _need_phase(self, phase: str, hint: str) -> None:
        if self.phase != phase:
            raise RuleError(hint)

    def _phase_hint(self) -> str:
        if self.phase == "deal":
            return f"round {self.round_no} has not started: type the card turned up"
        if self.phase == "score":
            return "the round is over: enter the cards left in each hand"
        if self.phase == "over":
            return "the game is over"
        return "not now"

    def _pending_hint(self) -> str:
        ob = self.pending[0]
        return f"{self.name(ob['seat'])} {self._owes_phrase(ob)}"

    def _owes_phrase(self, ob: dict[str, Any]) -> str:
        if "cards" in ob:
            if ob.get("open"):
                return "must `challenge` the WD4 or `draw` 4"
            return "draws 1 more card" if ob["cards"] == 1 else f"draws {ob['cards']} more cards"
        if ob.get("until_fire"):
            return "must hit until cards fire"
        n = ob["hits"]
        return "must hit once more" if n == 1 else f"must hit {n} more times"

    def _check_in_deck(self, card: Card) -> None:
        if card not in self.deck.counts:
            raise RuleError(f"`{card}` is not in the {self.deck.name} deck")

    def _effect(self, card: Card) -> str:
        """What a card does: its face, with WC bound by custom_wild_effect."""
        if card.face == "WC":
            return self.rules.custom_wild_effect
        return card.face

    def _mismatch(self, card: Card) -> str:
        colour = COLOR_NAMES.get(self.color or "", "?")
        top = parse_card(self.top) if self.top else None
        face = "" if top is None or top.is_wild else f", a {top.face}"
        return f"{card} does not go on {self.top} ({colour}): play a {colour} card{face} or a wild"

    def _matches(self, card: Card) -> bool:
        if card.is_wild:
            return True
        if card.color == self.color:
            return True
        top = parse_card(self.top) if self.top else None
        return top is not None and not top.is_wild and top.face == card.face

    def _owe(
        self,
        seat: int,
        *,
        hits: int = 0,
        until_fire: bool = False,
        why: str,
        ends_turn: bool = False,
        cards: int = 0,
        draw: bool = False,
        open_wd4: bool = False,
    ) -> None:
        ob: dict[str, Any] = {"seat": seat, "why": why}
        if cards:  # classic: cards the launcher dispenses
            ob["cards"] = cards
            if draw:
                ob["draw"] = True
            if open_wd4:
                ob["open"] = True
        elif until_fire:
            ob["until_fire"] = True
        else:
            ob["hits"] = hits
        if ends_turn:
            ob["ends_turn"] = True
        self.pending.append(ob)

    def _open_wd4(self) -> dict[str, Any] | None:
        """The Wild Draw Four obligation still waiting for `challenge` or `draw`, if any."""
        return next((ob for ob in self.pending if ob.get("open")), None)

    def _around(self, seat: int, *, include_self: bool) -> list[int]:
        """Every active seat starting at `seat`'s left (clockwise), optionally `seat` last."""
        out = []
        s = seat
        for _ in range(len(self.players)):
            s = self._next(s, direction=1)
            if s == seat:
                break
            out.append(s)
        if include_self:
            out.append(seat)
        return out

    def _obligation_msgs(self) -> list[str]:
        return [
            f"{self.name(ob['seat'])} {self._owes_phrase(ob)} ({ob['why']})" for ob in self.pending
        ][:1]

    def _close_uno_window(self, seat: int) -> None:
        if self.uno and self.uno["seat"] != seat:
            self.uno = None

    def _maybe_end_round(self) -> list[str]:
        if self.winner is None or self.pending or self.phase != "play":
            return []
        self.phase = "score"
        self.uno = None
        msgs = [f"round {self.round_no} is over: {self.name(self.winner)} went out"]
        if not self.to_enter():  # nobody else holds cards (cannot happen at a real table)
            msgs.extend(self._score_round())
        return msgs


def _is_card(word: str) -> bool:
    try:
        parse_card(word)
    except UnoError:
        return False
    return True


def _check_names(names: list[str]) -> None:
    if not 2 <= len(names) <= 10:
        raise InputError(f"{len(names)} players: a table seats 2 to 10 (--players Ann,Bob,...)")
    seen: set[str] = set()
    for name in names:
        key = name.lower()
        if not name or not name[0].isalpha() or not all(c.isalnum() or c in "-_" for c in name):
            raise InputError(
                f"player name `{name}`: letters, digits, - or _, starting with a letter"
            )
        if key.upper() in _COLOR_WORDS or key in _COMMANDS:
            raise InputError(f"player name `{name}` is a colour or a command: choose another")
        if key in seen:
            raise InputError(f"player name `{name}` is used twice")
        seen.add(key)


# ---------------------------------------------------------------------------------------------
# The session: typed lines and box events in, messages out, state saved after every action.

_COMMANDS = {
    "hand",
    "hit",
    "draw",
    "challenge",
    "resend",
    "pass",
    "uno",
    "catch",
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

HELP = """\
commands:
  CARD [COLOUR] [NAME] [N] [uno]   play a card: R5, W G, WAA B Carl (aim), RTH Bob, BDA 2 (+2 blue)
  hit                              the player whose turn it is hits the launcher once
  draw                             classic: draw a card (dispensed); or take a WD4's 4 cards
  challenge [y|n]                  classic: challenge a WD4; y/n: was it legal?
  resend                           classic: a dispense lost in a crash never fired: send again
  pass                             decline the extra card after R or S
  uno [NAME]                       UNO is called (by the player down to one card)
  catch NAME [BY]                  NAME did not call UNO in time: NAME hits twice
                                   (classic: draws 2; a wrong accusation costs BY 2)
  press                            press the box from the keyboard (same as the button)
  fired N                          without a box (--port none): the press fired N cards
  dealer NAME                      who deals (before the first card is turned up)
  hand NAME N                      correct the count: NAME really holds N cards
  load N                           the launcher was refilled and now holds N cards
  clear                            clear a jammed or empty box
  status | scores | undo | help | quit
at the end of a round: the cards left in the asked hand (R5 B7 WAA), `-` for none,
a trailing ! accepts a count that differs from the referee's."""


class TableSession:
    """Drive a `Referee` from typed lines and box events.

    `box` is a `BoxClient` (connected) or None to referee without a box (presses typed as
    `fired N`). After every line or event the referee state is saved to `state_path` and the
    box's lock and aim follow `Referee.hitter()`.
    """

    def __init__(
        self,
        referee: Referee,
        *,
        box: Any | None = None,
        state_path: Path | None = None,
        out: TextIO | None = None,
        history: list[dict[str, Any]] | None = None,
        last_event: dict[str, Any] | None = None,
        dispensing: dict[str, Any] | None = None,
    ) -> None:
        self.ref = referee
        self.box = box
        self.state_path = state_path
        self.out = out or sys.stdout
        self.history: list[dict[str, Any]] = list(history or [])
        # The last box event applied: a restarted host may be sent it again (replay).
        self.last_event: dict[str, Any] = dict(last_event or {})
        self.asking: tuple[str, str] | None = None  # (partial line, what is asked)
        self.box_locked: bool | None = None
        self.box_aim: int | None = None
        # The box's hopper after the last fire event, and who that press was for: a lower
        # hopper before the next burst means cards slipped out behind the last one.
        self.box_hopper: int | None = (last_event or {}).get("hopper")
        self.last_hitter: int | None = (last_event or {}).get("hitter")
        self.servo = True
        self.running = True
        self._lock = threading.Lock()
        # Classic: the dispense in flight, {"seat", "cards", "press_id", "hold"}. It is saved
        # BEFORE the command goes out (press_id None) and again with the box's press id, so a
        # restarted referee never sends it twice: it waits for the fire event the box replays.
        self.dispensing: dict[str, Any] | None = dict(dispensing) if dispensing else None
        # Classic: a short dispense (jam, empty launcher) waits for `clear` or `load`.
        self.dispense_hold = bool((dispensing or {}).get("hold"))
        if self.dispensing is not None and self.dispensing.get("hold"):
            self.dispensing = None
        if self.dispensing is not None:
            who = referee.name(int(self.dispensing["seat"]))
            n = _plural(int(self.dispensing["cards"]), "card")
            if self.dispensing.get("press_id") is None:
                self.say(
                    f"the referee stopped while sending a dispense of {n} for {who}: it counts "
                    "when the box reports it; if the launcher never fired them, type `resend`"
                )
            else:
                self.say(f"waiting for the box to report the dispense of {n} for {who}")

    # -- output -----------------------------------------------------------------------------
    def say(self, *lines: str) -> None:
        """Print lines to the table."""
        for line in lines:
            print(line, file=self.out, flush=True)

    def prompt(self) -> str:
        """The prompt for the next typed line."""
        ref = self.ref
        if self.asking:
            return f"{self.asking[1]}> "
        if ref.phase == "deal":
            return f"[round {ref.round_no}] {ref.name(ref.dealer)} deals: card turned up> "
        if ref.phase == "score":
            seat = ref.to_enter()[0]
            return (
                f"[round {ref.round_no}] cards left in {ref.name(seat)}'s hand ({ref.hand[seat]})> "
            )
        if ref.phase == "over":
            return "[game over] status, scores or quit> "
        hitter = ref.hitter()
        if hitter is not None and ref.classic:
            return f"[round {ref.round_no}] {ref.name(hitter)}: {ref.owed()}> "
        if hitter is not None:
            return f"[round {ref.round_no}] {ref.name(hitter)}: {ref.owed()}, press the button> "
        colour = COLOR_NAMES.get(ref.color or "", "-")
        who = ref.name(ref.turn)
        extra = " (one more card or pass)" if ref.bonus else ""
        return f"[round {ref.round_no}] {who} ({ref.hand[ref.turn]}) on {ref.top} {colour}{extra}> "

    # -- input ------------------------------------------------------------------------------
    def handle_line(self, line: str) -> bool:
        """Apply one typed line. Errors print one line; the same prompt comes again. Returns
        False when the next prompt should wait (a press was sent: its fire event answers)."""
        with self._lock:
            text = line.strip()
            if self.asking:
                partial, _ = self.asking
                self.asking = None
                if not text:
                    self.say("cancelled")
                    return True
                text = f"{partial} {text}"
            if not text:
                return True
            before = self.ref.to_dict()
            phase = self.ref.phase
            try:
                msgs = self._dispatch(text)
            except UnoError as exc:
                self.say(f"! {exc}")
                return True
            if msgs is None:  # a command that changed nothing
                return text.split()[0].lower() != "press"
            undo = text.split()[0].lower() == "undo"
            if self.ref.to_dict() != before and not undo:
                self.history.append(before)
                del self.history[:-HISTORY_LIMIT]
            self.say(*msgs)
            if phase == "score" and self.ref.phase in ("deal", "over"):
                self.say(*self.ref.scoreboard())
            self._after_change()
            return True

    def _dispatch(self, text: str) -> list[str] | None:
        ref = self.ref
        words = text.split()
        head = words[0].lower()
        args = words[1:]
        if head == "help":
            self.say(HELP)
            return None
        if head == "status":
            self.say(*ref.status())
            return None
        if head == "scores":
            self.say(*ref.scoreboard())
            return None
        if head == "quit":
            self.running = False
            self.say("state saved; run the same command again to resume")
            return None
        if head == "undo":
            if not self.history:
                raise RuleError("nothing to undo")
            if self.box is not None and (
                self.dispensing is not None
                or Referee.from_dict(self.history[-1]).dispense_due() is not None
            ):
                # The launcher cannot take cards back: undoing to a state that owes a
                # dispense would dispense those cards a second time.
                raise RuleError(
                    "undo would dispense cards again: correct the counts with `hand NAME N`"
                )
            self.ref = Referee.from_dict(self.history.pop())
            return ["undone: " + self.prompt().rstrip("> ")]
        if head == "press":
            return self._press_from_keyboard()
        if head == "fired":
            if self.box is not None:
                raise RuleError("`fired` is for a table without a box: the box reports its presses")
            if len(args) != 1 or not args[0].isdigit():
                raise InputError("fired N: the number of cards the launcher fired (0 or more)")
            return ref.press(int(args[0]))
        if head == "load":
            return self._load(args)
        if head == "clear":
            return self._clear()
        if ref.phase == "score":
            return self._enter_hand(words)
        if head == "dealer":
            if len(args) != 1:
                raise InputError("dealer NAME")
            return ref.set_dealer(ref.seat_of(args[0]))
        if head == "hit" and not args:
            return ref.hit()
        if head == "draw" and not args:
            return ref.draw()
        if head == "challenge":
            return self._challenge(args)
        if head == "resend" and not args:
            return self._resend()
        if head == "pass" and not args:
            return ref.pass_turn()
        if head == "uno":
            if len(args) > 1:
                raise InputError("uno [NAME]")
            return ref.call_uno(ref.seat_of(args[0]) if args else None)
        if head == "hand":
            if len(args) != 2 or not args[1].isdigit():
                raise InputError("hand NAME N: NAME really holds N cards")
            return ref.set_hand(ref.seat_of(args[0]), int(args[1]))
        if head == "catch":
            if len(args) not in (1, 2):
                raise InputError("catch NAME [BY]: the player who did not call UNO (and who saw)")
            accuser = ref.seat_of(args[1]) if len(args) == 2 else None
            return ref.catch(ref.seat_of(args[0]), accuser)
        return self._card_line(words)

    def _card_line(self, words: list[str]) -> list[str] | None:
        ref = self.ref
        if not _is_card(words[0]):
            raise InputError(
                f"`{words[0]}` is neither a card (R5, BS, YH2, WAA, ...) nor a command: "
                "`help` lists both"
            )
        card = parse_card(words[0], ref.deck)
        color: str | None = None
        target: int | None = None
        discarded: int | None = None
        uno = False
        for word in words[1:]:
            up = word.upper()
            if up in _COLOR_WORDS:
                color = _COLOR_WORDS[up]
            elif word.isdigit():
                discarded = int(word)
            elif up == "UNO":
                uno = True
            else:
                try:
                    target = ref.seat_of(word)
                except RuleError:
                    if _is_card(word):
                        raise RuleError(
                            f"one card per line: `{word}` would be a second card"
                        ) from None
                    raise RuleError(
                        f"`{word}` after {card}: allowed are a colour (R Y G B), a player's "
                        "name, a number (cards discarded with a DA) or uno"
                    ) from None
        text = " ".join(words)
        if ref.phase == "deal":
            if card.is_wild and color is None:
                self.asking = (
                    text,
                    f"{card} turned up: colour named by the first player (R Y G B)",
                )
                return None
            return ref.start_round(card, color)
        effect = ref._effect(card)
        # Ask for what is missing instead of refusing the whole line.
        if card.is_wild and color is None and ref.phase == "play" and not ref.pending:
            self.asking = (text, f"colour for {card} (R Y G B)")
            return None
        if (effect == "WAA" or card.face == "TH") and target is None and ref.phase == "play":
            verb = "aim at" if effect == "WAA" else "trade hands with"
            self.asking = (text, f"{card}: player to {verb}")
            return None
        if card.face == "DA" and discarded is None and ref.phase == "play" and not ref.pending:
            colour = COLOR_NAMES[card.color or "R"]
            self.asking = (text, f"how many more {colour} cards went down with {card}")
            return None
        return ref.play(card, color=color, target=target, discarded=discarded or 0, uno=uno)

    def _enter_hand(self, words: list[str]) -> list[str]:
        ref = self.ref
        seat = ref.to_enter()[0]
        force = bool(words) and words[-1].endswith("!")
        if force:
            words[-1] = words[-1][:-1]
            if not words[-1]:
                words.pop()
        if words in ([], ["-"]) or [w.lower() for w in words] == ["none"]:
            cards: list[Card] = []
        else:
            cards = [parse_card(w, ref.deck) for w in words]
        return ref.enter_hand(seat, cards, force=force)

    def _challenge(self, args: list[str]) -> list[str] | None:
        ref = self.ref
        if ref.wd4 is None:
            raise RuleError("there is no Wild Draw Four to challenge now")
        if not args:
            # The referee cannot see hands: the players show them and say.
            by = ref.name(int(ref.wd4["by"]))
            colour = COLOR_NAMES.get(ref.wd4.get("color") or "", "the colour in play")
            self.asking = ("challenge", f"was {by}'s WD4 legal ({by} held no {colour} card)? y/n")
            return None
        answer = " ".join(args).lower()
        if answer in ("y", "yes", "legal"):
            return ref.challenge(True)
        if answer in ("n", "no", "illegal"):
            return ref.challenge(False)
        raise InputError("challenge: answer y (the WD4 was legal) or n (it was not)")

    def _resend(self) -> list[str]:
        if self.dispensing is None or self.dispensing.get("press_id") is not None:
            raise RuleError("`resend` is only for a dispense lost when the referee stopped")
        self.dispensing = None
        return ["the dispense will be sent again"]

    # -- the box ----------------------------------------------------------------------------
    def _press_from_keyboard(self) -> list[str] | None:
        if self.ref.classic:
            raise RuleError("classic: nobody presses; the referee dispenses the cards owed")
        if self.box is None:
            raise RuleError("no box connected: type `fired N` with the cards it fired")
        if self.ref.hitter() is None:
            raise RuleError("nobody owes a hit now")
        self.box.press()  # its fire event is what counts, like a press of the button
        return None

    def _load(self, args: list[str]) -> list[str]:
        if len(args) != 1 or not args[0].isdigit():
            raise InputError("load N: how many cards the launcher holds now")
        if self.box is None:
            return [f"launcher holds {_plural(int(args[0]), 'card')}"]
        reply = self.box.load(total=int(args[0]))
        with contextlib.suppress(UnoError):
            self.box.clear()
        self.dispense_hold = False
        return [f"box hopper: {_plural(int(reply.get('hopper', args[0])), 'card')}"]

    def _clear(self) -> list[str]:
        if self.box is None:
            raise RuleError("no box connected")
        reply = self.box.clear()
        self.dispense_hold = False
        return [f"box: {reply.get('state', 'cleared')}"]

    def handle_event(self, event: dict[str, Any]) -> bool:
        """Apply one box event (presses count against the hitter's obligation); True when it
        printed something (so the prompt is shown again)."""
        shown = True
        with self._lock:
            if self._seen(event):
                return False
            kind = event.get("kind")
            if kind == "fire":
                shown = self._on_fire(event)
            elif kind == "state":
                shown = self._on_state(event)
            elif kind == "jam":
                self.say("box: jammed: take out the stuck cards, then type `clear`")
            elif kind == "empty":
                self.say(
                    "box: the launcher is empty: shuffle the discard pile (all but the top card) "
                    "into it and type `load N`"
                )
            elif kind == "fault":
                self.say(f"box: FAULT on {event.get('output')}: {event.get('why')}")
            else:
                shown = False
            if kind in ("refill", "hello") and isinstance(event.get("hopper"), int):
                self.box_hopper = event["hopper"]  # the hopper was filled or counted afresh
            self.last_event = {
                "stream": event.get("stream"),
                "seq": event.get("seq"),
                "hopper": self.box_hopper,
                "hitter": self.last_hitter,
            }
            self.save()
            self._sync_box()
        return shown

    def _on_state(self, event: dict[str, Any]) -> bool:
        """Only the changes a player cares about: the button locked or live, latched states."""
        to, frm = event.get("to"), event.get("from")
        if to == "locked":
            self.box_locked = True
            self.say("box: button locked")
            return True
        if to == "idle" and frm == "locked":
            self.box_locked = False
            seat = self.ref.hitter()
            who = f" for {self.ref.name(seat)}" if seat is not None else ""
            self.say(f"box: button live{who}")
            return True
        if to in ("jammed", "empty", "fault"):
            self.say(f"box: {frm} -> {to}")
            return True
        return False

    def _seen(self, event: dict[str, Any]) -> bool:
        last = self.last_event
        return (
            bool(last)
            and last.get("stream") == event.get("stream")
            and isinstance(event.get("seq"), int)
            and event["seq"] <= (last.get("seq") or 0)
        )

    def _check_strays(self, event: dict[str, Any], ejected: int) -> None:
        hopper = event.get("hopper")
        if not isinstance(hopper, int):
            return
        if self.box_hopper is not None and self.last_hitter is not None:
            strays = self.box_hopper - ejected - hopper
            if strays > 0:
                before = self.ref.to_dict()
                self.say(*self.ref.stray(self.last_hitter, strays))
                if self.ref.to_dict() != before:
                    self.history.append(before)
        self.box_hopper = hopper

    def _on_fire(self, event: dict[str, Any]) -> bool:
        reason = event.get("reason")
        ejected = int(event.get("ejected") or 0)
        self._check_strays(event, ejected)
        if self.ref.classic:
            return self._on_dispensed(event, ejected)
        hitter = self.ref.hitter()
        if refused(event):
            self.say(f"box: press {event.get('press_id')} refused ({reason}): it does not count")
            return True
        if hitter is not None:
            self.last_hitter = hitter
        if self.ref.hitter() is None:
            if ejected:
                self.say(
                    f"box fired {_plural(ejected, 'card')} but nobody owed a hit: "
                    "put them back into the launcher"
                )
            return bool(ejected)
        before = self.ref.to_dict()
        note = f"press {event.get('press_id')}, dry streak {event.get('dry_streak', 0)}"
        if reason not in ("fired", "dry"):
            note += f", {reason}"
        msgs = self.ref.press(ejected, note)
        self.history.append(before)
        del self.history[:-HISTORY_LIMIT]
        self.say(*msgs)
        if self.ref.phase in ("deal", "over"):
            self.say(*self.ref.scoreboard())
        return True

    def _on_dispensed(self, event: dict[str, Any], ejected: int) -> bool:
        """Classic: only the fire event of the dispense in flight counts, for its seat."""
        ours = self.dispensing
        if ours is None or event.get("source") != "dispense":
            if ejected:
                self.say(
                    f"box fired {_plural(ejected, 'card')} that nobody was owed: "
                    "put them back into the launcher"
                )
            return bool(ejected)
        if ours.get("press_id") not in (None, event.get("press_id")):
            return False  # an older dispense's result, already counted
        self.dispensing = None
        self.last_hitter = int(ours["seat"])
        if ejected < int(ours["cards"]):
            self.dispense_hold = True  # a jam or an empty launcher: wait for `clear`/`load`
        pending = self.ref.pending
        mine = next(
            (i for i, ob in enumerate(pending) if ob["seat"] == ours["seat"] and "cards" in ob),
            None,
        )
        if mine is not None and not pending[mine].get("open"):
            # A penalty typed while the cards were flying went in front: these are still ours.
            pending.insert(0, pending.pop(mine))
        if self.ref.hitter() != int(ours["seat"]) or self.ref.dispense_due() is None:
            if ejected:
                self.say(f"box fired {_plural(ejected, 'card')} nobody owed: put them back")
            return True
        before = self.ref.to_dict()
        msgs = self.ref.press(ejected, f"dispense {event.get('press_id')}, {event.get('reason')}")
        self.history.append(before)
        del self.history[:-HISTORY_LIMIT]
        self.say(*msgs)
        if self.dispense_hold and self.ref.dispense_due() is not None:
            self.say("the rest is dispensed after `clear` (jam) or `load N` (refilled)")
        return True

    def _dispense(self) -> None:
        """Classic: send the dispense owed now, recording it in the state file first."""
        due = self.ref.dispense_due()
        if self.box is None or due is None or self.dispensing is not None:
            return
        if self.dispense_hold:
            return
        seat, cards = due
        self.dispensing = {"seat": seat, "cards": cards, "press_id": None}
        self.save()  # the intent, before the command can reach the box
        try:
            press_id = self.box.dispense(cards)
        except UnoError as exc:
            if getattr(exc, "code", "") in ("TIMEOUT", "CLOSED"):
                # No reply: the box may still have dispensed. Keep the record, so its fire
                # event counts when it comes; sending again could dispense twice.
                self.say(
                    f"box: no answer to the dispense of {_plural(cards, 'card')} ({exc}); they "
                    "count when the box reports them; if the launcher never fired, type `resend`"
                )
                return
            # The box answered no: it dispensed nothing.
            self.dispensing = None
            self.dispense_hold = True
            self.save()
            self.say(f"box: cannot dispense {_plural(cards, 'card')}: {exc}; `clear` retries")
            return
        self.dispensing["press_id"] = press_id
        self.save()
        self.say(f"box: dispensing {_plural(cards, 'card')} for {self.ref.name(seat)}")

    def _after_change(self) -> None:
        self.save()
        self._sync_box()

    def _sync_box(self) -> None:
        """Lock the button unless a seat must hit; unlock (and aim) for that seat."""
        if self.box is None:
            return
        seat = self.ref.hitter()
        if self.ref.classic:
            seat = None  # nobody presses in classic: the button stays locked
        try:
            if seat is None:
                if self.box_locked is not True:
                    self.box.lock()
                    self.box_locked = True
                    self.box_aim = None
                if self.ref.classic:
                    self._dispense()
                return
            if self.servo and self.box_aim != seat:
                try:
                    self.box.aim(seat)
                    self.box_aim = seat
                except UnoError as exc:
                    if "servo" in str(exc).lower():
                        self.servo = False
                    else:
                        self.say(f"box: cannot aim at {self.ref.name(seat)}: {exc}")
                        self.box_aim = seat
            if self.box_locked is not False:
                self.box.unlock()
                self.box_locked = False
        except UnoError as exc:
            self.say(f"box: {exc}")

    def save(self) -> None:
        """Write the state file atomically (temp file, fsync, rename)."""
        if self.state_path is None:
            return
        data = {
            "referee": self.ref.to_dict(),
            "history": self.history,
            "last_event": self.last_event,
            "dispensing": self._dispense_record(),
        }
        write_json_atomic(self.state_path, data)

    def _dispense_record(self) -> dict[str, Any] | None:
        if self.dispensing is not None:
            return dict(self.dispensing, hold=False)
        if self.dispense_hold:
            return {"hold": True}
        return None

    # -- the loop ---------------------------------------------------------------------------
    def run(self, lines: TextIO) -> int:
        """Read lines from `lines` and events from the box until `quit` or end of input."""
        items: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()

        def read_lines() -> None:
            for line in iter(lines.readline, ""):
                items.put(("line", line))
            items.put(("eof", None))

        def read_events() -> None:
            assert self.box is not None
            while not stop.is_set():
                try:
                    for event in self.box.events(timeout=0.2):
                        items.put(("event", event))
                        if stop.is_set():
                            break
                except UnoError as exc:
                    items.put(("box-error", exc))
                    return
                except Exception as exc:  # the reader must never die silently
                    items.put(("box-error", exc))
                    return

        threading.Thread(target=read_lines, daemon=True, name="table-stdin").start()
        if self.box is not None:
            threading.Thread(target=read_events, daemon=True, name="table-box").start()
        self._sync_box()
        self.save()
        self.say(*self.ref.status())
        self._show_prompt()
        try:
            while self.running:
                kind, item = items.get()
                if kind == "eof":
                    break
                shown = True
                if kind == "line":
                    shown = self.handle_line(item)
                elif kind == "event":
                    shown = self.handle_event(item)
                else:
                    self.say(f"box connection lost: {item}")
                    return 1
                if self.running and shown:
                    self._show_prompt()
        finally:
            stop.set()
        return 0

    def _show_prompt(self) -> None:
        print(self.prompt(), end="", file=self.out, flush=True)
        if not getattr(self.out, "isatty", lambda: False)():
            print(file=self.out, flush=True)  # piped: one prompt per line, easy to follow


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that a crash leaves either the old file or the new one, never half."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _check_state_folder(state: Path) -> None:
    """The state file's folder must exist before the game starts: finding out at the first save
    would lose that action (and the message would name a temporary file)."""
    folder = state.parent
    if not folder.exists():
        raise InputError(
            f"--state {state}: folder {folder} does not exist; create it or give another FILE"
        )
    if not folder.is_dir():
        raise InputError(f"--state {state}: {folder} is not a folder; give another FILE")


def _read_dispensing(path: Path) -> dict[str, Any] | None:
    """The classic dispense in flight (or on hold) saved with the state, if any."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    record = data.get("dispensing")
    return dict(record) if isinstance(record, dict) else None


def load_state(path: Path) -> tuple[Referee, list[dict[str, Any]], dict[str, Any]]:
    """Read a state file written by `TableSession.save`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read state file: {exc.strerror}") from None
    except UnicodeDecodeError:
        # A binary file given by mistake: name it, not the codec.
        raise InputError(
            f"{path}: not a table state file (binary, not JSON text); give another --state "
            "FILE, or --new to start a new game in it"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not a table state file: {exc}") from None
    if not isinstance(data, dict) or "referee" not in data:
        raise InputError(f"{path}: not a table state file")
    ref = Referee.from_dict(data["referee"])
    return ref, list(data.get("history") or []), dict(data.get("last_event") or {})


# ---------------------------------------------------------------------------------------------
# Command line


def register(subparsers: Any) -> None:
    """Add the `table` subcommand."""
    p = subparsers.add_parser(
        "table",
        help="referee a real table with a real box",
        description=(
            "Referee a game at a real table: type what each player plays (card notation, hit, "
            "uno, catch NAME); the box's button is unlocked and aimed only for the seat that must "
            "hit. The state is saved after every action: run the same command again to resume."
        ),
    )
    p.add_argument("--port", required=True, help="the box's serial port (or `none` for no box)")
    p.add_argument(
        "--players", required=True, metavar="NAMES", help="comma-separated names, clockwise"
    )
    p.add_argument(
        "--deck",
        default="attack",
        metavar="PRESET",
        help="attack (default), attack-1998 or classic (the referee dispenses every draw)",
    )
    p.add_argument("--mode", default="target", choices=MODES, help="scoring mode (default target)")
    p.add_argument("--target", type=int, default=500, help="points that end the game (500)")
    p.add_argument(
        "--state",
        type=Path,
        default=Path("unoattack-table.json"),
        metavar="FILE",
        help="state file, saved after every action (default unoattack-table.json)",
    )
    p.add_argument("--new", action="store_true", help="start a new game even if FILE exists")
    p.set_defaults(func=run_table)


def build_session(args: argparse.Namespace, box: Any | None, out: TextIO) -> TableSession:
    """The session for `args`: resumed from the state file when it exists (and not --new)."""
    players = [p.strip() for p in args.players.split(",")]
    state: Path = args.state
    if state.exists() and not args.new:
        ref, history, last = load_state(state)
        if [p.lower() for p in ref.players] != [p.lower() for p in players]:
            raise InputError(
                f"{state} holds a game of {','.join(ref.players)}: use those --players, "
                "or --new to start over"
            )
        dispensing = _read_dispensing(state)
        session = TableSession(
            ref,
            box=box,
            state_path=state,
            out=out,
            history=history,
            last_event=last,
            dispensing=dispensing,
        )
        session.say(f"resuming the game saved in {state}")
        return session
    ref = Referee(players, deck=args.deck, mode=args.mode, target=args.target)
    last_event: dict[str, Any] = {}
    if box is not None and box.box.get("stream"):
        # A new game: whatever the box did before it started is none of its business.
        last_event = {"stream": box.box["stream"], "seq": int(box.box.get("seq") or 0)}
    return TableSession(ref, box=box, state_path=state, out=out, last_event=last_event)


def run_table(args: argparse.Namespace) -> int:
    """`unoattack table`: the interactive referee loop."""
    state: Path = args.state
    _check_state_folder(state)
    resume: dict[str, Any] = {}
    if state.exists() and not args.new:
        resume = load_state(state)[2]
    else:  # usage errors (names, deck, mode) before touching the box
        Referee(
            [p.strip() for p in args.players.split(",")],
            deck=args.deck,
            mode=args.mode,
            target=args.target,
        )
    box = None
    if args.port.lower() != "none":
        from engine.client import BoxClient, BoxError

        box = BoxClient(args.port)  # a bad port name: BoxError BAD_PORT, exit 2
        if resume.get("stream"):
            # Ask the box to replay every event after the last one this game applied: a press
            # made while the host was down still counts, and none counts twice.
            box.position.stream = resume["stream"]
            box.position.seq = int(resume.get("seq") or 0)
        try:
            box.connect()
        except BoxError as exc:
            if exc.code == "BAD_PORT":  # not a port name pyserial knows: the user's mistake
                raise InputError(str(exc)) from None
            raise
    try:
        session = build_session(args, box, sys.stdout)
        return session.run(sys.stdin)
    finally:
        if box is not None:
            box.close()


__all__ = [
    "MODES",
    "Referee",
    "TableSession",
    "build_session",
    "load_state",
    "register",
    "run_table",
    "write_json_atomic",
]
