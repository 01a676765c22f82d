"""The players' languages: English, Thai, Traditional Chinese, Romanian and Welsh.

Every message a player or a box builder reads goes through the gettext catalogs in
`i18n/locale/<language>/LC_MESSAGES/unoattack.po` (compiled to `.mo` by `i18n/msgfmt.py`: in a
checkout by `make`, in every built package by the build itself). Machine output (``--json``,
the wire protocol, log keys) never does.

- `_` and `ngettext` translate into the language in use (`use`); `N_` and `Nn_` only mark a
  message (or a singular/plural pair) for extraction where it is written down ahead of use.
- `choose` picks the language: ``--lang``, else ``LANGUAGE``/``LC_ALL``/``LC_MESSAGES``/``LANG``,
  else English; an unknown ``--lang`` is a `LanguageError` (one line, exit 2).
- `Language` holds one language's catalog and number format, for a caller that serves several
  languages at once (the web page, one per request).
- `Text` is a message not yet in any language (its template and arguments): the box keeps its
  errors that way (English on the wire, `str`), and a reader shows it in theirs (`render`).
- `Phrase` is what `_`, `ngettext`, `number` and `percent` return: a `str` in the language in
  use that remembers how it was made, so `say_in(lang, value)` says it again in another (the
  web page: one table, each browser in its own language).

Both `launcher` and `unoattack` use it, so it imports neither `engine` nor `firmware`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gettext
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from i18n.layout import format_number, format_percent

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "N_",
    "Language",
    "LanguageError",
    "Nn_",
    "Phrase",
    "Text",
    "_",
    "choose",
    "current",
    "from_accept_language",
    "from_environment",
    "in_reader_language",
    "language",
    "lines_of",
    "message_of",
    "ngettext",
    "normalize",
    "number",
    "percent",
    "reworded",
    "say_in",
    "speaking",
    "take_lang",
    "use",
    "worded",
]

DOMAIN = "unoattack"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES: tuple[str, ...] = ("en", "th", "zh_Hant", "ro", "cy")
# Each language named in itself: what a picker shows.
LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "th": "ไทย",
    "zh_Hant": "繁體中文",
    "ro": "Română",
    "cy": "Cymraeg",
}
# Chinese written in Traditional characters: the script, or the regions that use it.
_HANT = frozenset({"hant", "tw", "hk", "mo"})


class LanguageError(ValueError):
    """An unknown ``--lang``: the message names the languages there are. Exit code 2."""

    exit_code = 2


def N_(message: str) -> str:
    """Mark `message` for the catalogs where it is written down; translate it where it is used."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a singular/plural pair for the catalogs; `ngettext(*pair, n)` where it is used."""
    return singular, plural


def normalize(tag: str) -> str | None:
    """The language of a locale or language tag (`th_TH.UTF-8`, `zh-TW`, `zh_Hant_HK`, `cy`,
    `en-GB`), one of `LANGUAGES`, or None when we have no catalog for it (`de_DE`, `zh_CN`, `C`)."""
    base = tag.strip().split(".", 1)[0].split("@", 1)[0].replace("-", "_")
    parts = [p.lower() for p in base.split("_") if p]
    if not parts:
        return None
    if parts[0] == "zh":
        return "zh_Hant" if _HANT.intersection(parts[1:]) else None
    return parts[0] if parts[0] in LANGUAGES else None


