"""The web app's one door to the table referee.

Everything the web layer knows about the referee is in this module, so that porting the web app
to another referee means changing this file only. It uses the session's public API
(engine/table.py, docs/web.md#code):

- **actions** are the command lines `unoattack table` accepts (docs/table.md), fed to
  `TableSession.handle_line`; a refusal is the session's own one-line `! reason`, and a line the
  referee needs more for (a wild's colour, a WAA's target, a DA's count) is its own `question()`,
  with the answers it accepts;
- **the state** is `TableSession.view()`, the very data `unoattack table --json` prints;
- **box events** go to `TableSession.apply_event` and `settle`, as `unoattack table` feeds
  them, with the update published in between: the page hears of a press before the button is
  locked again and the state file written.

The table's state file is the session's own, so `table` and `serve` resume each other's games.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.cards import COLORS, load_deck
from engine.errors import UnoError
from engine.referee import Referee
from engine.table import (
    MAX_FIRED,
    MAX_LINE,
    StateFile,
    TableSession,
    add_game_arguments,
    build_session,
    line_problem,
)
from engine.web.box_panel import BoxPanel
from engine.words import colour_name
from i18n import N_, _, lines_of, message_of

__all__ = [
    "BOX_CONTROLS",
    "MAX_LINE",
    "Outcome",
    "TableService",
    "check_line",
    "demo_table",
    "game_args",
    "open_table",
]

# The box panel's controls, and the wire op (wire/ops.py) each one is.
BOX_CONTROLS = {
    "reset": "reset",
    "status": "status",
    "model": "model.get",
    "model.set": "model.set",
}
# Lines that only make sense at the terminal prompt.
TERMINAL_ONLY = {
    "quit": N_(
        "`quit` is for the terminal: the web game keeps running and is saved after every action"
    ),
}
# Commands that only print, for whoever asked: no update for the other pages.
QUERIES = frozenset({"status", "scores", "help"})
# The picker group of the words that answer each kind of question.
ANSWER_GROUPS = {
    "colour": "colour",
    "target": "player",
    "discards": "number",
    "challenge": "answer",
}


def check_line(line: object) -> str | None:
    """Why `line` cannot be a command line at all (type, length, control characters, a
    terminal-only command), or None. What the words mean is the referee's business."""
    if not isinstance(line, str):
        return _("line must be a string (a command line of `unoattack table`), not {kind}").format(
            kind=_kind(line)
        )
    problem = line_problem(line)  # (length, control characters: as typed at a terminal)
    if problem:
        return problem
    if not line.strip():
        return _("empty line: type a card or a command (`help` lists them)")
    head = line.split()[0].lower()
    return _(TERMINAL_ONLY[head]) if head in TERMINAL_ONLY else None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


