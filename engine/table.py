"""`unoattack table`: a referee for a real table with a real box.

The referee cannot see hands. It keeps what a careful person at the table could keep: whose turn
it is, the direction, the current colour and top card, how many cards each player holds, how
many cards the box fired at each seat, and who still owes hits ("Bob hits 2 more times",
"Carl hits until cards come"). Players type what they played in card notation; the referee checks
it as far as it can, locks the box's button when nobody should press, unlocks it (and aims the
servo) for the seat that must hit, and counts the box's fire events against that obligation.
With the classic deck nobody presses: the referee dispenses every draw owed itself (`dispense N`)
and adds the cards each dispense ejected to that hand.

Three layers, so the rules can be tested without a box:

- the rules are `Round`'s (engine/game.py), played on hand counts by `BlindRound`
  (engine/blind.py);
- `Referee` (engine/referee.py) is the game's state: scores, tallies, the round; every method
  changes the state and returns messages, or raises `RuleError` and changes nothing;
- `TableSession` (here) is the I/O: it parses typed lines, asks for what a line leaves out, feeds
  box events in, keeps the button's lock and aim in step with `Referee.hitter()`, keeps an undo
  history and saves the state file after every action.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import queue
import sys
import tempfile
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, cast

from engine.boxport import add_box_arguments, check_box_arguments, open_box
from engine.cards import COLORS, PRESETS, Card, load_deck, parse_card
from engine.console import Console
from engine.effects import effect_of
from engine.errors import InputError, RuleError, UnoError
from engine.referee import (
    COLOR_WORDS,
    MODES,
    STATE_VERSION,
    Referee,
    is_card,
    plural,
)
from engine.rules import parse_option
from engine.state_lock import holding
from engine.words import colour_name
from firmware import textfile
from firmware.commandline import CtrlC, digits, whole_number
from firmware.jam import JamParams
from i18n import N_, _, message_of, number
from wire.text import news

# Fire reasons that mean "nothing was pressed": the press never reached the mechanism. A press
# refused by a latched box (`jammed`, `empty`, `fault`) says so with `planned` 0, while a burst
# cut short by a jam or an empty hopper was planned: it was a hit.
NOT_A_HIT = frozenset({"locked", "queue_full", "stopping"})
REFUSED_WHEN_UNPLANNED = frozenset({"jammed", "empty", "fault"})
HISTORY_LIMIT = 30  # undo steps kept in the state file
# `fired N` without a box: one press fires at most the launcher's default max_burst.
MAX_FIRED = JamParams.max_burst
# A press sent from the keyboard waits this long for the box's fire event before the next line.
FIRE_WAIT_S = 30.0
# A typed line, from the keyboard, a pipe or a phone (`line_problem`, the one check): the longest
# real one (a hand) is ~60, and a word is a card, a command, a number or a name (at most
# referee.MAX_NAME): anything longer is no move.
MAX_LINE = 200
MAX_WORD = 40


def refused(event: dict[str, Any]) -> bool:
    """True when a fire event is a press the box refused (it counts for nobody)."""
    reason = event.get("reason")
    if reason in NOT_A_HIT:
        return True
    return (
        reason in REFUSED_WHEN_UNPLANNED and not event.get("planned") and not event.get("ejected")
    )


# i18n: the commands (hit, uno, catch, ...) and card notation stay as they are: people type them
HELP = N_("""\
commands:
  CARD [COLOUR] [NAME] [N] [uno]   play a card: R5, W G, WAA B Carl (aim), RTH Bob, BDA 2 (+2 blue)
  CARD CARD ... [COLOUR]           multi_play: several cards of one face (R5 B5 G5 B)
  jump NAME CARD                   jump_in: NAME plays the same card out of turn
  hit                              the player whose turn it is hits the launcher once
  draw                             classic: draw a card (dispensed); or take a WD4 / D2 owed
  challenge [y|n]                  classic: challenge a WD4; y/n: was it legal?
  resend                           classic: a dispense lost in a crash never fired: send again
  pass                             decline the extra card after R or S, or keep what came
  uno [NAME]                       UNO is called (3 or more cards: a false call, 2 hits)
  catch NAME [BY]                  NAME did not call UNO in time: NAME hits twice
                                   (classic: draws 2; a wrong accusation costs BY the same)
  press                            press the box from the keyboard (same as the button)
  fired N                          without a box (--port none): the press fired N cards
  dealer NAME                      who deals (before the first card is turned up)
  hand NAME N                      correct the count: NAME really holds N cards
  load N                           the launcher was refilled and now holds N cards
  clear                            clear a jammed or empty box
  status | scores | undo | help | quit
at the end of a round: the cards left in the asked hand (R5 B7 WAA), `-` for none,
a trailing ! accepts a count that differs from the referee's.
A question (a colour, a player, a count) is asked again until answered; an empty line cancels.""")

# What a sub-prompt asks for, and the answers each kind takes.
_ASK_HINT = {
    "colour": N_("answer a colour: R, Y, G or B (an empty line cancels)"),
    "target": N_("answer a player's name"),
    "discards": N_("answer how many: 0 or more"),
    "challenge": N_("answer y (the WD4 was legal) or n (it was not)"),
}


@dataclass
class Question:
    """What the referee asks for before it can apply a line: `line` is the partial line,
    `text` the question, `kind` what answers it (``colour``, ``target``, ``discards`` or
    ``challenge``) and `answers` the words the referee accepts, each tried on a copy of it
    (`line` + " " + answer is a line it applies, or one it asks its next question about)."""

    line: str
    text: str
    kind: str
    answers: list[str] = field(default_factory=list)


class StateNotSaved(UnoError):
    """The state file could not be written, or what would be written could not be loaded."""


def _unsaved(exc: Exception) -> str:
    """Why a save failed, in one line (an OSError from below `save` included)."""
    if isinstance(exc, OSError):
        return _("cannot save the game: {error}").format(error=exc.strerror or exc)
    return message_of(exc)


@dataclass
class _Mark:
    """A session's state as it was before a change (`TableSession._mark`)."""

    referee: dict[str, Any]
    history: list[dict[str, Any]]
    undo_floor: int
    last_event: dict[str, Any]
    dispensing: dict[str, Any] | None
    dispense_hold: bool
    box_hopper: int | None
    last_hitter: int | None


def line_problem(text: str) -> str | None:
    """Why a typed line can be no move or command, in one line; None when it may be one. A
    control character (an escape sequence piped in, a form feed) would be echoed to the
    terminal by the refusal, and a word of 100,000 characters quoted back whole."""
    for char in text:
        if "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8 (surrogateescape)
            return _("a line that is not UTF-8 text: type cards, commands and names as plain text")
        if char != "\t" and unicodedata.category(char) in _NOT_TYPED:
            return _(
                "a line with the control character U+{code:04X}: type cards, commands and "
                "names as plain text"
            ).format(code=ord(char))
    if len(text) > MAX_LINE:
        return _("a line of {count} characters: a line is at most {most}").format(
            count=number(len(text)), most=number(MAX_LINE)
        )
    for word in text.split():
        if len(word) > MAX_WORD:
            return _(
                "`{start}...` is {count} characters long: a card, a command, a number or a "
                "name is at most {most}"
            ).format(start=word[:20], count=number(len(word)), most=MAX_WORD)
    return None


