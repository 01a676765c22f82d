"""What the table can be told: one table of commands, typed.

Each command is a small frozen dataclass (`Play`, `Hit`, `Catch`, ...). `COMMANDS` is the one
table of them: the word typed at `unoattack table`, how its arguments are read, its line of
`help`, and its scope (a move of the game, a query that only prints, the box, the session, the
terminal alone). Everything else is generated from it: `HELP`, the words a player's name may
not be, the web page's queries and terminal-only words.

Two ways in, one meaning:

- `parse(line, table)`: a line as typed at the terminal (`R5`, `WAA B Cat`, `catch Bob Ann`);
- `from_data(data, table)`: the same command as JSON data, as the web page sends it
  (``{"word": "catch", "player": "Bob", "by": "Ann"}``); `to_data` is its inverse.

Both refuse what cannot be a command in one line (InputError, RuleError) and know nothing of
the rules: whether a move is allowed is the referee's business (engine/table/referee.py). A
new command is a dataclass and a row of `COMMANDS` here, and its handler in
engine/table/session.py.
"""

from __future__ import annotations

import dataclasses
import types
import typing
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from common.commandline import digits
from engine.cards import COLORS, Card, Deck, parse_card
from engine.errors import InputError, RuleError, UnoError
from engine.words import COLOUR_NAMES
from i18n import N_, _, number, worded

__all__ = [
    "CARD_LINES",
    "COLOR_WORDS",
    "COMMANDS",
    "MAX_LINE",
    "NAME_WORDS",
    "QUERIES",
    "TERMINAL_ONLY",
    "Catch",
    "Challenge",
    "Clear",
    "Command",
    "Dealer",
    "Draw",
    "EnterHand",
    "Fired",
    "Help",
    "Hit",
    "Load",
    "Next",
    "Pass",
    "Play",
    "Press",
    "Quit",
    "Resend",
    "Scores",
    "SetHand",
    "Spec",
    "Status",
    "Undo",
    "Uno",
    "from_data",
    "help_text",
    "is_card",
    "line_problem",
    "parse",
    "to_data",
]

# What a player may type for a colour: the letter or the English word (typed like notation).
COLOR_WORDS = {**{c: c for c in COLORS}, **{v.upper(): k for k, v in COLOUR_NAMES.items()}}
# What one field of a command sent as data may be, at most (a real one is far smaller).
MAX_COUNT = 10_000
MAX_WORD = 40  # also a word of a typed line: a card, a command, a number or a name
MAX_CARDS = 40
# A typed line, from the keyboard, a pipe or a phone (`line_problem`, the one check): the
# longest real one (a hand) is ~60 characters.
MAX_LINE = 200
# A challenge's answer: the Wild Draw Four was legal (y) or not (n).
YES = ("y", "yes", "legal")
NO = ("n", "no", "illegal")


class TableFacts(Protocol):
    """What reading a command needs to know of the table: the players' names, the deck, the
    phase (``score``: every line is a hand), and whether several cards may go at once."""

    players: list[str]
    deck: Deck
    phase: str

    @property
    def multi(self) -> bool: ...


class Command:
    """Base of every command: `word` is what is typed (``""``: a line of cards)."""

    __slots__ = ()
    word: ClassVar[str] = ""


# -- moves of the game ----------------------------------------------------------------------


@dataclass(frozen=True)
class Play(Command):
    """Cards played (or, before a round, the card turned up): `cards`, the `color` named, the
    `target` (a player's name) of a WAA or TH, how many more cards of its colour a DA took
    (`discards`), `uno` called with it, and who jumps in (`jumper`, out of turn)."""

    word: ClassVar[str] = "play"
    cards: tuple[Card, ...]
    color: str | None = None
    target: str | None = None
    discards: int | None = None
    uno: bool = False
    jumper: str | None = None


@dataclass(frozen=True)
class EnterHand(Command):
    """At a round's end: the cards left in the hand asked for (`force`: a count that differs
    from the referee's)."""

    word: ClassVar[str] = "hand-left"
    cards: tuple[Card, ...]
    force: bool = False


@dataclass(frozen=True)
class Hit(Command):
    """The player whose turn it is hits the launcher once."""

    word: ClassVar[str] = "hit"


@dataclass(frozen=True)
class Draw(Command):
    """Classic: the player to move draws a card (or takes a penalty instead of answering)."""

    word: ClassVar[str] = "draw"


