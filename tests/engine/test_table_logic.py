"""The table referee's own job, without a box: counting presses and cards, what the table must
say because the referee cannot see hands, prompts and questions, undo, saving and reading state.

What the cards do is not tested here again: the rules are `Round`'s (tests/engine/test_rules_*),
and tests/engine/test_table_differential.py shows the referee follows them move for move.
"""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import COLORS, parse_card
from engine.errors import InputError, RuleError
from engine.narrate import Narrator
from engine.outcomes import Outcome, PressNote
from engine.table.cli import run
from engine.table.referee import Referee
from engine.table.session import TableSession
from engine.table.state_file import load_state, read_referee
from engine.table.view import owed, summary


def c(text: str):
    return parse_card(text)


def table(n: int = 3, deck: str = "attack", first: str = "R5", **kw: Any) -> Referee:
    names = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay"][:n]
    if deck == "classic":
        # These tests seat the first player left of the dealer (classic's dealer_plays_first is
        # tested by the rules tests).
        kw["options"] = {"dealer_plays_first": False, **kw.get("options", {})}
    ref = Referee(names, deck=deck, **kw)
    ref.start_round(c(first), "G" if c(first).is_wild else None)
    return ref


def said(ref: Referee, outcomes: list[Outcome]) -> list[str]:
    """What the table says of `outcomes` (the narrator's lines)."""
    return [str(line) for line in Narrator(ref.players, classic=ref.classic).lines(outcomes)]


def rejected(ref: Referee, fn, *args, **kw) -> str:
    """Call an action that must fail; assert nothing changed and return the message."""
    before = ref.to_dict()
    with pytest.raises(RuleError) as info:
        fn(*args, **kw)
    assert ref.to_dict() == before
    return str(info.value)


# -- counting presses and cards --------------------------------------------------------------


def test_each_press_counts_for_the_seat_that_owes_and_gives_it_the_cards():
    ref = table()  # Ann deals, Bob starts
    assert ref.hitter() is None
    ref.play(c("RH2"))
    assert ref.hitter() == 2 and owed(ref) == "2 more hits"
    ref.press(0)
    assert owed(ref) == "1 more hit"
    msgs = said(ref, ref.press(3, PressNote(press=2, streak=1, reason="fired")))
    assert msgs[0] == "Cat takes 3 cards (holds 10) [press 2, dry streak 1]"
    assert ref.hitter() is None
    assert ref.hand[2] == 10 and ref.fired[2] == 3 and ref.presses[2] == 2
    assert ref.fired_game[2] == 3 and ref.presses_game[2] == 2


def test_a_hit_typed_waits_for_one_press_and_nothing_else_meanwhile():
    ref = table()
    ref.hit()
    assert ref.hitter() == 1 and ref.taking == 1 and ref.turn == 1
    assert "Bob is hitting" in rejected(ref, ref.play, c("R7"))
    assert "Bob is hitting" in rejected(ref, ref.hit)
    ref.press(0)
    assert ref.hitter() is None and ref.turn == 2 and ref.hand[1] == 7


def test_a_press_nobody_owes_is_refused():
    ref = table()
    assert "nobody owes a hit" in rejected(ref, ref.press, 2)
    assert "0 or more" in rejected(ref, ref.press, -1)


def test_a_card_slipping_out_goes_to_the_last_hitter():
    ref = table()
    ref.hit()
    ref.press(1)
    assert said(ref, ref.stray(1, 2))[0].startswith("2 cards slipped out after Bob's last hit")
    assert ref.hand[1] == 10 and ref.fired[1] == 3


def test_a_hand_count_can_be_corrected_but_not_to_nothing():
    ref = table()
    assert said(ref, ref.set_hand(2, 9)) == ["Cat holds 9 cards (was 7)"]
    assert "1 to 112" in rejected(ref, ref.set_hand, 2, 0)


# -- what the table says because the referee cannot see hands -------------------------------


def test_refusals_name_the_players_not_seats():
    ref = table()
    ref.play(c("RH2"))
    assert rejected(ref, ref.play, c("R7")) == "Cat must hit 2 more times before playing"
    ref.press(0)
    ref.press(0)
    msg = rejected(ref, ref.play, c("B7"))
    assert msg == "B7 does not go on RH2 (red): play a red card, a H2 or a wild"


