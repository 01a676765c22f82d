"""Bots: players for simulations, the demo and tests.

A bot only ever picks one of `round.legal_actions(seat)`. Two entry points:

- `choose(round, seat)`: the round waits for `seat` (it is `round.actor`); return an action.
- `react(round, seat)`: a chance to act out of turn (call UNO, catch a player who forgot, jump
  in); return an action or None to let the moment pass.

`RandomBot` picks uniformly at random (seeded). `HeuristicBot` plays the way a decent human does:
shed high points, aim attacks at whoever is close to UNO, keep wilds until they are needed, name the
colour it holds most, call UNO, catch others, challenge a Wild Draw Four when a bluff is likely.
In teams mode it plays for its team: the round tells it the team of each seat (`Round.team`).
`SoloBot` is the heuristic bot playing as if it had no partners: the yardstick of team play.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from engine.cards import Card
from engine.effects import EFFECTS, Effect, effect_of
from engine.game import Action, Round

__all__ = ["BOTS", "Bot", "HeuristicBot", "RandomBot", "SoloBot", "make_bot"]

_CALLS = frozenset({"uno", "catch"})


class Bot(Protocol):
    """A player: picks legal actions."""

    def choose(self, rnd: Round, seat: int) -> Action:
        """The action `seat` takes now that the round waits for it."""
        ...

    def react(self, rnd: Round, seat: int) -> Action | None:
        """An out-of-turn action, or None."""
        ...


class RandomBot:
    """A random legal player (seeded).

    On its turn it picks uniformly among the legal moves: plays, hit/draw, pass, challenge. UNO
    calls and catches are not moves but reactions: when a player has just gone down to one card
    it calls or accuses at random (`react`). Offering accusations as moves would let a random
    player accuse without end, each wrong accusation adding hits faster than it can serve them,
    and the round would never finish.
    """

    name = "random"

    def __init__(self, seed: int | None = 0, *, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random(seed)
        self._below = _below_for(self.rng)
        # A plain Random's getrandbits, for choose() to draw inline (see _below_for).
        self._bits = self.rng.getrandbits if type(self.rng) is random.Random else None

    def choose(self, rnd: Round, seat: int) -> Action:
        """A legal move, each equally likely."""
        pick = rnd.legal_actions(seat)
        n = len(pick)
        if not n:
            raise ValueError(f"seat {seat} has no legal action")
        # legal_actions lists the calls (UNO, catch) before everything else: when the first
        # action is not one, there is none to leave out (most moves; no list to build).
        if pick[0].kind in _CALLS:
            pick = [a for a in pick if a.kind not in _CALLS] or pick
            n = len(pick)
        bits = self._bits
        if bits is None:
            return pick[self._below(n)]
        # _below_for's draw, inline: this runs for every move of a random player.
        k = n.bit_length()
        r = bits(k)
        while r >= n:
            r = bits(k)
        return pick[r]

    def react(self, rnd: Round, seat: int) -> Action | None:
        """Uniform over doing nothing and the out-of-turn actions the moment allows: UNO calls
        and catches while someone has just gone down to one card, jump-ins."""
        window = rnd.window is not None
        jump = seat != rnd.actor
        # Neither a call nor a jump-in possible: no need to list the legal actions (the
        # player on turn may have hundreds of plays), the same draw below.
        acts = (
            [
                a
                for a in rnd.legal_actions(seat)
                if (a.kind in _CALLS and window) or (a.kind == "play" and jump)
            ]
            if window or jump
            else []
        )
        i = self._below(len(acts) + 1)
        return acts[i] if i < len(acts) else None


def _below_for(rng: random.Random) -> Callable[[int], int]:
    """`rng.randrange(n)` for n >= 1, with the same draws and without its argument checks.

    A plain `random.Random` draws `randrange(n)` as `getrandbits(n.bit_length())` until below
    `n` (the same in Python 3.11 to 3.13); doing that here saves two Python calls per move of a
    random player. Any other generator keeps its own `randrange`.
    """
    if type(rng) is not random.Random:
        return rng.randrange
    getrandbits = rng.getrandbits

    def below(n: int) -> int:
        k = n.bit_length()
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return r

    return below


# What a Hit-Fire costs its victim on average, in hits: presses until one fires.
HIT_FIRE_PAIN = 2.5


def _pain(effect: Effect) -> float:
    """How hard `effect` hurts its victim, in hits (or drawn cards in classic): what it makes
    them owe, or the turns it skips."""
    if effect.until_fire:
        return HIT_FIRE_PAIN
    if effect.owes is not None:
        return effect.take
    return effect.skips


def _hurts(effect: Effect) -> bool:
    """Whether playing `effect` changes anything for another player (skips, owes, reverses)."""
    return effect.owes is not None or bool(effect.skips) or effect.reverses


# The two read once per face (a bound WC has its face's): a heuristic bot scores every
# candidate play with them, the hottest loop of a simulation.
_PAIN_OF = {face: _pain(effect) for face, effect in EFFECTS.items()}
_HURTS_OF = {face: _hurts(effect) for face, effect in EFFECTS.items()}


class HeuristicBot:
    """A bot that plays well enough to beat `RandomBot` clearly.

    Scoring of each legal play (higher is better):
    - going out wins the round: always first;
    - points and cards shed (Discard All counts the whole colour it takes with it);
    - attacks (S, H2, D2, WH4, WD4, WAA, WHF, WAH) are worth more the closer their victim is to
      UNO; WAA and TH aim at the opponent with the fewest cards;
    - a wild is held back while another play exists (it is the only card that always matches);
    - the colour named is the one the bot holds most (by cards, then points);
    - a Wild Draw Four is not bluffed while the bot holds the colour in play.

    Teams mode (`rnd.team`; seed 001 組隊比賽: a team scores its members' cards, so a partner's
    cards count against the bot's own team): what hurts a partner counts against the play as much
    as it would count for it against an opponent (WAH hits both; WAA and TH pick an opponent:
    never a trade with a partner, whose hand is the team's either way); a card that passes over
    the next player (Skip, Draw Two, Hit 2, the wild fours) or a Reverse that hands the turn to a
    partner is worth what it is worth to take it from an opponent as close to going out (it
    helps the partner go out), and one that takes the turn from a partner costs as much; a
    partner is never caught for a missed UNO nor challenged. `teamwork=False` plays
    as if every seat were an opponent (`SoloBot`, the bot before it knew teams).

    Speed: a simulation asks this bot for nearly every move, so `_best_play` counts the hand once
    (cards and points per colour) and scores each play from those counts instead of building
    the hand left after it. Every score is a sum of whole and half numbers, exact in floating
    point in any order, and the tie-break draws one `random()` per scored play in the order the
    plays are offered, so the choices are those of the plain version kept in
    tests/engine/reference_bot.py (a test compares them on every decision of many games).
    """

    name = "heuristic"

    def __init__(
        self, seed: int | None = 0, *, rng: random.Random | None = None, teamwork: bool = True
    ) -> None:
        # Only ties are broken at random; the play itself is deterministic.
        self.rng = rng if rng is not None else random.Random(seed)
        self.teamwork = teamwork

    def _team(self, rnd: Round) -> tuple[int, ...] | None:
        """The team of each seat when the bot plays for a team, else None."""
        return rnd.team if self.teamwork else None

    # -- out of turn ------------------------------------------------------------------------

    def react(self, rnd: Round, seat: int) -> Action | None:
        """Call UNO on our last card, catch a player who forgot, jump in when allowed."""
        one = len(rnd.hands[seat]) == 1
        window = rnd.window
        jump = seat != rnd.actor
        if not (one or window is not None or jump):
            return None  # nothing below could apply: no need to list the legal actions
        acts = rnd.legal_actions(seat)
        if one:
            for act in acts:
                if act.kind == "uno":
                    return act
        if window is not None:
            for act in acts:
                # A catch only counts while the window is open and the target has not called
                # UNO; anything else is a wrong accusation and costs us.
                if (
                    act.kind == "catch"
                    and act.target == window
                    and _catchable(rnd, window)
                    and not _partners(self._team(rnd), seat, window)
                ):
                    return act
        if jump:
            for act in acts:
                if act.kind == "play":  # a jump-in: shed a card for free
                    return act
        return None

    # -- on turn ----------------------------------------------------------------------------

    def choose(self, rnd: Round, seat: int) -> Action:
        """The best legal action by the scoring above."""
        acts = rnd.legal_actions(seat)
        if len(acts) == 1 and acts[0].kind != "play":
            return acts[0]  # a forced move (a hit owed, say): every rule below picks it
        if not acts:
            raise ValueError(f"seat {seat} has no legal action")
        window = rnd.window
        plays: list[Action] = []
        uno = challenge = hit_or_draw = None
        # The first hit, draw and pass offered, in that order of preference.
        takes: list[Action | None] = [None, None, None]
        for act in acts:
            kind = act.kind
            if kind == "play":
                plays.append(act)
            elif kind == "catch":
                if (
                    window is not None
                    and act.target == window
                    and _catchable(rnd, window)
                    and not _partners(self._team(rnd), seat, window)
                ):
                    return act
            elif kind == "uno":
                if uno is None:
                    uno = act
            elif kind == "challenge":
                if challenge is None:
                    challenge = act
            else:
                i = _TAKE_ORDER.get(kind)
                if i is not None and takes[i] is None:
                    takes[i] = act
                    if i < 2 and hit_or_draw is None:
                        hit_or_draw = act
        pending = rnd.pending
        if plays and not pending and uno is not None and len(rnd.hands[seat]) == 2:
            # Call UNO before the card that leaves us one (legal on our own turn).
            return uno
        if plays:
            if len(plays) == 1:
                # One play: whatever it scores it is chosen, unless it is a trade refused.
                act = plays[0]
                face = act.cards[0].face
                if face != "TH" and (face != "WC" or rnd.rules.custom_wild_effect != "TH"):
                    self.rng.random()  # its tie-break draw, as if scored
                    return act
            best = self._best_play(rnd, seat, plays, rnd.team if self.teamwork else None)
            if best is not None:
                return best
        if pending:
            # An obligation on us that no play passes on: challenge a likely bluff, or take it.
            if (
                challenge is not None
                and _bluff_likely(rnd)
                and not _partners(self._team(rnd), seat, rnd.wd4_by)
            ):
                return challenge
            return hit_or_draw if hit_or_draw is not None else acts[0]
        for take in takes:
            if take is not None:
                return take
        return acts[0]

    def _best_play(
        self, rnd: Round, seat: int, plays: list[Action], team: tuple[int, ...] | None
    ) -> Action | None:
        """The best scored play (ties broken at random), or None when every play is refused.
        `team`: the team of each seat when the bot plays for one (see the class)."""
        hand = rnd.hands[seat]
        n = len(hand)
        points = rnd.deck.points
        # The colour of each card (None: wild), counted per colour named (list.count is C).
        colors = [c.color for c in hand]
        plain = False
        for act in plays:
            if act.cards[0].color is not None:
                plain = True
                break
        wild_effect = rnd.rules.custom_wild_effect
        hands = rnd.hands
        # `part`: the score of playing `last` alone but for the colour held after it and what
        # depends on the target; GOING_OUT when it is the last card (or takes the last ones
        # with it). A card's plays (one per colour, per target) come one after another, so it is
        # worked out once per card; were they apart it would only be worked out again.
        last: Card | None = None
        part = 0.0
        best: Action | None = None
        best_score = float("-inf")
        random_ = self.rng.random
        for act in plays:
            cards = act.cards
            card = cards[0]
            if len(cards) == 1:
                if card is not last:
                    last = card
                    if n > 1 and card.face in _PLAIN_FACES:
                        # Nothing but the points and the card shed (a wild: kept if it can be).
                        part = points[card] + 12.0
                        if plain and card.color is None:
                            part -= 90.0
                    else:
                        part = _part(rnd, seat, card, n, colors, points, plain, team)
                if part == GOING_OUT:
                    score = part
                else:
                    named = act.color
                    held = colors.count(named)
                    if card.color == named:  # the card itself (DA: all of its colour) leaves
                        whole = card.face == "DA" and not rnd.rules.discard_all_choice
                        held = 0 if whole else held - 1
                    score = part + 6.0 * held
                    target = act.target
                    if target is not None:
                        effect = effect_of(card.face, wild_effect)
                        if effect.owes == "target":
                            pain = _PAIN_OF[effect.face] * _urgency(len(hands[target]))
                            score += pain if team is None else pain * _side(team, seat, target)
                        elif effect.swaps_hands:
                            gain = n - 1 - len(hands[target])
                            if gain <= 0 or _partners(team, seat, target):
                                continue  # never swap for a bigger hand, nor with a partner
                            score += 40.0 * gain
            else:
                many = self._score_many(rnd, seat, act, hand, points, plain, team)
                if many is None:
                    continue
                score = many
            score += random_() * 1e-3  # break ties at random (seeded)
            if score > best_score:
                best, best_score = act, score
        return best

    def _score_many(
        self,
        rnd: Round,
        seat: int,
        act: Action,
        hand: list[Card],
        points: dict[Card, int],
        plain: bool,
        team: tuple[int, ...] | None,
    ) -> float | None:
        """Score of a play of several cards at once (multi_play, rare): the plain way."""
        cards = act.cards
        card = cards[0]
        effect = effect_of(card.face, rnd.rules.custom_wild_effect)
        rest = list(hand)
        for c in cards:
            rest.remove(c)
        leaving = list(cards)
        if card.face == "DA" and not rnd.rules.discard_all_choice:
            leaving += [c for c in rest if c.color == card.color]
            rest = [c for c in rest if c.color != card.color]
        if not rest:
            return 1e6  # going out
        score = sum(points[c] for c in leaving) + 12.0 * len(leaving)
        if card.is_wild and plain:
            score -= 90.0
        named = act.color
        score += 6.0 * sum(1 for c in rest if c.color == named)
        for victim, pain in _victims(rnd, seat, act, effect):
            score += pain * _urgency(len(rnd.hands[victim])) * _side(team, seat, victim)
        if effect.reverses and len(rnd.seats) > 2:
            score += _reverse_worth(rnd, seat, team)
        elif team is not None and _passes_over(effect):
            score += _skip_worth(rnd, seat, team, effect.skips * len(cards) or 1)
        if effect.swaps_hands:
            target = act.target
            assert target is not None
            gain = len(rest) - len(rnd.hands[target])
            if gain <= 0 or _partners(team, seat, target):
                return None
            score += 40.0 * gain
        if card.face == "WD4" and any(c.color == rnd.color for c in hand):
            score -= 150.0
        return score


# Which take a bot prefers when nothing better is left: hit (attack), draw (classic), pass.
_TAKE_ORDER = {"hit": 0, "draw": 1, "pass": 2}


# The score of going out: above anything else a play can score (those stay within thousands).
GOING_OUT = 1e6
# Faces scored by points and cards shed alone (numbers, W): cards that do nothing but change
# the colour in play (WC plays as what it is bound to).
_PLAIN_FACES = frozenset(
    face
    for face, effect in EFFECTS.items()
    if face != "WC"
    and not (_hurts(effect) or effect.discards_colour or effect.swaps_hands or effect.play_again)
)


def _urgency(left: int) -> float:
    """How much hurting a player with `left` cards is worth, per unit of pain."""
    return 45.0 if left <= 2 else 20.0 if left <= 4 else 6.0


def _part(
    rnd: Round,
    seat: int,
    card: Card,
    n: int,
    colors: list[str | None],
    points: dict[Card, int],
    plain: bool,
    team: tuple[int, ...] | None = None,
) -> float:
    """The score of playing `card` alone from a hand of `n` cards (`colors`: their colours),
    without the colour-held term and what depends on the target (WAA, TH); `team`: the team of
    each seat when the bot plays for one."""
    color = card.color
    face = card.face
    if face == "DA" and not rnd.rules.discard_all_choice:
        # Discard All takes every card of its colour with it; it hurts nobody.
        taken = colors.count(color)
        if n == taken:
            return GOING_OUT
        return sum(points[c] for c in rnd.hands[seat] if c.color == color) + 12.0 * taken
    if n == 1:
        return GOING_OUT
    score = points[card] + 12.0
    if color is None and plain:
        # Keep wilds (the only always-playable cards) while something else will do.
        score -= 90.0
    effect = effect_of(face, rnd.rules.custom_wild_effect)
    if _HURTS_OF[effect.face]:
        hands = rnd.hands
        seats = rnd.seats
        nxt = _neighbour(rnd, seat, 1)
        if effect.owes == "others":
            score += effect.take * sum(
                _urgency(len(hands[s])) * _side(team, seat, s) for s in seats if s != seat
            )
        elif effect.reverses:
            if len(seats) > 2:
                score += _reverse_worth(rnd, seat, team)
            elif rnd.rules.two_player_rules:
                score += _urgency(len(hands[nxt]))  # a skip with two players
        elif effect.owes != "target":  # a target is hurt per target (scored with it)
            pain = _PAIN_OF[effect.face] * _urgency(len(hands[nxt]))
            if team is None:
                score += pain
            else:
                score += pain * _side(team, seat, nxt)
                if _passes_over(effect):
                    score += _skip_worth(rnd, seat, team, effect.skips or 1)
    if card.face == "WD4" and rnd.color in colors:
        # A bluff: a challenge makes us draw four.
        score -= 150.0
    return score


def _partners(team: tuple[int, ...] | None, seat: int, other: int | None) -> bool:
    """Whether `other` is `seat`'s partner (never outside teams mode)."""
    return team is not None and other is not None and other != seat and team[other] == team[seat]


def _side(team: tuple[int, ...] | None, seat: int, other: int) -> float:
    """What hurting `other` is worth to `seat` per unit: 1 for an opponent, -1 for a partner
    (teams mode: the partner's cards count against `seat`'s own team)."""
    return -1.0 if team is not None and team[other] == team[seat] else 1.0


def _partner_turn(rnd: Round, seat: int, team: tuple[int, ...], to: int) -> float:
    """What handing the turn to `to` is worth to `seat` in teams mode: to a partner, as much as
    making an opponent as close to going out lose a turn (the partner may go out); 0 otherwise."""
    return _urgency(len(rnd.hands[to])) if _partners(team, seat, to) else 0.0


def _passes_over(effect: Effect) -> bool:
    """Whether `effect` makes the next player lose the turn: a skip, or what the next player
    owes (they serve it instead of playing)."""
    return bool(effect.skips) or effect.owes == "next"


def _skip_worth(rnd: Round, seat: int, team: tuple[int, ...], skips: int) -> float:
    """Teams mode: what passing over `skips` players is worth for who gets the turn instead of
    the next player (in four seats, two teams, a Skip or a Draw Two hands it to the partner)."""
    seats = rnd.seats
    i = seats.index(seat)
    step = rnd.direction
    nxt = seats[(i + step) % len(seats)]
    to = seats[(i + step * (skips + 1)) % len(seats)]
    return _partner_turn(rnd, seat, team, to) - _partner_turn(rnd, seat, team, nxt)


def _reverse_worth(rnd: Round, seat: int, team: tuple[int, ...] | None) -> float:
    """What reversing the direction is worth (more than two seats): it hands the turn to the
    previous player instead of the next. Between opponents it helps when the next one is closer
    to UNO than the previous one; in teams mode handing the turn to a partner (or taking it from
    one) counts as for a Skip, and a partner's hand is not one to keep from UNO."""
    hands = rnd.hands
    nxt, prev = _neighbour(rnd, seat, 1), _neighbour(rnd, seat, -1)
    if team is None or not (_partners(team, seat, nxt) or _partners(team, seat, prev)):
        return 8.0 * (len(hands[prev]) - len(hands[nxt])) / 2
    return _partner_turn(rnd, seat, team, prev) - _partner_turn(rnd, seat, team, nxt)


def _catchable(rnd: Round, target: int | None) -> bool:
    return (
        target is not None
        and rnd.window == target
        and not rnd.uno_called[target]
        and len(rnd.hands[target]) == 1
    )


def _bluff_likely(rnd: Round) -> bool:
    """Challenge a Wild Draw Four when its player probably held the colour in play.

    With h cards left, the chance they held none of one colour is about (3/4)^h; a challenge that
    fails costs 6 cards against 4, so it pays while that chance is below 2/3 (h >= 2). Wait for
    h >= 3 to be safe against careful players.
    """
    by = rnd.wd4_by
    if by is None:
        return False
    return len(rnd.hands[by]) >= 3


def _neighbour(rnd: Round, seat: int, step: int) -> int:
    seats = rnd.seats
    return seats[(seats.index(seat) + step * rnd.direction) % len(seats)]


def _victims(rnd: Round, seat: int, act: Action, effect: Effect) -> list[tuple[int, float]]:
    """Seats an effect hurts, with how much."""
    if effect.owes == "target":
        assert act.target is not None
        return [(act.target, _pain(effect))]
    if effect.owes == "others":
        return [(s, _pain(effect)) for s in rnd.seats if s != seat]
    if effect.reverses:
        if len(rnd.seats) == 2 and rnd.rules.two_player_rules:
            return [(_neighbour(rnd, seat, 1), 1.0)]  # a skip with two players
        return []
    pain = _pain(effect)
    if not pain:
        return []
    return [(_neighbour(rnd, seat, 1), pain * len(act.cards))]


class SoloBot(HeuristicBot):
    """The heuristic bot playing as if every other seat were an opponent, partners too: in
    teams mode a team of these against a team of `HeuristicBot` shows what team play is worth
    (`sim --mode teams --bots heuristic,solo,heuristic,solo`). Outside teams mode it plays
    exactly as `HeuristicBot`."""

    name = "solo"

    def __init__(self, seed: int | None = 0, *, rng: random.Random | None = None) -> None:
        super().__init__(seed, rng=rng, teamwork=False)


BOTS: dict[str, type[RandomBot] | type[HeuristicBot]] = {
    "heuristic": HeuristicBot,
    "solo": SoloBot,
    "random": RandomBot,
}


def make_bot(name: str, seed: int) -> RandomBot | HeuristicBot:
    """A bot by name (`heuristic`, `solo`, `random`) with its own seeded random source."""
    try:
        cls = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot `{name}`: use {', '.join(BOTS)}") from None
    return cls(seed)
