"""The table referee following a simulated round: what a table tells it of every move.

`Round` (engine/game.py) plays with the hands; the referee (engine/table/referee.py) sees only
what the table tells it: the card played (with its colour, its target, a Discard All's count), what
each press or dispense fired, "pass" when what came does not play, whether a challenged Wild
Draw Four was legal, and at the end the cards left in each hand. `Follower` turns each move of
a round into those calls, as the players at a table would say them, from what the round
recorded of the move (its outcomes, engine/outcomes.py: a card played and what went down with
it, what a press fired): the round must record them (`record=True`).

Two users: the differential test (tests/engine/test_table_differential.py), which checks after
every move of 10,000 bot rounds that the referee agrees with the simulator, and `unoattack demo
--web`, where bots play a round through the mock box and the web page shows the referee
following them (engine/web/demo_web.py).

Every call to the referee goes through `step(change)`: `change(referee)` makes the calls for one
move and returns what the referee says happened (outcomes, engine/outcomes.py). The
differential test runs it on its referee; the web demo runs it as one step of the table session,
so one move is one update of the page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.game import Action, Round
from engine.outcomes import Drew, Fired, Outcome, Played
from engine.table.referee import Referee

__all__ = ["Change", "Follower", "Step"]

Change = Callable[[Referee], list[Outcome]]
Step = Callable[[Change], Any]


class Follower:
    """Tell a referee, through `step`, every move of `rnd` from its deal on.

    Call `facts()` before a move is applied to the round and `moved(act, facts)` after. The
    referee starts the round when it can: at once, or, for a wild turned up, once the first
    player has named its colour (the moves made until then are told after the start, in
    order). `finish()` enters the hands left when the round is over.
    """

    def __init__(self, rnd: Round, step: Step) -> None:
        if not rnd.recording:
            raise ValueError("a round followed by the referee records its outcomes (record=True)")
        self.rnd = rnd
        self.step = step
        self.started = False
        self.first_top = rnd.discard[-1]
        self._buffer: list[tuple[Action, dict[str, Any]]] = []
        step(self._deal)

    # -- moves ---------------------------------------------------------------------------------
    def facts(self) -> dict[str, Any]:
        """What the table knows before a move: whether anything is owed, whether a WD4 was
        legal; and where the round's record stands (what the move adds is read after it)."""
        rnd = self.rnd
        return {
            "pending": bool(rnd.pending),
            "wd4_legal": rnd.wd4_legal,
            "told": len(rnd.outcomes),
        }

    def moved(self, act: Action, facts: dict[str, Any]) -> None:
        """`act` was applied to the round (`facts`: taken just before): tell the referee."""
        rnd = self.rnd
        facts = dict(facts)
        facts["did"] = rnd.outcomes[facts["told"] :]
        facts["may_play"] = rnd.drawn is not None or rnd.fired_play
        if self.started:
            self.step(lambda ref: self._feed(ref, act, facts))
            return
        self._buffer.append((act, facts))
        if rnd.color is not None:
            self.step(self._start)

    def finish(self) -> None:
        """The round is over: enter the cards left in each hand (the referee scores it)."""
        rnd = self.rnd

        def enter(ref: Referee) -> list[Outcome]:
            msgs: list[Outcome] = []
            for seat in ref.to_enter():
                msgs += ref.enter_hand(seat, rnd.hands[seat])
            return msgs

        self.step(enter)

    # -- what the table says ----------------------------------------------------------------------
    def _deal(self, ref: Referee) -> list[Outcome]:
        rnd = self.rnd
        msgs = ref.set_dealer(rnd.dealer) if ref.dealer != rnd.dealer else []
        if not (self.first_top.is_wild and rnd.color is None):
            msgs += self._start(ref)
        # else: the first player has not named the colour yet; the table tells the referee
        # the colour with the card turned up, so it starts once the round knows it.
        return msgs

    def _start(self, ref: Referee) -> list[Outcome]:
        top = self.first_top
        msgs = ref.start_round(top, self.rnd.color if top.is_wild else None)
        self.started = True
        for act, facts in self._buffer:
            msgs += self._feed(ref, act, facts)
        self._buffer.clear()
        return msgs

    def _feed(self, ref: Referee, act: Action, facts: dict[str, Any]) -> list[Outcome]:
        """Tell the referee what the table saw of `act`."""
        seat = act.seat
        if act.kind == "play":
            played = next(o for o in facts["did"] if isinstance(o, Played))
            return ref.play(
                act.cards if len(act.cards) > 1 else act.cards[0],
                color=act.color,
                target=act.target,
                discarded=played.discards,
                seat=seat if played.jump else None,
            )
        if act.kind in ("hit", "draw"):
            return self._feed_take(ref, act, facts)
        if act.kind == "pass":
            return ref.pass_turn()
        if act.kind == "uno":
            return ref.call_uno(seat)
        if act.kind == "catch":
            assert act.target is not None
            return ref.catch(act.target, seat)
        if act.kind == "challenge":
            return ref.challenge(facts["wd4_legal"])
        return []

    @staticmethod
    def _feed_take(ref: Referee, act: Action, facts: dict[str, Any]) -> list[Outcome]:
        seat = act.seat
        fired = sum(o.count for o in facts["did"] if isinstance(o, Fired | Drew) and o.seat == seat)
        msgs: list[Outcome] = []
        if facts["pending"]:
            if ref.classic and ref.round is not None and ref.round.answerable():
                msgs += ref.draw()  # the victim takes the cards instead of answering
                if ref.hitter() is None:
                    return msgs  # nothing left anywhere to draw: the obligation lapsed
            return msgs + ref.press(fired)
        if not ref.classic:
            msgs += ref.hit()
            msgs += ref.press(fired)
        else:
            # One draw of the simulator may be several (draw_until_playable): one card each.
            for _ in range(max(fired, 1)):
                msgs += ref.draw()
                msgs += ref.press(1 if fired else 0)
        if not facts["may_play"] and ref.may_play_taken():
            msgs += ref.pass_turn()  # what came does not play: the player says so
        return msgs
