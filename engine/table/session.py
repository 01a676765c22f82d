"""A refereed table: commands in, the referee's steps, what is said, undo, the state file.

The referee cannot see hands. It keeps what a careful person at the table could keep: whose turn
it is, the direction, the current colour and top card, how many cards each player holds, how
many cards the box fired at each seat, and who still owes hits ("Bob hits 2 more times",
"Carl hits until cards come"). Players say what they played in card notation; the referee checks
it as far as it can, locks the box's button when nobody should press, unlocks it (and aims the
servo) for the seat that must hit, and counts the box's fire events against that obligation.
With the classic deck nobody presses: the referee dispenses every draw owed itself.

The layers, each testable without the next:

- the rules are `Round`'s (engine/game.py), played on hand counts by `BlindRound`
  (engine/blind.py);
- `Referee` (engine/table/referee.py) is the game's state: every move changes it and returns
  what happened (outcomes), or raises `RuleError` and changes nothing;
- `TableSession` (here) applies typed commands (engine/table/commands.py: the terminal's lines
  and the web page's commands alike), asks what a command leaves out
  (engine/table/questions.py), says what happened (the narrator, engine/narrate.py), keeps an
  undo history and the state file (engine/table/state_file.py), and lets the box
  (engine/table/boxsync.py) apply its events and follow the game with its button.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from engine.boxport import BoxPort
from engine.errors import InputError, RuleError, UnoError
from engine.game_history import keep_game, night_chips
from engine.narrate import Narrator
from engine.night_book import night_error
from engine.night_words import night_lines
from engine.outcomes import (
    Cancelled,
    GameKept,
    GameSaved,
    NightUnsaved,
    Outcome,
    Resuming,
    Undone,
    Unsaved,
)
from engine.table import commands, questions, view
from engine.table.boxsync import BoxSync
from engine.table.commands import Command
from engine.table.console import Console
from engine.table.next_game import next_referee, said_of, upcoming
from engine.table.night_table import NightTable
from engine.table.options import GameOptions
from engine.table.questions import Question
from engine.table.referee import Referee
from engine.table.state_file import (
    StateFile,
    StateNotSaved,
    StateStore,
    load_state,
    read_referee,
    unsaved,
)
from i18n import _, message_of

__all__ = ["HISTORY_LIMIT", "Reply", "TableSession", "build_session"]

HISTORY_LIMIT = 30  # undo steps kept in the state file


@dataclass
class _Mark:
    """A session's state as it was before a change (`TableSession._mark`)."""

    referee: dict[str, Any]
    history: list[dict[str, Any]]
    undo_floor: int
    box: dict[str, Any]


@dataclass
class Reply:
    """What became of one command: `done` (applied, or a query answered), else the one-line
    `refusal` (nothing changed) or the `question` it needs answered first."""

    done: bool
    refusal: str | None = None
    question: Question | None = None