@dataclass(frozen=True)
class Challenge(Command):
    """Classic: a Wild Draw Four challenged; `legal` is the table's verdict (None: ask it)."""

    word: ClassVar[str] = "challenge"
    legal: bool | None = None


@dataclass(frozen=True)
class Pass(Command):
    """Decline the extra card after R or S, or keep what a take brought."""

    word: ClassVar[str] = "pass"


@dataclass(frozen=True)
class Uno(Command):
    """UNO called (by `player`, or whoever it fits)."""

    word: ClassVar[str] = "uno"
    player: str | None = None


@dataclass(frozen=True)
class Catch(Command):
    """`player` did not call UNO in time, says `by`."""

    word: ClassVar[str] = "catch"
    player: str
    by: str | None = None


@dataclass(frozen=True)
class Dealer(Command):
    """`player` deals (before the first card is turned up)."""

    word: ClassVar[str] = "dealer"
    player: str


@dataclass(frozen=True)
class SetHand(Command):
    """`player` really holds `count` cards."""

    word: ClassVar[str] = "hand"
    player: str
    count: int


# -- the box and the launcher ---------------------------------------------------------------


@dataclass(frozen=True)
class Press(Command):
    """Press the box from the keyboard (as the button)."""

    word: ClassVar[str] = "press"


@dataclass(frozen=True)
class Fired(Command):
    """Without a box: the press fired `count` cards."""

    word: ClassVar[str] = "fired"
    count: int


@dataclass(frozen=True)
class Load(Command):
    """The launcher was refilled and holds `count` cards."""

    word: ClassVar[str] = "load"
    count: int


@dataclass(frozen=True)
class Clear(Command):
    """Clear a jammed or empty box."""

    word: ClassVar[str] = "clear"


@dataclass(frozen=True)
class Resend(Command):
    """Classic: a dispense lost in a crash never fired: send it again."""

    word: ClassVar[str] = "resend"


# -- the session ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Status(Command):
    """The table now, in a few lines."""

    word: ClassVar[str] = "status"


@dataclass(frozen=True)
class Scores(Command):
    """The scoreboard."""

    word: ClassVar[str] = "scores"


@dataclass(frozen=True)
class Undo(Command):
    """Take the last step back."""

    word: ClassVar[str] = "undo"


@dataclass(frozen=True)
class Help(Command):
    """The commands."""

    word: ClassVar[str] = "help"


@dataclass(frozen=True)
class Next(Command):
    """Once the game is over: the next game at the table (a night's next seating)."""

    word: ClassVar[str] = "next"


@dataclass(frozen=True)
class Quit(Command):
    """Stop the referee (the game is saved)."""

    word: ClassVar[str] = "quit"


# -- the table of commands --------------------------------------------------------------------

Reader = Callable[[list[str], TableFacts], Command]


@dataclass(frozen=True)
class Spec:
    """One row of the command table: the `word` typed, the `command` class, how its arguments
    are `read` (None: a bare word; extra words are ignored by the `always` ones), the `syntax`
    shown in help and the `help` line (None: the word is listed with the others that need no
    explaining), and its `scope`: ``move`` (a move of the game), ``query`` (only prints, for
    whoever asked), ``box``, ``session`` or ``terminal`` (only at the terminal's prompt)."""

    word: str
    command: type[Command]
    scope: str
    syntax: str = ""
    help: str | None = None
    read: Reader | None = None
    always: bool = False  # read in every phase (at a round's end, other lines are the hand)
    elsewhere: str | None = None  # only at the terminal's prompt: why it is refused elsewhere


def _one_name(usage: str) -> Callable[[list[str]], str]:
    def name(args: list[str]) -> str:
        if len(args) != 1:
            raise InputError(_(usage))
        return args[0]

    return name


def _count(args: list[str], usage: str) -> int:
    count = digits(args[0]) if len(args) == 1 else None
    if count is None:
        raise InputError(_(usage))
    return count


def _read_uno(args: list[str], table: TableFacts) -> Command:
    if len(args) > 1:
        raise InputError(_("uno [NAME]"))
    return Uno(args[0] if args else None)


def _read_catch(args: list[str], table: TableFacts) -> Command:
    if len(args) not in (1, 2):
        raise InputError(_("catch NAME [BY]: the player who did not call UNO (and who saw)"))
    return Catch(args[0], args[1] if len(args) == 2 else None)