_NOT_TYPED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


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
        undo_floor: int = 0,
        console: Console | None = None,
    ) -> None:
        self.ref = referee
        self.box = box
        self.state_path = state_path
        self.out = out or sys.stdout
        self.console = console
        self.history: list[dict[str, Any]] = list(history or [])
        # With a box, undo stops at the last step a box event made: the cards it fired have
        # left the box, and undoing would unlock the button for them again.
        self.undo_floor = min(max(undo_floor, 0), len(self.history))
        # The last box event applied: a restarted host may be sent it again (replay).
        self.last_event: dict[str, Any] = dict(last_event or {})
        self.asking: Question | None = None  # the question the next line answers
        self.refused_lines = 0  # lines refused (a piped session exits 1 if any)
        self.refusal: str | None = None  # why the last refused line was refused
        self.box_locked: bool | None = None
        self.box_aim: int | None = None
        # The box's hopper after the last fire event, and who that press was for: a lower
        # hopper before the next burst means cards slipped out behind the last one.
        self.box_hopper: int | None = (last_event or {}).get("hopper")
        self.last_hitter: int | None = (last_event or {}).get("hitter")
        self.servo = True
        self.running = True
        self._saved: str | None = None  # what the state file holds (see `save`)
        self._checked_steps: set[str] = set()  # undo steps read back already (`_step_key`)
        self._unloadable = False  # the loader refused the game as it is (until it is saved)
        # How the state file is named to whoever reads the session's words (a web page's
        # readers are not told the server's paths).
        self.state_label = str(state_path)
        self._lock = threading.RLock()
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
            n = plural(int(self.dispensing["cards"]), "card")
            if self.dispensing.get("press_id") is None:
                self.say(
                    _(
                        "the referee stopped while sending a dispense of {cards} for {player}: it "
                        "counts when the box reports it; if the launcher never fired them, type "
                        "`resend`"
                    ).format(cards=n, player=who)
                )
            else:
                self.say(
                    _("waiting for the box to report the dispense of {cards} for {player}").format(
                        cards=n, player=who
                    )
                )

    # -- output -----------------------------------------------------------------------------
    def say(self, *lines: str) -> None:
        """Print lines to the table (above the prompt, on a terminal where one is typed at).
        An `out` with a `keep` method is handed the lines themselves (`i18n.Phrase`s: the web
        page says each again in its reader's language)."""
        if self.console is not None:
            self.console.show(list(lines), self.prompt())
            return
        keep = getattr(self.out, "keep", None)
        for line in lines:
            if keep is not None:
                keep(line)
            else:
                print(line, file=self.out, flush=True)

    def prompt(self) -> str:
        """The prompt for the next typed line."""
        return self.next_step() + "> "

    def next_step(self) -> str:
        """What happens next, in words: the prompt without its `> `."""
        ref = self.ref
        if self.asking:
            return self.asking.text
        where = "[" + _("round {round}").format(round=ref.round_no) + "] "
        if ref.phase == "deal":
            return where + _("{dealer} deals: card turned up").format(dealer=ref.name(ref.dealer))
        if ref.phase == "score":
            seat = ref.to_enter()[0]
            return where + _("cards left in {player}'s hand ({count})").format(
                player=ref.name(seat), count=ref.hand[seat]
            )
        if ref.phase == "over":
            return "[" + _("game over") + "] " + _("status, scores or quit")
        hitter = ref.hitter()
        if hitter is not None and (
            ref.classic or (ref.round is not None and ref.round.answerable())
        ):
            return where + ref.name(hitter) + ": " + ref.owed()
        if hitter is not None:
            return where + _("{player}: {owed}, press the button").format(
                player=ref.name(hitter), owed=ref.owed()
            )
        if ref.bonus:
            said = _("{player} ({count}) on {card} {colour} (one more card or pass)")
        elif ref.may_play_taken():
            said = _("{player} ({count}) on {card} {colour} (play what came, or pass)")
        else:
            said = _("{player} ({count}) on {card} {colour}")
        return where + said.format(
            player=ref.name(ref.turn),
            count=ref.hand[ref.turn],
            card=ref.top,
            colour=colour_name(ref.color),
        )

    def view(self) -> dict[str, Any]:
        """The table's state as JSON-able data, for whoever shows it: `unoattack table --json`
        prints it, the web page shows it. The referee's `summary()` and the session's part:
        the prompt (what happens next, in words), the button (`box`: connected; `locked`; the
        `seat` it is live for; `aim`), the dispense in flight (classic) and how many steps
        `undo` can take back."""
        with self._lock:
            data = self.ref.summary()
            hitter = data["hitter"]
            if self.box is None:
                button = {"box": False, "locked": None, "seat": hitter, "aim": None}
            else:
                live = not self.box_locked and not self.ref.classic
                button = {
                    "box": True,
                    "locked": self.box_locked,
                    "seat": hitter if live else None,
                    "aim": self.box_aim,
                }
            data.update(
                prompt=self.next_step(),
                button=button,
                dispensing=dict(self.dispensing) if self.dispensing else None,
                undo=max(0, len(self.history) - self.undo_floor),
            )
            return data

    # -- input ------------------------------------------------------------------------------
    def handle_line(self, line: str) -> bool:
        """Apply one typed line. Errors print one line; the same prompt (or question) comes
        again. Returns False when the next prompt should wait (a press was sent: its fire event
        answers)."""
        with self._lock:
            text = line.strip()
            problem = line_problem(text)
            if problem:
                self._refuse(problem)  # (the same question, if one was asked, again)
                return True
            asked = self.asking
            if asked is not None:
                if not text:
                    self.asking = None
                    self.say(_("cancelled"))
                    return True
                problem = self._answer_problem(asked.kind, text)
                if problem:
                    self._refuse(problem)  # the same question again
                    return True
                self.asking = None
                text = f"{asked.line} {text}"
            if not text:
                return True
            mark = self._mark()
            phase = self.ref.phase
            try:
                msgs = self._dispatch(text)
                if msgs is not None:
                    undo = text.split()[0].lower() == "undo"
                    self._done(mark, phase, msgs, undoable=not undo)
            except UnoError as exc:  # refused, or not saved (and undone)
                if asked is not None and self.asking is None:
                    self.asking = asked  # the answer did not do: ask the same question again
                self._refuse(message_of(exc))
                return True
            if msgs is None:  # a command that changed nothing
                return text.split()[0].lower() != "press"
            return True

    def apply(self, change: Callable[[Referee], list[str]]) -> list[str]:
        """One change of the game made by code rather than typed: `change(referee)` calls the
        referee (a bot at the table telling it what it did, `demo --web`) and returns its
        messages. It is a step of the session like a typed line: said, undoable, saved, the
        button brought in step. UnoError when the referee refuses any part of it: then
        nothing has changed."""
        with self._lock:
            mark = self._mark()
            phase = self.ref.phase
            try:
                msgs = change(self.ref)
            except UnoError:
                self._restore(mark)  # a refusal half way: none of it
                raise
            self._done(mark, phase, msgs)
            return msgs

    def _done(self, mark: _Mark, phase: str, msgs: list[str], *, undoable: bool = True) -> None:
        """After a change: an undo step, the state file (or, when it cannot be saved, the
        session back as it was at `mark` and UnoError), the messages (and the scores when a
        round was scored), and the button."""
        if undoable and self.ref.to_dict() != mark.referee:
            self._remember(mark.referee)
        self._save_or_undo(mark)
        self.say(*msgs)
        if phase == "score" and self.ref.phase in ("deal", "over"):
            self.say(*self.ref.scoreboard())
        self.sync_box()

    def _refuse(self, message: str) -> None:
        self.refused_lines += 1
        self.refusal = message
        self.say("! " + message)

    def _remember(self, before: dict[str, Any], *, by_box: bool = False) -> None:
        """Keep `before` as an undo step; a box's step (with a box) cannot be undone. A state
        the loader refused (a box event left it so) is no step: it could never be saved."""
        if self._unloadable:
            return
        self.history.append(before)
        overflow = len(self.history) - HISTORY_LIMIT
        if overflow > 0:
            del self.history[:overflow]
            self.undo_floor = max(0, self.undo_floor - overflow)
        if by_box and self.box is not None:
            self.undo_floor = len(self.history)

    def _answer_problem(self, kind: str, text: str) -> str | None:
        """Why `text` does not answer a question of `kind` (None when it does)."""
        words = text.split()
        if kind == "colour":
            ok = len(words) == 1 and words[0].upper() in COLOR_WORDS
        elif kind == "target":
            ok = len(words) == 1 and any(p.lower() == words[0].lower() for p in self.ref.players)
        elif kind == "discards":
            ok = len(words) == 1 and digits(words[0]) is not None
        else:  # challenge
            ok = text.lower() in ("y", "yes", "legal", "n", "no", "illegal")
        if ok:
            return None
        hint = _(_ASK_HINT[kind])
        if kind == "target":
            hint += f": {', '.join(self.ref.players)}"
        return "`" + text + "`: " + hint

    def _dispatch(self, text: str) -> list[str] | None:
        ref = self.ref
        words = text.split()
        head = words[0].lower()
        args = words[1:]
        if head == "help":
            self.say(_(HELP))
            return None
        if head == "status":
            self.say(*ref.status())
            return None
        if head == "scores":
            self.say(*ref.scoreboard())
            return None
        if head == "quit":
            self.running = False
            return None
        if head == "undo":
            return self._undo()
        if head == "press":
            return self._press_from_keyboard()
        if head == "fired":
            return self._fired(args)
        if head == "load":
            return self._load(args)
        if head == "clear":
            return self._clear()
        if ref.phase == "score":
            return self._enter_hand(words)
        if head == "dealer":
            if len(args) != 1:
                raise InputError(_("dealer NAME"))
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
                raise InputError(_("uno [NAME]"))
            return ref.call_uno(ref.seat_of(args[0]) if args else None)
        if head == "hand":
            if len(args) != 2 or digits(args[1]) is None:
                raise InputError(_("hand NAME N: NAME really holds N cards"))
            return ref.set_hand(ref.seat_of(args[0]), int(args[1]))
        if head == "catch":
            if len(args) not in (1, 2):
                raise InputError(
                    _("catch NAME [BY]: the player who did not call UNO (and who saw)")
                )
            accuser = ref.seat_of(args[1]) if len(args) == 2 else None
            return ref.catch(ref.seat_of(args[0]), accuser)
        if head == "jump":
            if len(args) < 2:
                raise InputError(_("jump NAME CARD: NAME plays the card just played, out of turn"))
            if not ref.rules.jump_in:
                raise RuleError(_("jump-ins are off (rule option jump_in)"))
            return self._card_line(args[1:], seat=ref.seat_of(args[0]))
        return self._card_line(words)

    def _undo(self) -> list[str]:
        if not self.history:
            raise RuleError(_("nothing to undo"))
        if len(self.history) <= self.undo_floor:
            raise RuleError(
                _(
                    "undo would take back cards the box has fired: correct the counts with "
                    "`hand NAME N`"
                )
            )
        if self.box is not None and (
            self.dispensing is not None
            or Referee.from_dict(self.history[-1]).dispense_due() is not None
        ):
            # The launcher cannot take cards back: undoing to a state that owes a
            # dispense would dispense those cards a second time.
            raise RuleError(
                _("undo would dispense cards again: correct the counts with `hand NAME N`")
            )
        self.ref = Referee.from_dict(self.history.pop())
        return [_("undone: {state}").format(state=self.next_step())]

    def _fired(self, args: list[str]) -> list[str]:
        ref = self.ref
        if self.box is not None:
            raise RuleError(_("`fired` is for a table without a box: the box reports its presses"))
        if len(args) != 1 or digits(args[0]) is None:
            raise InputError(_("fired N: the number of cards the launcher fired (0 or more)"))
        n = int(args[0])
        due = ref.dispense_due()
        if ref.classic and due is not None:
            if n > due[1]:
                raise InputError(
                    _("fired {count}: the launcher was asked for {cards}").format(
                        count=n, cards=plural(due[1], "card")
                    )
                )
        elif ref.phase == "play":
            room = max(0, ref.deck.total - sum(ref.hand) - 1)
            most = min(MAX_FIRED, room)
            if n > most:
                raise InputError(
                    _(
                        "fired {count}: one press fires 0 to {most} cards (the box's max_burst is "
                        "{burst}; {cards} can be in the launcher)"
                    ).format(count=n, most=most, burst=MAX_FIRED, cards=plural(room, "card"))
                )
        return ref.press(n)

    def _card_line(self, words: list[str], *, seat: int | None = None) -> list[str] | None:
        ref = self.ref
        if not is_card(words[0]):
            raise InputError(
                _(
                    "`{word}` is neither a card (R5, BS, YH2, WAA, ...) nor a command: `help` "
                    "lists both"
                ).format(word=words[0])
            )
        cards: list[Card] = [parse_card(words[0], ref.deck)]
        color: str | None = None
        target: int | None = None
        discarded: int | None = None
        uno = False
        for word in words[1:]:
            up = word.upper()
            if up in COLOR_WORDS:
                color = COLOR_WORDS[up]
            elif digits(word) is not None:
                discarded = int(word)
            elif up == "UNO":
                uno = True
            elif is_card(word) and not any(p.lower() == word.lower() for p in ref.players):
                if not ref.rules.multi_play or ref.phase != "play":
                    raise RuleError(
                        _(
                            "one card per line: `{word}` would be a second card (rule option "
                            "multi_play is off)"
                        ).format(word=word)
                    )
                cards.append(parse_card(word, ref.deck))
            else:
                try:
                    target = ref.seat_of(word)
                except RuleError:
                    raise RuleError(
                        _(
                            "`{word}` after {card}: allowed are a colour (R Y G B), a player's "
                            "name, a number (cards discarded with a DA) or uno"
                        ).format(word=word, card=cards[0])
                    ) from None
        text = " ".join(words)
        if seat is not None:
            text = f"jump {ref.name(seat)} {text}"
        if ref.phase == "deal":
            if len(cards) > 1:
                raise RuleError(_("one card is turned up"))
            if cards[0].is_wild and color is None:
                first = cards[0]
                answers = self._tried(
                    [(c, lambda c=c: ref.copy().start_round(first, c)) for c in COLORS]
                )
                self._ask(
                    text,
                    "colour",
                    _("{card} turned up: colour named by the first player").format(card=first),
                )
                self._offer(answers)
                return None
            return ref.start_round(cards[0], color)
        card = cards[0]
        effect = effect_of(card.face, ref.rules.custom_wild_effect)
        # Ask for what is missing instead of refusing the whole line: the colour of a wild (or
        # among several colours played), a target, a Discard All's count. Only when some answer
        # would make the play legal; otherwise the refusal comes now.
        missing: list[str] = []
        if color is None and (card.is_wild or len({c.color for c in cards}) > 1):
            missing.append("colour")
        if effect.aims and target is None:
            missing.append("target")
        if effect.discards_colour and discarded is None:
            missing.append("discards")
        if ref.phase != "play":
            missing = []

        def attempt(trial: Referee, colour: str | None, aim: int | None, count: int | None) -> Any:
            return trial.play(
                cards if len(cards) > 1 else card,
                color=colour,
                target=aim,
                discarded=count or 0,
                uno=uno,
                seat=seat,
            )

        if missing:
            player = seat if seat is not None else ref.actor
            held = ref.hand[player] if player is not None else 0
            answers = self._answers(missing, color, target, discarded, held, attempt)
            kind = missing[0]
            if kind == "colour":
                question = _("colour for {cards} (R Y G B)").format(cards=" ".join(map(str, cards)))
            elif kind == "target" and card.is_wild:
                question = _("{card}: player to aim at").format(card=card)
            elif kind == "target":
                question = _("{card}: player to trade hands with").format(card=card)
            else:
                question = _("how many more {colour} cards went down with {card}").format(
                    colour=colour_name(card.color, ""), card=card
                )
            self._ask(text, kind, question)
            self._offer(answers)
            return None
        return attempt(ref, color, target, discarded)

    def _answers(
        self,
        missing: list[str],
        color: str | None,
        target: int | None,
        discarded: int | None,
        held: int,
        attempt: Any,
    ) -> list[str]:
        """The words that answer the first of the `missing` questions: those with which some
        answer to the others makes the play legal, tried on copies of the referee (`held`: the
        cards the player holds, the most a DA can take along). RuleError (the first reason
        met) when none does: a question is asked only when it can be answered."""
        ref = self.ref
        choices: dict[str, list[tuple[str, Any]]] = {
            "colour": [(c, c) for c in COLORS],
            "target": [(ref.name(s), s) for s in ref.active_seats()],
            "discards": [(str(n), n) for n in range(held + 1)],
        }
        given: dict[str, Any] = {"colour": color, "target": target, "discards": discarded}
        first, rest = missing[0], missing[1:]

        def legal(value: Any) -> None:
            error: UnoError | None = None
            for combo in itertools.product(*(choices[k] for k in rest)):
                values = {
                    **given,
                    first: value,
                    **{k: v for k, (_, v) in zip(rest, combo, strict=True)},
                }
                try:
                    attempt(ref.copy(), values["colour"], values["target"], values["discards"])
                except UnoError as exc:
                    error = error or exc
                else:
                    return
            assert error is not None
            raise error

        return self._tried([(word, lambda v=value: legal(v)) for word, value in choices[first]])

    @staticmethod
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

    def _ask(self, partial: str, kind: str, question: str) -> None:
        self.asking = Question(partial, question, kind)

    def _offer(self, answers: list[str]) -> None:
        assert self.asking is not None
        self.asking.answers = answers

    def question(self) -> Question | None:
        """The question the session waits for an answer to (None when it waits for a line),
        with the answers the referee accepts."""
        return self.asking

    def forget_question(self) -> None:
        """Drop the question asked, without a word (a caller that sends whole lines only)."""
        self.asking = None

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
        wd4 = ref.wd4
        if wd4 is None:
            raise RuleError(_("there is no Wild Draw Four to challenge now"))
        if not args:
            # The referee cannot see hands: the players show them and say.
            by = ref.name(int(wd4["by"]))
            colour = colour_name(wd4.get("color"), _("the colour in play"))
            answers = self._tried(
                [
                    ("y", lambda: ref.copy().challenge(True)),
                    ("n", lambda: ref.copy().challenge(False)),
                ]
            )
            self._ask(
                "challenge",
                "challenge",
                _("was {player}'s WD4 legal ({player} held no {colour} card)? y/n").format(
                    player=by, colour=colour
                ),
            )
            self._offer(answers)
            return None
        answer = " ".join(args).lower()
        if answer in ("y", "yes", "legal"):
            return ref.challenge(True)
        if answer in ("n", "no", "illegal"):
            return ref.challenge(False)
        raise InputError(_("challenge: answer y (the WD4 was legal) or n (it was not)"))

    def _resend(self) -> list[str]:
        if self.dispensing is None or self.dispensing.get("press_id") is not None:
            raise RuleError(_("`resend` is only for a dispense lost when the referee stopped"))
        self.dispensing = None
        return [_("the dispense will be sent again")]

    # -- the box ----------------------------------------------------------------------------
    def _press_from_keyboard(self) -> list[str] | None:
        if self.ref.classic:
            raise RuleError(_("classic: nobody presses; the referee dispenses the cards owed"))
        if self.box is None:
            raise RuleError(_("no box connected: type `fired N` with the cards it fired"))
        if self.ref.hitter() is None:
            raise RuleError(_("nobody owes a hit now"))
        self.box.press()  # its fire event is what counts, like a press of the button
        return None

    def _load(self, args: list[str]) -> list[str]:
        if len(args) != 1 or digits(args[0]) is None:
            raise InputError(_("load N: how many cards the launcher holds now"))
        n = int(args[0])
        if n > self.ref.deck.total:
            raise InputError(
                _("load {count}: the {deck} deck has {total}").format(
                    count=n, deck=self.ref.deck.name, total=self.ref.deck.total
                )
            )
        if self.box is None:
            return [_("launcher holds {cards}").format(cards=plural(n, "card"))]
        reply = self.box.load(total=n)
        with contextlib.suppress(UnoError):
            self.box.clear()
        self.dispense_hold = False
        return [_("box hopper: {cards}").format(cards=plural(int(reply.get("hopper", n)), "card"))]

    def _clear(self) -> list[str]:
        if self.box is None:
            raise RuleError(_("no box connected"))
        reply = self.box.clear()
        self.dispense_hold = False
        return [_("box: {state}").format(state=reply.get("state", "cleared"))]

    def handle_event(self, event: dict[str, Any]) -> bool:
        """Apply one box event (presses count against the hitter's obligation), save and bring
        the button in step (`apply_event`, then `settle`); True when it printed something (so
        the prompt is shown again)."""
        with self._lock:
            shown = self.apply_event(event)
            self.settle()
        return shown

    def apply_event(self, event: dict[str, Any]) -> bool:
        """Apply one box event to the game in memory, without saving it or sending the box a
        command: `settle` does both. Between the two the state may be shown: a crash before
        the save loses nothing, since the box replays every event after the last one saved.
        True when it printed something."""
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
                self.say(_("box: jammed: take out the stuck cards, then type `clear`"))
            elif kind == "empty":
                self.say(
                    _(
                        "box: the launcher is empty: shuffle the discard pile (all but the top "
                        "card) into it and type `load N`"
                    )
                )
            elif kind == "fault":
                self.say(cast(str, news(event)))  # a fault is always news (a Phrase, kept one)
            elif kind == "stray":
                shown = self._on_stray(event)
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
        return shown

    def settle(self) -> None:
        """After box events: save the state file if the game changed, then lock, unlock or
        aim the button (and, classic, dispense) as `Referee.hitter()` says."""
        with self._lock:
            try:
                self.save()
            except (StateNotSaved, OSError) as exc:
                # A box event is a fact (the cards are out): it stays applied, and the box
                # replays it after a restart from the last state saved.
                self.say(
                    _("box event not saved: {problem}; the box replays it after a restart").format(
                        problem=_unsaved(exc)
                    )
                )
            self.sync_box()

    def _on_state(self, event: dict[str, Any]) -> bool:
        """Only the changes a player cares about: the button locked or live, latched states."""
        to, frm = event.get("to"), event.get("from")
        if to == "locked":
            self.box_locked = True
            self.say(_("box: button locked"))
            return True
        if to == "idle" and frm == "locked":
            self.box_locked = False
            seat = self.ref.hitter()
            if seat is not None:
                self.say(_("box: button live for {player}").format(player=self.ref.name(seat)))
            else:
                self.say(_("box: button live"))
            return True
        latched = news(event)
        if latched is not None:
            self.say(latched)
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
        if isinstance(hopper, int):
            self.box_hopper = hopper

    def _on_stray(self, event: dict[str, Any]) -> bool:
        """A card left the box with no burst counting (the box's `stray` event): it belongs to
        the last hitter (RULES.md)."""
        if isinstance(event.get("hopper"), int):
            self.box_hopper = event["hopper"]
        count = int(event.get("count") or 0)
        if self.last_hitter is None or count <= 0:
            return False
        before = self.ref.to_dict()
        self.say(*self.ref.stray(self.last_hitter, count))
        if self.ref.to_dict() != before:
            self._remember(before, by_box=True)
        return True

    def _on_fire(self, event: dict[str, Any]) -> bool:
        reason = event.get("reason")
        ejected = int(event.get("ejected") or 0)
        self._check_strays(event, ejected)
        if self.ref.classic:
            return self._on_dispensed(event, ejected)
        hitter = self.ref.hitter()
        if refused(event):
            self.say(
                _("box: press {press} refused ({reason}): it does not count").format(
                    press=event.get("press_id"), reason=reason
                )
            )
            return True
        if hitter is not None:
            self.last_hitter = hitter
        if self.ref.hitter() is None:
            if ejected:
                self.say(
                    _(
                        "box fired {cards} but nobody owed a hit: put them back into the launcher"
                    ).format(cards=plural(ejected, "card"))
                )
            return bool(ejected)
        before = self.ref.to_dict()
        note = _("press {press}, dry streak {streak}").format(
            press=event.get("press_id"), streak=event.get("dry_streak", 0)
        )
        if reason not in ("fired", "dry"):
            note += f", {reason}"
        msgs = self.ref.press(ejected, note)
        self._remember(before, by_box=True)
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
                    _(
                        "box fired {cards} that nobody was owed: put them back into the launcher"
                    ).format(cards=plural(ejected, "card"))
                )
            return bool(ejected)
        if ours.get("press_id") not in (None, event.get("press_id")):
            return False  # an older dispense's result, already counted
        self.dispensing = None
        self.last_hitter = int(ours["seat"])
        if ejected < int(ours["cards"]):
            self.dispense_hold = True  # a jam or an empty launcher: wait for `clear`/`load`
        # A penalty typed while the cards were flying went in front: these are still ours.
        self.ref.serve_first(int(ours["seat"]))
        if self.ref.hitter() != int(ours["seat"]) or self.ref.dispense_due() is None:
            if ejected:
                self.say(
                    _("box fired {cards} nobody owed: put them back").format(
                        cards=plural(ejected, "card")
                    )
                )
            return True
        before = self.ref.to_dict()
        msgs = self.ref.press(
            ejected,
            _("dispense {press}, {reason}").format(
                press=event.get("press_id"), reason=event.get("reason")
            ),
        )
        self._remember(before, by_box=True)
        self.say(*msgs)
        if self.ref.phase in ("deal", "over"):
            self.say(*self.ref.scoreboard())
        if self.dispense_hold and self.ref.dispense_due() is not None:
            self.say(_("the rest is dispensed after `clear` (jam) or `load N` (refilled)"))
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
        try:
            self.save()  # the intent, before the command can reach the box
        except (StateNotSaved, OSError) as exc:
            self.dispensing = None  # not sent: the next change tries again
            raise StateNotSaved(_unsaved(exc)) from None
        try:
            press_id = self.box.dispense(cards)
        except UnoError as exc:
            if getattr(exc, "code", "") in ("TIMEOUT", "CLOSED"):
                # No reply: the box may still have dispensed. Keep the record, so its fire
                # event counts when it comes; sending again could dispense twice.
                self.say(
                    _(
                        "box: no answer to the dispense of {cards} ({error}); they count when the "
                        "box reports them; if the launcher never fired, type `resend`"
                    ).format(cards=plural(cards, "card"), error=message_of(exc))
                )
                return
            # The box answered no: it dispensed nothing.
            self.dispensing = None
            self.dispense_hold = True
            self.save()
            self.say(
                _("box: cannot dispense {cards}: {error}; `clear` retries").format(
                    cards=plural(cards, "card"), error=message_of(exc)
                )
            )
            return
        self.dispensing["press_id"] = press_id
        self.save()
        self.say(
            _("box: dispensing {cards} for {player}").format(
                cards=plural(cards, "card"), player=self.ref.name(seat)
            )
        )

    def start(self) -> None:
        """Before the first line or event: the button in step with the game (locked unless a
        seat must hit; classic: the dispense owed is sent), and the state file written."""
        with self._lock:
            self.sync_box()
            self.save(force=True)

    def sync_box(self) -> None:
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
                        self.say(
                            _("box: cannot aim at {player}: {error}").format(
                                player=self.ref.name(seat), error=message_of(exc)
                            )
                        )
                        self.box_aim = seat
            if self.box_locked is not False:
                self.box.unlock()
                self.box_locked = False
        except (UnoError, OSError) as exc:  # (OSError: a save below it, the dispense's)
            self.say(_("box: {error}").format(error=_unsaved(exc)))

    def save(self, *, force: bool = False) -> None:
        """Write the state file atomically (temp file, fsync, rename) when anything in it but
        the last box event's number changed since the last write (or `force`). Box events
        that change nothing (the burst's passing states, a press's own event) are not worth
        an fsync each: after a crash the box replays them from the last event saved, and they
        change nothing again.

        What is written is first read back by the loader (`read_state`): nothing is saved
        that could not be loaded. StateNotSaved (nothing written) when it would not load, or
        the file cannot be written (a full SD card, a read-only remount, no descriptor)."""
        if self.state_path is None:
            return
        data = {
            "referee": self.ref.to_dict(),
            "history": self.history,
            "undo_floor": self.undo_floor,
            "last_event": self.last_event,
            "dispensing": self._dispense_record(),
        }
        # What a replayed event cannot bring back: all of it but the event's number.
        last = self.last_event
        key = json.dumps(
            {
                **data,
                "history": len(self.history),
                "last_event": [last.get(k) for k in ("stream", "hopper", "hitter")],
            },
            sort_keys=True,
        )
        if key == self._saved and not force:
            return
        try:
            read_state(json.loads(json.dumps(data)), checked=self._checked_steps)
        except InputError as exc:
            self._unloadable = True
            raise StateNotSaved(
                _("that would leave a game that cannot be loaded again ({problem})").format(
                    problem=message_of(exc)
                )
            ) from None
        try:
            write_json_atomic(self.state_path, data)
        except OSError as exc:
            raise StateNotSaved(
                _("cannot save the game in {path}: {error}").format(
                    path=self.state_label, error=exc.strerror or exc
                )
            ) from None
        self._saved = key
        self._unloadable = False
        # Undo steps read back once are not read again at every save.
        self._checked_steps = {_step_key(step) for step in self.history}

    def _mark(self) -> _Mark:
        """What a line or an event may change, to put back if it cannot be saved."""
        return _Mark(
            self.ref.to_dict(),
            list(self.history),
            self.undo_floor,
            dict(self.last_event),
            dict(self.dispensing) if self.dispensing else None,
            self.dispense_hold,
            self.box_hopper,
            self.last_hitter,
        )

    def _restore(self, mark: _Mark) -> None:
        self.ref = Referee.from_dict(mark.referee)
        self.history = list(mark.history)
        self.undo_floor = mark.undo_floor
        self.last_event = dict(mark.last_event)
        self.dispensing = dict(mark.dispensing) if mark.dispensing else None
        self.dispense_hold = mark.dispense_hold
        self.box_hopper = mark.box_hopper
        self.last_hitter = mark.last_hitter

    def _save_or_undo(self, mark: _Mark) -> None:
        """Save the change made since `mark`; when it cannot be saved, put the session back
        as it was at `mark` and raise StateNotSaved: a move is saved and answered, or refused
        in one line and undone (never applied in memory only, to reappear with the next)."""
        try:
            self.save()
        except (StateNotSaved, OSError) as exc:
            self._restore(mark)
            raise StateNotSaved(
                _("{problem}: not done, nothing changed").format(problem=_unsaved(exc))
            ) from None

    def _dispense_record(self) -> dict[str, Any] | None:
        if self.dispensing is not None:
            return dict(self.dispensing, hold=False)
        if self.dispense_hold:
            return {"hold": True}
        return None

    def goodbye(self) -> None:
        """The referee stops: lock the button (no referee counts a press now), and say so."""
        lines = []
        saved = True
        try:
            self.save(force=True)
        except (StateNotSaved, OSError) as exc:
            lines.append(_unsaved(exc))
            saved = False
        if self.box is not None and self.ref.phase in ("deal", "play", "score"):
            try:
                self.box.lock()
                self.box_locked = True
                lines.append(
                    _(
                        "box: button locked while no referee is running; running the same command "
                        "again unlocks it when someone must hit (`launcher send PORT unlock` frees "
                        "it for play without the referee)"
                    )
                )
            except UnoError as exc:
                lines.append(
                    _("box: could not lock the button: {error}").format(error=message_of(exc))
                )
        if self.state_path is not None and saved:
            lines.append(
                _("game saved in {path}; run the same command again to resume").format(
                    path=self.state_label
                )
            )
        if self.console is not None:
            self.console.show(lines)
        else:
            self.say(*lines)

    # -- the loop ---------------------------------------------------------------------------
    def run(self, lines: TextIO | Console) -> int:
        """Read lines (a `Console`, or any text stream read as a pipe) and box events until
        `quit` or the end of input. Exit code: 0, 130 for Ctrl-C, 1 when the box connection
        was lost, or when input that is not a terminal had a line refused."""
        console = lines if isinstance(lines, Console) else Console(lines, self.out, tty=False)
        self.console = console
        items: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()
        ready = threading.Event()  # a terminal's reader may show the next prompt

        def read_lines() -> None:
            while not stop.is_set():
                if console.tty:
                    ready.wait()
                    ready.clear()
                    if stop.is_set():
                        return
                line = console.read(self.prompt())
                if line is None:
                    items.put(("eof", None))
                    return
                items.put(("line", line))

        def read_events() -> None:
            assert self.box is not None
            while not stop.is_set():
                try:
                    for event in self.box.events(timeout=0.2):
                        items.put(("event", event))
                        if stop.is_set():
                            break
                except Exception as exc:  # the reader must never die silently
                    items.put(("box-error", exc))
                    return

        def next_prompt() -> None:
            if console.tty:
                ready.set()
            else:
                console.prompt(self.prompt())

        threading.Thread(target=read_lines, daemon=True, name="table-stdin").start()
        if self.box is not None:
            threading.Thread(target=read_events, daemon=True, name="table-box").start()
        self.start()
        self.say(*self.ref.status())
        code = 0
        deferred: deque[tuple[str, Any]] = deque()
        waiting: float | None = None  # since when a keyboard press waits for its fire event
        # However many Ctrl-C come: the first stops the loop, none cuts the save and the
        # button's lock short (`goodbye`), and the exit is 130. Taken from the first prompt on.
        with CtrlC(until_exit=True) as ctrl_c:
            next_prompt()
            try:
                with ctrl_c.stopping():
                    while self.running:
                        if deferred and waiting is None:
                            kind, item = deferred.popleft()
                        else:
                            try:
                                kind, item = items.get(timeout=0.5 if waiting is not None else None)
                            except queue.Empty:
                                if waiting is not None and time.monotonic() - waiting > FIRE_WAIT_S:
                                    self.say(
                                        _("box: the press was not reported; type `press` again")
                                    )
                                    waiting = None
                                    next_prompt()
                                continue
                        if waiting is not None and kind in ("line", "eof"):
                            deferred.append((kind, item))  # piped lines wait for the press's result
                            continue
                        if kind == "eof":
                            break
                        if kind == "line":
                            if self.handle_line(item):
                                if self.running:
                                    next_prompt()
                            else:
                                waiting = time.monotonic()
                        elif kind == "event":
                            shown = self.handle_event(item)
                            if waiting is not None and item.get("kind") == "fire":
                                waiting = None
                                next_prompt()
                            elif shown and not console.tty:
                                next_prompt()
                        else:
                            self.say(_("box connection lost: {error}").format(error=item))
                            code = 1
                            break
            except KeyboardInterrupt:
                code = 130
            finally:
                stop.set()
                ready.set()
                console.stop_reading()  # what is said from here on is printed at once
            if code != 1:
                self.goodbye()
            console.close()
        if code == 0 and not console.tty and self.refused_lines:
            code = 1
        return code


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


