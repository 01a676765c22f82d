"""The web app's one door to the table referee.

Everything the web layer knows about the referee is in this module, so that porting the web app
to another referee means changing this file only. It uses the session's public API
(engine/table/session.py, docs/web.md#code):

- **actions** are the table's typed commands (engine/table/commands.py): the page sends them as
  JSON data (`commands.from_data`), a script may send a line as typed at `unoattack table`
  (`commands.parse`); both go to `TableSession.act`. A refusal is the session's own one-line
  reason, and a command the referee needs more for (a wild's colour, a WAA's target, a DA's
  count) is its own question, with the answers it accepts, each as the whole command to send;
- **the state** is `TableSession.view()`, the very data `unoattack table --json` prints;
- **box events** go to `TableSession.apply_event` and `settle`, as `unoattack table` feeds
  them, with the update published in between: the page hears of a press before the button is
  locked again and the state file written.

The table's state file is the session's own, so `table` and `serve` resume each other's games.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.boxport import BoxPort
from engine.cards import COLORS, load_deck
from engine.errors import UnoError
from engine.outcomes import Outcome as Told
from engine.table import commands, questions
from engine.table.boxsync import MAX_FIRED
from engine.table.commands import MAX_LINE, QUERIES, TERMINAL_ONLY, Command, line_problem
from engine.table.options import GameOptions
from engine.table.referee import Referee
from engine.table.session import TableSession, build_session
from engine.table.state_file import StateFile
from engine.web.box_panel import BoxPanel
from engine.words import colour_name
from i18n import _, lines_of, message_of
from wire.text import describe, news

__all__ = [
    "BOX_CONTROLS",
    "MAX_LINE",
    "Answer",
    "TableService",
    "check_line",
    "demo_table",
    "open_table",
]

# The box panel's controls, and the wire op (wire/ops.py) each one is, with its arguments.
BOX_CONTROLS = {
    "reset": "reset",
    "status": "status",
    "model": "model.get",
    "model.set": "model.set",
    "fire": "dispense",  # the dashboard's test fire: `dispense 1`
    "settings": "settings.get",
    "settings.set": "settings.set",
}
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
    return None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


@dataclass
class Answer:
    """What became of one command.

    `ok`: applied. `error`: the one-line reason it was refused (nothing changed). `ask`: the
    referee needs more (its own question); `command` is the command so far (as data),
    `choices` the words that answer it, grouped (`colour`, `player`, `number` or `answer`), as
    the referee offers them, and `answers` the whole command to send for each word.
    `messages`: what the referee said.
    """

    ok: bool
    messages: list[str] = field(default_factory=list)
    error: str | None = None
    ask: str | None = None
    command: dict[str, Any] | None = None
    choices: dict[str, list[str]] | None = None
    answers: dict[str, dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a reply; absent fields left out."""
        out: dict[str, Any] = {"ok": self.ok, "messages": list(self.messages)}
        for key in ("error", "ask", "command", "choices", "answers"):
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
Change = Callable[[Referee], list[Told]]


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
        session.out = self._out  # what the session says, captured
        self._lock = threading.RLock()
        self.version = 0  # bumped at every published change
        self.publish: Publisher | None = None
        # the dashboard warns when one burst could empty the hopper
        self.panel = BoxPanel(connected=self.box is not None, low_cards=MAX_FIRED)
        self.claims: list[int] = []  # the seats a phone has claimed ("I am Bo", seats.py)
        self._console_later: list[str] = []  # box console lines not published yet
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

    # -- acting -----------------------------------------------------------------------------
    def command_of(self, request: dict[str, Any]) -> Command | Answer:
        """The command a request carries: its `command` (the table's command as JSON data,
        `engine.table.commands.to_data`'s shape) or its `line` (as typed at `unoattack
        table`); or the refusal of a request that carries none."""
        try:
            if "command" in request:
                return commands.from_data(request["command"], self.session.ref)
            line = request.get("line")
            problem = check_line(line)
            if problem is not None:
                return Answer(False, error=problem)
            assert isinstance(line, str)
            return commands.parse(line.strip(), self.session.ref)
        except UnoError as exc:
            return Answer(False, error=message_of(exc))

    def request(self, request: dict[str, Any]) -> Answer:
        """Apply the command a page's `act` request carries (`command_of`)."""
        with self._lock:
            command = self.command_of(request)
            return command if isinstance(command, Answer) else self.act(command)

    def act(self, command: Command) -> Answer:
        """Apply one command, as `unoattack table` applies it."""
        word = commands.word_of(command)
        if word in TERMINAL_ONLY:
            return Answer(False, error=_(TERMINAL_ONLY[word]))
        if self.watch_only is not None:
            return Answer(False, error=self.watch_only)
        with self._lock:
            before = self._fingerprint()
            reply = self.session.act(command)
            messages = self._out.take()
            if reply.refusal is not None:
                return Answer(False, error=reply.refusal)
            question = reply.question
            if question is not None:
                group = ANSWER_GROUPS[question.kind]
                answers = {
                    word: commands.to_data(
                        questions.answered(question, word, self.session.ref.players)
                    )
                    for word in question.answers
                }
                return Answer(
                    False,
                    ask=question.text,
                    command=commands.to_data(question.command),
                    choices={group: list(question.answers)},
                    answers=answers,
                )
            if word not in QUERIES and (messages or self._fingerprint() != before):
                self._publish(messages, {"command": commands.to_data(command)})
            return Answer(True, messages=messages)

    def apply(self, change: Change, cause: dict[str, Any]) -> list[str]:
        """One change of the referee made by code, not typed (`demo --web`: what the bots did,
        told to the referee), applied as one step of the session (`TableSession.apply`) and
        published; what the table said of it. UnoError (nothing changed) when the referee
        refuses it."""
        with self._lock:
            self.session.apply(change)
            said = self._out.take()
            self._publish(said, cause)
            return said

    def new_game(self) -> Answer:
        """The page's **New game** (at a night's table: **Next seating**), as
        `TableSession.next_game(anytime=True)`; refused for a page that only watches."""
        if self.watch_only is not None:
            return Answer(False, error=self.watch_only)
        with self._lock:
            try:
                self.session.next_game(anytime=True)
            except OSError as exc:  # the history: nothing written
                return Answer(False, error=exc.strerror or str(exc))
            except UnoError as exc:  # refused, or the state file: the old game goes on
                return Answer(False, error=message_of(exc))
            messages = self._out.take()
            self._publish(messages, {"new_game": True})
            return Answer(True, messages=messages)

    # -- the box ----------------------------------------------------------------------------
    def handle_event(self, event: dict[str, Any]) -> None:
        """One event from the box, applied as `unoattack table` applies it. The update goes
        out as soon as the game has changed; the button's lock and the save come after it.
        The event's line (as `unoattack watch` prints it) goes to the box console (with the
        next update when the event changes nothing else); so does what the referee says of the
        button's lock, which the strip shows anyway."""
        with self._lock:
            session = self.session
            before = self._fingerprint()
            presses = list(session.ref.presses)
            last = dict(session.boxsync.last_event)
            session.apply_event(event)
            if session.boxsync.last_event == last:
                return  # an event the game had applied already (a replay): nothing to show
            ref = session.ref
            # The seat a fire counted for: the one whose press tally went up (none if refused).
            seat = next((s for s, n in enumerate(ref.presses) if n > presses[s]), None)
            self.panel.on_event(event, None if seat is None else ref.name(seat))
            cause = {"event": event.get("seq"), "kind": event.get("kind")}
            said = self._out.take()
            console = [describe(event)]
            if _chatter(event):
                console, said = console + said, []
            if said or self._fingerprint() != before:
                self._publish(said, cause, console)
            else:
                # News for the console only (a press before its burst): it goes with the next
                # update, or alone once the box is quiet (`pump`), so that the burst's own
                # updates, which every page waits for, are not queued behind it.
                self._console_later += console
            before = self._fingerprint()
            session.settle()  # the state file, then the button's lock or aim
            self._publish_if_changed(before, {**cause, "settled": True})
        if _status_worth_asking(event):
            self._status_due.set()

    def show_box_event(self, event: dict[str, Any], seat: str | None = None) -> None:
        """An event of a box the session does not drive (`demo --web`: the bots' launcher),
        for the panel and its console only; `seat` is the player a fire was for."""
        with self._lock:
            before = self._fingerprint()
            self.panel.on_event(event, seat)
            cause = {"event": event.get("seq"), "kind": event.get("kind")}
            self._publish_if_changed(before, cause, console=[describe(event)])
        if _status_worth_asking(event):
            self._status_due.set()

    def refresh_box(self, since: dict[str, Any] | None = None) -> None:
        """Ask the box for its status (hopper, dry streak, state, uptime) and show it: one
        update if the panel is not what it was (`since`: as it was then; default: now)."""
        if self.box is None:
            return
        try:
            status = self.box.status()
        except UnoError as exc:
            status = None
            problem = message_of(exc)
        with self._lock:
            before = since if since is not None else self.panel.snapshot()
            messages: list[str] = []
            if status is not None:
                self.panel.on_status(status)
            else:
                messages = [_("box: no status: {problem}").format(problem=problem)]
            if messages or self.panel.snapshot() != before:
                self._publish([], {"box": "status"}, messages)

    def box_op(
        self, op: str, params: dict[str, Any] | None = None, *, refresh: bool = True
    ) -> Answer:
        """A box-panel control that is not a table command (`BOX_CONTROLS`): `reset` (leave
        a latched fault), `status`, `model` (read the jam model), `model.set` with `params`,
        `fire` (the test fire: `dispense 1`), `settings` (read the box's switches) and
        `settings.set` with `params` (`{"sound.enabled": false}`). Each is its wire op, sent
        through the client, which checks the arguments against the op table (wire/ops.py)
        before anything goes out; the box checks every value against its own ranges and its
        config (no limit can be changed, and a test fire is a dispense within them). Then the
        box's status is asked for (unless not `refresh`), and one update shows it all."""
        box = self.box
        if box is None:
            return Answer(False, error=_("no box connected (started with --port none)"))
        if self.watch_only is not None and op not in ("status", "model", "settings"):
            return Answer(False, error=self.watch_only)
        wire_op = BOX_CONTROLS.get(op)
        if wire_op is None:
            return Answer(False, error=_("unknown box control `{op}`").format(op=op))
        before = self.panel.snapshot()
        args: dict[str, Any] = {}
        if wire_op == "model.set":
            args = {"params": dict(params or {})}
        elif wire_op == "settings.set":
            args = {"settings": dict(params or {})}
        elif wire_op == "dispense":
            args = {"count": 1}
        try:
            # `status`: refresh_box below asks for it
            reply = box.command(wire_op, **args) if wire_op != "status" else {}
        except UnoError as exc:
            return Answer(False, error=_("box: {problem}").format(problem=message_of(exc)))
        messages: list[str] = []
        if op == "reset":
            messages = [_("box reset: {state}").format(state=reply.get("state", "done"))]
        elif op in ("model", "model.set"):
            self.panel.on_model(dict(reply.get("params") or {}))
        elif op in ("settings", "settings.set"):
            self.panel.on_settings(reply)
        if op == "model.set":
            changed = ", ".join(f"{k} {v}" for k, v in args["params"].items())
            messages = [_("box: jam model set: {changed}").format(changed=changed)]
        elif op == "settings.set":
            changed = ", ".join(f"{k} {v}" for k, v in args["settings"].items())
            messages = [_("box: settings set: {changed}").format(changed=changed)]
        elif op == "fire":
            messages = [_("box: test fire, press {press}").format(press=reply.get("press_id"))]
        if messages:
            with self._lock:
                # the box's answers go to its console: they are not moves of the game
                self._publish([], {"box": op}, messages)
        if refresh:
            self.refresh_box(None if messages else before)
        return Answer(True, messages=messages)

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
                self.flush_console()  # the box is quiet (or stopping)
                box.raise_if_gone()  # a box that can never come back: say so, once
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
        jam model's parameters and the box's switches; and follow the link (connected or
        reconnecting), which the dashboard shows."""
        if self.box is None:
            return
        # The jam model's parameters, the box's switches and its status: one update.
        before = self.panel.snapshot()
        self.box_op("model", refresh=False)
        self.box_op("settings", refresh=False)
        self.refresh_box(before)
        linked = True
        while True:
            while not self._status_due.wait(0.2):
                if stop.is_set():
                    return
                linked = self._follow_link(linked)
            if stop.is_set():
                return
            self._status_due.clear()  # asks made while this one is under way: the next one
            self.refresh_box()

    def follow_night(self, stop: threading.Event) -> None:
        """A night's table: publish the rounds other tables record, until `stop` (a thread)."""
        night = self.session.night
        if night is not None:
            night.book.follow(stop, self._night_changed)

    def _night_changed(self) -> None:
        with self._lock:
            self._publish([], {"night": True})

    def _follow_link(self, was: bool) -> bool:
        """Publish a change of the link to the box (the client reopens a port that went away
        by itself); the link's state now. Back again: the box's status and switches anew."""
        now = bool(getattr(self.box, "connected", True))
        if now != was and self.panel.snapshot()["link"] != "lost":
            with self._lock:
                self.panel.on_link("connected" if now else "reconnecting")
                self._publish([], {"box": "link"})
            if now:
                self.box_op("settings")
        return now

    def flush_console(self) -> None:
        """Publish the box console's lines that wait for an update (`handle_event`), if any."""
        with self._lock:
            if self._console_later:
                self._publish([], {"console": True})

    def announce(self, messages: list[str], cause: dict[str, Any]) -> None:
        """Publish the current state with `messages` (the server's start, a worker's end)."""
        with self._lock:
            self._publish(messages, cause)

    # -- internals --------------------------------------------------------------------------
    def _fingerprint(self) -> tuple[Any, ...]:
        return self.session.view(), self.panel.snapshot()

    def _publish_if_changed(
        self,
        before: tuple[Any, ...],
        cause: dict[str, Any],
        messages: list[str] | None = None,
        console: list[str] | None = None,
    ) -> None:
        """Publish when anything was said or changed; `messages` (default: what the session
        said since) go to the table's log, `console` to the box's."""
        if messages is None:
            messages = self._out.take()
        if messages or console or self._fingerprint() != before:
            self._publish(messages, cause, console)

    def _publish(
        self, messages: list[str], cause: dict[str, Any], console: list[str] | None = None
    ) -> None:
        """Hand one update to the server (lock held: updates go out in the order of changes):
        the table log's new lines (`messages`), the box console's (`console`), the whole state
        and the box panel, and the seats phones have claimed."""
        self.version += 1
        console = self._console_later + list(console or ())
        self._console_later = []
        if self.publish is not None:
            update = {
                "messages": list(messages),
                "console": console,
                "view": self.session.view(),
                "box": self.panel.snapshot(),
                "claims": list(self.claims),
                "cause": cause,
            }
            self.publish(update)

    def set_claims(self, seats: list[int]) -> None:
        """The seats phones claim now ("I am Bo"): published to every page when they change."""
        with self._lock:
            if seats != self.claims:
                self.claims = list(seats)
                self._publish([], {"claims": True})


def _chatter(event: dict[str, Any]) -> bool:
    """A box event whose words belong in the box's console, not the table's log: a state
    change that is not a latch (the button locked or live again: the strip shows that)."""
    return event.get("kind") == "state" and news(event) is None


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
    options: GameOptions, box: BoxPort | None = None, saved: StateFile | None = None
) -> TableSession:
    """The session `unoattack table` would run with these game options: resumed from the
    state file when it holds a game (unless `new`), else a new game; started (the button in
    step, the file written). `box` is a connected box or None; `saved` the game
    `GameOptions.check` read, if any. Its words name the state file by its name alone: pages
    are not told the server's paths."""
    session = build_session(
        options,
        box,
        _Lines(),  # type: ignore[arg-type]
        saved=saved,
        state_label=options.state.name,
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