def _read_hand(args: list[str], table: TableFacts) -> Command:
    count = digits(args[1]) if len(args) == 2 else None
    if count is None:
        raise InputError(_("hand NAME N: NAME really holds N cards"))
    return SetHand(args[0], count)


def _read_challenge(args: list[str], table: TableFacts) -> Command:
    if not args:
        return Challenge()
    answer = " ".join(args).lower()
    if answer in YES:
        return Challenge(True)
    if answer in NO:
        return Challenge(False)
    raise InputError(_("challenge: answer y (the WD4 was legal) or n (it was not)"))


def _read_jump(args: list[str], table: TableFacts) -> Command:
    if len(args) < 2:
        raise InputError(_("jump NAME CARD: NAME plays the card just played, out of turn"))
    return dataclasses.replace(_read_cards(args[1:], table), jumper=args[0])


# The lines of cards (no word: the first word is a card), listed in `help` first.
CARD_LINES: tuple[Spec, ...] = (
    Spec(
        "",
        Play,
        "move",
        "CARD [COLOUR] [NAME] [N] [uno]",
        N_("play a card: R5, W G, WAA B Carl (aim), RTH Bob, BDA 2 (+2 blue)"),
    ),
    Spec(
        "",
        Play,
        "move",
        "CARD CARD ... [COLOUR]",
        N_("multi_play: several cards of one face (R5 B5 G5 B)"),
    ),
)
COMMANDS: dict[str, Spec] = {
    spec.word: spec
    for spec in (
        Spec(
            "jump",
            Play,
            "move",
            "jump NAME CARD",
            N_("jump_in: NAME plays the same card out of turn"),
            _read_jump,
        ),
        Spec("hit", Hit, "move", "hit", N_("the player whose turn it is hits the launcher once")),
        Spec(
            "draw",
            Draw,
            "move",
            "draw",
            N_("classic: draw a card (dispensed); or take a WD4 / D2 owed"),
        ),
        Spec(
            "challenge",
            Challenge,
            "move",
            "challenge [y|n]",
            N_("classic: challenge a WD4; y/n: was it legal?"),
            _read_challenge,
        ),
        Spec(
            "resend",
            Resend,
            "box",
            "resend",
            N_("classic: a dispense lost in a crash never fired: send again"),
        ),
        Spec(
            "pass",
            Pass,
            "move",
            "pass",
            N_("decline the extra card after R or S, or keep what came"),
        ),
        Spec(
            "uno",
            Uno,
            "move",
            "uno [NAME]",
            N_("UNO is called (3 or more cards: a false call, 2 hits)"),
            _read_uno,
        ),
        Spec(
            "catch",
            Catch,
            "move",
            "catch NAME [BY]",
            N_(
                "NAME did not call UNO in time: NAME hits twice\n"
                "(classic: draws 2; a wrong accusation costs BY the same)"
            ),
            _read_catch,
        ),
        Spec(
            "press",
            Press,
            "box",
            "press",
            N_("press the box from the keyboard (same as the button)"),
            always=True,
        ),
        Spec(
            "fired",
            Fired,
            "box",
            "fired N",
            N_("without a box (--port none): the press fired N cards"),
            lambda args, table: Fired(
                _count(args, N_("fired N: the number of cards the launcher fired (0 or more)"))
            ),
            always=True,
        ),
        Spec(
            "dealer",
            Dealer,
            "move",
            "dealer NAME",
            N_("who deals (before the first card is turned up)"),
            lambda args, table: Dealer(_one_name(N_("dealer NAME"))(args)),
        ),
        Spec(
            "hand",
            SetHand,
            "move",
            "hand NAME N",
            N_("correct the count: NAME really holds N cards"),
            _read_hand,
        ),
        Spec(
            "load",
            Load,
            "box",
            "load N",
            N_("the launcher was refilled and now holds N cards"),
            lambda args, table: Load(
                _count(args, N_("load N: how many cards the launcher holds now"))
            ),
            always=True,
        ),
        Spec("clear", Clear, "box", "clear", N_("clear a jammed or empty box"), always=True),
        Spec("status", Status, "query", always=True),
        Spec("scores", Scores, "query", always=True),
        Spec("undo", Undo, "session", always=True),
        Spec(
            "next",
            Next,
            "session",
            "next",
            N_(
                "once the game is over: a new game, the same players (at a night's table: the "
                "players the rotation seats next)"
            ),
            always=True,
        ),
        Spec("help", Help, "query", always=True),
        Spec(
            "quit",
            Quit,
            "terminal",
            always=True,
            elsewhere=N_(
                "`quit` is for the terminal: the web game keeps running and is saved after every "
                "action"
            ),
        ),
    )
}
# The words typed at the prompt, which no player may be called (nor "none": no hand).
WORDS: frozenset[str] = frozenset(COMMANDS)
NAME_WORDS: frozenset[str] = WORDS | {"none"}
# Commands that only print, for whoever asked, and those only the terminal's prompt takes.
QUERIES: frozenset[str] = frozenset(w for w, spec in COMMANDS.items() if spec.scope == "query")
TERMINAL_ONLY: dict[str, str] = {
    w: spec.elsewhere for w, spec in COMMANDS.items() if spec.elsewhere is not None
}
# Every command class, by the word its data carries (`to_data`, `from_data`).
_CLASSES: tuple[type[Command], ...] = (Play, EnterHand, *(s.command for s in COMMANDS.values()))
_BY_WORD: dict[str, type[Command]] = {kind.word: kind for kind in _CLASSES}