def test_discard_all_takes_the_count_the_table_gives():
    ref = table()
    assert "0 to 6" in rejected(ref, ref.play, c("RDA"), discarded=7)
    ref.play(c("RDA"), discarded=3)
    assert ref.hand[1] == 3 and ref.top == "RDA"
    assert "only a DA" in rejected(ref, ref.play, c("R3"), discarded=1)


def test_trade_hands_swaps_the_counts():
    ref = table(deck="attack-1998")
    ref.set_hand(2, 11)
    ref.play(c("RTH"), target=2)
    assert ref.hand[1] == 11 and ref.hand[2] == 6


def test_cards_not_in_the_deck_and_colours_a_card_has_not():
    ref = table()
    assert "not in the attack deck" in rejected(ref, ref.play, c("WD4"), color="R")
    assert "only a wild" in rejected(ref, ref.play, c("R7"), color="G")
    assert "name a colour" in rejected(ref, ref.play, c("W"))


def test_the_card_turned_up_first():
    fresh = Referee(["Ann", "Bob"], deck="attack-1998")
    assert "turn up another" in rejected(fresh, fresh.start_round, c("YTH"))
    assert "names a colour" in rejected(fresh, fresh.start_round, c("W"))
    classic = Referee(["Ann", "Bob"], deck="classic")
    assert "WD4 goes back" in rejected(classic, classic.start_round, c("WD4"), "G")
    # A WC turned up is a plain wild whatever it is bound to (RULES.md decisions).
    bound = Referee(["Ann", "Bob", "Cat"], options={"custom_wild_effect": "WAA"})
    bound.start_round(c("WC"), "B")
    assert bound.hitter() is None and bound.color == "B" and bound.turn == 1


# -- UNO at the table ------------------------------------------------------------------------


def test_uno_without_a_name_is_the_player_down_to_one_or_the_one_holding_two():
    ref = table()
    ref.set_hand(1, 2)
    assert said(ref, ref.call_uno()) == ["Bob calls UNO"]  # Bob, to play, holds two
    ref.play(c("R7"))
    assert summary(ref)["uno"] == {"seat": 1, "called": True}
    assert "who called UNO" in rejected(ref, ref.call_uno)


def test_a_false_uno_call_and_a_wrong_accusation_cost_two_hits():
    ref = table()
    assert said(ref, ref.call_uno(2)) == ["Cat: false UNO call (7 cards), hits 2 times"]
    assert ref.hitter() == 2
    ref.press(0)
    ref.press(0)
    # Without the accuser's name a wrong accusation is refused: the referee must know who.
    assert "catch Ann BY" in rejected(ref, ref.catch, 0)
    assert said(ref, ref.catch(0, 2)) == ["Cat: wrong accusation of Ann, hits 2 times"]
    assert ref.hitter() == 2


def test_a_catch_in_time_and_one_too_late():
    ref = table()
    ref.set_hand(1, 2)
    ref.play(c("R7"))
    assert said(ref, ref.catch(1)) == ["Bob is caught without UNO: hits 2 times"]
    ref.press(0)
    ref.press(0)
    ref.set_hand(2, 2)
    ref.play(c("R8"))  # Cat forgets
    ref.hit()
    ref.press(0)  # Ann's press: the next player has started
    assert "too late to catch Cat" in rejected(ref, ref.catch, 2, 0)


def test_uno_with_a_play_that_leaves_many_cards_is_refused():
    ref = table()
    msg = rejected(ref, ref.play, c("R3"), uno=True)
    assert "Bob would hold 6 cards" in msg and "uno Bob" in msg


# -- classic: the referee dispenses every draw ----------------------------------------------


def test_classic_draw_dispenses_one_then_play_or_pass():
    ref = table(deck="classic")  # Ann deals, Bob starts
    assert "type `draw`" in rejected(ref, ref.hit)
    ref.draw()
    assert ref.dispense_due() == (1, 1) and ref.turn == 1
    assert "card is coming" in rejected(ref, ref.play, c("R7"))
    ref.press(0)  # a jam: nothing came, the card is still owed
    assert ref.dispense_due() == (1, 1)
    ref.press(1)
    assert ref.hand[1] == 8 and ref.fired[1] == 1 and ref.dispense_due() is None
    assert ref.may_play_taken()
    ref.pass_turn()
    assert ref.turn == 2 and ref.hand[1] == 8