def check_state_folder(state: Path) -> None:
    """The state file's folder must exist before the game starts: finding out at the first save
    would lose that action (and the message would name a temporary file)."""
    folder = state.parent
    if not folder.exists():
        raise InputError(
            _(
                "--state {path}: folder {folder} does not exist; create it or give another FILE"
            ).format(path=state, folder=folder)
        )
    if not folder.is_dir():
        raise InputError(
            _("--state {path}: {folder} is not a folder; give another FILE").format(
                path=state, folder=folder
            )
        )


class StateFile:
    """What a state file holds, read and checked (`load_state`)."""

    def __init__(
        self,
        referee: Referee,
        history: list[dict[str, Any]],
        last_event: dict[str, Any],
        dispensing: dict[str, Any] | None,
        undo_floor: int,
    ) -> None:
        self.referee = referee
        self.history = history
        self.last_event = last_event
        self.dispensing = dispensing
        self.undo_floor = undo_floor

    def __iter__(self) -> Any:  # ref, history, last_event = load_state(path)
        return iter((self.referee, self.history, self.last_event))


def load_state(path: Path) -> StateFile:
    """Read a state file written by `TableSession.save`; InputError (one line, naming the file
    and the field) for anything else."""
    try:
        data = textfile.parse_json(textfile.read_text(path))  # a BOM allowed; not /dev/zero
    except OSError as exc:
        raise InputError(
            _("{path}: cannot read state file: {strerror}").format(path=path, strerror=exc.strerror)
        ) from None
    except UnicodeDecodeError:
        # A binary file given by mistake: name it, not the codec.
        raise InputError(
            f"{path}: not a table state file (binary, not JSON text); give another --state "
            "FILE, or --new to start a new game in it"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            _("{path}: not a table state file: {exc}").format(path=path, exc=exc)
        ) from None
    if not isinstance(data, dict) or "referee" not in data:
        raise InputError(_("{path}: not a table state file").format(path=path))
    try:
        return read_state(data)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def _step_key(step: dict[str, Any]) -> str:
    return json.dumps(step, sort_keys=True)


