"""What a move did, as data: one small record per thing that happened.

`Round` (engine/game.py) records these as it changes the round, when it is asked to
(``record=True``; a simulation leaves it off and pays nothing); the table referee
(engine/table/referee.py) returns them for every step, adding its own (a round scored, a hand
entered); the box side of the table (engine/table/boxsync.py) adds what the box did. Nobody
words them but the narrator (engine/narrate.py), which turns each into the players' words for
the terminal, the web page and the demo, and into the scenario log's English lines.

Seats are numbers; cards are `Card`s. A new kind of outcome is a dataclass here and one wording
function in the narrator (`tests/engine/test_narrate.py` checks that every kind has one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cards import Card

__all__ = [
    "ROUND_OUTCOMES",
    "AimFailed",
    "BonusTurn",
    "BoxEmpty",
    "BoxJammed",
    "BoxNews",
    "BoxTrouble",
    "ButtonLive",
    "ButtonLocked",
    "Cancelled",
    "Challenged",
    "Cleared",
    "ColourNamed",
    "ConnectionLost",
    "DealerFirst",
    "DealerSet",
    "DispenseHeld",
    "DispensePending",
    "DispenseRefused",
    "DispenseSent",
    "DispenseUnanswered",
    "DrawStarted",
    "Drew",
    "Fired",
    "GameKept",
    "GameOver",
    "GameSaved",
    "HandEntered",
    "HandSet",
    "HitStarted",
    "Loaded",
    "LockFailed",
    "LockedForGoodbye",
    "MayPlayTaken",
    "NewGame",
    "NextDeal",
    "NightUnsaved",
    "Outcome",
    "Owes",
    "Owing",
    "Passed",
    "Penalised",
    "PenaltyAccepted",
    "Played",
    "PlayerOut",
    "PressNote",
    "PressRefused",
    "PressUnreported",
    "Reloaded",
    "ResendArmed",
    "Resuming",
    "Reversed",
    "RoundOver",
    "RoundScored",
    "RoundStarted",
    "Seating",
    "Served",
    "Skipped",
    "StillDraws",
    "StillOwes",
    "StillPlaying",
    "Stray",
    "Took",
    "Traded",
    "TurnedBack",
    "TurnedUp",
    "Undone",
    "UnoCalled",
    "Unowed",
    "Unsaved",
    "WentOut",
]


class Outcome:
    """Base of every outcome record (frozen dataclasses with slots)."""

    __slots__ = ()


# -- what the rules core records (engine/game.py) ---------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnedUp(Outcome):
    """`dealer` dealt and turned up `card`: the round starts on it."""

    dealer: int
    card: Card


@dataclass(frozen=True, slots=True)
class TurnedBack(Outcome):
    """`card` was turned up first but goes back into the launcher (TH, classic WD4)."""

    card: Card


@dataclass(frozen=True, slots=True)
class DealerFirst(Outcome):
    """A Reverse turned up first: the dealer plays first and play goes right."""

    dealer: int


@dataclass(frozen=True, slots=True)
class Played(Outcome):
    """`seat` played `cards` (several with multi_play) and the colour is now `color`; `target`
    is the seat a WAA aims at or a TH trades with; `discards` the other cards of its colour a
    Discard All took along; `jump` for a jump-in (out of turn)."""

    seat: int
    cards: tuple[Card, ...]
    color: str | None
    target: int | None = None
    discards: int = 0
    jump: bool = False


@dataclass(frozen=True, slots=True)
class ColourNamed(Outcome):
    """`seat` named `color` for the wild turned up first (before taking)."""

    seat: int
    color: str


@dataclass(frozen=True, slots=True)
class Reversed(Outcome):
    """Play turned round at `seat` (`seats`: how many are in play; with two it is a skip)."""

    seat: int
    seats: int


@dataclass(frozen=True, slots=True)
class Skipped(Outcome):
    """`seat` loses its turn (and owes nothing for it)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Owes(Outcome):
    """An obligation: `seat` now owes `n` (``hits``, ``draws``; ``until_fire``: hits until a
    press fires) for `face` (None: a penalty)."""

    seat: int
    kind: str
    n: int
    face: str | None = None


