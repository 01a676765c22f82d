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
    "fired": N_("fired"),
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
    "round": Fill(N_("round {round} · {phase} · {mode}"), "round", "phase", "mode"),
    "deck_rules": Fill(N_("{deck} deck · {rules} rules"), "deck", "rules"),
    # the header's phase and scoring mode (the referee's `phase` and `mode`)
    "phase_deal": N_("dealing"),
    "phase_play": N_("playing"),
    "phase_score": N_("scoring"),
    "phase_over": N_("game over"),
    "mode_target": Fill(N_("first to {target} points"), "target"),
    "mode_lowest": Fill(N_("lowest score when one reaches {target}"), "target"),
    "mode_elimination": Fill(N_("out at {target} points, the last one left wins"), "target"),
    "mode_teams": Fill(N_("teams, to {target} points"), "target"),
    "mode_knockout": Fill(N_("knockout: the last one left loses"), "target"),
    "mode_chips": Fill(N_("chips: a stake of {target}"), "target"),
    "mode_losing": Fill(N_("most points at {target} loses"), "target"),
    # a table of a game night (`serve --night FILE --table T`)
    "mode_night": Fill(N_("{mode}, rounds {first}-{last} of the night"), "mode", "first", "last"),
    "night_title": Fill(N_("Night · table {table} of {tables}"), "table", "tables"),
    "night_table": Fill(
        N_("table {table}: round {round} · {players}"), "table", "round", "players"
    ),
    "night_next": Fill(
        N_("next here, rounds {first}-{last}: {players} (clockwise)"), "first", "last", "players"
    ),
    "night_champion": Fill(N_("champion: {names}"), "names"),
    "night_leading": Fill(N_("leading: {names} (not everyone has played as many rounds)"), "names"),
    "next_seating": N_("Next seating"),
    "night_elsewhere": Fill(N_("{players}: still playing at table {table}"), "players", "table"),
    "standings_place": N_("place"),
    "standings_total": N_("total"),
    "standings_rounds": N_("rounds"),
    "chips_over": Fill(N_("chips over every game kept: {totals}"), "totals"),
    "colour": Fill(N_("colour {name}"), "name"),
    "to_play": Fill(N_("{who} to play"), "who"),
    "plays_next": Fill(N_("{who} plays next"), "who"),
    "deals_now": Fill(N_("{who} deals"), "who"),
    "clockwise": N_("↻ clockwise"),
    "counter_clockwise": N_("↺ counter-clockwise"),
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
    "loses": N_(" ✗ loses"),
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
    # what happens next, in words (read from the referee's state)
    "ins_deal": Fill(N_("{who} deals: tap the card turned up"), "who"),
    "ins_score": Script(
        "(who, n) => fill(S.ins_score, {who, cards: count('card', n)})",
        ins_score=N_("Round over: tap the cards left in {who}'s hand ({cards})"),
    ),
    "ins_over": Fill(N_("Game over: {who} wins!"), "who"),
    "ins_over_lost": Fill(N_("Game over: {who} loses."), "who"),
    "game_over": N_("Game over"),
    "ins_dispense": Fill(N_("The box deals {who}'s cards"), "who"),
    "ins_dealt": Fill(N_("{who} draws: tap how many cards were dealt"), "who"),
    "ins_tap_fired": Fill(N_("{who} presses the box: tap what it fired"), "who"),
    "ins_press": Fill(N_("{who}: press the big button"), "who"),
    "ins_wait_box": Fill(N_("{who} must hit: waiting for the box"), "who"),
    "ins_challenge": Fill(N_("{who} may challenge the Wild Draw Four"), "who"),
    "ins_bonus": Fill(N_("{who} may play one more card, or pass"), "who"),
    "ins_play_taken": Fill(N_("{who} may play a card that just came, or pass"), "who"),
    "ins_play": Fill(N_("{who}'s turn on {card}: tap the card played"), "who", "card"),
    "fired_legend": N_(
        "Fired: the cards the box fired at each player this round; in brackets, the presses "
        "it took."
    ),
    # the answer to a tap and the box's result (toasts)
    "toast_fired": Script(
        "(who, n) => fill(S.toast_fired, {who, cards: count('card', n)})",
        toast_fired=N_("{who}: {cards}!"),
    ),
    "toast_dry": Fill(N_("{who}: dry, nothing fired"), "who"),
    "toast_fired_nobody": Script(
        "(n) => fill(S.toast_fired_nobody, {cards: count('card', n)})",
        toast_fired_nobody=N_("The box fired {cards}: nobody owed a hit"),
    ),
    # light or dark
    "theme": N_("light or dark"),
    "theme_is": Fill(N_("colours: {theme} (tap to change)"), "theme"),
    "theme_auto": N_("as the phone"),
    "theme_dark": N_("dark"),
    "theme_light": N_("light"),
    # "I am Bo": this phone's player
    "me_section": N_("this phone's player"),
    "i_am": N_("I am"),
    "nobody_claimed": N_("(only refereeing)"),
    "alerts": N_("buzz and beep when it is my go"),
    "badge_me": N_("this phone"),
    "badge_phone": N_("on a phone"),
    "me_turn": N_("Your turn!"),
    "me_press": N_("Press the button!"),
    "me_tally": Script(
        "(who, hand, fired, presses, score) => fill(S.me_tally, {who, hand: count('card', hand),"
        " fired: count('card', fired), presses: count('press', presses),"
        " score: count('point', score)})",
        me_tally=N_("{who}: {hand} in hand · fired {fired} in {presses} · {score}"),
    ),
    # history
    "history": N_("Rounds"),
    "download_csv": N_("Download (CSV)"),
    "new_game": N_("New game"),
    "new_game_confirm": N_(
        "Start a new game with the same players? This game's results are kept in the history file."
    ),
    # the box dashboard
    "fact_name": N_("name"),
    "fact_firmware": N_("firmware"),
    "fact_uptime": N_("running for"),
    "uptime": Fill(N_("{hours} h {minutes} min"), "hours", "minutes"),
    "hopper_of": Fill(N_("{n} of {full} cards"), "n", "full"),
    "hopper_low": Script(
        "(n) => fill(S.hopper_low, {cards: count('card', n)})",
        hopper_low=N_("Only {cards} left: load the launcher soon"),
    ),
    "box_state": Script(
        "(state) => S['state_' + state] || state",
        state_booting=N_("starting"),
        state_idle=N_("ready"),
        state_locked=N_("locked"),
        state_spinup=N_("spinning up"),
        state_ejecting=N_("firing"),
        state_cooldown=N_("cooling down"),
        state_jammed=N_("jammed"),
        state_empty=N_("empty"),
        state_fault=N_("fault"),
        state_stopping=N_("stopping"),
    ),
    "link_connected": N_("linked"),
    "link_reconnecting": N_("reconnecting"),
    "link_lost": N_("link lost"),
    "reconnect": N_("Reconnect"),
    "test_fire": N_("Test fire"),
    "test_fire_tip": N_("the box fires one card (dispense 1): put it back into the launcher"),
    "switch_sound": N_("sound"),
    "switch_light": N_("light"),
    "switch_patterns": N_("burst patterns"),
    "jam_history": N_("Jams"),
    "no_jams": N_("no jams so far"),
    "jam_entry": Fill(
        N_("press {press}, after {at} (unjam retries: {retries})"), "press", "retries", "at"
    ),
    "console": N_("Box events"),
    # letting others in
    "share": N_("Let others in"),
    "share_help": N_("Scan this code with a phone on the same Wi-Fi, or send the link:"),
    "share_local": N_(
        "This server listens on this machine only: start it with --http 0.0.0.0:8500 to let "
        "phones in."
    ),
    "share_link": N_("Share the link"),
    "link_copied": N_("Link copied"),
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