def test_classic_short_dispense_leaves_the_rest_owed():
    ref = table(deck="classic")
    ref.play(c("RD2"))
    assert ref.dispense_due() == (2, 2)
    ref.press(1)
    assert ref.dispense_due() == (2, 1) and ref.hand[2] == 8
    ref.press(1)
    assert ref.dispense_due() is None and ref.hand[2] == 9


def test_classic_wd4_waits_for_the_victim_and_asks_the_table_if_it_was_legal():
    ref = table(deck="classic")
    ref.play(c("WD4"), color="B")
    assert ref.hitter() == 2 and ref.dispense_due() is None
    assert "challenge" in rejected(ref, ref.press, 4)
    assert ref.wd4 == {"by": 1, "color": "R"}
    ref.challenge(False)  # the hand shown held red: Bob draws four
    assert ref.dispense_due() == (1, 4)
    ref.press(4)
    assert ref.hand == [7, 10, 7] and ref.turn == 2


def test_classic_a_draw_two_waits_while_stacking_may_answer_it():
    ref = table(deck="classic", options={"stacking": True})
    ref.play(c("RD2"))
    assert ref.dispense_due() is None  # Cat may still answer with a D2 or WD4
    ref.draw()  # Cat takes them
    assert ref.dispense_due() == (2, 2)


# -- options the table types ----------------------------------------------------------------


def test_attack_1998_a_forced_hit_that_fired_cards_lets_the_player_play_or_pass():
    ref = table(deck="attack-1998")
    ref.hit()
    ref.press(0)  # nothing came: the turn is over
    assert ref.turn == 2 and not ref.may_play_taken()
    ref.hit()
    ref.press(2)
    assert ref.turn == 2 and ref.may_play_taken()
    ref.play(c("R9"))
    assert ref.turn == 0


def test_classic_draw_until_playable_draws_again():
    ref = table(deck="classic", options={"draw_until_playable": True})
    ref.draw()
    ref.press(1)
    ref.draw()  # that card did not play: another
    ref.press(1)
    assert ref.hand[1] == 9 and ref.may_play_taken()


def test_bad_setups_are_usage_errors():
    with pytest.raises(InputError, match="2 to 10"):
        Referee(["Ann"])
    with pytest.raises(InputError, match="twice"):
        Referee(["Ann", "ann"])
    with pytest.raises(InputError, match="colour or a command"):
        Referee(["Ann", "R"])
    with pytest.raises(InputError, match="unknown deck"):
        Referee(["Ann", "Bob"], deck="nosuch")
    with pytest.raises(InputError, match="cannot sit as 2 teams of two or more"):
        Referee(["Ann", "Bob", "Cat"], mode="teams")
    with pytest.raises(InputError, match="unknown rule option"):
        Referee(["Ann", "Bob"], options={"speed": 3})
    with pytest.raises(InputError, match="from 2 to 9"):
        Referee([f"P{i}" for i in range(10)], deck="attack-1998")
    with pytest.raises(InputError, match="need at least"):
        Referee([f"P{i}" for i in range(10)], options={"hand_size": 20})


# -- entering the hands left -----------------------------------------------------------------


def _finish_round(ref: Referee, winner: int) -> None:
    while ref.turn != winner:
        ref.hit()
        ref.press(0)
    ref.set_hand(winner, 1)
    ref.play(c("W"), color="R")
    assert ref.phase == "score"


def test_a_round_is_scored_from_the_entered_hands():
    ref = table()
    _finish_round(ref, 1)
    assert ref.hand[0] == 7
    assert "should hold 7 cards" in rejected(ref, ref.enter_hand, 0, [c("R5")])
    ref.enter_hand(0, [c("R5"), c("WAA")], force=True)
    assert ref.phase == "score" and ref.to_enter() == [2]
    ref.enter_hand(2, [c("BH2")], force=True)
    assert ref.scores == [0, 75, 0]
    assert ref.phase == "deal" and ref.dealer == 1 and ref.round_no == 2
    assert ref.rounds[-1]["points"] == [55, 0, 20]


