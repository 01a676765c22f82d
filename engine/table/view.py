"""The table's state in words: what happens next (the prompt), who owes what, the status and
the scoreboard; and the view (`view`), the data `unoattack table --json` prints and the web page
shows, with those words in it.

These describe the state; what a move did is the narrator's (engine/narrate.py).
"""

from __future__ import annotations

from typing import Any

from engine.table.referee import Referee
from engine.words import answer_hint, colour_name, owes_phrase, plural, shown
from i18n import _, ngettext

__all__ = ["next_step", "owed", "owes", "scoreboard", "status", "summary"]


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
    """One line per player: score, and (elimination) whether they are out."""
    lines = []
    seats = range(len(ref.players))
    order = sorted(seats, key=lambda s: (-ref.scores[s], s))
    if ref.mode in ("lowest", "elimination"):
        order = sorted(seats, key=lambda s: (ref.scores[s], s))
    width = max(len(p) for p in ref.players)
    for s in order:
        out = "" if ref.active[s] else "  " + _("(out)")
        lines.append(f"  {ref.name(s):<{width}}  {ref.scores[s]:>4}" + out)
    return lines


def status(ref: Referee) -> list[str]:
    """A few lines describing the table now."""
    phase = {"deal": _("deal"), "play": _("play"), "score": _("score"), "over": _("over")}[
        ref.phase
    ]
    lines = [
        _("round {round} ({phase}), {mode} mode, game to {target} points").format(
            round=ref.round_no, phase=phase, mode=ref.mode, target=ref.target
        ),
        # The deck's own name, never a file's path (the web page's watchers read it too).
        _("{deck} deck, {rules} rules").format(deck=ref.deck.name, rules=ref.rules.preset),
    ]
    if ref.phase in ("play", "score") and ref.round is not None:
        arrow = _("left (clockwise)") if ref.direction == 1 else _("right (counter-clockwise)")
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
        return "[" + _("game over") + "] " + _("status, scores or quit")
    hitter = ref.hitter()
    if hitter is not None and (ref.classic or (ref.round is not None and ref.round.answerable())):
        return where + ref.name(hitter) + ": " + owed(ref)
    if hitter is not None:
        return where + _("{player}: {owed}, press the button").format(
            player=ref.name(hitter), owed=owed(ref)
        )
    if ref.bonus:
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
    """`Referee.summary()` with what is owed in words (`owed`, `owes`) after `hitter`."""
    data: dict[str, Any] = {}
    for key, value in ref.summary().items():
        data[key] = value
        if key == "hitter":
            data["owed"] = owed(ref)
            data["owes"] = owes(ref)
    return data