def read_state(data: dict[str, Any], *, checked: Collection[str] = ()) -> StateFile:
    """The state a state file holds, from its JSON data, every field checked; InputError
    naming the field. `TableSession.save` reads what it is about to write with it: nothing
    is saved that this would not load. `checked`: undo steps read before (`_step_key`), not
    read again."""
    if "referee" not in data:
        raise InputError("not a table state: `referee` is missing")
    ref = Referee.from_dict(data["referee"])
    history = data.get("history") or []
    if not isinstance(history, list):
        raise InputError("not a table state: `history` must be a list of states")
    for i, step in enumerate(history):
        if checked and _step_key(step) in checked:
            continue
        try:
            Referee.from_dict(step)  # undo must find what it needs
        except InputError as exc:
            raise InputError(f"history[{i}]: {exc}") from None
    last = data.get("last_event") or {}
    if not isinstance(last, dict):
        raise InputError("not a table state: `last_event` must be a box event position")
    seq = last.get("seq", 0)
    stream = last.get("stream")
    if (isinstance(seq, bool) or not isinstance(seq, int | None)) or not isinstance(
        stream, str | None
    ):
        raise InputError("not a table state: `last_event` must hold a stream and a seq")
    for key in ("hopper", "hitter"):
        value = last.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError(
                _("not a table state: `last_event.{key}` must be a whole number").format(key=key)
            )
    if last.get("hitter") is not None and not 0 <= last["hitter"] < len(ref.players):
        raise InputError("not a table state: `last_event.hitter` must be a seat")
    dispensing = data.get("dispensing")
    if dispensing is not None and not _dispensing_ok(dispensing, len(ref.players)):
        raise InputError(
            "not a table state: `dispensing` must be null or {seat, cards, press_id, hold}"
        )
    floor = data.get("undo_floor", 0)
    if isinstance(floor, bool) or not isinstance(floor, int) or floor < 0:
        raise InputError("not a table state: `undo_floor` must be a whole number")
    return StateFile(ref, list(history), dict(last), dispensing, floor)


