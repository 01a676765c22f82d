"""The web app's one door to the table referee.

Everything the web layer knows about the referee is in this module, so that porting the web app
to another referee means changing this file only:

- **actions** are the command lines `unoattack table` accepts (docs/table.md), fed to
  `TableSession.handle_line`; a refusal is the session's own one-line `! reason`, and a line the
  referee needs more for (a wild's colour, a WAA's target, a DA's count) is its own question;
- **the state** is `Referee.to_dict()` plus the referee's read-only answers (`hitter`, `owed`,
  `to_enter`, `status`, `rules`) and the session's (`prompt`, the button's lock and aim);
- **box events** go to `TableSession.handle_event`, exactly as `unoattack table` feeds them.

The page's pickers compose the lines; which completions a question accepts is found by asking
the referee itself on a throwaway copy (`trial`), never by a rule written here. The table's
state file is the session's own, so `table` and `serve` resume each other's games.
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
from engine.table import (
    COLOR_NAMES,
    Referee,
    TableSession,
    build_session,
    load_state,
)
from engine.table import _check_state_folder as check_state_folder
from engine.web.box_panel import BoxPanel

__all__ = ["MAX_LINE", "Outcome", "TableService", "check_line", "open_table"]

MAX_LINE = 200  # characters in one command line; the longest real one (a hand) is ~60
# Lines that only make sense at the terminal prompt.
TERMINAL_ONLY = {
    "quit": "`quit` is for the terminal: the web game keeps running and is saved after every "
    "action",
}
# Commands that only print, for whoever asked: no update for the other pages.
QUERIES = frozenset({"status", "scores", "help"})
# Words a question from the referee may be answered with, by kind (the page shows the groups).
ANSWERS = ("y", "n")
MAX_NUMBER_CHOICE = 30


def check_line(line: object) -> str | None:
    """Why `line` cannot be a command line at all (type, length, control characters, a
    terminal-only command), or None. What the words mean is the referee's business."""
    if not isinstance(line, str):
        return f"line must be a string (a command line of `unoattack table`), not {_kind(line)}"
    if len(line) > MAX_LINE:
        return f"line of {len(line)} characters: at most {MAX_LINE}"
    if any(not ch.isprintable() for ch in line):
        return "line has control characters (a newline, a tab, ...): one command line per action"
    if not line.strip():
        return "empty line: type a card or a command (`help` lists them)"
    head = line.split()[0].lower()
    return TERMINAL_ONLY.get(head)


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


@dataclass
class Outcome:
    """What became of one action.

    `ok`: applied. `error`: the one-line reason it was refused (nothing changed). `ask`: the
    referee needs more (its own question); `line` is the partial line to complete and `choices`
    the words that answer it, grouped (`colour`, `player`, `number`, `answer`), each checked
    with the referee. `messages`: what the referee said.
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
    """A text stream that keeps what the session prints, line by line."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._part = ""

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