_HELP_COLUMN = 35  # where the help lines start, after the syntax


@worded
def help_text() -> str:
    """What `help` prints: every command's syntax and its line, in the language in use."""
    lines: list[str] = [_("commands:")]
    plain: list[str] = []
    for spec in (*CARD_LINES, *COMMANDS.values()):
        if spec.help is None:
            plain.append(spec.word)
            continue
        said = _(spec.help).split("\n")
        lines.append(f"  {spec.syntax:<{_HELP_COLUMN - 2}}{said[0]}")
        lines.extend(" " * _HELP_COLUMN + more for more in said[1:])
    lines.append("  " + " | ".join(plain))
    lines.append(
        _(
            "at the end of a round: the cards left in the asked hand (R5 B7 WAA), `-` for none,\n"
            "a trailing ! accepts a count that differs from the referee's.\n"
            "A question (a colour, a player, a count) is asked again until answered; an empty "
            "line cancels."
        )
    )
    return "\n".join(lines)


def is_card(word: str) -> bool:
    """True when `word` is card notation."""
    try:
        parse_card(word)
    except UnoError:
        return False
    return True


# -- reading a typed line ---------------------------------------------------------------------


def line_problem(text: str) -> str | None:
    """Why a typed line can be no move or command, in one line; None when it may be one. The
    one check of a line's text, for the terminal, a pipe and the web: a control character (an
    escape sequence piped in, a form feed) would be echoed to the terminal by the refusal, and a
    word of 100,000 characters quoted back whole."""
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


def parse(line: str, table: TableFacts) -> Command:
    """The command a typed line says (`line` not empty). InputError or RuleError, one line,
    for a line that is no command at all."""
    words = line.split()
    head = words[0].lower()
    args = words[1:]
    spec = COMMANDS.get(head)
    if spec is not None and spec.always:
        return spec.read(args, table) if spec.read is not None else spec.command()
    if table.phase == "score":
        return _read_hand_left(words, table)
    if spec is not None and spec.read is not None:
        return spec.read(args, table)
    if spec is not None and not args:
        return spec.command()
    return _read_cards(words, table)


def _read_cards(words: list[str], table: TableFacts) -> Play:
    if not is_card(words[0]):
        raise InputError(
            _(
                "`{word}` is neither a card (R5, BS, YH2, WAA, ...) nor a command: `help` lists "
                "both"
            ).format(word=words[0])
        )
    cards: list[Card] = [parse_card(words[0], table.deck)]
    color: str | None = None
    target: str | None = None
    discards: int | None = None
    uno = False
    names = {p.lower(): p for p in table.players}
    for word in words[1:]:
        up = word.upper()
        if up in COLOR_WORDS:
            color = COLOR_WORDS[up]
        elif digits(word) is not None:
            discards = digits(word)
        elif up == "UNO":
            uno = True
        elif is_card(word) and word.lower() not in names:
            if not table.multi:
                raise RuleError(
                    _(
                        "one card per line: `{word}` would be a second card (rule option "
                        "multi_play is off)"
                    ).format(word=word)
                )
            cards.append(parse_card(word, table.deck))
        elif word.lower() in names:
            target = names[word.lower()]
        else:
            raise RuleError(
                _(
                    "`{word}` after {card}: allowed are a colour (R Y G B), a player's name, a "
                    "number (cards discarded with a DA) or uno"
                ).format(word=word, card=cards[0])
            )
    return Play(tuple(cards), color, target, discards, uno)