def _dispensing_ok(record: Any, players: int) -> bool:
    if not isinstance(record, dict):
        return False
    if record.get("hold") is True and "seat" not in record:
        return True
    seat, cards, press_id = record.get("seat"), record.get("cards"), record.get("press_id")
    return (
        isinstance(seat, int)
        and not isinstance(seat, bool)
        and 0 <= seat < players
        and isinstance(cards, int)
        and not isinstance(cards, bool)
        and 0 < cards <= 1000
        and (press_id is None or (isinstance(press_id, int) and not isinstance(press_id, bool)))
    )


# ---------------------------------------------------------------------------------------------
# Command line


def register(subparsers: Any) -> None:
    """Add the `table` subcommand."""
    p = subparsers.add_parser(
        "table",
        help=_("referee a real table with a real box"),
        description=_(
            "Referee a game at a real table: type what each player plays (card notation, hit, "
            "uno, catch NAME); the box's button is unlocked and aimed only for the seat that must "
            "hit. The state is saved after every action: run the same command again to resume. "
            "Lines may also come from a pipe or a file (the same typed lines)."
        ),
    )
    add_box_arguments(p, mock=False)  # --port PORT|none, checked as `serve` checks it
    add_game_arguments(p)
    p.add_argument(
        "--json",
        action="store_true",
        help=_(
            "print the referee's state as one JSON object on stdout when the input ends "
            "(the table's messages go to stderr)"
        ),
    )
    p.set_defaults(func=run_table)