def from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The language the environment asks for, as gettext reads it: the locale of messages
    (``LC_ALL``, else ``LC_MESSAGES``, else ``LANG``); unless that is C or POSIX, ``LANGUAGE``
    (a colon-separated list) comes first. The first we have wins; else English."""
    env = os.environ if environ is None else environ
    locale = next((env[k] for k in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(k)), "")
    if locale.split(".", 1)[0] in ("C", "POSIX"):
        return "en"
    wanted = [*env.get("LANGUAGE", "").split(":"), locale]
    return next((code for code in map(normalize, filter(None, wanted)) if code), "en")


def parse_lang(text: str) -> str:
    """The language ``--lang TEXT`` names; LanguageError (one line) if we have none for it."""
    code = normalize(text)
    if code is None:
        raise LanguageError(f"--lang {text!r}: unknown language; use one of {', '.join(LANGUAGES)}")
    return code


def from_accept_language(header: str | None) -> str:
    """The language a browser's ``Accept-Language`` header prefers among ours (by its q
    weights, first listed first among equals), else English: `th-TH,th;q=0.9,en;q=0.8` → `th`,
    `zh-HK` → `zh_Hant`, `de,fr;q=0.5` → `en`."""
    wanted: list[tuple[float, int, str]] = []
    for i, part in enumerate((header or "").split(",")):
        tag, _sep, params = part.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _eq, value = param.strip().partition("=")
            if key.strip() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        code = normalize(tag) if tag and tag != "*" else None
        if code is not None and weight > 0:
            wanted.append((-weight, i, code))
    return min(wanted)[2] if wanted else "en"


def take_lang(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """Split ``--lang X`` / ``--lang=X`` (anywhere before ``--``) off a command line: (the
    language named or None, the other arguments)."""
    rest: list[str] = []
    code: str | None = None
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg == "--lang":
            if i + 1 >= len(args):
                raise LanguageError(f"--lang needs a language: one of {', '.join(LANGUAGES)}")
            code = parse_lang(args[i + 1])
            i += 2
            continue
        if arg.startswith("--lang="):
            code = parse_lang(arg.split("=", 1)[1])
        else:
            rest.append(arg)
        i += 1
    return code, rest


class Language:
    """One language: its catalog (`gettext`, `ngettext`) and its way of writing numbers."""

    def __init__(self, code: str) -> None:
        if code not in LANGUAGES:
            raise LanguageError(f"unknown language {code!r}; use one of {', '.join(LANGUAGES)}")
        self.code = code
        self.name = LANGUAGE_NAMES[code]
        # English is the source language: its catalog may be absent (not compiled yet).
        self.catalog: gettext.NullTranslations = gettext.translation(
            DOMAIN, LOCALE_DIR, languages=[code], fallback=True
        )
        self.compiled = code == "en" or isinstance(self.catalog, gettext.GNUTranslations)

    def gettext(self, message: str) -> str:
        """`message` in this language."""
        return self.catalog.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        """The form of `singular`/`plural` this language uses for `n`."""
        return self.catalog.ngettext(singular, plural, n)

    def number(self, value: float, decimals: int | None = None) -> str:
        """`value` written as this language writes numbers (1,234.5 / 1.234,5)."""
        return format_number(value, self.code, decimals)

    def percent(self, share: float, decimals: int = 1) -> str:
        """`share` (0.46) as this language writes a percentage (46.0% / 46,0 %)."""
        return format_percent(share, self.code, decimals)

    def __repr__(self) -> str:
        return f"Language({self.code!r})"


@functools.cache
def language(code: str) -> Language:
    """The `Language` for `code` (one of `LANGUAGES`), loaded once."""
    return Language(code)


_current: Language | None = None
# The language one piece of code speaks for a while (`speaking`): a web page's, while its copy
# of a message is made. Per thread and task, so the others still speak `_current`.
_speaking: contextvars.ContextVar[Language | None] = contextvars.ContextVar(
    "i18n_speaking", default=None
)

# argparse's own headings in --help. argparse looks its `_` up in its module each time it builds
# a parser or a usage line, so it is pointed at ours (for these words only: its error texts are
# matched in English by common/commandline.py, which words its own errors).
ARGPARSE_WORDS = frozenset(
    {
        N_("usage: "),
        N_("positional arguments"),
        N_("options"),
        N_("show this help message and exit"),
    }
)


def _argparse_speaks(lang: Language) -> None:
    import argparse

    def translate(message: str) -> str:
        return lang.gettext(message) if message in ARGPARSE_WORDS else message

    argparse._ = translate  # type: ignore[attr-defined]


def use(code: str) -> Language:
    """Speak `code` from now on (`_`, `ngettext`, `number`, argparse's --help headings);
    returns its `Language`."""
    global _current
    _current = language(code)
    _argparse_speaks(_current)
    return _current


def current() -> Language:
    """The language in use: the one `speaking` names here, else the one `use` chose (English
    until `use` or `choose` says otherwise)."""
    lang = _speaking.get()
    if lang is not None:
        return lang
    return _current if _current is not None else language("en")


@contextlib.contextmanager
def speaking(lang: Language) -> Iterator[Language]:
    """Speak `lang` in this thread (or task) inside the block; the rest of the program keeps
    the language `use` chose."""
    token = _speaking.set(lang)
    try:
        yield lang
    finally:
        _speaking.reset(token)


def choose(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """Use the language ``--lang`` names in `argv`, else the environment's; returns `argv`
    without ``--lang``. LanguageError for an unknown ``--lang``, or for a language asked for
    by name whose compiled catalog is missing (`make` builds them)."""
    code, rest = take_lang(argv)
    lang = use(code if code is not None else from_environment(environ))
    if code is not None and not lang.compiled:
        raise LanguageError(_not_compiled(code))
    return rest


def _not_compiled(code: str) -> str:
    """Why ``--lang code`` cannot be spoken, and what to do: in a checkout, `make` compiles the
    catalogs; an installed package carries them compiled by its build, so one without them was
    not built by this project's build (or lost files): install it again. English: the language
    asked for is the one missing."""
    missing = LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.mo"
    said = f"--lang {code}: its catalog is not compiled ({missing} is missing); "
    if (LOCALE_DIR.parent.parent / "Makefile").is_file():  # i18n/locale of a checkout
        return said + "run `make` in the checkout"
    return said + (
        "this installed package lacks its catalogs: install it again (pip install "
        "--force-reinstall from a wheel or a checkout, or systemd/install.sh on the box)"
    )


class Text:
    """A message kept as its template (the English source, which is also its catalog id) and
    its arguments, put into a language only where someone reads it: ``str(text)`` is the English
    (the wire, the log), ``text.render(lang)`` the language of a reader. Written
    ``Text("{key} must be between {lo} and {hi}", key=..., lo=..., hi=...)`` where it arises, so
    the catalogs find it; `to_wire`/`from_wire` carry it as JSON (template and arguments)."""

    __slots__ = ("args", "template")

    def __init__(self, template: str, /, **args: Any) -> None:
        self.template = template
        self.args = args

    def render(self, lang: Language | None = None) -> str:
        """The message in `lang` (the language in use if None); the English one when the
        translation does not format with these arguments (a template from a newer box)."""
        lang = lang or current()
        with speaking(lang):
            args = {k: _again(v) for k, v in self.args.items()}
            try:
                return str.__str__(lang.gettext(self.template).format(**args))
            except (KeyError, IndexError, ValueError):
                return str(self)

    def to_wire(self) -> dict[str, Any]:
        """``{"template": ..., "args": {...}}`` (a `Text` argument nested the same way):
        JSON-able when the arguments are."""
        args = {k: v.to_wire() if isinstance(v, Text) else v for k, v in self.args.items()}
        return {"template": self.template, "args": args}

    @classmethod
    def from_wire(cls, data: object) -> Text | None:
        """The `Text` a `to_wire` mapping carries; None when `data` is not one."""
        if not isinstance(data, Mapping):
            return None
        template, args = data.get("template"), data.get("args", {})
        if not isinstance(template, str) or not isinstance(args, Mapping):
            return None
        if not all(isinstance(k, str) and k.isidentifier() for k in args):
            return None
        nested = {
            k: cls.from_wire(v) or v if isinstance(v, Mapping) else v for k, v in args.items()
        }
        return cls(template, **nested)

    def __str__(self) -> str:
        try:
            return self.template.format(
                **{k: str(v) if isinstance(v, Text) else v for k, v in self.args.items()}
            )
        except (KeyError, IndexError, ValueError):
            return self.template

    def __repr__(self) -> str:
        return f"Text({self.template!r}, **{self.args!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and (self.template, self.args) == (
            other.template,
            other.args,
        )

    __hash__ = None  # type: ignore[assignment]


class Phrase(str):
    """A message as the language in use says it (it is that `str`), which remembers how it
    was made: `render(lang)` makes it again in `lang`. `_`, `ngettext`, `number` and `percent`
    return one, and `format`, `join` and `+` keep it one (their other parts are said again
    too), so a line built from them, as the referee builds its lines, can be said in every
    language. An f-string, `%` or slicing gives a plain `str`: one language only."""

    def __new__(cls, value: str, remake: Callable[[], str]) -> Phrase:
        phrase = super().__new__(cls, value)
        phrase._remake = remake
        return phrase

    _remake: Callable[[], str]

    def render(self, lang: Language | None = None) -> str:
        """This message in `lang` (the language in use if None), a plain `str`."""
        with speaking(lang or current()):
            return str.__str__(self._remake())

    def format(self, *args: Any, **kwargs: Any) -> Phrase:
        """`str.format`, kept a `Phrase`: said again, the template and every argument are."""
        value = str.format(self, *args, **kwargs)
        return Phrase(
            value,
            lambda: str.format(
                self._remake(),
                *(_again(a) for a in args),
                **{k: _again(v) for k, v in kwargs.items()},
            ),
        )

    def join(self, parts: Iterable[str]) -> Phrase:
        """`str.join`, kept a `Phrase` (the separator and the parts said again)."""
        items = list(parts)
        return Phrase(
            str.join(self, items), lambda: str.join(self._remake(), [_again(p) for p in items])
        )

    def __add__(self, other: str) -> Phrase:
        return Phrase(str.__add__(self, other), lambda: self._remake() + _again(other))

    def __radd__(self, other: str) -> Phrase:
        return Phrase(str.__add__(other, self), lambda: _again(other) + self._remake())

    def __str__(self) -> str:
        return str.__str__(self)

    def __copy__(self) -> Phrase:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Phrase:
        return self  # as immutable as the str it is

    def __reduce__(self) -> tuple[Any, ...]:  # a pickle is the plain text
        return (str, (str.__str__(self),))


def worded(make: Callable[..., str]) -> Callable[..., str]:
    """Decorate a function whose text depends on the language in use (and is not built from
    `Phrase`s alone: an f-string, a test of `current()`): what it returns is a `Phrase` that
    calls it again, with the same arguments, to be said in another language."""

    @functools.wraps(make)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        return Phrase(make(*args, **kwargs), lambda: make(*args, **kwargs))

    return wrapper


def _again(value: Any) -> Any:
    """`value` said again in the language in use: a `Phrase` or a `Text` remade, anything
    else as it is (a card formats itself in the language in use)."""
    if isinstance(value, Phrase):
        return value._remake()
    if isinstance(value, Text):
        return value.render()
    return value


def reworded(text: str, change: Callable[[str], str]) -> str:
    """`change(text)`, and a `Phrase` when `text` is one: said again, `text` is said again and
    changed the same way (a regular expression's `sub`, a slice, a line of it)."""
    if not isinstance(text, Phrase):
        return change(text)
    return Phrase(change(text), lambda: change(text._remake()))


def lines_of(text: str) -> list[str]:
    """The lines of `text`, each a `Phrase` when `text` is one (said again: the same line of
    the text in that language, or nothing when that language has fewer lines)."""
    if "\n" not in text:
        return [text]

    def nth(i: int) -> Callable[[str], str]:
        def line(said: str) -> str:
            lines = said.split("\n")
            return lines[i] if i < len(lines) else ""

        return line

    return [reworded(text, nth(i)) for i in range(text.count("\n") + 1)]


def say_in(lang: Language, value: Any) -> Any:
    """`value` with every `Phrase` and `Text` in it (in lists, tuples and the values of dicts)
    said in `lang`: plain data, ready for JSON."""
    with speaking(lang):
        return _said(value)


def _said(value: Any) -> Any:
    if isinstance(value, str):
        return str.__str__(value._remake()) if isinstance(value, Phrase) else value
    if isinstance(value, dict):
        return {k: _said(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_said(v) for v in value]
    if isinstance(value, Text):
        return value.render()
    return value


def message_of(exc: BaseException) -> str:
    """An error's message, as a `Phrase` when it was made of one (or keeps a `Text` as
    ``exc.text``): ``str(exc)`` would be its text in one language only."""
    text = getattr(exc, "text", None)
    if isinstance(text, Text):
        return Phrase(text.render(), text.render)
    if len(exc.args) == 1 and isinstance(exc.args[0], Phrase):
        return exc.args[0]
    return str(exc)


def in_reader_language(exc: BaseException) -> str:
    """An error's one line in the language in use: its `Text` (an error that keeps one as
    ``exc.text``, such as the jam model's) rendered, else ``str(exc)``."""
    text = getattr(exc, "text", None)
    return text.render() if isinstance(text, Text) else str(exc)


def _(message: str) -> Phrase:
    """`message` in the language in use (a `Phrase`: it can be said again in another)."""

    def remake() -> str:
        return current().gettext(message)

    return Phrase(remake(), remake)


def ngettext(singular: str, plural: str, n: int) -> Phrase:
    """The form of `singular`/`plural` the language in use takes for `n`."""

    def remake() -> str:
        return current().ngettext(singular, plural, n)

    return Phrase(remake(), remake)


def number(value: float, decimals: int | None = None) -> Phrase:
    """`value` written the way the language in use writes numbers."""

    def remake() -> str:
        return current().number(value, decimals)

    return Phrase(remake(), remake)


def percent(share: float, decimals: int = 1) -> Phrase:
    """`share` (0.46) as a percentage the way the language in use writes one."""

    def remake() -> str:
        return current().percent(share, decimals)

    return Phrase(remake(), remake)