def test_more_copies_than_the_deck_holds_are_refused():
    ref = table()
    _finish_round(ref, 1)
    ref.enter_hand(0, [c("WH4")], force=True)
    assert "1 x WH4" in rejected(ref, ref.enter_hand, 2, [c("WH4"), c("R1")], force=True)


def test_elimination_seats_leave_and_the_next_round_deals_without_them():
    ref = table(mode="elimination", target=50)
    _finish_round(ref, 1)
    ref.enter_hand(0, [c("W")], force=True)
    ref.enter_hand(2, [c("R3")], force=True)
    assert ref.active == [False, True, True] and ref.phase == "deal"
    ref.start_round(c("Y5"))
    assert ref.hand == [0, 7, 7] and ref.turn == 2  # Bob dealt; Ann is out


# -- persistence -------------------------------------------------------------------------------


def _random_step(ref: Referee, rng: random.Random) -> None:
    """One random input, legal or not, as a careless table would type it."""
    deck_cards = sorted(ref.deck.counts)
    roll = rng.random()
    if ref.phase == "deal":
        card = rng.choice(deck_cards)
        ref.start_round(card, rng.choice(COLORS) if card.is_wild else None)
    elif ref.phase == "score":
        seat = ref.to_enter()[0]
        left = Counter(ref.deck.counts)
        left.subtract(parse_card(x) for hand in ref.hands_left.values() for x in hand)
        pool = sorted(left.elements())
        cards = rng.sample(pool, min(ref.hand[seat], len(pool)))
        ref.enter_hand(seat, cards, force=rng.random() < 0.2)
    elif ref.wd4 is not None and roll < 0.5:
        ref.challenge(rng.random() < 0.5)
    elif ref.hitter() is not None and ref.classic and ref.dispense_due() is None:
        ref.draw()
    elif ref.hitter() is not None or roll < 0.05:
        # What a press can fire: the cards outside the hands but the top one (`fired N` and
        # the box can fire no more).
        room = max(0, ref.deck.total - sum(ref.hand) - 1)
        ref.press(min(rng.choice([0, 0, 0, 1, 2, 4]), room))
    elif roll < 0.25:
        ref.draw() if ref.classic else ref.hit()
    elif roll < 0.3:
        ref.pass_turn()
    elif roll < 0.33:
        ref.catch(rng.randrange(len(ref.players)), rng.randrange(len(ref.players)))
    elif roll < 0.35:
        ref.call_uno(rng.randrange(len(ref.players)))
    else:
        # Mostly a card of the current colour (often legal), sometimes anything.
        fitting = [k for k in deck_cards if k.color == ref.color]
        card = rng.choice(fitting if fitting and rng.random() < 0.8 else deck_cards)
        seats = list(range(len(ref.players)))
        ref.play(
            card,
            color=rng.choice(COLORS) if card.is_wild else None,
            target=rng.choice(seats) if rng.random() < 0.3 else None,
            discarded=rng.choice([0, 0, 1]) if card.face == "DA" else 0,
            uno=rng.random() < 0.1,
        )


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 5),
    deck=st.sampled_from(["attack", "attack-1998", "classic"]),
    mode=st.sampled_from(
        ["target", "lowest", "elimination", "teams", "knockout", "chips", "losing"]
    ),
)
def test_random_input_never_breaks_the_state(seed, players, deck, mode):
    """Whatever is typed: a refused action changes nothing, hand sizes stay sane, the state
    survives a JSON round trip, and the game always reaches its end with a low target."""
    rng = random.Random(seed)
    if mode == "teams":
        players = 4
    ref = Referee([f"P{i}" for i in range(players)], deck=deck, mode=mode, target=300)
    for step in range(8000):
        if ref.phase == "over":
            break
        before = ref.to_dict()
        try:
            _random_step(ref, rng)
        except (RuleError, InputError):
            assert ref.to_dict() == before
        assert all(h >= 0 for h in ref.hand)
        assert sum(ref.presses_game) >= sum(ref.presses)
        if step % 16 == 0:
            data = json.loads(json.dumps(ref.to_dict()))
            assert read_referee(data).to_dict() == ref.to_dict()
    assert ref.phase == "over"
    assert ref.game_winners or ref.game_losers