def add_game_arguments(p: argparse.ArgumentParser) -> None:
    """Which game is refereed: `--players`, `--deck`, `--mode`, `--target`, `--option` for a
    new one, `--state` and `--new`. `unoattack table` and `unoattack serve` take the same."""
    p.add_argument(
        "--players", required=True, metavar="NAMES", help=_("comma-separated names, clockwise")
    )
    # No argparse defaults for what shapes the game: None is "not given" (a resumed game keeps
    # its own, `same_game`), and a new game takes the Referee's defaults.
    p.add_argument(
        "--deck",
        metavar="PRESET",
        help=_("attack (default), attack-1998 or classic (the referee dispenses every draw)"),
    )
    p.add_argument("--mode", choices=MODES, help=_("scoring mode (default target)"))
    p.add_argument("--target", type=whole_number, help=_("points that end the game (500)"))
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=_("rule option for a new game, e.g. stacking=true (repeatable; docs/rules.md)"),
    )
    p.add_argument(
        "--state",
        type=Path,
        default=Path("unoattack-table.json"),
        metavar="FILE",
        help=_(
            "state file, saved after every action (default unoattack-table.json); "
            "`unoattack table` and `unoattack serve` resume each other's games"
        ),
    )
    p.add_argument("--new", action="store_true", help=_("start a new game even if FILE exists"))


