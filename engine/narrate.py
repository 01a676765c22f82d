"""The narrator: what happened, in words. The only place a move is worded.

Outcomes (engine/outcomes.py) are what the rules core, the table referee and the box did, as
data. This module turns them into the lines people read:

- `Narrator(names, classic=...).lines(outcomes)`: what the table says (`unoattack table`, the
  web page, `unoattack demo`), in the language in use, each line an `i18n.Phrase` (a page says
  it again in its reader's language). Players are named, cards shown in notation (with their
  names beside it in a language other than English).
- `log_lines(outcomes)`: the scenario log (`unoattack scenario`), plain English lines about
  seats ("seat 1 hits: 2 cards"), the same in every language (it is machine output).

A kind of outcome the table does not announce (a press's cards, an obligation added: the
referee says what is owed first as `Owing`) has no table wording; `Narrator(...,
obligations=True)` words every new obligation instead (the demo, which has no referee).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from engine.cards import format_cards
from engine.outcomes import (
    AimFailed,
    BonusTurn,
    BoxEmpty,
    BoxJammed,
    BoxNews,
    BoxTrouble,
    ButtonLive,
    ButtonLocked,
    Cancelled,
    Challenged,
    Cleared,
    ColourNamed,
    ConnectionLost,
    DealerFirst,
    DealerSet,
    DispenseHeld,
    DispensePending,
    DispenseRefused,
    DispenseSent,
    DispenseUnanswered,
    DrawStarted,
    Drew,
    Fired,
    GameKept,
    GameOver,
    GameSaved,
    HandEntered,
    HandSet,
    HitStarted,
    Loaded,
    LockedForGoodbye,
    LockFailed,
    MayPlayTaken,
    NewGame,
    NextDeal,
    NightUnsaved,
    Outcome,
    Owes,
    Owing,
    Passed,
    Penalised,
    PenaltyAccepted,
    Played,
    PlayerOut,
    PressNote,
    PressRefused,
    PressUnreported,
    Reloaded,
    ResendArmed,
    Resuming,
    Reversed,
    RoundOver,
    RoundScored,
    RoundStarted,
    Seating,
    Served,
    Skipped,
    StillDraws,
    StillOwes,
    StillPlaying,
    Stray,
    Took,
    Traded,
    TurnedBack,
    TurnedUp,
    Undone,
    UnoCalled,
    Unowed,
    Unsaved,
    WentOut,
)
from engine.words import answer_hint, colour_name, owes_phrase, penalty_words, plural, shown
from i18n import N_, _, ngettext
from wire.text import news

__all__ = ["Narrator", "log_lines"]


class Narrator:
    """Words outcomes for people: `names` are the players by seat; `classic` says draws
    (dispensed) where UNO Attack says hits; `obligations` words every obligation added (the
    demo), where the table says only what is owed first (the referee's `Owing`)."""

    def __init__(self, names: Sequence[str], *, classic: bool, obligations: bool = False) -> None:
        self.names = list(names)
        self.classic = classic
        self.obligations = obligations

    def name(self, seat: int) -> str:
        """The player at `seat`."""
        return self.names[seat]

    def lines(self, outcomes: Iterable[Outcome]) -> list[str]:
        """What the table says of `outcomes`, one line each (none for the silent kinds)."""
        said: list[str] = []
        for outcome in outcomes:
            word = _WORDS.get(type(outcome))
            if word is not None:
                said.extend(word(self, outcome))
        return said

    # -- the rules core's outcomes ------------------------------------------------------------
    def played(self, o: Played) -> list[str]:
        who = self.name(o.seat)
        if o.jump:
            said = _("{player} jumps in with {cards}")
        elif o.discards:
            said = _("{player} plays {cards} and {count} more")
        else:
            said = _("{player} plays {cards}")
        lines: list[str] = [said.format(player=who, cards=shown(*o.cards), count=o.discards)]
        if o.cards[0].is_wild:
            lines.append(_("colour is now {colour}").format(colour=colour_name(o.color)))
        elif len({c.color for c in o.cards}) > 1:
            lines.append(_("colour is {colour}").format(colour=colour_name(o.color)))
        return lines

    def reversed(self, o: Reversed) -> list[str]:
        return [_("direction reversed")] if o.seats > 2 else []

    def dealer_first(self, o: DealerFirst) -> list[str]:
        return [_("{player} plays first, going right").format(player=self.name(o.dealer))]

    def skipped(self, o: Skipped) -> list[str]:
        return [_("{player} is skipped").format(player=self.name(o.seat))]

    def traded(self, o: Traded) -> list[str]:
        return [
            _("{player} and {other} trade hands").format(
                player=self.name(o.seat), other=self.name(o.other)
            )
        ]

    def went_out(self, o: WentOut) -> list[str]:
        return [_("{player} is out!").format(player=self.name(o.seat))]

    def bonus_turn(self, o: BonusTurn) -> list[str]:
        return [_("{player} may play one more card (or `pass`)").format(player=self.name(o.seat))]

    def owes(self, o: Owes) -> list[str]:
        if not self.obligations:
            return []
        reason = " (" + o.face + ")" if o.face else " (UNO)"
        return [owes_phrase(self.name(o.seat), o.kind, o.n) + reason]

    def passed(self, o: Passed) -> list[str]:
        if o.kept:
            said = (
                _("{player} keeps the drawn card and passes")
                if self.classic
                else _("{player} keeps the cards fired and passes")
            )
        else:
            said = _("{player} passes")
        return [said.format(player=self.name(o.seat))]

    def uno_called(self, o: UnoCalled) -> list[str]:
        said = _("{player} calls UNO: safe") if o.held == 1 else _("{player} calls UNO")
        return [said.format(player=self.name(o.seat))]

    def penalised(self, o: Penalised) -> list[str]:
        penalty = penalty_words(o.n, classic=o.kind == "draws")
        if o.why == "false_uno":
            said = _("{player}: false UNO call ({cards}), {penalty}").format(
                player=self.name(o.seat), cards=plural(o.held, "card"), penalty=penalty
            )
        elif o.why == "caught":
            said = _("{player} is caught without UNO: {penalty}").format(
                player=self.name(o.seat), penalty=penalty
            )
        else:
            assert o.other is not None
            said = _("{accuser}: wrong accusation of {player}, {penalty}").format(
                accuser=self.name(o.seat), player=self.name(o.other), penalty=penalty
            )
        return [said]

    def challenged(self, o: Challenged) -> list[str]:
        if o.legal:
            said = _("the WD4 was legal: {player} draws {count}").format(
                player=self.name(o.seat), count=o.n
            )
        else:
            said = _("the WD4 was not legal: {player} draws 4 instead").format(
                player=self.name(o.offender)
            )
        return [said]

    # -- the referee's ----------------------------------------------------------------------
    def dealer_set(self, o: DealerSet) -> list[str]:
        return [_("{player} deals round {round}").format(player=self.name(o.seat), round=o.round)]

    def round_started(self, o: RoundStarted) -> list[str]:
        if o.loaded is not None:
            return [
                _("{dealer} deals, {card} turned up, {cards} in the launcher").format(
                    dealer=self.name(o.dealer), card=shown(o.card), cards=plural(o.loaded, "card")
                )
            ]
        return [
            _("round {round}: {dealer} dealt, {card} turned up").format(
                round=o.round, dealer=self.name(o.dealer), card=shown(o.card)
            )
        ]

    def hit_started(self, o: HitStarted) -> list[str]:
        return [_("{player} hits: press the button once").format(player=self.name(o.seat))]

    def draw_started(self, o: DrawStarted) -> list[str]:
        return [_("{player} draws a card").format(player=self.name(o.seat))]

    def penalty_accepted(self, o: PenaltyAccepted) -> list[str]:
        return [
            _("{player} takes the {card}: {cards}").format(
                player=self.name(o.seat), card=o.face, cards=plural(o.n, "card")
            )
        ]

    def took(self, o: Took) -> list[str]:
        said = (
            _("{player} takes {cards} (holds {held})")
            if o.cards
            else _("{player}: dry (holds {held})")
        ).format(player=self.name(o.seat), cards=plural(o.cards, "card"), held=o.held)
        note = self.press_note(o.note) if o.note is not None else ""
        return [said + (" [" + note + "]" if note else "")]

    def press_note(self, note: PressNote) -> str:
        """Where a take's cards came from: `press 3, dry streak 1` (and the fire's reason
        when it was not a plain fire), `dispense 4, fired`."""
        if note.dispense:
            return _("dispense {press}, {reason}").format(press=note.press, reason=note.reason)
        said = _("press {press}, dry streak {streak}").format(
            press=note.press, streak=note.streak or 0
        )
        if note.reason not in ("fired", "dry"):
            said += f", {note.reason}"
        return said

    def owing(self, o: Owing) -> list[str]:
        who = self.name(o.seat)
        if self.classic and (o.answers or o.challengeable):
            hint = answer_hint(
                classic=True, n=o.n, answers=frozenset(o.answers), challengeable=o.challengeable
            )
            return [_("{player} must {choices}").format(player=who, choices=hint)]
        why = ""
        if o.why == "play":
            why = str(o.card)
        elif o.why == "turned_up":
            why = _("{card} turned up").format(card=o.card)
        elif o.why == "challenge":
            why = _("WD4 challenged")
        reason = " (" + why + ")" if why else ""
        if o.face is None:
            reason = " (UNO)"
        return [owes_phrase(who, o.kind, o.n) + reason]

    def still_owes(self, o: StillOwes) -> list[str]:
        return [owes_phrase(self.name(o.seat), o.kind, o.n)]

    def still_draws(self, o: StillDraws) -> list[str]:
        return [
            _("{player} still draws 1 card: it comes after `clear` (jam) or `load N`").format(
                player=self.name(o.seat)
            )
        ]

    def may_play_taken(self, o: MayPlayTaken) -> list[str]:
        said = (
            _("{player} may play the drawn card, or `pass`")
            if self.classic
            else _("{player} may play a card the launcher fired, or `pass`")
        )
        return [said.format(player=self.name(o.seat))]

    def stray(self, o: Stray) -> list[str]:
        who, cards = self.name(o.seat), plural(o.cards, "card")
        if o.held is None:
            said = _(
                "{cards} slipped out after {player}'s last hit, after the round ended: put "
                "them back into the launcher"
            )
        else:
            said = _(
                "{cards} slipped out after {player}'s last hit: {player} takes them (holds {held})"
            )
        return [said.format(cards=cards, player=who, held=o.held)]

    def hand_set(self, o: HandSet) -> list[str]:
        return [
            _("{player} holds {cards} (was {old})").format(
                player=self.name(o.seat), cards=plural(o.cards, "card"), old=o.was
            )
        ]

    def round_over(self, o: RoundOver) -> list[str]:
        if o.loser is not None:  # knockout (seed 001 淘汰制: "最後有一個人輸")
            return [
                _("round {round} is over: {player} is the last one left holding cards").format(
                    round=o.round, player=self.name(o.loser)
                )
            ]
        return [
            _("round {round} is over: {player} went out").format(
                round=o.round, player=self.name(o.winner)
            )
        ]

    def hand_entered(self, o: HandEntered) -> list[str]:
        return [self.name(o.seat) + ": " + plural(o.points, "point")]

    def round_scored(self, o: RoundScored) -> list[str]:
        parts = [f"{self.name(s)} {g:+d}" for s, g in enumerate(o.gained) if g]  # chips: -
        gains = ", ".join(parts) if parts else _("no points")
        return [
            _("round {round} to {player}: {gains}").format(
                round=o.round, player=self.name(o.winner), gains=gains
            )
        ]

    def player_out(self, o: PlayerOut) -> list[str]:
        return [
            _("{player} reaches {target} and is out").format(
                player=self.name(o.seat), target=o.target
            )
        ]

    def game_over(self, o: GameOver) -> list[str]:
        lines: list[str] = []
        if o.winners:
            names = " & ".join(self.name(s) for s in o.winners)
            said = ngettext("game over: {names} wins", "game over: {names} win", len(o.winners))
            lines.append(said.format(names=names))
        if o.losers:
            # knockout, chips, losing and teams name the loser (seed 001: "最後有一個人輸")
            names = " & ".join(self.name(s) for s in o.losers)
            said = ngettext("game over: {names} loses", "game over: {names} lose", len(o.losers))
            lines.append(said.format(names=names))
        return lines

    def seating(self, o: Seating) -> list[str]:
        half = len(o.players) // 2
        pairs = ", ".join(
            _("{player} opposite {partner}").format(
                player=o.players[s], partner=o.players[s + half]
            )
            for s in range(half)
        )
        if o.waiting:
            said = _(
                "next at table {table}, rounds {first}-{last}: seat {players} clockwise "
                "({pairs}); type `next` once they sit"
            )
        else:
            said = _("table {table}, rounds {first}-{last}: {players} clockwise ({pairs})")
        return [
            said.format(
                table=o.table,
                first=o.first,
                last=o.last,
                players=", ".join(o.players),
                pairs=pairs,
            )
        ]

    def new_game(self, o: NewGame) -> list[str]:
        return [_("new game: {players}").format(players=", ".join(self.names))]

    def next_deal(self, o: NextDeal) -> list[str]:
        return [
            _("round {round}: {dealer} deals").format(round=o.round, dealer=self.name(o.dealer))
        ]

    # -- the box's, and the session's ---------------------------------------------------------
    def button_live(self, o: ButtonLive) -> list[str]:
        if o.seat is None:
            return [_("box: button live")]
        return [_("box: button live for {player}").format(player=self.name(o.seat))]

    def box_news(self, o: BoxNews) -> list[str]:
        said = news(o.event)
        return [said] if said is not None else []

    def unowed(self, o: Unowed) -> list[str]:
        if o.why == "no_hitter":
            said = _("box fired {cards} but nobody owed a hit: put them back into the launcher")
        elif o.why == "test_fire":
            said = _(
                "box fired {cards} by a dispense, not a press: put them back into the launcher"
            )
        elif o.why == "not_ours":
            said = _("box fired {cards} that nobody was owed: put them back into the launcher")
        else:
            said = _("box fired {cards} nobody owed: put them back")
        return [said.format(cards=plural(o.cards, "card"))]

    def dispense_pending(self, o: DispensePending) -> list[str]:
        if o.sent:
            said = _("waiting for the box to report the dispense of {cards} for {player}")
        else:
            said = _(
                "the referee stopped while sending a dispense of {cards} for {player}: it "
                "counts when the box reports it; if the launcher never fired them, type "
                "`resend`"
            )
        return [said.format(cards=plural(o.cards, "card"), player=self.name(o.seat))]


def _said(
    text: str, **args: Callable[[Narrator, Any], object]
) -> Callable[[Narrator, Any], list[str]]:
    """A wording that is one message, its arguments read from the outcome."""

    def word(narrator: Narrator, o: Any) -> list[str]:
        return [_(text).format(**{k: get(narrator, o) for k, get in args.items()})]

    return word


def _cards(n: Narrator, o: Any) -> object:
    return plural(o.cards, "card")


# Each kind the table announces, and the narrator's method that words it.
_WORDS: dict[type[Any], Callable[[Narrator, Any], list[str]]] = {
    Played: Narrator.played,
    Reversed: Narrator.reversed,
    DealerFirst: Narrator.dealer_first,
    Skipped: Narrator.skipped,
    Traded: Narrator.traded,
    WentOut: Narrator.went_out,
    BonusTurn: Narrator.bonus_turn,
    Owes: Narrator.owes,
    Passed: Narrator.passed,
    UnoCalled: Narrator.uno_called,
    Penalised: Narrator.penalised,
    Challenged: Narrator.challenged,
    DealerSet: Narrator.dealer_set,
    RoundStarted: Narrator.round_started,
    HitStarted: Narrator.hit_started,
    DrawStarted: Narrator.draw_started,
    PenaltyAccepted: Narrator.penalty_accepted,
    Took: Narrator.took,
    Owing: Narrator.owing,
    StillOwes: Narrator.still_owes,
    StillDraws: Narrator.still_draws,
    MayPlayTaken: Narrator.may_play_taken,
    Stray: Narrator.stray,
    HandSet: Narrator.hand_set,
    RoundOver: Narrator.round_over,
    HandEntered: Narrator.hand_entered,
    RoundScored: Narrator.round_scored,
    PlayerOut: Narrator.player_out,
    GameOver: Narrator.game_over,
    NextDeal: Narrator.next_deal,
    ButtonLocked: _said(N_("box: button locked")),
    ButtonLive: Narrator.button_live,
    BoxNews: Narrator.box_news,
    BoxJammed: _said(N_("box: jammed: take out the stuck cards, then type `clear`")),
    BoxEmpty: _said(
        N_(
            "box: the launcher is empty: shuffle the discard pile (all but the top card) into it "
            "and type `load N`"
        )
    ),
    PressRefused: _said(
        N_("box: press {press} refused ({reason}): it does not count"),
        press=lambda n, o: o.press,
        reason=lambda n, o: o.reason,
    ),
    Unowed: Narrator.unowed,
    DispenseSent: _said(
        N_("box: dispensing {cards} for {player}"),
        cards=_cards,
        player=lambda n, o: n.name(o.seat),
    ),
    DispenseHeld: _said(N_("the rest is dispensed after `clear` (jam) or `load N` (refilled)")),
    DispenseUnanswered: _said(
        N_(
            "box: no answer to the dispense of {cards} ({error}); they count when the box "
            "reports them; if the launcher never fired, type `resend`"
        ),
        cards=_cards,
        error=lambda n, o: o.error,
    ),
    DispenseRefused: _said(
        N_("box: cannot dispense {cards}: {error}; `clear` retries"),
        cards=_cards,
        error=lambda n, o: o.error,
    ),
    DispensePending: Narrator.dispense_pending,
    ResendArmed: _said(N_("the dispense will be sent again")),
    AimFailed: _said(
        N_("box: cannot aim at {player}: {error}"),
        player=lambda n, o: n.name(o.seat),
        error=lambda n, o: o.error,
    ),
    BoxTrouble: _said(N_("box: {error}"), error=lambda n, o: o.error),
    Loaded: lambda n, o: [
        (_("box hopper: {cards}") if o.box else _("launcher holds {cards}")).format(
            cards=plural(o.cards, "card")
        )
    ],
    Cleared: _said(N_("box: {state}"), state=lambda n, o: o.state),
    LockedForGoodbye: _said(
        N_(
            "box: button locked while no referee is running; running the same command again "
            "unlocks it when someone must hit (`launcher send PORT unlock` frees it for play "
            "without the referee)"
        )
    ),
    LockFailed: _said(N_("box: could not lock the button: {error}"), error=lambda n, o: o.error),
    PressUnreported: _said(N_("box: the press was not reported; type `press` again")),
    ConnectionLost: _said(N_("box connection lost: {error}"), error=lambda n, o: o.error),
    Undone: _said(N_("undone: {state}"), state=lambda n, o: o.state),
    Cancelled: _said(N_("cancelled")),
    Resuming: _said(N_("resuming the game saved in {path}"), path=lambda n, o: o.path),
    Unsaved: lambda n, o: [
        _("box event not saved: {problem}; the box replays it after a restart").format(
            problem=o.problem
        )
        if o.event
        else o.problem
    ],
    Seating: Narrator.seating,
    NewGame: Narrator.new_game,
    StillPlaying: lambda n, o: [
        ngettext(
            "{players} is still playing at table {table}: wait for them before `next`",
            "{players} are still playing at table {table}: wait for them before `next`",
            len(o.players),
        ).format(players=" & ".join(o.players), table=o.table)
    ],
    GameKept: _said(N_("the last game is kept in {file}"), file=lambda n, o: o.file),
    NightUnsaved: _said(
        N_("the night's standings could not be written: {problem}; the next save tries again"),
        problem=lambda n, o: o.problem,
    ),
    GameSaved: _said(
        N_("game saved in {path}; run the same command again to resume"),
        path=lambda n, o: o.path,
    ),
}
# What the table does not announce: each is told by another outcome or by the state.
SILENT: frozenset[type[Outcome]] = frozenset(
    {TurnedUp, TurnedBack, ColourNamed, Fired, Drew, Reloaded, Served, PressNote}
)


# -- the scenario log: English, about seats --------------------------------------------------


def _log_cards(n: int) -> str:
    return f"{n} card{'s' if n != 1 else ''}"


def _owed_log(kind: str, n: int) -> str:
    if kind == "until_fire":
        return "hit until a card fires"
    if kind == "hits":
        return f"hit {n} more time{'s' if n != 1 else ''}"
    return f"draw {_log_cards(n)}"


def _played_log(o: Played) -> list[str]:
    text = f"seat {o.seat} plays {' '.join(format_cards(o.cards))}"
    if o.cards[0].is_wild and o.color:
        text += f" naming {o.color}"
    if o.target is not None:
        text += f" at seat {o.target}"
    return [text]


def _penalised_log(o: Penalised) -> list[str]:
    lines = []
    if o.why == "caught":
        lines.append(f"seat {o.other} catches seat {o.seat}")
    elif o.why == "wrong_accusation":
        lines.append(f"seat {o.seat} accuses seat {o.other} wrongly")
    why = {"false_uno": "false UNO call", "caught": "caught without UNO"}.get(
        o.why, "wrong accusation"
    )
    lines.append(f"seat {o.seat}: {why}, {o.n} {'hits' if o.kind == 'hits' else 'cards'}")
    return lines


def _challenged_log(o: Challenged) -> list[str]:
    if o.legal:
        return [f"seat {o.seat} challenges the WD4 and loses: {_owed_log(o.kind, o.n)}"]
    return [f"seat {o.seat} challenges the WD4 and wins: seat {o.offender} draws 4"]


_LOG: dict[type[Outcome], Callable[..., list[str]]] = {
    TurnedBack: lambda o: [f"{o.card} turned up: back into the pile"],
    TurnedUp: lambda o: [f"seat {o.dealer} deals; {o.card} turned up"],
    Played: _played_log,
    ColourNamed: lambda o: [f"seat {o.seat} names {o.color}"],
    Passed: lambda o: [f"seat {o.seat} passes"],
    UnoCalled: lambda o: [f"seat {o.seat} calls UNO"],
    Penalised: _penalised_log,
    Reloaded: lambda o: [f"launcher reloaded with {o.cards} cards from the discard pile"],
    Fired: lambda o: [f"seat {o.seat} hits: {_log_cards(o.count)}"],
    Drew: lambda o: [f"seat {o.seat} draws {_log_cards(o.count)}"],
    Challenged: _challenged_log,
    WentOut: lambda o: [f"seat {o.seat} goes out"],
}


def log_lines(outcomes: Iterable[Outcome]) -> list[str]:
    """The scenario log of `outcomes`: one English line per thing a reader of a replay wants
    (plays, takes, calls, penalties, reloads); the rest (skips, obligations) is in the state."""
    lines: list[str] = []
    for outcome in outcomes:
        said = _LOG.get(type(outcome))
        if said is not None:
            lines.extend(said(outcome))
    return lines