def _saved(ref: Referee) -> dict[str, Any]:
    return json.loads(json.dumps(ref.to_dict()))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("play", "hand"), [7], "`play.hand` must be a list of 3 whole numbers from 0 to 112"),
        (("play", "hand"), ["x", 7, 7], "`play.hand` must be a list of 3 whole numbers"),
        (("play", "hand"), [-5, 7, 7], "`play.hand`"),
        (("scores",), ["0", 0, 0], "`scores` must be a list of 3 whole numbers"),
        (("play", "turn"), 99, "`play.turn` must be a seat in play (0, 1, 2)"),
        (("play", "top"), "XX", "`play.top` must be a card of the attack deck"),
        (("play", "top"), "WD4", "`play.top` must be a card of the attack deck"),
        (("play", "pending"), [{"seat": 1, "hits": "2"}], "`play.pending[0].hits`"),
        (("play", "pending"), [{"seat": 1}], "exactly one of hits, until_fire, cards"),
        (("phase",), "dance", "`phase` must be one of deal, play, score, over"),
        (("target",), "500", "`target` must be a whole number"),
        (("players",), "Ann", "`players` must be a list of names"),
        (("active",), [1, 1, 1], "`active` must be a list of 3 true/false"),
        (("taking",), 7, "`taking` must be a seat in play"),
        (("hands_left",), {"0": ["R0"]}, "`R0` is not in the attack deck"),
    ],
)
def test_a_state_with_wrong_fields_is_one_line_naming_the_field(path, value, message):
    data = _saved(table())
    where = data
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    with pytest.raises(InputError) as info:
        read_referee(data)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_version_1_state_is_read():
    old = {
        "version": 1,
        "players": ["Ann", "Bob", "Cat"],
        "deck": "attack",
        "mode": "target",
        "target": 500,
        "options": {},
        "scores": [0, 0, 0],
        "active": [True, True, True],
        "round": 1,
        "dealer": 0,
        "phase": "play",
        "hand": [7, 7, 7],
        "fired": [0, 0, 0],
        "presses": [0, 0, 0],
        "fired_game": [0, 0, 0],
        "presses_game": [0, 0, 0],
        "turn": 0,
        "direction": 1,
        "color": "Y",
        "top": "YH2",
        "pending": [{"seat": 2, "hits": 1, "why": "YH2"}],
        "bonus": None,
        "uno": None,
        "uno_early": None,
        "drawn": None,
        "wd4": None,
        "winner": None,
        "hands_left": {},
        "rounds": [],
        "game_winners": [],
    }
    ref = read_referee(old)
    assert ref.hitter() == 2 and ref.turn == 0 and ref.top == "YH2" and owed(ref) == "1 more hit"


# -- the session without a box ---------------------------------------------------------------


def _session(tmp_path: Path, players: str = "Ann,Bob,Cat", **kw: Any):
    out = io.StringIO()
    ref = Referee(players.split(","), **kw)
    return TableSession(ref, state_path=tmp_path / "s.json", out=out), out


def test_undo_takes_back_the_last_action_and_the_state_file_follows(tmp_path):
    s, _ = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("RH2")
    assert s.ref.hitter() == 2
    s.handle_line("fired 3")
    assert s.ref.hand[2] == 10
    s.handle_line("undo")
    assert s.ref.hand[2] == 7 and s.ref.hitter() == 2
    s.handle_line("undo")
    assert s.ref.top == "R5" and s.ref.turn == 1 and not s.ref.round.pending
    saved = load_state(tmp_path / "s.json")
    assert saved.referee.to_dict() == s.ref.to_dict() and len(saved.history) == 1