def check_game(args: argparse.Namespace) -> StateFile | None:
    """The game options of `add_game_arguments` checked before any box is opened (InputError,
    exit 2): the state file's folder, a saved game that can be read (and no `--option` for
    it), or the names, deck, mode, target and options of a new one. Returns the saved game
    to resume, or None for a new one."""
    state: Path = args.state
    check_state_folder(state)
    if state.exists() and not args.new:
        saved = load_state(state)
        same_game(args, saved.referee, state)
        return saved
    _new_referee(args)
    return None


# What shapes a game, as given on the command line (None: not given).
_SHAPING = ("deck", "mode", "target")


def same_game(args: argparse.Namespace, ref: Referee, state: Path) -> None:
    """A saved game resumes as it was saved: a flag that shapes the game (`--deck`, `--mode`,
    `--target`) may be given only with the saved game's value, `--option` not at all
    (InputError, one line, exit 2). A deck that does not exist is refused as such first."""
    if args.option:
        raise InputError(
            _(
                "--option sets the rules of a new game; {path} holds a game under way (--new "
                "to start one)"
            ).format(path=state)
        )
    if args.deck is not None:
        load_deck(args.deck)  # `unknown deck`, a bad deck file: whatever the saved game
    for name in _SHAPING:
        given, saved = getattr(args, name), getattr(ref, "deck_name" if name == "deck" else name)
        if given is None or given == saved or (name == "deck" and _same_file(given, saved)):
            continue
        raise InputError(
            _(
                "--{flag} {given}: {path} holds a game with --{flag} {saved} (--new to start one)"
            ).format(flag=name, given=given, path=state, saved=saved)
        )


