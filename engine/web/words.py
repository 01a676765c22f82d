"""Every word the page itself shows, for the catalogs: the page's `text.js` is made from this
table in the language each browser asks for (`script`). The referee's own words (its messages,
reasons, questions, prompt) come from the server in the language `unoattack serve` speaks.

An entry is a message (`key: "text"` in the script), a `Fill` (a function of the named
arguments, `T.seat(3)`), or a `Script`: a function written in JavaScript over its own messages
(`S.name`), `fill(template, args)` and `count(noun, n)` (a counted noun in the page's language).
Keys: `data-text="key"` on an element of index.html sets its text, `data-title` its tooltip,
`data-label` its aria-label; app.js calls `T.key(...)` for texts that name someone or a number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from engine.words import COLOUR_NAMES, FACE_NAMES, NOUNS
from i18n import LANGUAGE_NAMES, LANGUAGES, N_, Language, from_accept_language, normalize

__all__ = ["COOKIE", "PAGE_WORDS", "Fill", "Script", "language_for", "script"]

COOKIE = "unoattack_lang"  # the language the page's picker chose, remembered by the browser


@dataclass(frozen=True)
class Fill:
    """A message with placeholders, called with its arguments in this order."""

    message: str
    args: tuple[str, ...]

    def __init__(self, message: str, *args: str) -> None:
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "args", args)


@dataclass(frozen=True)
class Script:
    """A JavaScript function over its own messages (`S.<name>`)."""

    body: str
    messages: dict[str, str] = field(default_factory=dict)

    def __init__(self, body: str, **messages: str) -> None:
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "messages", messages)


PAGE_WORDS: dict[str, str | Fill | Script] = {
    # index.html
    "language": N_("language"),
    "title": N_("UNO Attack"),
    "page_title": N_("UNO Attack table"),
    "join": N_("Join"),
    "leave": N_("Leave"),
    "live_updates": N_("live updates"),
    "the_table": N_("the table"),
    "top_card": N_("top card"),
    "who_owes": N_("who owes what"),
    "players": N_("players"),
    "player": N_("player"),
    "hand": N_("hand"),
    "hand_tip": N_("cards in hand"),
    "fired": N_("fired"),
    "fired_tip": N_("cards the box fired at them (presses)"),
    "score": N_("score"),
    "by_tapping": N_("referee by tapping"),
    "enter_hand": N_("Enter hand"),
    "no_cards": N_("No cards"),
    "enter_anyway": N_("Enter anyway"),
    "enter_anyway_tip": N_("accept a count that differs from the referee's"),
    "clear": N_("Clear"),
    "say_uno": N_("say UNO with this card"),
    "cards": N_("cards"),
    "more": N_("More: catch, corrections, dealer"),
    "who": N_("who"),
    "by": N_("by"),
    "nobody": N_("(nobody)"),
    "catch": N_("Catch (no UNO)"),
    "uno_for": N_("UNO for"),
    "deals": N_("Deals"),
    "holds": N_("holds"),
    "correct_count": N_("Correct count"),
    "table_log": N_("Table"),
    "scores": N_("Scores"),
    "box": N_("Box"),
    "clear_jam": N_("Clear jam"),
    "reset_fault": N_("Reset fault"),
    "loaded": N_("Loaded"),
    "jam_model": N_("Jam model"),
    "set": N_("Set"),
    "read": N_("Read"),
    "join_help": N_("Enter the join code shown where unoattack serve runs. Watching needs none."),
    "join_code": N_("join code"),
    "cancel": N_("Cancel"),
    # the connection and replies
    "live": N_("live"),
    "offline": N_("offline"),
    "connection_lost": N_("connection lost: try again"),
    "not_connected": N_("not connected: wait a moment"),
    "missed": Fill(N_("(missed updates {from} to {to} while away)"), "from", "to"),
    "refused": Fill(N_("refused ({status})"), "status"),
    "box_done": Fill(N_("box: {op} done"), "op"),
    "change_first": N_("change a value first"),
    # the referee's questions: the group titles of the answers
    "group_colour": N_("colour"),
    "group_player": N_("player"),
    "group_number": N_("how many"),
    "group_answer": N_("answer"),
    # the table
    "seat": Fill(N_("seat {n}"), "n"),
    "no_colour": N_("-"),
    "wilds": N_("wilds"),
    "card_tip": Fill(
        N_("{card}: {points} points, {copies} in the deck"), "card", "points", "copies"
    ),
    "remove": N_("remove"),
    "round": Fill(
        N_("round {round} · {phase} · {mode} to {target}"), "round", "phase", "mode", "target"
    ),
    "deck_rules": Fill(N_("{deck} deck · {rules} rules"), "deck", "rules"),
    "colour": Fill(N_("colour {name}"), "name"),
    "to_play": Fill(N_("{who} to play"), "who"),
    "plays_next": Fill(N_("{who} plays next"), "who"),
    "deals_now": Fill(N_("{who} deals"), "who"),
    "left": N_("↻ play goes left (clockwise)"),
    "right": N_("↺ play goes right (counter-clockwise)"),
    "order": Script(
        "(names) => fill(S.order, {names: names.join(' → ')})", order=N_("order: {names}")
    ),
    "classic_locked": N_("button locked: the referee dispenses every draw"),
    "presses_box": Fill(N_("{who} presses the box"), "who"),
    "nobody_presses": N_("nobody presses now"),
    "tap_fired": Fill(N_("no box: tap what fired for {who}"), "who"),
    "no_box": N_("no box connected"),
    "live_for": Fill(N_("● button live for {who}"), "who"),
    "locked": N_("■ button locked"),
    "waiting_box": N_("button: waiting for the box"),
    "uno_called": Fill(N_("{who} has one card and called UNO"), "who"),
    "uno_not_called": Fill(
        N_("{who} has one card and has not called UNO: catch them before the next player starts!"),
        "who",
    ),
    "badge_dealer": N_("dealer"),
    "badge_owes": N_("owes"),
    "badge_uno": N_("UNO"),
    "badge_uno_missing": N_("UNO?"),
    "badge_out": N_("out"),
    "wins": N_(" ★ wins"),
    "round_col": N_("round"),
    "to_col": N_("to"),
    # the box panel
    "fact_box": N_("box"),
    "fact_state": N_("state"),
    "fact_hopper": N_("hopper"),
    "fact_dry": N_("dry streak"),
    "fact_jams": N_("jams"),
    "fact_button": N_("button"),
    "fact_fault": N_("fault"),
    "fact_dispensing": N_("dispensing"),
    "box_lost": Fill(N_("lost: {why}"), "why"),
    "box_none": N_("none (--port none)"),
    "unknown": N_("?"),
    "button_locked": N_("locked"),
    "button_live": N_("live"),
    "dispensing": Fill(N_("{cards} for {who}"), "cards", "who"),
    "burst": Script(
        "(press, seat, ejected, reason) => fill(S.burst, {press, seat: seat ? ' · ' + seat : '',"
        " got: ejected ? count('card', ejected) : S.dry,"
        " reason: reason === 'fired' || reason === 'dry' ? '' : ' [' + reason + ']'})",
        burst=N_("press {press}{seat}: {got}{reason}"),
    ),
    # the actions
    "tap_turned_up": N_("Tap the card turned up:"),
    "press_for": Fill(N_("Press for {who}"), "who"),
    "dry": N_("dry"),
    "fired_n": Fill(N_("fired {n}"), "n"),
    "dealt_n": Fill(N_("{n} dealt"), "n"),
    "hit": N_("Hit"),
    "draw": N_("Draw"),
    "pass": N_("Pass"),
    "uno": N_("UNO"),
    "challenge_legal": N_("Challenge: WD4 legal"),
    "challenge_not": N_("Challenge: not legal"),
    "undo": N_("Undo"),
    "cards_left": Fill(N_("Cards left in {who}'s hand ({n}): tap them"), "who", "n"),
}

_RUNTIME = """
const fill = (template, args) =>
  template.replace(/\\{(\\w+)\\}/g, (m, k) => (k in args ? String(args[k]) : m));