class TableService:
    """A `TableSession` behind a lock, for many pages at once.

    `act(line)` applies one command line; `handle_event(event)` one box event; `view()` is the
    state for the page. Every change is handed to `publish` (set by the web server) as
    ``{"messages", "view", "cause"}`` while the lock is held, so the order in which updates are
    published is the order in which the referee changed.
    """

    def __init__(self, session: TableSession, *, port: str | None = None) -> None:
        self.session = session
        self.box = session.box
        said = session.out
        # What the session said while it was opened ("resuming the game saved in ...").
        self.startup_messages = said.take() if isinstance(said, _Lines) else []
        self._out = _Lines()
        session.out = self._out  # type: ignore[assignment]  # what the session says, captured
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self.version = 0  # bumped at every published change
        self.publish: Publisher | None = None
        self.panel = BoxPanel(connected=self.box is not None, port=port)
        state = session.ref.to_dict()
        deck = load_deck(state["deck"])
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
        """The state the page shows: the referee's own dict and its answers."""
        with self._lock:
            return self._view()

    def _view(self) -> dict[str, Any]:
        session = self.session
        ref = session.ref
        hitter = ref.hitter()
        owes = [line.split("owed: ", 1)[1] for line in ref.status() if line.startswith("  owed: ")]
        return {
            "referee": ref.to_dict(),
            "rules": ref.rules.to_dict(),
            "classic": bool(ref.classic),
            "hitter": hitter,
            "owed": ref.owed(),
            "owes": owes,
            "to_enter": ref.to_enter(),
            "prompt": session.prompt().rstrip().removesuffix(">").rstrip(),
            "button": self._button(hitter),
            "dispensing": dict(session.dispensing) if session.dispensing else None,
            "undo": len(session.history),
            "box": self.panel.snapshot(),
        }

    def _button(self, hitter: int | None) -> dict[str, Any]:
        session = self.session
        if session.box is None:
            return {"box": False, "locked": None, "seat": hitter}
        locked = session.box_locked
        seat = None if locked or session.ref.classic else hitter
        return {"box": True, "locked": locked, "seat": seat, "aim": session.box_aim}

    def static(self) -> dict[str, Any]:
        """What does not change during a game: the deck's cards, the colours, the players."""
        ref = self.session.ref
        return {
            "deck": self.deck_name,
            "cards": self.deck_cards,
            "colors": [{"code": c, "name": COLOR_NAMES[c]} for c in COLORS],
            "players": list(ref.players),
            "box": self.box is not None,
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
        if problem is not None:
            return Outcome(False, error=problem)
        assert isinstance(line, str)
        text = line.strip()
        with self._lock:
            session = self.session
            before = self._fingerprint()
            session.handle_line(text)
            messages = self._out.take()
            asking = session.asking
            session.asking = None  # every page composes whole lines: never leave a half line
            error = next((m[2:] for m in messages if m.startswith("! ")), None)
            if error is not None:
                return Outcome(False, messages=[], error=error)
            if asking is not None:
                return self._ask(*asking)
            query = text.split()[0].lower() in QUERIES
            if not query and (messages or self._fingerprint() != before):
                self._publish(messages, {"line": text})
            return Outcome(True, messages=messages)

    def trial(self, line: str) -> tuple[str, str]:
        """What the referee would do with `line` now, on a copy (nothing changes):
        ("applied", ""), ("asks", its question) or ("refused", its reason)."""
        with self._lock:
            copy = Referee.from_dict(self.session.ref.to_dict())
        out = _Lines()
        trial = TableSession(copy, out=out)  # type: ignore[arg-type]
        trial.handle_line(line)
        messages = out.take()
        error = next((m[2:] for m in messages if m.startswith("! ")), None)
        if error is not None:
            return "refused", error
        if trial.asking is not None:
            return "asks", trial.asking[1]
        return "applied", ""

    def _ask(self, partial: str, question: str) -> Outcome:
        """The referee asked for more: offer the words that answer its question."""
        choices, refusal = self.choices(partial, question)
        if not choices and refusal is not None:
            return Outcome(False, error=refusal)
        return Outcome(False, ask=question, line=partial, choices=choices)

    def choices(self, partial: str, question: str) -> tuple[dict[str, list[str]], str | None]:
        """The words that answer the referee's `question` about `partial`, grouped (`colour`,
        `player`, `number`, `answer`): each one tried on a copy of the referee. An answer is one
        it applies, or that moves it on to another question (WAA: the colour, then the
        player). Also the first refusal met, for when nothing answers."""
        with self._lock:
            ref = self.session.ref
            most = max((ref.hand[s] for s in ref.active_seats()), default=0)
            groups = {
                "colour": list(COLORS),
                "player": list(ref.players),
                "number": [str(n) for n in range(min(most, MAX_NUMBER_CHOICE) + 1)],
                "answer": list(ANSWERS),
            }
        choices: dict[str, list[str]] = {}
        refusal: str | None = None
        taken: set[str] = set()
        for group, words in groups.items():
            accepted = []
            for word in words:
                if word.lower() in taken:
                    continue  # `y` is yellow before it is yes
                result, text = self.trial(f"{partial} {word}")
                if result == "applied" or (result == "asks" and text != question):
                    accepted.append(word)
                elif result == "refused" and refusal is None:
                    refusal = text
            if accepted:
                choices[group] = accepted
                taken.update(w.lower() for w in accepted)
        return choices, refusal

    # -- the box ----------------------------------------------------------------------------
    def handle_event(self, event: dict[str, Any]) -> None:
        """One event from the box, applied as `unoattack table` applies it."""
        with self._lock:
            before = self._fingerprint()
            presses = list(self.session.ref.presses)
            last = dict(self.session.last_event)
            self.session.handle_event(event)
            if self.session.last_event == last:
                return  # an event the game had applied already (a replay): nothing to show
            ref = self.session.ref
            # The seat a fire counted for: the one whose press tally went up (none if refused).
            seat = next((s for s, n in enumerate(ref.presses) if n > presses[s]), None)
            self.panel.on_event(event, None if seat is None else ref.name(seat))
            messages = self._out.take()
            if messages or self._fingerprint() != before:
                self._publish(messages, {"event": event.get("seq"), "kind": event.get("kind")})

    def refresh_box(self) -> None:
        """Ask the box for its status (hopper, dry streak, state) and show it."""
        if self.box is None:
            return
        try:
            status = self.box.status()
        except UnoError as exc:
            status = None
            problem = str(exc)
        with self._lock:
            before = self.panel.snapshot()
            if status is not None:
                self.panel.on_status(status)
                messages = []
            else:
                messages = [f"box: no status: {problem}"]
            if messages or self.panel.snapshot() != before:
                self._publish(messages, {"box": "status"})

    def box_op(self, op: str, params: dict[str, Any] | None = None) -> Outcome:
        """A box-panel control that is not a table command: `reset` (leave a latched fault),
        `status`, `model` (read the jam model) or `model.set` with `params` (the box checks every
        value against its own ranges; the config's safety limits cannot be changed)."""
        box = self.box
        if box is None:
            return Outcome(False, error="no box connected (started with --port none)")
        try:
            if op == "reset":
                reply = box.reset()
                messages = [f"box reset: {reply.get('state', 'done')}"]
            elif op == "status":
                messages = []
            elif op == "model":
                self.panel.on_model(box.model_get())
                messages = []
            elif op == "model.set":
                self.panel.on_model(box.model_set(**(params or {})))
                changed = ", ".join(f"{k} {v}" for k, v in (params or {}).items())
                messages = [f"box: jam model set: {changed}"]
            else:
                return Outcome(False, error=f"unknown box control `{op}`")
        except UnoError as exc:
            return Outcome(False, error=f"box: {exc}")
        if messages:
            with self._lock:
                self._publish(messages, {"box": op})
        self.refresh_box()
        return Outcome(True, messages=messages)

    def pump(self, stop: threading.Event) -> None:
        """Feed the box's events in until `stop` (run in a thread, like `unoattack table`'s
        reader). The box's status (dry streak, hopper) is asked for by a thread of its own
        after fires and refills, so the next event never waits for that answer."""
        box = self.box
        if box is None:
            return
        due = threading.Event()
        asker = threading.Thread(
            target=self._ask_status, args=(due, stop), name="web-box-status", daemon=True
        )
        asker.start()
        self.box_op("model")  # the jam model's parameters for the panel, and the status
        try:
            while not stop.is_set():
                for event in box.events(timeout=0.2):
                    self.handle_event(event)
                    if _status_worth_asking(event):
                        due.set()
                    if stop.is_set():
                        break
        except Exception as exc:  # the reader must never die silently
            with self._lock:
                self.panel.lost(str(exc))
                self._publish([f"box connection lost: {exc}"], {"box": "lost"})
        finally:
            stop.set()
            due.set()
            asker.join(timeout=5)

    def _ask_status(self, due: threading.Event, stop: threading.Event) -> None:
        while True:
            due.wait()
            if stop.is_set():
                return
            due.clear()  # asks made while this one is under way are answered by the next
            self.refresh_box()

    def announce(self, messages: list[str], cause: dict[str, Any]) -> None:
        """Publish the current state with `messages` (the server's start, a worker's end)."""
        with self._lock:
            self._publish(messages, cause)

    # -- internals --------------------------------------------------------------------------
    def _fingerprint(self) -> tuple[Any, ...]:
        session = self.session
        return (
            session.ref.to_dict(),
            session.box_locked,
            session.box_aim,
            session.dispensing,
            session.dispense_hold,
            self.panel.snapshot(),
        )

    def _publish(self, messages: list[str], cause: dict[str, Any]) -> None:
        """Hand one update to the server (lock held: updates go out in the order of changes)."""
        self.version += 1
        self._changed.notify_all()
        if self.publish is not None:
            self.publish({"messages": list(messages), "view": self._view(), "cause": cause})


def _status_worth_asking(event: dict[str, Any]) -> bool:
    """After a fire or a refill, or when the box latches a state, its status (dry streak,
    hopper, fault) has news; the events of a burst's passing states carry their own."""
    kind = event.get("kind")
    if kind in ("fire", "refill", "jam", "empty", "fault"):
        return True
    return kind == "state" and event.get("to") in ("jammed", "empty", "fault")


# ---------------------------------------------------------------------------------------------
# Opening a table: the same session (and state file) as `unoattack table`


def open_table(
    *,
    players: str,
    deck: str,
    mode: str,
    target: int,
    state: Path,
    new: bool,
    box: Any | None,
) -> TableSession:
    """The session `unoattack table` would run with these options: resumed from `state` when it
    exists (unless `new`), else a new game. `box` is a connected `BoxClient` or None."""
    args = argparse.Namespace(
        players=players, deck=deck, mode=mode, target=target, state=Path(state), new=new
    )
    session = build_session(args, box, _Lines())  # type: ignore[arg-type]
    session._sync_box()  # as `TableSession.run` does first: lock the button unless a seat owes
    session.save()
    return session


def check_table_options(
    *, players: str, deck: str, mode: str, target: int, state: Path, new: bool
) -> dict[str, Any]:
    """Usage errors before any box or server starts (InputError, exit 2); returns the box
    position to resume from (the last box event the saved game applied), or {}."""
    check_state_folder(Path(state))
    if Path(state).exists() and not new:
        return load_state(Path(state))[2]  # a bad file is one line here; wrong --players later
    Referee([p.strip() for p in players.split(",")], deck=deck, mode=mode, target=target)
    return {}
