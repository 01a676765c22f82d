"""The table referee's state: a game at a physical table, refereed without seeing the hands.

`Referee` keeps what a careful person at the table could keep: the scores and rounds, how many
cards each player holds, how many the box fired at each seat and in how many presses, and the
round being played (engine/table/moves.py `TableRound`, on a `BlindRound`: `Round` on hand
counts). Every rule, what a card does, whose turn it is, who owes what, the UNO window, is
`Round`'s: the referee turns what the table says into the round's actions.

Every move either changes the state and returns what happened as outcomes (engine/outcomes.py:
the round's own, and the referee's: a take, what is owed first now, a round scored), which the
narrator words (engine/narrate.py); or it raises `RuleError` (or `InputError`) with the reason,
and changes nothing. `to_dict` gives it as JSON; engine/table/state_file.py reads it back,
checking every field. engine/table/session.py is its I/O.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from typing import Any

from engine.blind import BlindRound
from engine.cards import Card, Deck, load_deck, parse_card
from engine.errors import InputError, RuleError
from engine.outcomes import (
    DealerSet,
    GameOver,
    HandEntered,
    NextDeal,
    Outcome,
    PlayerOut,
    PressNote,
    RoundOver,
    RoundScored,
    RoundStarted,
    Stray,
    Took,
)
from engine.rules import PRESET_NAMES, Rules, rules_for
from engine.scoring import SCORING_MODES, Verdict, judge, round_gains, team_of, teams_problem
from engine.table.commands import COLOR_WORDS, NAME_WORDS
from engine.table.moves import TableRound
from engine.words import plural
from i18n import _

__all__ = ["MODES", "PHASES", "STATE_VERSION", "Referee", "check_names"]

STATE_VERSION = 2  # 1: the referee before it played on BlindRound (read and upgraded)
# The table referees every scoring mode of engine/scoring.py.
MODES: tuple[str, ...] = SCORING_MODES
TEAMS = 2  # teams mode: two teams unless `--teams N` says otherwise
PHASES = ("deal", "play", "score", "over")
MAX_NAME = 32  # characters in a player's name: room for a long name, not for a page of text


def check_names(names: list[str]) -> None:
    """Player names: 2 to 10, letters/digits/-/_, starting with a letter, no colour or command."""
    if not 2 <= len(names) <= 10:
        raise InputError(
            _("{count} players: a table seats 2 to 10 (--players Ann,Bob,...)").format(
                count=len(names)
            )
        )
    seen: set[str] = set()
    for name in names:
        key = name.lower()
        if len(name) > MAX_NAME:  # (a name is shown on every line and quoted in refusals)
            raise InputError(
                _("player name `{start}...`: at most {most} characters").format(
                    start=name[:20], most=MAX_NAME
                )
            )
        if not name or not name[0].isalpha() or not all(c.isalnum() or c in "-_" for c in name):
            raise InputError(
                _("player name `{name}`: letters, digits, - or _, starting with a letter").format(
                    name=name
                )
            )
        if key.upper() in COLOR_WORDS or key in NAME_WORDS:
            raise InputError(
                _("player name `{name}` is a colour or a command: choose another").format(name=name)
            )
        if key in seen:
            raise InputError(_("player name `{name}` is used twice").format(name=name))
        seen.add(key)


class Referee:
    """A refereed game. Phases: ``deal`` (waiting for the card turned up), ``play``, ``score``
    (waiting for the cards left in each hand) and ``over``. Seats are numbered from 0 in the
    order of `players`, clockwise (to the left)."""

    PHASES = PHASES

    def __init__(
        self,
        players: Sequence[str],
        *,
        deck: str = "attack",
        mode: str = "target",
        target: int = 500,
        teams: int = TEAMS,
        options: dict[str, object] | None = None,
        span: tuple[int, int] | None = None,
    ) -> None:
        names = [p.strip() for p in players]
        self.deck, self.rules = _checked_game(names, deck, mode, target, options, teams)
        if span is not None and not 1 <= span[0] <= span[1]:
            raise InputError(f"span = {span!r}: rounds from a first to a last, counted from 1")
        self.deck_name = deck
        # Classic: every draw is a number of cards the referee itself dispenses from the
        # launcher (used as the draw pile), so it knows which hand they went to; nobody presses.
        self.classic = not self.rules.attack
        self.options: dict[str, object] = dict(options or {})
        self.players: list[str] = names
        self.mode = mode
        self.target = target
        self.teams = teams
        n = len(names)
        self.scores: list[int] = [0] * n
        self.active: list[bool] = [True] * n
        # A game of a fixed number of rounds (a stage of a game night, engine/night_book.py):
        # rounds span[0] to span[1], numbered as the night numbers them; the game ends with the
        # last, whatever the totals (the target plays no part). None: a game to the target.
        self.span = span
        self.round_no = span[0] if span is not None else 1
        self.dealer = 0
        self.phase = "deal"
        self.playing: TableRound | None = None  # the round being played (or scored)
        self.fired: list[int] = [0] * n  # cards the box fired at each seat this round
        self.presses: list[int] = [0] * n  # presses (fire events) of each seat this round
        self.fired_game: list[int] = [0] * n
        self.presses_game: list[int] = [0] * n
        self.hands_left: dict[int, list[str]] = {}
        self.rounds: list[dict[str, Any]] = []
        self.game_winners: list[int] = []
        self.game_losers: list[int] = []

    # -- seats ------------------------------------------------------------------------------
    def name(self, seat: int) -> str:
        """The player's name at `seat`."""
        return self.players[seat]

    def seat_of(self, name: str) -> int:
        """The seat of a player named `name` (case-insensitive); RuleError if none."""
        key = name.strip().lower()
        for seat, player in enumerate(self.players):
            if player.lower() == key:
                return seat
        raise RuleError(
            _("no player called `{name}`: players are {players}").format(
                name=name, players=", ".join(self.players)
            )
        )

    def active_seats(self) -> list[int]:
        """Seats still in the game (all but eliminated players)."""
        return [s for s in range(len(self.players)) if self.active[s]]

    # -- the round, read ---------------------------------------------------------------------
    @property
    def round(self) -> BlindRound | None:
        """The round on hand counts (None before the first card and once a round is scored)."""
        return self.playing.blind if self.playing is not None else None

    @property
    def taking(self) -> int | None:
        """The seat that said `hit` (Attack) or `draw` (classic) and waits for the box."""
        return self.playing.taking if self.playing is not None else None

    @property
    def wd4_color(self) -> str | None:
        """The colour in play before the last Wild Draw Four."""
        return self.playing.wd4_color if self.playing is not None else None

    @property
    def hand(self) -> list[int]:
        """How many cards each seat holds (by the referee's count)."""
        return self.round.counts if self.round is not None else [0] * len(self.players)

    @property
    def turn(self) -> int:
        """Whose turn it is (once obligations are served)."""
        return self.round.turn if self.round is not None else self.dealer

    @property
    def color(self) -> str | None:
        """The colour in play."""
        return self.round.color if self.round is not None else None

    @property
    def top(self) -> str | None:
        """The card on the discard pile, in notation."""
        return str(self.round.top) if self.round is not None else None

    @property
    def wd4(self) -> dict[str, Any] | None:
        """A Wild Draw Four that may be challenged now: {"by", "color"}."""
        rnd = self.round
        if rnd is None or not rnd.challengeable():
            return None
        return {"by": rnd.wd4_by, "color": self.wd4_color}

    @property
    def multi(self) -> bool:
        """Several cards may go down at once now (multi_play, while a round is played)."""
        return self.rules.multi_play and self.phase == "play"

    def may_play_taken(self) -> bool:
        """The player to move has hit or drawn and may play what came, or pass."""
        return self.round is not None and self.round.fired_play

    # -- what the box should do ------------------------------------------------------------
    def hitter(self) -> int | None:
        """The seat the launcher owes cards now (presses it, in Attack), or None."""
        if self.phase != "play" or self.playing is None:
            return None
        return self.playing.hitter()

    def dispense_due(self) -> tuple[int, int] | None:
        """Classic: (seat, cards) the launcher must dispense now, or None (nothing owed, or a
        penalty its victim may still answer or challenge)."""
        if self.phase != "play" or self.playing is None:
            return None
        return self.playing.dispense_due()

    # -- round start ------------------------------------------------------------------------
    def set_dealer(self, seat: int) -> list[Outcome]:
        """Choose who deals this round (before the first card is turned up)."""
        if self.phase != "deal":
            raise RuleError(_("the dealer can only change before the first card is turned up"))
        if not self.active[seat]:
            raise RuleError(
                _("{player} is out of the game and cannot deal").format(player=self.name(seat))
            )
        self.dealer = seat
        return [DealerSet(seat, self.round_no)]

    def start_round(self, card: Card, color: str | None = None) -> list[Outcome]:
        """The dealer turned up `card`; for a wild, `color` is what the first player names."""
        if self.phase != "deal":
            raise RuleError(_("a round is already under way"))
        n = len(self.players)
        out = [s for s in range(n) if not self.active[s]]
        self.playing, told = TableRound.deal(
            self.players,
            self.deck,
            self.rules,
            dealer=self.dealer,
            top=card,
            color=color,
            out=out,
            knockout=self.mode == "knockout",
        )
        self.fired = [0] * n
        self.presses = [0] * n
        self.hands_left = {}
        self.phase = "play"
        return [RoundStarted(self.round_no, self.dealer, card), *told]

    # -- moves ------------------------------------------------------------------------------
    def play(
        self,
        card: Card | Sequence[Card],
        *,
        color: str | None = None,
        target: int | None = None,
        discarded: int = 0,
        uno: bool = False,
        seat: int | None = None,
    ) -> list[Outcome]:
        """The seat the round waits for plays `card` (several cards with multi_play); `seat` is
        given for a jump-in (out of turn).

        `color` names the next colour for a wild (or picks one of several colours played);
        `target` is the seat a `WAA` aims at or a `TH` trades with; `discarded` is how many more
        cards of its colour went down with a `DA`; `uno` says the player called UNO with it.
        """
        cards = (card,) if isinstance(card, Card) else tuple(card)
        told = self._playing().play(
            cards, color=color, target=target, discarded=discarded, uno=uno, seat=seat
        )
        return told + self._maybe_end_round()

    def hit(self) -> list[Outcome]:
        """Attack: the player whose turn it is hits the launcher once (the next press)."""
        return self._playing().hit()

    def draw(self) -> list[Outcome]:
        """Classic: the player whose turn it is draws one card (dispensed by the launcher), then
        may play it or `pass`. Typed by the victim of a Wild Draw Four (or, with stacking, of a
        Draw Two), it takes the cards instead of answering."""
        return self._playing().draw()

    def challenge(self, legal: bool) -> list[Outcome]:
        """Classic: the victim of a Wild Draw Four challenges it; `legal` is the table's answer
        (the player held no card of the colour in play). Legal: the challenger draws 6 and is
        skipped; not legal: the player who played it draws 4 and the challenger keeps the turn."""
        return self._playing().challenge(legal)

    def pass_turn(self) -> list[Outcome]:
        """Decline the extra card after `R`/`S`, or keep what a hit or draw brought."""
        return self._playing().pass_turn()

    def press(self, ejected: int, note: PressNote | None = None) -> list[Outcome]:
        """The box fired `ejected` cards at the seat that must hit (one press) or dispensed them
        (classic); `note` says which press or dispense it was (the box's event)."""
        told = self._playing().press(ejected, note)
        for took in told:
            if isinstance(took, Took):
                self._tally(took.seat, took.cards, press=True)
        return told + self._maybe_end_round()

    def stray(self, seat: int, cards: int) -> list[Outcome]:
        """`cards` slipped out of the box after `seat`'s last burst was reported: they go to
        that player (RULES.md: cards left sticking out go to the player who hit)."""
        if cards < 1:
            raise RuleError(_("a stray is 1 card or more, not {count}").format(count=cards))
        if self.phase != "play" or self.playing is None:
            return [Stray(seat, cards, None)]
        self._tally(seat, cards, press=False)
        return self.playing.stray(seat, cards)

    def set_hand(self, seat: int, cards: int) -> list[Outcome]:
        """Correct the tracked size of `seat`'s hand (a card dropped, a miscount at the table)."""
        playing = self._playing()
        self._need_active(seat)
        return playing.set_hand(seat, cards)

    def call_uno(self, seat: int | None = None) -> list[Outcome]:
        """A player says UNO. With one or two cards it is a call; with three or more it is a
        false call, which costs `uno_penalty` (RULES.md decisions). Without a name: the player
        just down to one card, else the player to move if they hold two."""
        playing = self._playing()
        if seat is not None:
            self._need_active(seat)
        return playing.call_uno(seat)

    def catch(self, seat: int, accuser: int | None = None) -> list[Outcome]:
        """`accuser` says `seat` did not call UNO in time. Caught: `seat` owes `uno_penalty`. A
        player who does not hold one card (or called UNO) was accused wrongly: the accuser owes
        it (name them: `catch NAME BY`). Too late (the next player started): refused."""
        return self._playing().catch(seat, accuser)

    # -- round end ----------------------------------------------------------------------------
    def to_enter(self) -> list[int]:
        """Seats whose cards left in hand are still to be entered (phase ``score``)."""
        if self.phase != "score" or self.round is None or self.mode == "knockout":
            return []  # a knockout round is decided by who went out, not by points
        won = self.round.winner
        return [s for s in self.active_seats() if s != won and s not in self.hands_left]

    def enter_hand(self, seat: int, cards: Sequence[Card], *, force: bool = False) -> list[Outcome]:
        """The cards left in `seat`'s hand at the end of the round. The count must match what the
        referee tracked unless `force`; the whole table may not hold more copies than the deck."""
        if self.phase != "score":
            raise RuleError(_("hands are entered when a round is over"))
        if seat not in self.to_enter():
            raise RuleError(_("{player}'s hand is not asked for").format(player=self.name(seat)))
        _check_hand_left(self, seat, cards, force)
        self.hands_left[seat] = [str(c) for c in cards]
        told: list[Outcome] = [HandEntered(seat, self.deck.points_of(cards))]
        if not self.to_enter():
            told += _score_round(self)
        return told

    def team_of(self, seat: int) -> int:
        """Teams mode: the team of `seat` (partners sit apart, every `teams`-th seat)."""
        return team_of(seat, self.teams)

    @property
    def chips(self) -> list[int] | None:
        """Chips mode: the chips each player holds (the stake, `target`, plus what they won)."""
        if self.mode != "chips":
            return None
        return [self.target + s for s in self.scores]

    # -- data -------------------------------------------------------------------------------
    def copy(self) -> Referee:
        """An independent copy (to try a move on)."""
        new = copy.copy(self)
        for key in ("scores", "active", "fired", "presses", "fired_game", "presses_game"):
            setattr(new, key, list(getattr(self, key)))
        new.hands_left = {k: list(v) for k, v in self.hands_left.items()}
        new.rounds = list(self.rounds)
        new.game_winners = list(self.game_winners)
        new.game_losers = list(self.game_losers)
        new.playing = self.playing.copy() if self.playing is not None else None
        return new

    def serve_first(self, seat: int) -> None:
        """Classic: the cards of a dispense sent for `seat` came while another obligation was
        put in front (a UNO penalty typed meanwhile): serve `seat`'s draw first, as it was."""
        if self.round is not None:
            self.round.to_front(seat)

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to resume the game, as JSON-able data (the state file's
        `referee`, read back by engine/table/state_file.py)."""
        return {
            "version": STATE_VERSION,
            "players": list(self.players),
            "deck": self.deck_name,
            "mode": self.mode,
            "target": self.target,
            "teams": self.teams,
            "span": list(self.span) if self.span is not None else None,
            "options": dict(self.options),
            "scores": list(self.scores),
            "active": list(self.active),
            "round": self.round_no,
            "dealer": self.dealer,
            "phase": self.phase,
            "fired": list(self.fired),
            "presses": list(self.presses),
            "fired_game": list(self.fired_game),
            "presses_game": list(self.presses_game),
            "play": self.round.state() if self.round is not None else None,
            "taking": self.taking,
            "wd4_color": self.wd4_color,
            "hands_left": {str(k): list(v) for k, v in self.hands_left.items()},
            "rounds": copy.deepcopy(self.rounds),
            "game_winners": list(self.game_winners),
            "game_losers": list(self.game_losers),
        }

    # -- internals --------------------------------------------------------------------------
    def _need_active(self, seat: int) -> None:
        if not self.active[seat]:
            raise RuleError(_("{player} is out of the game").format(player=self.name(seat)))

    def _playing(self) -> TableRound:
        """The round being played; RuleError saying what comes first in another phase."""
        if self.phase != "play":
            raise RuleError(self._phase_reason())
        assert self.playing is not None
        return self.playing

    def _phase_reason(self) -> str:
        if self.phase == "deal":
            return _("round {round} has not started: type the card turned up").format(
                round=self.round_no
            )
        if self.phase == "score":
            return _("the round is over: enter the cards left in each hand")
        if self.phase == "over":
            return _("the game is over")
        return _("not now")

    def _tally(self, seat: int, cards: int, *, press: bool) -> None:
        """Count what the box fired at `seat` (one press, or a card that slipped out)."""
        self.fired[seat] += cards
        self.fired_game[seat] += cards
        if press:
            self.presses[seat] += 1
            self.presses_game[seat] += 1

    def _maybe_end_round(self) -> list[Outcome]:
        rnd = self.round
        if rnd is None or not rnd.over or self.phase != "play":
            return []
        self.phase = "score"
        assert self.playing is not None
        self.playing.taking = None
        told: list[Outcome] = [RoundOver(self.round_no, rnd.winner or 0, rnd.loser)]
        if not self.to_enter():  # knockout (no hands to count), or nobody else holds cards
            told += _score_round(self)
        return told


def _score_round(ref: Referee) -> list[Outcome]:
    """Score the round just over (engine/scoring.py: the mode's gains and verdict), and say
    what comes next: the next deal, or the game's result."""
    rnd = ref.round
    assert rnd is not None and rnd.winner is not None
    won = rnd.winner
    points = [0] * len(ref.players)
    for seat, cards in ref.hands_left.items():
        points[int(seat)] = ref.deck.points_of(parse_card(c) for c in cards)
    gained = round_gains(ref.mode, won, points, ref.team_of, scores=ref.scores, stake=ref.target)
    for s, g in enumerate(gained):
        ref.scores[s] += g
    scored: dict[str, Any] = {
        "round": ref.round_no,
        "winner": won,
        "points": points,
        "gained": gained,
        "fired": list(ref.fired),
        "presses": list(ref.presses),
    }
    if ref.mode == "knockout":
        scored.update(finished=list(rnd.finished), loser=rnd.loser)
    ref.rounds.append(scored)
    # A knockout round scores nothing: its result is who went out and who was left.
    told: list[Outcome] = (
        [] if ref.mode == "knockout" else [RoundScored(ref.round_no, won, tuple(gained))]
    )
    if ref.span is not None and ref.round_no < ref.span[1]:
        verdict = Verdict()  # a game of so many rounds: not over before its last
    else:
        verdict = judge(
            ref.mode,
            ref.scores,
            ref.target,
            ref.active_seats(),
            ref.team_of,
            finished=rnd.finished,
            loser=rnd.loser,
            final=ref.span is not None,
        )
    for s in verdict.gone:
        ref.active[s] = False
        told.append(PlayerOut(s, ref.target))
    ref.game_winners = list(verdict.winners)
    ref.game_losers = list(verdict.losers)
    ref.playing = None
    if verdict.over:
        ref.phase = "over"
        told.append(GameOver(verdict.winners, verdict.losers))
    else:
        ref.round_no += 1
        ref.dealer = won if ref.active[won] else ref.active_seats()[0]
        ref.phase = "deal"
        told.append(NextDeal(ref.round_no, ref.dealer))
    return told


def _check_hand_left(ref: Referee, seat: int, cards: Sequence[Card], force: bool) -> None:
    """RuleError unless `cards` can be what `seat` holds at the round's end: cards of the deck,
    as many as the referee counted (unless `force`), and, with the hands entered before, no
    more copies of a card than the deck has."""
    for card in cards:
        if card not in ref.deck.counts:
            raise RuleError(
                _("`{card}` is not in the {deck} deck").format(card=card, deck=ref.deck.name)
            )
    if len(cards) != ref.hand[seat] and not force:
        raise RuleError(
            _(
                "{player} should hold {cards}, got {count}: enter them all (end the line with ! "
                "to overrule)"
            ).format(player=ref.name(seat), cards=plural(ref.hand[seat], "card"), count=len(cards))
        )
    seen = Counter(parse_card(c) for hand in ref.hands_left.values() for c in hand)
    seen.update(cards)
    for card, count in seen.items():
        if count > ref.deck.counts[card]:
            raise RuleError(
                _("the {deck} deck has {most} x {card}, the hands entered hold {count}").format(
                    deck=ref.deck.name, most=ref.deck.counts[card], card=card, count=count
                )
            )


def _checked_game(
    names: list[str],
    deck: str,
    mode: str,
    target: int,
    options: dict[str, object] | None,
    teams: int = TEAMS,
) -> tuple[Deck, Rules]:
    """The deck and rules of a new game of `names`; InputError naming what cannot be (a name,
    the mode, the target, the teams, the deck, a rule option, a deck too small for the
    hands)."""
    check_names(names)
    if mode not in MODES:
        raise InputError(
            _("unknown mode `{mode}`: use {modes}").format(mode=mode, modes=", ".join(MODES))
        )
    if isinstance(teams, bool) or not isinstance(teams, int):
        raise InputError(f"teams = {teams!r}: a whole number of teams")
    if mode != "teams" and teams != TEAMS:
        raise InputError(
            _("{flag} {teams}: the number of teams is for {mode} teams").format(
                flag="--teams", teams=teams, mode="--mode"
            )
        )
    if mode == "teams" and teams_problem(len(names), teams):
        # seed 001 組隊比賽: "兩人或多人組成一隊", teams of two or more partners
        raise InputError(
            _(
                "--teams {teams}: {players} players cannot sit as {teams} teams of two or more "
                "partners each"
            ).format(teams=teams, players=len(names))
        )
    if isinstance(target, bool) or not isinstance(target, int) or target < 1:
        raise InputError(
            _("target = {target!r}: a whole number of points, at least 1").format(target=target)
        )
    if not isinstance(deck, str):
        raise InputError(f"deck = {deck!r}: a preset name or a deck file")
    cards = load_deck(deck)
    if not isinstance(options, dict | None):
        raise InputError(f"options = {options!r}: a table of rule options")
    rules = rules_for(deck if deck in PRESET_NAMES else "attack", len(names), **(options or {}))
    need = rules.hand_size * len(names) + 1
    if cards.total < need:
        raise InputError(
            _(
                "the {deck} deck has {total} cards; {players} players of {size} need at least "
                "{need}"
            ).format(
                deck=cards.name,
                total=cards.total,
                players=len(names),
                size=rules.hand_size,
                need=need,
            )
        )
    return cards, rules