const plural = (n) => Number(PLURAL(n));
const count = (noun, n) => {
  const forms = NOUNS[noun];
  return fill(forms[Math.min(forms.length - 1, plural(n))], {n});
};
"""


def language_for(query: str | None, cookie: str | None, accept: str | None) -> str:
    """The page's language: `?lang=` on the URL, else the picker's cookie, else the browser's
    Accept-Language, else English (an unknown code in the first two is passed over)."""
    for asked in (query, cookie):
        code = normalize(asked) if asked else None
        if code is not None:
            return code
    return from_accept_language(accept)


def _plural_expression(lang: Language) -> str:
    """The catalog's plural rule (`Plural-Forms`) as a JavaScript expression of `n`."""
    forms = lang.catalog.info().get("plural-forms", "nplurals=2; plural=(n != 1);")
    expr = forms.split("plural=", 1)[1].strip().rstrip(";")
    # The gettext rule is C: ?:, ==, !=, %, &&, ||, < and > mean the same in JavaScript.
    if not set(expr) <= set("n0123456789 ()?:=!<>%&|"):
        return "n != 1"
    return expr


def script(lang: Language) -> str:
    """`text.js` in `lang`: `window.UNOATTACK_TEXT`, with the languages for the picker, the
    colour and card names (the rule sheets', as the terminal shows them) and `card_name`."""
    t = lang.gettext
    strings: dict[str, str] = {}
    lines = []
    for key, entry in PAGE_WORDS.items():
        if isinstance(entry, str):
            lines.append(f"  {key}: {json.dumps(t(entry), ensure_ascii=False)},")
        elif isinstance(entry, Fill):
            strings[key] = t(entry.message)
            args = ", ".join(entry.args)
            lines.append(f"  {key}: ({args}) => fill(S.{key}, {{{args}}}),")
        else:
            strings.update({name: t(message) for name, message in entry.messages.items()})
            lines.append(f"  {key}: {entry.body},")
    strings["card_name"] = t("{colour} {face}")
    strings["dry"] = t("dry")
    nouns = {
        noun: [lang.ngettext(one, many, n) for n in _plural_samples(lang)]
        for noun, (one, many) in NOUNS.items()
    }
    data = {
        "S": strings,
        "NOUNS": nouns,
        "COLOURS": {c: t(name) for c, name in COLOUR_NAMES.items()},
        "FACES": {f: t(name) for f, name in FACE_NAMES.items()},
    }
    consts = "\n".join(f"const {k} = {json.dumps(v, ensure_ascii=False)};" for k, v in data.items())
    languages = [{"code": c, "name": LANGUAGE_NAMES[c]} for c in LANGUAGES]
    return (
        "// The page's words in one language, made by engine/web/words.py from the catalogs.\n"
        '"use strict";\n(() => {\n'
        f"const PLURAL = (n) => ({_plural_expression(lang)});\n{consts}\n{_RUNTIME}"
        "window.UNOATTACK_TEXT = {\n"
        f"  lang: {json.dumps(lang.code)},\n"
        f"  languages: {json.dumps(languages, ensure_ascii=False)},\n"
        "  colours: COLOURS,\n"
        "  card_name: (card, colour, face) => colour\n"
        "    ? fill(S.card_name, {colour: COLOURS[colour], face: FACES[face] || face})\n"
        "    : FACES[card] || card,\n" + "\n".join(lines) + "\n};\n})();\n"
    )


def _plural_samples(lang: Language) -> list[int]:
    """One count for each plural form, in form order: `ngettext` with it gives that form."""
    rule = getattr(lang.catalog, "plural", lambda n: int(n != 1))  # English without a .mo
    first: dict[int, int] = {}
    for n in range(200):
        first.setdefault(int(rule(n)), n)
    return [first[i] for i in sorted(first)]
