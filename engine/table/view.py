"""The table's state in words: what happens next (the prompt), who owes what, the status and
the scoreboard; and the view (`view`), the data `unoattack table --json` prints and the web page
shows, with those words in it.

These describe the state; what a move did is the narrator's (engine/narrate.py).
"""

from __future__ import annotations

import copy
from typing import Any

from engine.scoring import LOWER_WINS
from engine.table.referee import Referee
from engine.words import answer_hint, colour_name, owes_phrase, plural, shown
from i18n import _, ngettext

__all__ = [
    "chips_lines",
    "game_line",
    "next_step",
    "owed",
    "owes",
    "scoreboard",
    "status",
    "summary",
]


def owed(ref: Referee) -> str:
    """What the current hitter still owes, in words ("2 more hits", "hits until cards fire")."""
    rnd = ref.round
    if rnd is None or ref.hitter() is None:
        return ""
    if not rnd.pending:
        return _("1 card to come from the launcher") if ref.classic else _("1 more hit")
    due = rnd.pending[0]
    if rnd.answerable():
        return answer_hint(
            classic=ref.classic, n=due.n, answers=rnd.answers(), challengeable=rnd.challengeable()
        )
    if due.kind == "draws":
        return _("{cards} to come from the launcher").format(cards=plural(due.n, "card"))
    if due.kind == "until_fire":
        return _("hits until cards fire")
    return ngettext("{n} more hit", "{n} more hits", due.n).format(n=due.n)


def owes(ref: Referee) -> list[str]:
    """Who owes what, first to last, one line each ("Cat must hit 2 more times")."""
    if ref.phase != "play" or ref.round is None:
        return []
    return [owes_phrase(ref.name(due.seat), due.kind, due.n) for due in ref.round.pending]


def scoreboard(ref: Referee) -> list[str]:
    """One line per player, best first: the score (chips mode: the chips held, the ledger),
    the team (teams mode), whether they are out (elimination), won or lost (game over)."""
    lines = []
    seats = range(len(ref.players))
    shown_score = ref.chips if ref.chips is not None else ref.scores
    order = sorted(seats, key=lambda s: (-shown_score[s], s))
    if ref.mode in LOWER_WINS:
        order = sorted(seats, key=lambda s: (shown_score[s], s))
    width = max(len(p) for p in ref.players)
    for s in order:
        # knockout scores no points: the game is the order of going out
        score = "" if ref.mode == "knockout" else f"  {shown_score[s]:>4}"
        line = f"  {ref.name(s):<{width}}{score}"
        if ref.mode == "chips":
            line += " " + _("chips")
        if ref.mode == "teams":
            line += "  " + _("team {team}").format(team=ref.team_of(s) + 1)
        if not ref.active[s]:
            line += "  " + _("(out)")
        if s in ref.game_winners:
            line += "  " + _("(wins)")
        if s in ref.game_losers:
            line += "  " + _("(loses)")
        lines.append(line)
    return lines


def chips_lines(totals: dict[str, int]) -> list[str]:
    """Chips mode: each player's chips won or lost over the games kept beside the state file
    and this one (seed 001 籌碼制: "多盤累計，以籌碼多少論勝負")."""
    shown_totals = ", ".join(
        f"{name} {won:+d}" for name, won in sorted(totals.items(), key=lambda kv: -kv[1])
    )
    return [_("chips over every game kept: {totals}").format(totals=shown_totals)]


def game_line(ref: Referee) -> str:
    """The game in a few words: the round, the phase, the mode and what ends the game."""
    phase = {"deal": _("deal"), "play": _("play"), "score": _("score"), "over": _("over")}[
        ref.phase
    ]
    if ref.span is not None:
        said = _("round {round} ({phase}) of rounds {first}-{last}, {mode} mode")
    elif ref.mode == "knockout":
        said = _("round {round} ({phase}), knockout mode: the last one left holding cards loses")
    elif ref.mode == "chips":
        said = _("round {round} ({phase}), chips mode, a stake of {target} chips each")
    elif ref.mode == "losing":
        said = _("round {round} ({phase}), losing mode: at {target} points the most points loses")
    elif ref.mode == "teams":
        said = _("round {round} ({phase}), {teams} teams, game to {target} points")
    else:
        said = _("round {round} ({phase}), {mode} mode, game to {target} points")
    first, last = ref.span or (1, 1)
    return said.format(
        round=ref.round_no,
        phase=phase,
        mode=ref.mode,
        target=ref.target,
        teams=ref.teams,
        first=first,
        last=last,
    )