def _same_file(given: str, saved: str) -> bool:
    """Two deck files named differently (`home.toml`, `./home.toml`) are the same deck."""
    if given in PRESETS or saved in PRESETS:
        return False
    return Path(given).resolve() == Path(saved).resolve()


def _new_referee(args: argparse.Namespace) -> Referee:
    options = dict(parse_option(text) for text in getattr(args, "option", None) or [])
    shape = {name: getattr(args, name, None) for name in _SHAPING}
    return Referee(
        [p.strip() for p in args.players.split(",")],
        **{name: value for name, value in shape.items() if value is not None},
        options=options,
    )


def build_session(
    args: argparse.Namespace,
    box: Any | None,
    out: TextIO,
    *,
    saved: StateFile | None = None,
    state_label: str | None = None,
) -> TableSession:
    """The session for `args`: resumed from the state file when it exists (and not --new).
    `state_label`: how its words name the state file (default: its path)."""
    players = [p.strip() for p in args.players.split(",")]
    state: Path = args.state
    if state.exists() and not getattr(args, "new", False):
        saved = saved or load_state(state)
        ref = saved.referee
        if [p.lower() for p in ref.players] != [p.lower() for p in players]:
            raise InputError(
                _(
                    "{path} holds a game of {players}: use those --players, or --new to start over"
                ).format(path=state, players=",".join(ref.players))
            )
        session = TableSession(
            ref,
            box=box,
            state_path=state,
            out=out,
            history=saved.history,
            last_event=saved.last_event,
            dispensing=saved.dispensing,
            undo_floor=saved.undo_floor,
        )
        session.state_label = state_label or str(state)
        session.say(_("resuming the game saved in {path}").format(path=session.state_label))
        return session
    ref = _new_referee(args)
    last_event: dict[str, Any] = {}
    if box is not None and box.box.get("stream"):
        # A new game: whatever the box did before it started is none of its business.
        last_event = {"stream": box.box["stream"], "seq": int(box.box.get("seq") or 0)}
    session = TableSession(ref, box=box, state_path=state, out=out, last_event=last_event)
    session.state_label = state_label or str(state)
    return session


def run_table(args: argparse.Namespace) -> int:
    """`unoattack table`: the interactive referee loop."""
    check_box_arguments(args)
    check_game(args)  # usage errors (names, deck, mode, options) before anything starts
    with holding(args.state):  # one referee per game (engine/state_lock.py)
        saved = check_game(args)  # read again: nobody else writes it now
        # With --json, stdout is for the one JSON object: the table's words go to stderr.
        out = sys.stderr if args.json else sys.stdout
        with open_box(args, saved) as opened:
            session = build_session(args, opened.client, out, saved=saved)
            history = args.state.with_name(args.state.name + ".history")
            console = Console(sys.stdin, out, history=history, tty=None if not args.json else False)
            code = session.run(console)
            if args.json:
                state = session.view()
                state["refused_lines"] = session.refused_lines
                print(json.dumps(state), flush=True)
            return code


__all__ = [
    "MODES",
    "STATE_VERSION",
    "Question",
    "Referee",
    "StateFile",
    "TableSession",
    "add_game_arguments",
    "build_session",
    "check_game",
    "check_state_folder",
    "load_state",
    "register",
    "run_table",
    "same_game",
    "write_json_atomic",
]