class TableSession:
    """Drive a `Referee` from commands and box events.

    `box` is a connected box (`engine.boxport.BoxPort`) or None to referee without a box
    (presses told as `fired N`). After every step the referee state is saved to `state_path`
    and the box's lock and aim follow `Referee.hitter()`.
    """

    def __init__(
        self,
        referee: Referee,
        *,
        box: BoxPort | None = None,
        state_path: Path | None = None,
        out: TextIO | None = None,
        history: list[dict[str, Any]] | None = None,
        last_event: dict[str, Any] | None = None,
        dispensing: dict[str, Any] | None = None,
        undo_floor: int = 0,
        console: Console | None = None,
        state_label: str | None = None,
        night: NightTable | None = None,
    ) -> None:
        self.ref = referee
        self.night = night  # a table of a game night: its rounds are recorded there
        self.state_path = state_path
        # The state file, named `state_label` in what the table says (default: its path).
        self.store = StateStore(state_path, state_label)
        self.out = out or sys.stdout
        self.console = console
        self.history: list[dict[str, Any]] = list(history or [])
        # With a box, undo stops at the last step a box event made: the cards it fired have
        # left the box, and undoing would unlock the button for them again.
        self.undo_floor = min(max(undo_floor, 0), len(self.history))
        self.boxsync = BoxSync(self, box, last_event=last_event, dispensing=dispensing)
        self.asking: Question | None = None  # the question the next line answers
        self.refused_lines = 0  # lines refused (a piped session exits 1 if any)
        self.refusal: str | None = None  # why the last refused line was refused
        self.running = True
        self._lock = threading.RLock()
        self.tell(*self.boxsync.resumed())

    @property
    def box(self) -> BoxPort | None:
        """The box connected (None: a table without one)."""
        return self.boxsync.box

    # -- output -----------------------------------------------------------------------------
    @property
    def narrator(self) -> Narrator:
        """Who words what happens at this table."""
        return Narrator(self.ref.players, classic=self.ref.classic)

    def tell(self, *said: Outcome) -> None:
        """Say what happened (the narrator's words)."""
        if said:
            self.say(*self.narrator.lines(said))

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
        return view.next_step(self.ref, self.asking.text if self.asking else None)

    def view(self) -> dict[str, Any]:
        """The table's state as data (`table --json`, the page): the referee's summary
        (engine/table/view.py), the prompt, the button, the classic dispense in flight, the
        undo steps left, a night's standings and chips over the games kept."""
        with self._lock:
            data = view.summary(self.ref)
            data.update(
                prompt=self.next_step(),
                button=self.boxsync.button(data["hitter"], self.ref.classic),
                dispensing=dict(self.boxsync.dispensing) if self.boxsync.dispensing else None,
                undo=max(0, len(self.history) - self.undo_floor),
                night=self.night.view(self.ref) if self.night is not None else None,
                night_chips=night_chips(self.state_path, data),
            )
            return data

    # -- input ------------------------------------------------------------------------------
    def handle_line(self, line: str) -> bool:
        """Apply one typed line: a command, or the answer to the question asked. A refusal is
        one line; the same prompt (or question) comes again. Returns False when the next
        prompt should wait (a press was sent: its fire event answers)."""
        with self._lock:
            text = line.strip()
            problem = commands.line_problem(text)
            if problem:
                self._refuse(problem)  # (the same question, if one was asked, again)
                return True
            asked = self.asking
            if asked is not None:
                self.asking = None
                if not text:
                    self.tell(Cancelled())
                    return True
                problem = questions.problem(asked, text, self.ref.players)
                if problem:
                    self.asking = asked  # the same question again
                    self._refuse(problem)
                    return True
                command: Command = questions.answered(asked, text, self.ref.players)
            elif not text:
                return True
            else:
                try:
                    command = commands.parse(text, self.ref)
                except UnoError as exc:
                    self._refuse(message_of(exc))
                    return True
            reply = self.act(command)
            if reply.refusal is not None and asked is not None and reply.question is None:
                self.asking = asked  # the answer did not do: ask the same question again
            if reply.question is not None:
                self.asking = reply.question
            return not isinstance(command, commands.Press) or not reply.done

    def act(self, command: Command) -> Reply:
        """Apply one command (typed, or sent by a page). A refusal is said (`! reason`) and
        counted; a question is returned unasked (the terminal asks it, a page shows it)."""
        with self._lock:
            self.refusal = None
            try:
                question = questions.ask(self.ref, command)
                if question is not None:
                    return Reply(False, question=question)
                self._run(command)
            except UnoError as exc:
                self._refuse(message_of(exc))
                return Reply(False, refusal=self.refusal)
            return Reply(True)

    def apply(self, change: Callable[[Referee], list[Outcome]]) -> list[Outcome]:
        """One change of the game made by code rather than typed: `change(referee)` calls the
        referee (a bot at the table telling it what it did, `demo --web`) and returns what
        happened. It is a step of the session like a command: said, undoable, saved, the
        button brought in step. UnoError when the referee refuses any part of it (or it
        cannot be saved): then nothing has changed."""
        with self._lock:
            mark = self._mark()
            phase = self.ref.phase
            try:
                said = change(self.ref)
            except UnoError:
                self._restore(mark)  # a refusal half way: none of it
                raise
            self._done(mark, phase, said)
            return said

    def question(self) -> Question | None:
        """The question the session waits for an answer to (None when it waits for a line),
        with the answers the referee accepts."""
        return self.asking

    def forget_question(self) -> None:
        """Drop the question asked, without a word (a caller that sends whole commands)."""
        self.asking = None

    # -- commands ---------------------------------------------------------------------------
    def _run(self, command: Command) -> None:
        """Apply `command` (UnoError: refused, nothing changed)."""
        run = _HANDLERS[type(command)]
        mark = self._mark()
        phase = self.ref.phase
        said = run(self, command)
        if said is not None:
            self._done(mark, phase, said, undoable=not isinstance(command, commands.Undo))

    def _done(self, mark: _Mark, phase: str, said: list[Outcome], *, undoable: bool = True) -> None:
        """After a change: an undo step, the state file (or, when it cannot be saved, the
        session back as it was at `mark` and StateNotSaved), what happened (and the scores
        when a round was scored), and the button."""
        if undoable and self.ref.to_dict() != mark.referee:
            self._remember(mark.referee)
        self._save_or_undo(mark)
        self.tell(*said)
        if phase == "score" and self.ref.phase in ("deal", "over"):
            self.say(*view.scoreboard(self.ref))
        if phase != "over" and self.ref.phase == "over":
            self.tell(*upcoming(self.ref, self.night))
        self.boxsync.sync()

    def _mark(self) -> _Mark:
        """What a command or an event may change, to put back if it cannot be saved."""
        return _Mark(self.ref.to_dict(), list(self.history), self.undo_floor, self.boxsync.mark())

    def _restore(self, mark: _Mark) -> None:
        self.ref = read_referee(mark.referee)
        self.history = list(mark.history)
        self.undo_floor = mark.undo_floor
        self.boxsync.restore(mark.box)

    def _save_or_undo(self, mark: _Mark) -> None:
        """Save the change made since `mark`; when it cannot be saved, put the session back
        as it was at `mark` and raise StateNotSaved: a move is saved and answered, or refused
        in one line and undone (never applied in memory only, to reappear with the next)."""
        try:
            self.save()
        except (StateNotSaved, OSError) as exc:
            self._restore(mark)
            raise StateNotSaved(
                _("{problem}: not done, nothing changed").format(problem=unsaved(exc))
            ) from None

    def box_step(self, change: Callable[[Referee], list[Outcome]]) -> None:
        """A step the box made (a press's cards, a stray): said, and not undone while a box is
        connected (the cards have left it)."""
        before = self.ref.to_dict()
        phase = self.ref.phase
        said = change(self.ref)
        if self.ref.to_dict() != before:
            self._remember(before, by_box=True)
        self.tell(*said)
        if phase != self.ref.phase and self.ref.phase in ("deal", "over"):
            self.say(*view.scoreboard(self.ref))

    def _refuse(self, message: str) -> None:
        self.refused_lines += 1
        self.refusal = message
        self.say("! " + message)

    def _remember(self, before: dict[str, Any], *, by_box: bool = False) -> None:
        """Keep `before` as an undo step; a box's step (with a box) cannot be undone. A state
        the loader refused (a box event left it so) is no step: it could never be saved."""
        if self.store.unloadable:
            return
        self.history.append(before)
        overflow = len(self.history) - HISTORY_LIMIT
        if overflow > 0:
            del self.history[:overflow]
            self.undo_floor = max(0, self.undo_floor - overflow)
        if by_box and self.box is not None:
            self.undo_floor = len(self.history)

    def _undo(self, command: Command) -> list[Outcome]:
        if not self.history:
            raise RuleError(_("nothing to undo"))
        if len(self.history) <= self.undo_floor:
            raise RuleError(
                _(
                    "undo would take back cards the box has fired: correct the counts with "
                    "`hand NAME N`"
                )
            )
        if self.boxsync.undo_blocked(read_referee(self.history[-1])):
            # The launcher cannot take cards back: undoing to a state that owes a
            # dispense would dispense those cards a second time.
            raise RuleError(
                _("undo would dispense cards again: correct the counts with `hand NAME N`")
            )
        self.ref = read_referee(self.history.pop())
        return [Undone(self.next_step())]

    def _play(self, command: Command) -> list[Outcome]:
        assert isinstance(command, commands.Play)
        if command.jumper is not None and not self.ref.rules.jump_in:
            raise RuleError(_("jump-ins are off (rule option jump_in)"))
        return questions.attempt(self.ref, command)

    def _query(self, command: Command) -> None:
        if isinstance(command, commands.Help):
            self.say(commands.help_text())
            return
        if isinstance(command, commands.Status):
            self.say(*view.status(self.ref))
        else:
            self.say(*view.scoreboard(self.ref))
        if self.night is not None:
            with contextlib.suppress(UnoError):
                self.night.book.refresh()  # what the other tables have recorded since
            self.say(*night_lines(self.night.book, self.night.table))
        chips = self.view()["night_chips"]
        if chips is not None:
            self.say(*view.chips_lines(chips))

    def _next(self, command: Command) -> None:
        self.next_game()

    def next_game(self, *, anytime: bool = False) -> list[Outcome]:
        """The next game here (engine/table/next_game.py), the last one kept in the history
        beside the state file first (engine/game_history.py); what was said. RuleError while a
        dispense is under way, StateNotSaved or OSError when a file cannot be written: then
        the game goes on as it was."""
        with self._lock:
            ref = self.ref
            if self.boxsync.dispensing is not None:
                raise RuleError(_("a dispense is under way: a new game once the box reports it"))
            fresh = next_referee(ref, self.night, anytime=anytime)
            kept = keep_game(self.state_path, view.summary(ref))  # OSError: nothing changed
            mark = self._mark()
            self.ref, self.history, self.undo_floor = fresh, [], 0
            self._save_or_undo(mark)
            said: list[Outcome] = [GameKept(kept.name)] if kept is not None else []
            said.append(said_of(fresh, self.night))
            self.tell(*said)
            self.boxsync.sync()
            return said

    def _quit(self, command: Command) -> None:
        self.running = False

    def _press(self, command: Command) -> None:
        self.boxsync.press()

    # -- box events ---------------------------------------------------------------------------
    def handle_event(self, event: dict[str, Any]) -> bool:
        """Apply one box event (presses count against the hitter's obligation), save and bring
        the button in step (`apply_event`, then `settle`); True when it said something (so
        the prompt is shown again)."""
        with self._lock:
            shown = self.apply_event(event)
            self.settle()
        return shown

    def apply_event(self, event: dict[str, Any]) -> bool:
        """Apply one box event to the game in memory, without saving it or sending the box a
        command: `settle` does both. Between the two the state may be shown: a crash before
        the save loses nothing, since the box replays every event after the last one saved.
        True when it said something."""
        with self._lock:
            return self.boxsync.apply_event(event)

    def settle(self) -> None:
        """After box events: save the state file if the game changed, then lock, unlock or
        aim the button (and, classic, dispense) as `Referee.hitter()` says."""
        with self._lock:
            try:
                self.save()
            except (StateNotSaved, OSError) as exc:
                # A box event is a fact (the cards are out): it stays applied, and the box
                # replays it after a restart from the last state saved.
                self.tell(Unsaved(unsaved(exc), event=True))
            self.boxsync.sync()

    def start(self) -> None:
        """Before the first line or event: the button in step with the game (locked unless a
        seat must hit; classic: the dispense owed is sent), and the state file written."""
        with self._lock:
            self.boxsync.sync()
            self.save(force=True)

    def goodbye(self) -> None:
        """The referee stops: the game saved, the button locked (no referee counts a press
        now), and said so."""
        said: list[Outcome] = []
        saved = True
        try:
            self.save(force=True)
        except (StateNotSaved, OSError) as exc:
            said.append(Unsaved(unsaved(exc)))
            saved = False
        said += self.boxsync.goodbye()
        if self.state_path is not None and saved:
            said.append(GameSaved(self.store.label))
        lines = self.narrator.lines(said)
        if self.console is not None:
            self.console.show(lines)
        else:
            self.say(*lines)

    # -- the state file -----------------------------------------------------------------------
    def state(self) -> StateFile:
        """What the state file holds now."""
        return StateFile(
            self.ref,
            self.history,
            self.boxsync.last_event,
            self.boxsync.record(),
            self.undo_floor,
            self.night.to_state() if self.night is not None else None,
        )

    def save(self, *, force: bool = False) -> None:
        """Write the state file when it changed (or `force`), what it writes read back by the
        loader first: StateNotSaved when it cannot be (`StateStore.save`). A night's table then
        records its rounds there (if it cannot, it says so; the next save tries again)."""
        self.store.save(self.state(), force=force)
        if self.night is not None:
            try:
                self.night.record(self.ref)
            except (OSError, InputError) as exc:
                self.tell(NightUnsaved(night_error(exc)))