def _read_hand_left(words: list[str], table: TableFacts) -> EnterHand:
    force = bool(words) and words[-1].endswith("!")
    if force:
        words[-1] = words[-1][:-1]
        if not words[-1]:
            words.pop()
    if words in ([], ["-"]) or [w.lower() for w in words] == ["none"]:
        return EnterHand((), force)
    return EnterHand(tuple(parse_card(w, table.deck) for w in words), force)


def line_of(command: Command) -> str:
    """The command as it would be typed (the line a question completes)."""
    if isinstance(command, Play):
        words = [str(c) for c in command.cards]
        if command.jumper is not None:
            words = ["jump", command.jumper, *words]
        words += [w for w in (command.color, command.target) if w is not None]
        if command.discards is not None:
            words.append(str(command.discards))
        if command.uno:
            words.append("uno")
        return " ".join(words)
    if isinstance(command, Challenge):
        return (
            "challenge" if command.legal is None else f"challenge {'y' if command.legal else 'n'}"
        )
    data = to_data(command)
    word = data.pop("word")
    return " ".join([word, *(str(v) for v in data.values() if v is not None)])


# -- commands as data (the web page's) --------------------------------------------------------


def word_of(command: Command) -> str:
    """The word a command is typed with (``play`` for cards, as its data says)."""
    return command.word


def to_data(command: Command) -> dict[str, Any]:
    """The command as JSON data: ``{"word": ..., field: value, ...}`` (cards in notation)."""
    out: dict[str, Any] = {"word": command.word}
    for f in dataclasses.fields(command):  # type: ignore[arg-type]
        value = getattr(command, f.name)
        if f.name == "cards":
            value = [str(c) for c in value]
        out[f.name] = value
    return out


def from_data(data: object, table: TableFacts) -> Command:
    """The command JSON `data` describes (`to_data`'s shape; fields left out take their
    defaults). InputError, one line, naming what is wrong: an unknown word or field, a value
    of the wrong type, a card not in the deck. (The shape is the page's business, as the
    request around it: said in English, as the web app's other request errors.)"""
    if not isinstance(data, Mapping):
        raise InputError("a command is an object with a `word`")
    word = data.get("word")
    cls = _BY_WORD.get(word) if isinstance(word, str) else None
    if cls is None:
        raise InputError(f"unknown command {word!r}: one of {', '.join(sorted(_BY_WORD))}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    extra = [k for k in data if k != "word" and k not in fields]
    if extra:
        takes = ", ".join(fields) or "nothing"
        raise InputError(f"{cls.word} takes {takes}, not {', '.join(extra)}")
    hints = typing.get_type_hints(cls)
    values = {
        name: _value(cls.word, name, hints[name], data[name], table)
        for name in fields
        if name in data
    }
    missing = [n for n, f in fields.items() if _required(f) and n not in values]
    if missing:
        raise InputError(f"{cls.word} needs {', '.join(missing)}")
    command = cls(**values)
    if isinstance(command, Play):
        if not command.cards:
            raise RuleError(_("play needs a card"))
        if len(command.cards) > 1 and not table.multi:
            raise RuleError(_("play one card at a time (multi_play is off)"))
    return command


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _value(word: str, name: str, hint: Any, value: object, table: TableFacts) -> Any:
    """`value` of field `name` checked against its type `hint` (generic: every command's
    fields are str, int, bool, cards, or one of these or None)."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if value is None and type(None) in options:
        return None
    kind = next(o for o in options if o is not type(None))
    if kind is bool:
        if isinstance(value, bool):
            return value
        allowed = "true or false"
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
            return value
        allowed = f"a whole number from 0 to {MAX_COUNT}"
    elif kind is str:
        if isinstance(value, str) and 0 < len(value) <= MAX_WORD:
            return _colour(value) if name == "color" else value
        allowed = f"a word of at most {MAX_WORD} characters"
    else:  # cards
        if (
            isinstance(value, list)
            and len(value) <= MAX_CARDS
            and all(isinstance(v, str) for v in value)
        ):
            return tuple(parse_card(v, table.deck) for v in value)
        allowed = f'a list of at most {MAX_CARDS} cards like ["R5"]'
    raise InputError(f"{word}: {name} must be {allowed}")


def _colour(value: str) -> str:
    colour = COLOR_WORDS.get(value.upper())
    if colour is None:
        raise InputError(_("colour {colour!r}: name R, Y, G or B").format(colour=value))
    return colour