@dataclass(frozen=True, slots=True)
class Served(Outcome):
    """`seat` has served the obligation first in line (or it lapsed: nothing left to take)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Traded(Outcome):
    """`seat` and `other` swapped hands."""

    seat: int
    other: int


@dataclass(frozen=True, slots=True)
class BonusTurn(Outcome):
    """`seat` may play one more card (or pass): skip_reverse_play_again."""

    seat: int


@dataclass(frozen=True, slots=True)
class WentOut(Outcome):
    """`seat`'s hand is empty: it wins the round once every obligation is served."""

    seat: int


@dataclass(frozen=True, slots=True)
class Fired(Outcome):
    """One press of the launcher for `seat` fired `count` cards."""

    seat: int
    count: int


@dataclass(frozen=True, slots=True)
class Drew(Outcome):
    """`seat` drew `count` cards (classic: dispensed exactly)."""

    seat: int
    count: int


@dataclass(frozen=True, slots=True)
class Reloaded(Outcome):
    """The launcher was dry: the discard pile but its top (`cards`) was shuffled into it."""

    cards: int


@dataclass(frozen=True, slots=True)
class Passed(Outcome):
    """`seat` passed; `kept`: after a hit or draw, keeping what came."""

    seat: int
    kept: bool = False


@dataclass(frozen=True, slots=True)
class UnoCalled(Outcome):
    """`seat` called UNO holding `held` cards (one or two: a call, not a mistake)."""

    seat: int
    held: int


@dataclass(frozen=True, slots=True)
class Penalised(Outcome):
    """`seat` owes the UNO penalty, `n` of `kind` (``hits`` or ``draws``), because of `why`:
    ``false_uno`` (a call holding `held` cards), ``caught`` (by `other`, without UNO) or
    ``wrong_accusation`` (of `other`)."""

    seat: int
    why: str
    n: int
    kind: str
    other: int | None = None
    held: int = 0


@dataclass(frozen=True, slots=True)
class Challenged(Outcome):
    """`seat` challenged `offender`'s Wild Draw Four: `legal` (the challenger owes `n` of
    `kind` now) or not (the offender owes four instead)."""

    seat: int
    offender: int
    legal: bool
    n: int
    kind: str


ROUND_OUTCOMES: tuple[type[Outcome], ...] = (
    TurnedUp,
    TurnedBack,
    DealerFirst,
    Played,
    ColourNamed,
    Reversed,
    Skipped,
    Owes,
    Served,
    Traded,
    BonusTurn,
    WentOut,
    Fired,
    Drew,
    Reloaded,
    Passed,
    UnoCalled,
    Penalised,
    Challenged,
)


# -- what the table referee adds (engine/table/referee.py) ------------------------------------


@dataclass(frozen=True, slots=True)
class DealerSet(Outcome):
    """`seat` deals round `round`."""

    seat: int
    round: int


@dataclass(frozen=True, slots=True)
class RoundStarted(Outcome):
    """Round `round`: `dealer` dealt and turned up `card`; `loaded`: the cards in the launcher
    (the demo knows them; a table does not)."""

    round: int
    dealer: int
    card: Card
    loaded: int | None = None


@dataclass(frozen=True, slots=True)
class HitStarted(Outcome):
    """`seat` said it hits: the next press is theirs."""

    seat: int


@dataclass(frozen=True, slots=True)
class DrawStarted(Outcome):
    """Classic: `seat` draws a card (the launcher dispenses it)."""

    seat: int


@dataclass(frozen=True, slots=True)
class PenaltyAccepted(Outcome):
    """Classic: `seat` takes the `n` cards a `face` made it owe instead of answering it."""

    seat: int
    face: str | None
    n: int


@dataclass(frozen=True, slots=True)
class PressNote(Outcome):
    """Where the cards of a take came from: the box's press (or, `dispense`, the dispense)
    `press`, its dry `streak` and the fire's `reason`."""

    press: int | None = None
    streak: int | None = None
    reason: str | None = None
    dispense: bool = False


@dataclass(frozen=True, slots=True)
class Took(Outcome):
    """`seat` took `cards` from one press or dispense and now holds `held`."""

    seat: int
    cards: int
    held: int
    note: PressNote | None = None