def _referee_move(move: Callable[[Referee, Any], list[Outcome]]) -> Callable[..., list[Outcome]]:
    return lambda session, command: move(session.ref, command)


# What each command does: a move of the referee's, or the session's or the box's own work.
_HANDLERS: dict[type[Command], Callable[[TableSession, Any], list[Outcome] | None]] = {
    commands.Play: TableSession._play,
    commands.EnterHand: _referee_move(
        lambda ref, c: ref.enter_hand(ref.to_enter()[0], c.cards, force=c.force)
    ),
    commands.Hit: _referee_move(lambda ref, c: ref.hit()),
    commands.Draw: _referee_move(lambda ref, c: ref.draw()),
    commands.Challenge: _referee_move(lambda ref, c: ref.challenge(c.legal)),
    commands.Pass: _referee_move(lambda ref, c: ref.pass_turn()),
    commands.Uno: _referee_move(
        lambda ref, c: ref.call_uno(ref.seat_of(c.player) if c.player is not None else None)
    ),
    commands.Catch: _referee_move(
        lambda ref, c: ref.catch(
            ref.seat_of(c.player), ref.seat_of(c.by) if c.by is not None else None
        )
    ),
    commands.Dealer: _referee_move(lambda ref, c: ref.set_dealer(ref.seat_of(c.player))),
    commands.SetHand: _referee_move(lambda ref, c: ref.set_hand(ref.seat_of(c.player), c.count)),
    commands.Fired: lambda session, c: session.boxsync.fired(session.ref, c.count),
    commands.Load: lambda session, c: session.boxsync.load(c.count),
    commands.Clear: lambda session, c: session.boxsync.clear(),
    commands.Resend: lambda session, c: session.boxsync.resend(),
    commands.Press: TableSession._press,
    commands.Undo: TableSession._undo,
    commands.Status: TableSession._query,
    commands.Scores: TableSession._query,
    commands.Help: TableSession._query,
    commands.Quit: TableSession._quit,
    commands.Next: TableSession._next,
}


def build_session(
    options: GameOptions,
    box: BoxPort | None,
    out: TextIO,
    *,
    saved: StateFile | None = None,
    state_label: str | None = None,
) -> TableSession:
    """The session for `options`: resumed from the state file when it holds a game (and not
    `new`), else a new game. `state_label`: how its words name the state file (default: its
    path)."""
    state = options.state
    if state.exists() and not options.new:
        saved = saved or load_state(state)
        ref = saved.referee
        if options.night is None and [p.lower() for p in ref.players] != [
            p.lower() for p in options.players
        ]:
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
            state_label=state_label,
            night=options.night,
        )
        session.tell(Resuming(session.store.label))
        return session
    last_event: dict[str, Any] = {}
    if box is not None and box.box.get("stream"):
        # A new game: whatever the box did before it started is none of its business.
        last_event = {"stream": box.box["stream"], "seq": int(box.box.get("seq") or 0)}
    session = TableSession(
        options.referee(),
        box=box,
        state_path=state,
        out=out,
        last_event=last_event,
        state_label=state_label,
        night=options.night,
    )
    if options.night is not None:
        session.tell(said_of(session.ref, options.night))
    return session
