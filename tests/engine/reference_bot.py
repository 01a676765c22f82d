"""The heuristic bot as it was before it was made faster (engine/bots.py at c085d83), verbatim.

A reference, not a player: tests/engine/test_bots_reference.py plays many seeded whole games with
the fast `engine.bots.HeuristicBot` and asserts on every decision that this one, in the same
position with a random source in the same state, chooses the same action. Do not edit the bot
below to follow a change of the fast one: it pins what "the same decisions" means.
"""

from __future__ import annotations

import random

from engine.cards import Card
from engine.game import Action, Round

# How hard each effect hurts its victim, in "hits" (or drawn cards in classic).
_PAIN = {"S": 1.0, "H2": 2.0, "D2": 2.0, "WH4": 4.0, "WD4": 4.0, "WAA": 2.0, "WHF": 2.5}


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
    """

    name = "heuristic"

    def __init__(self, seed: int | None = 0, *, rng: random.Random | None = None) -> None:
        # Only ties are broken at random; the play itself is deterministic.
        self.rng = rng if rng is not None else random.Random(seed)

    # -- out of turn ------------------------------------------------------------------------

    def react(self, rnd: Round, seat: int) -> Action | None:
        """Call UNO on our last card, catch a player who forgot, jump in when allowed."""
        acts = rnd.legal_actions(seat)
        if not acts:
            return None
        hand = rnd.hands[seat]
        for act in acts:
            if act.kind == "uno" and len(hand) == 1:
                return act
        for act in acts:
            # A catch only counts while the window is open and the target has not called UNO;
            # anything else is a wrong accusation and costs us.
            if act.kind == "catch" and _catchable(rnd, act.target):
                return act
        if seat != rnd.actor:
            for act in acts:
                if act.kind == "play":  # a jump-in: shed a card for free
                    return act
        return None

    # -- on turn ----------------------------------------------------------------------------

    def choose(self, rnd: Round, seat: int) -> Action:
        """The best legal action by the scoring above."""
        acts = rnd.legal_actions(seat)
        if not acts:
            raise ValueError(f"seat {seat} has no legal action")
        hand = rnd.hands[seat]
        plays = [a for a in acts if a.kind == "play"]
        for act in acts:
            if act.kind == "catch" and _catchable(rnd, act.target):
                return act
        if plays and len(hand) == 2 and not rnd.pending:
            # Call UNO before the card that leaves us one (legal on our own turn).
            uno = next((a for a in acts if a.kind == "uno"), None)
            if uno is not None:
                return uno
        if rnd.pending:
            return self._answer_pending(rnd, seat, acts, plays)
        if plays:
            best = self._best_play(rnd, seat, plays)
            if best is not None:
                return best
        for kind in ("hit", "draw", "pass"):
            for act in acts:
                if act.kind == kind:
                    return act
        return acts[0]

    def _answer_pending(
        self, rnd: Round, seat: int, acts: list[Action], plays: list[Action]
    ) -> Action:
        """A pending obligation on us: pass it on by stacking, challenge a likely bluff, or
        take it."""
        if plays:
            best = self._best_play(rnd, seat, plays)
            if best is not None:
                return best
        challenge = next((a for a in acts if a.kind == "challenge"), None)
        if challenge is not None and _bluff_likely(rnd):
            return challenge
        for act in acts:
            if act.kind in ("hit", "draw"):
                return act
        return acts[0]

    def _best_play(self, rnd: Round, seat: int, plays: list[Action]) -> Action | None:
        hand = rnd.hands[seat]
        points = rnd.deck.points
        plain = any(not a.cards[0].is_wild for a in plays)
        best: Action | None = None
        best_score = float("-inf")
        rng = self.rng
        for act in plays:
            score = self._score(rnd, seat, act, hand, points, plain)
            if score is None:
                continue
            score += rng.random() * 1e-3  # break ties at random (seeded)
            if score > best_score:
                best, best_score = act, score
        return best

    def _score(
        self,
        rnd: Round,
        seat: int,
        act: Action,
        hand: list[Card],
        points: dict[Card, int],
        plain: bool,
    ) -> float | None:
        cards = act.cards
        card = cards[0]
        face = rnd.rules.custom_wild_effect if card.face == "WC" else card.face
        rest = list(hand)
        for c in cards:
            rest.remove(c)
        leaving = list(cards)
        if card.face == "DA":
            # Discard All takes every card of its colour with it.
            leaving += [c for c in rest if c.color == card.color]
            rest = [c for c in rest if c.color != card.color]
        if not rest:
            return 1e6  # going out
        score = sum(points[c] for c in leaving) + 12.0 * len(leaving)
        # Keep wilds (the only always-playable cards) while something else will do.
        if card.is_wild and plain:
            score -= 90.0
        # Colour we continue in: the more of it we hold, the easier the next turn.
        named = act.color
        held = sum(1 for c in rest if c.color == named)
        score += 6.0 * held
        victims = _victims(rnd, seat, act, face)
        for victim, pain in victims:
            left = len(rnd.hands[victim])
            urgency = 45.0 if left <= 2 else 20.0 if left <= 4 else 6.0
            score += pain * urgency
        if face == "R" and len(rnd.seats) > 2:
            # Reversing helps when the next player is closer to UNO than the previous one.
            nxt, prev = _neighbour(rnd, seat, 1), _neighbour(rnd, seat, -1)
            score += 8.0 * (len(rnd.hands[prev]) - len(rnd.hands[nxt])) / 2
        if face == "TH":
            target = act.target
            assert target is not None
            gain = len(rest) - len(rnd.hands[target])
            if gain <= 0:
                return None  # never swap for a bigger hand
            score += 40.0 * gain
        if card.face == "WD4" and any(c.color == rnd.color for c in hand):
            # A bluff: a challenge makes us draw four.
            score -= 150.0
        return score


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


def _victims(rnd: Round, seat: int, act: Action, face: str) -> list[tuple[int, float]]:
    """Seats an effect hurts, with how much."""
    if face in ("WAA",):
        assert act.target is not None
        return [(act.target, _PAIN["WAA"])]
    if face == "WAH":
        return [(s, 1.0) for s in rnd.seats if s != seat]
    if face == "R" and len(rnd.seats) == 2 and rnd.rules.two_player_rules:
        return [(_neighbour(rnd, seat, 1), 1.0)]
    pain = _PAIN.get(face)
    if pain is None:
        return []
    return [(_neighbour(rnd, seat, 1), pain * len(act.cards))]