@dataclass(frozen=True, slots=True)
class Owing(Outcome):
    """What is owed first now, after a move changed it: `seat` owes `n` of `kind` for `face`
    (None: the UNO penalty). `why` is what the move was: ``play`` (of `card`), ``turned_up``
    (`card`), ``challenge`` or ``take``. `answers` and `challengeable`: what `seat` may still
    answer it with (stacking faces, a challenge of the WD4)."""

    seat: int
    kind: str
    n: int
    face: str | None
    why: str
    card: Card | None = None
    answers: tuple[str, ...] = ()
    challengeable: bool = False


@dataclass(frozen=True, slots=True)
class StillOwes(Outcome):
    """A take did not serve the obligation: `seat` still owes `n` of `kind`."""

    seat: int
    kind: str
    n: int


@dataclass(frozen=True, slots=True)
class StillDraws(Outcome):
    """Classic: the card `seat` draws did not come (a jam, an empty launcher)."""

    seat: int


@dataclass(frozen=True, slots=True)
class MayPlayTaken(Outcome):
    """`seat` may play a card the take brought, or pass."""

    seat: int


@dataclass(frozen=True, slots=True)
class Stray(Outcome):
    """`cards` slipped out of the box after `seat`'s last burst: theirs (`held` now), or, the
    round over (`held` None), to put back."""

    seat: int
    cards: int
    held: int | None


@dataclass(frozen=True, slots=True)
class HandSet(Outcome):
    """The table corrected `seat`'s hand to `cards` (it was `was`)."""

    seat: int
    cards: int
    was: int


@dataclass(frozen=True, slots=True)
class RoundOver(Outcome):
    """Round `round` is over: `winner` went out (a knockout round: `loser` is the one left
    holding cards)."""

    round: int
    winner: int
    loser: int | None = None


@dataclass(frozen=True, slots=True)
class HandEntered(Outcome):
    """The cards left in `seat`'s hand are worth `points`."""

    seat: int
    points: int


@dataclass(frozen=True, slots=True)
class RoundScored(Outcome):
    """Round `round` to `winner`; `gained` per seat."""

    round: int
    winner: int
    gained: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PlayerOut(Outcome):
    """Elimination: `seat` reached `target` and is out of the game."""

    seat: int
    target: int


@dataclass(frozen=True, slots=True)
class GameOver(Outcome):
    """The game is over: `winners` won and `losers` lost (a mode may name only one of the
    two: engine/scoring.py `Verdict`)."""

    winners: tuple[int, ...]
    losers: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class NextDeal(Outcome):
    """Round `round` starts: `dealer` deals."""

    round: int
    dealer: int


# -- what the box did, and what the table says of it (engine/table/boxsync.py) ---------------


@dataclass(frozen=True, slots=True)
class ButtonLocked(Outcome):
    """The box's button is locked (nobody owes a hit)."""


@dataclass(frozen=True, slots=True)
class ButtonLive(Outcome):
    """The box's button is live, for `seat` (None: nobody in particular)."""

    seat: int | None


@dataclass(frozen=True, slots=True)
class BoxNews(Outcome):
    """A box event that changes play (a fault, a latched state), worded by wire/text.py."""

    event: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BoxJammed(Outcome):
    """The box jammed: the stuck cards come out, then `clear`."""


@dataclass(frozen=True, slots=True)
class BoxEmpty(Outcome):
    """The launcher ran empty: the discard pile goes into it, then `load N`."""


@dataclass(frozen=True, slots=True)
class PressRefused(Outcome):
    """The box refused press `press` (`reason`: locked, a full queue, ...): it counts for
    nobody."""

    press: int | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class Unowed(Outcome):
    """The box fired `cards` that nobody was owed: they go back into the launcher. `why`:
    ``no_hitter`` (nobody owed a hit), ``not_ours`` (not the dispense the referee sent),
    ``moved_on`` (the dispense's cards are no longer owed), ``test_fire`` (UNO Attack: a dispense
    is someone's test fire, never a hit)."""

    cards: int
    why: str


@dataclass(frozen=True, slots=True)
class DispenseSent(Outcome):
    """Classic: the box dispenses `cards` for `seat`."""

    seat: int
    cards: int


