"""Bot players at a real-cards table, refereed through the web app (`unoattack demo --web`).

They do what people at a table do: hold real cards dealt from the active deck, put down the
ones the referee accepts, press the box's button when the referee says they owe hits, take the
cards the box fires, call UNO (or forget to), catch whoever forgot, reload the launcher from
the discard pile when the box says it is empty, and enter what is left in their hands at the
end of a round. Every move is a command line through `TableService.act`, the same as a tap on
the page.

What they know of the rules they learn from the referee: whether a card may go down now is
asked on a copy of it (`TableService.trial`), what a wild or a WAA still needs is its own
question, who must press is its `hitter`, how many cards came out of the box is its fired
tally. No rule is written here.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from engine.web.table_service import TableService

__all__ = ["TableBots"]

PRESS_TIMEOUT_S = 15.0  # a press the box never answers: try again
MAX_REFUSALS = 40  # refusals in a row before the bots give up (a bug, not a game)


class TableBots:
    """The players of a table and the cards they hold; `run(stop)` plays until the game is
    over (or `stop`). `pace` seconds pass between two moves, so a person can follow."""

    def __init__(
        self,
        service: TableService,
        *,
        seed: int = 1,
        pace: float = 0.6,
        forget_uno: float = 0.15,
        catch: float = 0.7,
        say: Callable[[str], None] | None = None,
        on_round_end: Callable[[int, int], None] | None = None,
    ) -> None:
        self.service = service
        self.rng = random.Random(seed)
        self.pace = pace
        self.forget_uno = forget_uno
        self.catch = catch
        self.say = say or (lambda line: None)
        self.on_round_end = on_round_end  # (round, cards in the launcher) after each round
        table = service.static()
        self.players: list[str] = table["players"]
        self.deck: list[str] = [c["card"] for c in table["cards"] for _ in range(c["copies"])]
        self.points: dict[str, int] = {c["card"]: c["points"] for c in table["cards"]}
        self.wild: set[str] = {c["card"] for c in table["cards"] if c["color"] is None}
        self.color_of: dict[str, str | None] = {c["card"]: c["color"] for c in table["cards"]}
        n = len(self.players)
        self.hands: list[list[str]] = [[] for _ in range(n)]
        self.pile: list[str] = []  # the launcher, next card out first
        self.discard: list[str] = []
        self.fired_seen = [0] * n
        self.last_got: list[str | None] = [None] * n  # the last card each player received
        self.dealt_round: int | None = None
        self.ended_round: int | None = None
        self.refusals = 0
        self.moves = 0
        self.stop: threading.Event | None = None

    # -- the loop -------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Play until the game is over or `stop` is set."""
        self.stop = stop
        while not stop.is_set():
            view = self.service.view()
            if view["referee"]["phase"] == "over":
                self.say(f"game over: {self._winners(view)}")
                return
            version = self.service.version
            moved = self.step(view)
            if moved:
                self.moves += 1
                stop.wait(self.pace)
            else:
                self.service.wait_change(version, 0.5)
            if self.refusals >= MAX_REFUSALS:
                raise RuntimeError(f"the bots are stuck: {self.refusals} refusals in a row")

    def step(self, view: dict[str, Any]) -> bool:
        """One move (True), or nothing to do but wait for the box (False)."""
        ref = view["referee"]
        self._follow(view)
        phase = ref["phase"]
        if phase == "deal":
            return self._deal(view)
        if phase == "score":
            return self._enter_hand(view)
        box = view["box"]
        if box["connected"] and box["state"] == "jammed":
            return self._act("clear")  # the stuck cards are out: carry on
        if box["connected"] and box["state"] == "fault":
            return self._box("reset")
        if box["connected"] and box["state"] == "empty":
            return self._reload()
        hitter = view["hitter"]
        if hitter is not None:
            if view["classic"]:
                if ref["pending"][0].get("open"):
                    return self._act("draw")  # the victim of a WD4 takes the cards
                return False  # the referee dispenses; wait for the box
            return self._press(view, hitter)
        uno = ref["uno"]
        if uno and not uno["called"] and self.rng.random() < self.catch:
            others = [s for s in range(len(self.players)) if s != uno["seat"] and ref["active"][s]]
            if others:
                catcher = self.rng.choice(others)
                return self._act(f"catch {self.players[uno['seat']]} {self.players[catcher]}")
        return self._turn(view, int(ref["turn"]))

    # -- following the table ----------------------------------------------------------------------
    def _follow(self, view: dict[str, Any]) -> None:
        """Give each player the cards the box fired at them (the referee's tallies say how
        many), and follow hand counts that moved between players (a trade)."""
        ref = view["referee"]
        if ref["round"] != self.dealt_round:
            return
        for seat, fired in enumerate(ref["fired"]):
            extra = fired - self.fired_seen[seat]
            if extra > 0:
                got = self.pile[:extra]
                del self.pile[:extra]
                if len(got) < extra:
                    self.say(f"the box fired {extra} cards, the launcher held {len(got)}")
                self.hands[seat].extend(got)
                if got:
                    self.last_got[seat] = got[-1]
            self.fired_seen[seat] = fired
        counts = ref["hand"]
        for a in range(len(counts)):
            for b in range(a + 1, len(counts)):
                mine, theirs = self.hands[a], self.hands[b]
                if counts[a] != len(mine) and (counts[a], counts[b]) == (len(theirs), len(mine)):
                    self.hands[a], self.hands[b] = theirs, mine

    # -- a round's start and end ------------------------------------------------------------------
    def _deal(self, view: dict[str, Any]) -> bool:
        ref = view["referee"]
        if self.dealt_round != ref["round"]:
            cards = list(self.deck)
            self.rng.shuffle(cards)
            size = int(view["rules"]["hand_size"])
            self.hands = [[] for _ in self.players]
            for seat in range(len(self.players)):
                if ref["active"][seat]:
                    self.hands[seat] = cards[:size]
                    del cards[:size]
            self.pile = cards
            self.discard = []
            self.fired_seen = [0] * len(self.players)
            self.dealt_round = ref["round"]
        card = self.pile.pop(0)
        line = self._complete(card, seat=int(ref["dealer"]), view=view)
        if line is None:  # the referee says it goes back (TH, WD4): turn up another
            self.pile.insert(self.rng.randrange(len(self.pile) + 1), card)
            return True
        if not self._act(line):
            self.pile.insert(0, card)
            return True
        self.discard.append(card)
        if view["box"]["connected"]:
            self._act(f"load {len(self.pile)}")  # the launcher holds the rest of the deck
        return True

    def _enter_hand(self, view: dict[str, Any]) -> bool:
        ref = view["referee"]
        if not view["to_enter"]:
            return False
        seat = int(view["to_enter"][0])
        if self.ended_round != ref["round"]:
            self.ended_round = ref["round"]
            if self.on_round_end is not None:
                self.on_round_end(int(ref["round"]), len(self.pile))
        cards = self.hands[seat]
        line = " ".join(cards) if cards else "-"
        if len(cards) != ref["hand"][seat]:
            counted = ref["hand"][seat]
            self.say(f"{self.players[seat]} holds {len(cards)}, the referee counts {counted}")
            line += " !"
        return self._act(line)

    def _reload(self) -> bool:
        """The launcher is empty: everything but the top card goes back into it."""
        back, self.discard = self.discard[:-1], self.discard[-1:]
        self.rng.shuffle(back)
        self.pile.extend(back)
        return self._act(f"load {len(self.pile)}")

    # -- a turn ---------------------------------------------------------------------------------
    def _press(self, view: dict[str, Any], hitter: int) -> bool:
        before = view["referee"]["presses"][hitter]
        version = self.service.version
        if not self._act("press"):
            return True
        deadline = PRESS_TIMEOUT_S
        while deadline > 0 and not (self.stop and self.stop.is_set()):
            version = self.service.wait_change(version, 0.5)
            deadline -= 0.5
            now = self.service.view()
            if now["referee"]["presses"][hitter] != before or now["hitter"] != hitter:
                return True
            if now["box"]["state"] in ("jammed", "empty", "fault"):
                return True
        return True

    def _turn(self, view: dict[str, Any], seat: int) -> bool:
        ref = view["referee"]
        hand = self.hands[seat]
        if not hand:
            return False
        drawn = ref.get("drawn") == seat
        bonus = bool(ref.get("bonus")) and ref["bonus"]["seat"] == seat
        options = sorted(set(hand))
        if drawn:  # only the card just drawn may go down
            options = [c for c in options if c == self.last_got[seat]]
        plays = []
        for card in options:
            line = self._complete(card, seat=seat, view=view)
            if line is not None:
                plays.append((card, line))
        if plays:
            # Keep the wilds for later, shed points first.
            plays.sort(key=lambda p: (p[0] in self.wild, -self.points[p[0]], self.rng.random()))
            card, line = plays[0]
            if self._act(line):
                hand.remove(card)
                self.discard.append(card)
            return True
        if drawn or bonus:
            return self._act("pass")
        return self._act("draw" if view["classic"] else "hit")

    def _complete(self, card: str, *, seat: int, view: dict[str, Any]) -> str | None:
        """The line that puts `card` down, with what the referee asks for, or None if it
        refuses it now."""
        line = card
        hand = self.hands[seat]
        # A player putting down their second-to-last card says UNO (or forgets).
        if view["referee"]["phase"] == "play" and len(hand) == 2:
            line += "" if self.rng.random() < self.forget_uno else " uno"
        for _ in range(5):
            result, question = self.service.trial(line)
            if result == "applied":
                return line
            if result == "refused":
                return None
            choices, _ = self.service.choices(line, question)
            word = self._answer(choices, card, seat, view)
            if word is None:
                return None
            line = f"{line} {word}"
        return None

    def _answer(
        self, choices: dict[str, list[str]], card: str, seat: int, view: dict[str, Any]
    ) -> str | None:
        if "colour" in choices:
            rest = [self.color_of[c] for c in self.hands[seat] if c != card and self.color_of[c]]
            counts = Counter(rest)
            colours = choices["colour"]
            return max(colours, key=lambda c: (counts.get(c, 0), self.rng.random()))
        if "player" in choices:
            counts = view["referee"]["hand"]
            names = choices["player"]
            return min(names, key=lambda n: (counts[self.players.index(n)], self.rng.random()))
        if "number" in choices:
            return choices["number"][0]
        if "answer" in choices:
            return choices["answer"][-1]
        return None

    def _box(self, op: str) -> bool:
        outcome = self.service.box_op(op)
        if not outcome.ok:
            self.refusals += 1
            self.say(f"box {op}: {outcome.error}")
        return outcome.ok

    def _act(self, line: str) -> bool:
        outcome = self.service.act(line)
        if outcome.ok:
            self.refusals = 0
            return True
        self.refusals += 1
        self.say(f"refused `{line}`: {outcome.error or outcome.ask}")
        return False

    def _winners(self, view: dict[str, Any]) -> str:
        ref = view["referee"]
        names = [ref["players"][s] for s in ref["game_winners"]]
        scores = ", ".join(f"{p} {s}" for p, s in zip(ref["players"], ref["scores"], strict=True))
        return f"{' & '.join(names)} ({scores})"