def test_missing_parts_of_a_play_are_asked_again_until_answered(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("WAA")
    assert s.prompt().startswith("colour for WAA")
    s.handle_line("purple")  # not a colour: the same question again
    assert "`purple`: answer a colour" in out.getvalue()
    assert s.prompt().startswith("colour for WAA")
    s.handle_line("")
    assert "cancelled" in out.getvalue() and s.ref.top == "R5"
    s.handle_line("waa")
    s.handle_line("b")
    assert s.prompt().startswith("WAA: player to aim at")
    s.handle_line("Bob")  # the player themself: the same question again, with the reason
    assert "another seat" in out.getvalue()
    assert s.prompt().startswith("WAA: player to aim at")
    s.handle_line("Zed")
    assert "`Zed`: answer a player's name: Ann, Bob, Cat" in out.getvalue()
    s.handle_line("cat")
    assert s.ref.top == "WAA" and s.ref.color == "B" and s.ref.hitter() == 2


def test_a_question_is_not_asked_when_no_answer_would_do(tmp_path):
    s, out = _session(tmp_path, deck="attack-1998")
    s.handle_line("R5")
    s.handle_line("BTH")  # does not match: refused at once, no question
    assert "BTH does not go on R5" in out.getvalue() and s.asking is None
    s.handle_line("RDA")
    assert s.prompt().startswith("how many more red cards went down with RDA")
    s.handle_line("x")
    assert "answer how many" in out.getvalue()
    s.handle_line("9")  # more than Bob holds: asked again
    assert "0 to 6" in out.getvalue() and s.asking is not None
    s.handle_line("2")
    assert s.ref.hand[1] == 4


def test_one_card_per_line_unless_multi_play(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("R7 R8")
    assert "one card per line" in out.getvalue()
    s.handle_line("R7 Zed")
    assert "`Zed` after R7" in out.getvalue()
    assert s.ref.top == "R5"
    m, _ = _session(tmp_path, options={"multi_play": True})
    m.handle_line("R5")
    m.handle_line("B5 G5")
    assert m.prompt().startswith("colour for B5 G5")
    m.handle_line("G")
    assert m.ref.top == "G5" and m.ref.hand[1] == 5


def test_jump_in_is_typed_with_the_name(tmp_path):
    s, out = _session(tmp_path, options={"jump_in": True})
    s.handle_line("R5")
    s.handle_line("B5")  # Bob
    s.handle_line("jump ann B5")
    assert "Ann jumps in with B5" in out.getvalue() and s.ref.turn == 1
    s.handle_line("jump cat R9")
    assert "! it is Bob's turn" in out.getvalue()


def test_fired_takes_what_one_press_can_fire(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("hit")
    for bad in ("13", "200", "1" + "0" * 23):
        s.handle_line(f"fired {bad}")
        assert f"fired {bad}: one press fires 0 to 12 cards" in out.getvalue()
    assert s.ref.hand[1] == 7
    s.handle_line("fired 12")
    assert s.ref.hand[1] == 19


def test_uno_on_a_play_that_leaves_nine_cards_is_refused_and_nothing_changes(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("hand bob 10")
    s.handle_line("G5 uno")
    assert "! G5 uno: Bob would hold 9 cards" in out.getvalue()
    assert s.ref.top == "R5" and s.ref.hand[1] == 10


class StubBox:
    """Enough of a BoxClient for the session: records lock/unlock/press."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.box = {"stream": "s1", "seq": 0}

    def lock(self) -> dict:
        self.calls.append("lock")
        return {}

    def unlock(self) -> dict:
        self.calls.append("unlock")
        return {}

    def aim(self, seat: int) -> dict:
        self.calls.append(f"aim {seat}")
        return {}

    def press(self) -> int:
        self.calls.append("press")
        return 1


def _fire(seq: int, press_id: int, ejected: int, hopper: int, reason: str = "fired") -> dict:
    return {
        "stream": "s1",
        "seq": seq,
        "kind": "fire",
        "press_id": press_id,
        "source": "button",
        "planned": ejected,
        "ejected": ejected,
        "reason": reason if ejected else "dry",
        "dry_streak": 0,
        "hopper": hopper,
    }


def test_box_events_count_once_and_a_card_slipping_out_goes_to_the_last_hitter(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("RH2")  # Cat owes 2 hits
    s.handle_event({"stream": "s1", "seq": 1, "kind": "refill", "hopper": 80, "added": 80})
    s.handle_event(_fire(2, 1, 3, 77))
    s.handle_event(_fire(2, 1, 3, 77))  # replayed after a reconnect: ignored
    assert s.ref.hand[2] == 10 and s.ref.presses[2] == 1
    s.handle_event(_fire(3, 2, 0, 77))
    assert s.ref.hitter() is None and s.ref.presses[2] == 2
    s.handle_line("hit")  # Ann
    # One card left the box after press 2's burst: the box reports it as a `stray` event.
    stray = {"kind": "stray", "count": 1, "hopper": 76, "after_press_id": 2}
    s.handle_event({"stream": "s1", "seq": 4, **stray})
    s.handle_event(_fire(5, 3, 2, 74))
    assert "1 card slipped out after Cat's last hit: Cat takes them (holds 11)" in out.getvalue()
    assert s.ref.hand[2] == 11 and s.ref.hand[0] == 9
    # A press on a locked button, or one a jammed box refuses, counts for nobody; a burst a
    # jam cuts short does count.
    s.handle_event(_fire(6, 4, 0, 74) | {"reason": "locked"})
    assert s.ref.presses == [1, 0, 2]
    s.handle_line("R7")  # Bob
    s.handle_line("hit")  # Cat
    s.handle_event(_fire(7, 5, 0, 74) | {"reason": "jammed", "planned": 0})
    assert s.ref.presses == [1, 0, 2] and s.ref.hitter() == 2
    assert "press 5 refused (jammed): it does not count" in out.getvalue()
    s.handle_event(_fire(8, 6, 1, 73) | {"reason": "jammed", "planned": 4})
    assert s.ref.presses == [1, 0, 3] and s.ref.hitter() is None


def test_undo_cannot_take_back_a_press_of_the_box(tmp_path):
    out = io.StringIO()
    box = StubBox()
    ref = Referee(["Ann", "Bob", "Cat"])
    s = TableSession(ref, box=box, state_path=tmp_path / "s.json", out=out)
    s.handle_line("R5")
    s.handle_line("hit")  # Bob: the button goes live for him
    assert box.calls[-1] == "unlock"
    s.handle_event(_fire(1, 1, 3, 70))
    assert s.ref.hand[1] == 10 and box.calls[-1] == "lock"
    s.handle_line("undo")
    assert "undo would take back cards the box has fired" in out.getvalue()
    assert s.ref.hand[1] == 10 and box.calls[-1] == "lock"
    s.handle_line("R7")  # a typed play after the press can still be undone
    s.handle_line("undo")
    assert s.ref.top == "R5" and s.ref.turn == 2
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["undo_floor"] == len(saved["history"])


def test_a_piped_session_reads_typed_lines_and_prints_json_state(tmp_path):
    s, out = _session(tmp_path)
    code = run(s, io.StringIO("R5\nB7\nRH2\nfired 2\nfired 0\nquit\n"))
    text = out.getvalue()
    assert "! B7 does not go on R5" in text and "Cat takes 2 cards (holds 9)" in text
    assert "game saved in" in text
    assert code == 1  # a line was refused
    s2, _ = _session(tmp_path)
    assert run(s2, io.StringIO("R5\n")) == 0


# -- what the session offers a caller that is not a terminal (the web page) --------------------


def test_a_question_comes_with_the_answers_the_referee_accepts(tmp_path):
    s, _ = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("WAA")
    q = s.question()
    assert (q.line, q.text, q.kind) == ("WAA", "colour for WAA (R Y G B)", "colour")
    assert q.answers == ["R", "Y", "G", "B"]
    s.forget_question()
    assert s.question() is None and s.prompt().startswith("[round 1] Bob (7) on R5")
    s.handle_line("WAA G")
    assert s.question().kind == "target"
    assert s.question().answers == ["Ann", "Cat"]  # Bob plays it: not at himself


def test_the_answers_are_the_legal_ones_only(tmp_path):
    s, _ = _session(tmp_path, deck="attack-1998")
    s.handle_line("R5")
    s.handle_line("RDA")  # Bob holds 7: the DA and 0 to 6 more red cards
    assert s.question().answers == [str(n) for n in range(7)]
    s.forget_question()
    s.handle_line("W")  # a colour, any of them
    assert s.question().answers == ["R", "Y", "G", "B"]


def test_a_wild_turned_up_and_a_challenge_are_asked_with_their_answers(tmp_path):
    s, _ = _session(tmp_path, deck="classic")
    s.handle_line("W")
    assert s.question().text == "W turned up: colour named by the first player"
    assert s.question().answers == ["R", "Y", "G", "B"]
    s.handle_line("G")
    s.handle_line("WD4 B")
    s.handle_line("challenge")
    assert s.question().kind == "challenge" and s.question().answers == ["y", "n"]


def test_the_view_is_the_json_state_with_the_referees_answers(tmp_path):
    s, _ = _session(tmp_path)
    for line in ("R5", "RH2"):
        s.handle_line(line)
    view = s.view()
    assert view == json.loads(json.dumps(view))  # plain JSON
    assert view["hitter"] == 2 and view["owes"] == ["Cat must hit 2 more times"]
    assert view["owed"] == "2 more hits" and view["top"] == "RH2" and view["hands"] == [7, 6, 7]
    assert view["prompt"] == "[round 1] Cat: 2 more hits, press the button"
    assert view["button"] == {"box": False, "locked": None, "seat": 2, "aim": None}
    assert view["undo"] == 2 and view["rules"]["preset"] == "attack" and not view["classic"]
    data = summary(s.ref)
    assert {k: view[k] for k in data} == data


def test_box_events_that_change_nothing_are_not_saved_each(tmp_path, monkeypatch):
    """A press brings several events; only the one that changes the game costs an fsync. The
    rest are replayed by the box after a crash, and change nothing again."""
    import engine.table.state_file as table

    writes: list[int] = []
    real = table.write_json_atomic
    monkeypatch.setattr(
        table, "write_json_atomic", lambda path, data: (writes.append(1), real(path, data))
    )
    box = StubBox()
    s = TableSession(
        Referee(["Ann", "Bob"]), box=box, state_path=tmp_path / "s.json", last_event=box.box
    )
    s.start()
    s.handle_line("R5")
    s.handle_line("hit")
    before = len(writes)
    events = [
        {"stream": "s1", "seq": seq, "kind": "state", "from": "idle", "to": to}
        for seq, to in ((1, "spinup"), (2, "ejecting"), (3, "cooldown"))
    ]
    events.append({"stream": "s1", "seq": 4, "kind": "press", "press_id": 1, "source": "button"})
    events.append(_fire(5, 1, 2, 80))
    for event in events[:4]:
        s.handle_event(event)
    assert len(writes) == before
    crashed = load_state(tmp_path / "s.json")  # what a crash here would leave: seq 0
    assert crashed.last_event["seq"] == 0
    s.handle_event(events[4])
    assert len(writes) == before + 1 and s.ref.hand[1] == 9
    saved = load_state(tmp_path / "s.json")
    assert saved.last_event["seq"] == 5 and saved.referee.to_dict() == s.ref.to_dict()
    # Restarted from the crash, the session is sent every event after seq 0 again: the
    # press counts once, and the game is where the first session left it.
    again = TableSession(crashed.referee, last_event=crashed.last_event, out=io.StringIO())
    for event in events:
        again.handle_event(event)
    assert again.ref.to_dict() == s.ref.to_dict()


def test_an_event_is_applied_before_the_box_is_told(tmp_path):
    """`apply_event` changes the game in memory only; `settle` saves it and locks the button
    (so a caller may show the change first)."""
    box = StubBox()
    s = TableSession(Referee(["Ann", "Bob"]), box=box, state_path=tmp_path / "s.json")
    s.start()
    s.handle_line("R5")
    s.handle_line("hit")
    calls = len(box.calls)
    s.apply_event(_fire(1, 1, 0, 80))
    assert s.ref.hitter() is None and len(box.calls) == calls
    assert load_state(tmp_path / "s.json").referee.hitter() == 1  # not saved yet
    s.settle()
    assert box.calls[-1] == "lock" and load_state(tmp_path / "s.json").referee.hitter() is None