@dataclass(frozen=True, slots=True)
class DispenseHeld(Outcome):
    """Classic: a short dispense; the rest comes after `clear` or `load N`."""


@dataclass(frozen=True, slots=True)
class DispenseUnanswered(Outcome):
    """Classic: the box did not answer the dispense of `cards` (`error`): they count when it
    reports them; `resend` if it never fired."""

    cards: int
    error: str


@dataclass(frozen=True, slots=True)
class DispenseRefused(Outcome):
    """Classic: the box refused to dispense `cards` (`error`); `clear` retries."""

    cards: int
    error: str


@dataclass(frozen=True, slots=True)
class DispensePending(Outcome):
    """At a restart: the dispense of `cards` for `seat` was being sent (`sent`: the box took
    it and its result is awaited; otherwise it may never have gone out)."""

    seat: int
    cards: int
    sent: bool


@dataclass(frozen=True, slots=True)
class ResendArmed(Outcome):
    """Classic: the dispense lost in a crash will be sent again."""


@dataclass(frozen=True, slots=True)
class AimFailed(Outcome):
    """The box could not aim at `seat` (`error`)."""

    seat: int
    error: str


@dataclass(frozen=True, slots=True)
class BoxTrouble(Outcome):
    """A box command failed (`error`)."""

    error: str


@dataclass(frozen=True, slots=True)
class Loaded(Outcome):
    """The launcher holds `cards` (`box`: the box's hopper said so)."""

    cards: int
    box: bool


@dataclass(frozen=True, slots=True)
class Cleared(Outcome):
    """The box was cleared; it is now in `state`."""

    state: str


@dataclass(frozen=True, slots=True)
class LockedForGoodbye(Outcome):
    """The referee stops: the button is locked until one runs again."""


@dataclass(frozen=True, slots=True)
class LockFailed(Outcome):
    """The referee stops, and could not lock the button (`error`)."""

    error: str


@dataclass(frozen=True, slots=True)
class PressUnreported(Outcome):
    """A press sent from the keyboard was not reported in time: press again."""


@dataclass(frozen=True, slots=True)
class ConnectionLost(Outcome):
    """The connection to the box was lost (`error`)."""

    error: str


# -- what the session says of itself (engine/table/session.py) --------------------------------


@dataclass(frozen=True, slots=True)
class Undone(Outcome):
    """The last step was taken back; `state` is what happens next now."""

    state: str


@dataclass(frozen=True, slots=True)
class Cancelled(Outcome):
    """A question was left unanswered (an empty line)."""


@dataclass(frozen=True, slots=True)
class Resuming(Outcome):
    """The game saved in `path` goes on."""

    path: str


@dataclass(frozen=True, slots=True)
class Unsaved(Outcome):
    """The game could not be saved (`problem`); a box event (`event`) stays applied and the
    box replays it after a restart."""

    problem: str
    event: bool = False


@dataclass(frozen=True, slots=True)
class GameKept(Outcome):
    """The game just ended is kept in the history file `file` (engine/game_history.py)."""

    file: str


@dataclass(frozen=True, slots=True)
class NewGame(Outcome):
    """A new game of the same players starts at the table."""


@dataclass(frozen=True, slots=True)
class Seating(Outcome):
    """At table `table` (from 1) of a game night, rounds `first` to `last` seat the players by
    seat, clockwise (each opposite the one half the table away): now (`waiting` False: the
    game of those rounds has started), or next (`waiting`: once they sit, `next` starts it)."""

    table: int
    first: int
    last: int
    players: tuple[str, ...]
    waiting: bool = False


@dataclass(frozen=True, slots=True)
class StillPlaying(Outcome):
    """`players`, seated here next, are still playing their last rounds at table `table` (from
    1) of the night."""

    players: tuple[str, ...]
    table: int


@dataclass(frozen=True, slots=True)
class NightUnsaved(Outcome):
    """The night file could not be written (`problem`): the table's rounds are recorded there
    with its next save."""

    problem: str


@dataclass(frozen=True, slots=True)
class GameSaved(Outcome):
    """The game is saved in `path`; the same command resumes it."""

    path: str