@dataclass
class Outcome:
    """What became of one action.

    `ok`: applied. `error`: the one-line reason it was refused (nothing changed). `ask`: the
    referee needs more (its own question); `line` is the partial line to complete and `choices`
    the words that answer it, grouped (`colour`, `player`, `number` or `answer`), as the
    referee offers them. `messages`: what the referee said.
    """

    ok: bool
    messages: list[str] = field(default_factory=list)
    error: str | None = None
    ask: str | None = None
    line: str | None = None
    choices: dict[str, list[str]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a reply; absent fields left out."""
        out: dict[str, Any] = {"ok": self.ok, "messages": list(self.messages)}
        for key in ("error", "ask", "line", "choices"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class _Lines:
    """What the session says, line by line: the lines themselves (`keep`), each still an
    `i18n.Phrase` that every page says again in its own language, and anything printed."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._part = ""

    def keep(self, line: str) -> None:
        """One line the session says (a help text of several lines is kept as several)."""
        self._lines.extend(lines_of(line))

    def write(self, text: str) -> int:
        parts = (self._part + text).split("\n")
        self._part = parts.pop()
        self._lines.extend(parts)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def take(self) -> list[str]:
        """The complete lines printed since the last call."""
        lines, self._lines = self._lines, []
        return lines


Publisher = Callable[[dict[str, Any]], Any]
Change = Callable[[Referee], list[str]]


class TableService:
    """A `TableSession` behind a lock, for many pages at once.

    `act(line)` applies one command line; `handle_event(event)` one box event; `view()` is the
    state for the page (the session's). Every change is handed to `publish` (set by the web
    server) as ``{"messages", "view", "box", "cause"}`` while the lock is held, so the order in
    which updates are published is the order in which the table changed.

    `box` is the box the panel shows (default: the session's); `watch_only`, when given, is the
    reason every action and box control is refused (`demo --web`: the bots play).
    """

    def __init__(
        self,
        session: TableSession,
        *,
        box: Any | None = None,
        watch_only: str | None = None,
    ) -> None:
        self.session = session
        self.box = box if box is not None else session.box
        self.watch_only = watch_only
        said = session.out
        # What the session said while it was opened ("resuming the game saved in ...").
        self.startup_messages = said.take() if isinstance(said, _Lines) else []
        self._out = _Lines()
        session.out = self._out  # type: ignore[assignment]  # what the session says, captured
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self.version = 0  # bumped at every published change
        self.publish: Publisher | None = None
        self.panel = BoxPanel(connected=self.box is not None)
        self._status_due = threading.Event()  # the box's status has news: ask for it
        deck = load_deck(session.ref.deck_name)
        self.deck_name = deck.name
        self.deck_cards = [
            {
                "card": str(card),
                "color": card.color,
                "face": card.face,
                "points": deck.points[card],
                "copies": deck.counts[card],
            }
            for card in sorted(deck.counts)
        ]
        self.startup_messages += self._out.take()

    # -- reading ----------------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        """The table's state: `TableSession.view()`, what `unoattack table --json` prints."""
        with self._lock:
            return self.session.view()

    def static(self) -> dict[str, Any]:
        """What does not change during a game: the deck's cards, the colours, the players."""
        return {
            "deck": self.deck_name,
            "cards": self.deck_cards,
            "colors": [{"code": c, "name": colour_name(c)} for c in COLORS],
            "players": list(self.session.ref.players),
            "box": self.box is not None,
            "max_fired": MAX_FIRED,  # the `fired N` buttons without a box: 0 to this
            "watch_only": self.watch_only,
        }

    def wait_change(self, version: int, timeout: float) -> int:
        """Block until a change after `version` is published (or `timeout`); the new version."""
        with self._changed:
            self._changed.wait_for(lambda: self.version != version, timeout)
            return self.version

    # -- acting -----------------------------------------------------------------------------
    def act(self, line: object) -> Outcome:
        """Apply one command line, as typed at `unoattack table`."""
        problem = check_line(line)
        if problem is None and self.watch_only is not None:
            problem = self.watch_only
        if problem is not None:
            return Outcome(False, error=problem)
        assert isinstance(line, str)
        text = line.strip()
        with self._lock:
            session = self.session
            before = self._fingerprint()
            session.refusal = None
            session.handle_line(text)
            messages = self._out.take()
            question = session.question()
            session.forget_question()  # every page composes whole lines: never a half line
            error = session.refusal
            if error is not None:
                return Outcome(False, messages=[], error=error)
            if question is not None:
                group = ANSWER_GROUPS[question.kind]
                return Outcome(
                    False,
                    ask=question.text,
                    line=question.line,
                    choices={group: list(question.answers)},
                )
            query = text.split()[0].lower() in QUERIES
            if not query and (messages or self._fingerprint() != before):
                self._publish(messages, {"line": text})
            return Outcome(True, messages=messages)

    def apply(self, change: Change, cause: dict[str, Any]) -> list[str]:
        """One change of the referee made by code, not typed (`demo --web`: what the bots did,
        told to the referee), applied as one step of the session (`TableSession.apply`) and
        published; its messages. UnoError (nothing changed) when the referee refuses it."""
        with self._lock:
            messages = self.session.apply(change)
            said = self._out.take()
            self._publish(said, cause)
            return said or messages

    # -- the box ----------------------------------------------------------------------------
    def handle_event(self, event: dict[str, Any]) -> None:
        """One event from the box, applied as `unoattack table` applies it. The update goes
        out as soon as the game has changed; the button's lock and the save come after it."""
        with self._lock:
            session = self.session
            before = self._fingerprint()
            presses = list(session.ref.presses)
            last = dict(session.last_event)
            session.apply_event(event)
            if session.last_event == last:
                return  # an event the game had applied already (a replay): nothing to show
            ref = session.ref
            # The seat a fire counted for: the one whose press tally went up (none if refused).
            seat = next((s for s, n in enumerate(ref.presses) if n > presses[s]), None)
            self.panel.on_event(event, None if seat is None else ref.name(seat))
            cause = {"event": event.get("seq"), "kind": event.get("kind")}
            self._publish_if_changed(before, cause)
            before = self._fingerprint()
            session.settle()  # the state file, then the button's lock or aim
            self._publish_if_changed(before, {**cause, "settled": True})
        if _status_worth_asking(event):
            self._status_due.set()

    def show_box_event(self, event: dict[str, Any], seat: str | None = None) -> None:
        """An event of a box the session does not drive (`demo --web`: the bots' launcher),
        for the panel only; `seat` is the player a fire was for."""
        with self._lock:
            before = self._fingerprint()
            self.panel.on_event(event, seat)
            self._publish_if_changed(before, {"event": event.get("seq"), "kind": event.get("kind")})
        if _status_worth_asking(event):
            self._status_due.set()

    def refresh_box(self) -> None:
        """Ask the box for its status (hopper, dry streak, state) and show it."""
        if self.box is None:
            return
        try:
            status = self.box.status()
        except UnoError as exc:
            status = None
            problem = message_of(exc)
        with self._lock:
            before = self.panel.snapshot()
            if status is not None:
                self.panel.on_status(status)
                messages = []
            else:
                messages = [_("box: no status: {problem}").format(problem=problem)]
            if messages or self.panel.snapshot() != before:
                self._publish(messages, {"box": "status"})

    def box_op(self, op: str, params: dict[str, Any] | None = None) -> Outcome:
        """A box-panel control that is not a table command (`BOX_CONTROLS`): `reset` (leave
        a latched fault), `status`, `model` (read the jam model) or `model.set` with `params`.
        Each is its wire op, sent through the client, which checks the arguments against the
        op table (wire/ops.py) before anything goes out; the box checks every value against
        its own ranges (the config's safety limits cannot be changed)."""
        box = self.box
        if box is None:
            return Outcome(False, error=_("no box connected (started with --port none)"))
        if self.watch_only is not None and op not in ("status", "model"):
            return Outcome(False, error=self.watch_only)
        wire_op = BOX_CONTROLS.get(op)
        if wire_op is None:
            return Outcome(False, error=_("unknown box control `{op}`").format(op=op))
        args = {"params": dict(params or {})} if wire_op == "model.set" else {}
        try:
            # `status`: refresh_box below asks for it
            reply = box.command(wire_op, **args) if wire_op != "status" else {}
        except UnoError as exc:
            return Outcome(False, error=_("box: {problem}").format(problem=message_of(exc)))
        messages = []
        if op == "reset":
            messages = [_("box reset: {state}").format(state=reply.get("state", "done"))]
        elif op in ("model", "model.set"):
            self.panel.on_model(dict(reply.get("params") or {}))
        if op == "model.set":
            changed = ", ".join(f"{k} {v}" for k, v in args["params"].items())
            messages = [_("box: jam model set: {changed}").format(changed=changed)]
        if messages:
            with self._lock:
                self._publish(messages, {"box": op})
        self.refresh_box()
        return Outcome(True, messages=messages)

    def pump(self, stop: threading.Event) -> None:
        """Feed the box's events in until `stop` (run in a thread, like `unoattack table`'s
        reader)."""
        box = self.session.box
        if box is None:
            return
        try:
            while not stop.is_set():
                for event in box.events(timeout=0.2):
                    self.handle_event(event)
                    if stop.is_set():
                        break
        except Exception as exc:  # the reader must never die silently
            with self._lock:
                self.panel.lost(str(exc))
                self._publish(
                    [_("box connection lost: {problem}").format(problem=message_of(exc))],
                    {"box": "lost"},
                )
        finally:
            stop.set()

    def ask_status(self, stop: threading.Event) -> None:
        """Ask the box for its status whenever an event brought news (run in a thread of its
        own, so the next event never waits for that answer), and once at the start with the
        jam model's parameters."""
        if self.box is None:
            return
        self.box_op("model")  # the jam model's parameters for the panel, and the status
        while True:
            while not self._status_due.wait(0.2):
                if stop.is_set():
                    return
            if stop.is_set():
                return
            self._status_due.clear()  # asks made while this one is under way: the next one
            self.refresh_box()

    def announce(self, messages: list[str], cause: dict[str, Any]) -> None:
        """Publish the current state with `messages` (the server's start, a worker's end)."""
        with self._lock:
            self._publish(messages, cause)

    # -- internals --------------------------------------------------------------------------
    def _fingerprint(self) -> tuple[Any, ...]:
        return self.session.view(), self.panel.snapshot()

    def _publish_if_changed(self, before: tuple[Any, ...], cause: dict[str, Any]) -> None:
        messages = self._out.take()
        if messages or self._fingerprint() != before:
            self._publish(messages, cause)

    def _publish(self, messages: list[str], cause: dict[str, Any]) -> None:
        """Hand one update to the server (lock held: updates go out in the order of changes)."""
        self.version += 1
        self._changed.notify_all()
        if self.publish is not None:
            update = {
                "messages": list(messages),
                "view": self.session.view(),
                "box": self.panel.snapshot(),
                "cause": cause,
            }
            self.publish(update)


def _status_worth_asking(event: dict[str, Any]) -> bool:
    """After a fire or a refill, or when the box latches a state, its status (dry streak,
    hopper, fault) has news; the events of a burst's passing states carry their own."""
    kind = event.get("kind")
    if kind in ("fire", "refill", "jam", "empty", "fault"):
        return True
    return kind == "state" and event.get("to") in ("jammed", "empty", "fault")


# ---------------------------------------------------------------------------------------------
# Opening a table: the same session (and state file) as `unoattack table`


def game_args(**options: Any) -> argparse.Namespace:
    """The game options of `unoattack table` (`add_game_arguments`: players, deck, mode,
    target, option, state, new) with their defaults, as a namespace; keyword values override
    them (for callers that are not a command line)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_game_arguments(parser)
    args = parser.parse_args(["--players", str(options.pop("players"))])
    for key, value in options.items():
        if not hasattr(args, key):
            raise TypeError(f"game_args: unknown option {key!r}")
        setattr(args, key, Path(value) if key == "state" else value)
    return args


def open_table(
    args: argparse.Namespace, box: Any | None = None, saved: StateFile | None = None
) -> TableSession:
    """The session `unoattack table` would run with these game options: resumed from the
    state file when it holds a game (unless `--new`), else a new game; started (the button in
    step, the file written). `box` is a connected `BoxClient` or None; `saved` the game
    `check_game` read, if any. Its words name the state file by its name alone: pages are
    not told the server's paths."""
    session = build_session(
        args,
        box,
        _Lines(),  # type: ignore[arg-type]
        saved=saved,
        state_label=Path(args.state).name,
    )
    session.start()
    return session


def demo_table(*, players: list[str], deck: str, target: int) -> TableSession:
    """A new game for `demo --web`'s bots, refereed in memory: no state file (the demo's game
    is not resumed) and no box (the bots' launcher drives the mock box; the referee is told
    what each press fired)."""
    ref = Referee(players, deck=deck, mode="target", target=target)
    session = TableSession(ref, out=_Lines())  # type: ignore[arg-type]
    session.start()
    return session