def status(ref: Referee) -> list[str]:
    """A few lines describing the table now."""
    lines: list[str] = [
        game_line(ref),
        # The deck's own name, never a file's path (the web page's watchers read it too).
        _("{deck} deck, {rules} rules").format(deck=ref.deck.name, rules=ref.rules.preset),
    ]
    if ref.phase in ("play", "score") and ref.round is not None:
        ahead = ref.round.direction == 1
        arrow = _("left (clockwise)") if ahead else _("right (counter-clockwise)")
        lines.append(
            _("top {card}, colour {colour}, play goes {way}").format(
                card=shown(ref.round.top), colour=colour_name(ref.color), way=arrow
            )
        )
        for s in ref.active_seats():
            mark = ">" if s == ref.turn and ref.phase == "play" else " "
            lines.append(
                f" {mark}"
                + _("{player}: {cards}, fired {fired} in {presses}").format(
                    player=ref.name(s),
                    cards=plural(ref.hand[s], "card"),
                    fired=ref.fired[s],
                    presses=plural(ref.presses[s], "press"),
                )
            )
        lines.extend("  " + _("owed: {owes}").format(owes=line) for line in owes(ref))
        if ref.mode == "knockout" and ref.round.finished:  # out of this round, in order
            names = ", ".join(ref.name(s) for s in ref.round.finished)
            lines.append("  " + _("gone out: {players}").format(players=names))
    lines.extend(scoreboard(ref))
    return lines


def next_step(ref: Referee, question: str | None = None) -> str:
    """What happens next, in words (the prompt without its `> `): the question asked, if any."""
    if question:
        return question
    where = "[" + _("round {round}").format(round=ref.round_no) + "] "
    if ref.phase == "deal":
        return where + _("{dealer} deals: card turned up").format(dealer=ref.name(ref.dealer))
    if ref.phase == "score":
        seat = ref.to_enter()[0]
        return where + _("cards left in {player}'s hand ({count})").format(
            player=ref.name(seat), count=ref.hand[seat]
        )
    if ref.phase == "over":
        return "[" + _("game over") + "] " + _("next, status, scores or quit")
    hitter = ref.hitter()
    if hitter is not None and (ref.classic or (ref.round is not None and ref.round.answerable())):
        return where + ref.name(hitter) + ": " + owed(ref)
    if hitter is not None:
        return where + _("{player}: {owed}, press the button").format(
            player=ref.name(hitter), owed=owed(ref)
        )
    if ref.round is not None and ref.round.bonus:
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


def summary(ref: Referee) -> dict[str, Any]:
    """The game as JSON-able data for whoever watches it: the state `unoattack table --json`
    prints and the web page shows (the session adds its part). The referee's read-only
    answers (who must hit, what is owed, in words, who must enter a hand) are in it, so that
    no reader has to work them out."""
    rnd = ref.round
    state = rnd.state() if rnd is not None else None
    uno = None
    if rnd is not None and rnd.window is not None:
        uno = {"seat": rnd.window, "called": rnd.uno_called[rnd.window]}
    return {
        "deck": ref.deck.name,  # its name, never the path of a deck file
        "mode": ref.mode,
        "target": ref.target,
        "teams": ref.teams if ref.mode == "teams" else None,
        "team_of": [ref.team_of(s) for s in range(len(ref.players))]
        if ref.mode == "teams"
        else None,
        "chips": ref.chips,  # chips mode: the ledger, the chips each player holds; else None
        "classic": ref.classic,
        "rules": ref.rules.to_dict(),
        "phase": ref.phase,
        "round": ref.round_no,
        "players": list(ref.players),
        "dealer": ref.dealer,
        "hands": ref.hand,
        "turn": ref.turn if rnd is not None else None,
        "actor": rnd.actor if rnd is not None and ref.phase == "play" else None,
        "direction": rnd.direction if rnd is not None else 1,
        "color": ref.color,
        "top": ref.top,
        "pending": state["pending"] if state is not None else [],
        "uno": uno,
        "bonus": state["bonus"] if state is not None else None,
        "taking": ref.taking,
        "winner": rnd.winner if rnd is not None else None,
        "wd4": ref.wd4,
        "may_play_taken": ref.may_play_taken(),
        "hitter": ref.hitter(),
        "owed": owed(ref),
        "owes": owes(ref),
        "to_enter": ref.to_enter(),
        "fired": list(ref.fired),
        "presses": list(ref.presses),
        "fired_game": list(ref.fired_game),
        "presses_game": list(ref.presses_game),
        "scores": list(ref.scores),
        "active": list(ref.active),
        "hands_left": {str(k): list(v) for k, v in ref.hands_left.items()},
        "rounds": copy.deepcopy(ref.rounds),
        "game_winners": list(ref.game_winners),
        "game_losers": list(ref.game_losers),
        # knockout: who has gone out of the round being played, in that order
        "finished": list(rnd.finished) if rnd is not None else [],
    }
