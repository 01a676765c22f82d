"""The table referee's rules, without a box: `engine.table.Referee` driven directly."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import COLORS, parse_card
from engine.errors import InputError, RuleError
from engine.table import Referee


def c(text: str):
    return parse_card(text)


def table(n: int = 3, deck: str = "attack", first: str = "R5", **kw) -> Referee:
    names = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay"][:n]
    ref = Referee(names, deck=deck, **kw)
    ref.start_round(c(first), "G" if c(first).is_wild else None)
    return ref


def rejected(ref: Referee, fn, *args, **kw) -> str:
    """Call an action that must fail; assert nothing changed and return the message."""
    before = ref.to_dict()
    with pytest.raises(RuleError) as info:
        fn(*args, **kw)
    assert ref.to_dict() == before
    return str(info.value)


# -- obligations -----------------------------------------------------------------------------


def test_hit2_makes_next_seat_hit_twice_and_skips_it():
    ref = table()  # Ann deals, Bob starts
    assert ref.turn == 1 and ref.hitter() is None
    ref.play(c("RH2"))
    assert ref.hitter() == 2
    assert ref.turn == 0  # Cat loses the turn: Ann is next
    assert "Cat must hit 2 more times" in rejected(ref, ref.play, c("R7"))
    ref.press(0)
    assert ref.hitter() == 2
    ref.press(3)
    assert ref.hitter() is None
    assert ref.hand[2] == 10 and ref.fired[2] == 3 and ref.presses[2] == 2


def test_wild_hit4_needs_four_presses_dry_or_not():
    ref = table()
    ref.play(c("WH4"), color="B")
    assert ref.color == "B" and ref.hitter() == 2
    for _ in range(3):
        ref.press(1)
        assert ref.hitter() == 2
    ref.press(0)
    assert ref.hitter() is None and ref.hand[2] == 10


def test_hit_fire_keeps_the_seat_hitting_until_cards_come():
    ref = table(deck="attack-1998")
    ref.play(c("WHF"), color="Y")
    for _ in range(5):
        ref.press(0)
        assert ref.hitter() == 2
    ref.press(2)
    assert ref.hitter() is None
    assert ref.turn == 0 and ref.hand[2] == 9


def test_attack_attack_hits_the_target_and_play_passes_on_from_the_player():
    ref = table(n=4)
    assert "another player" in rejected(ref, ref.play, c("WAA"), color="R", target=1)
    assert "name the player" in rejected(ref, ref.play, c("WAA"), color="R")
    ref.play(c("WAA"), color="R", target=3)
    assert ref.hitter() == 3 and ref.turn == 2


def test_all_hit_goes_round_the_table_from_the_players_left():
    ref = table(n=4, deck="attack-1998")
    ref.play(c("WAH"), color="G")  # Bob plays
    order = []
    while ref.hitter() is not None:
        order.append(ref.hitter())
        ref.press(0)
    assert order == [2, 3, 0]
    assert ref.turn == 2


def test_a_voluntary_hit_ends_the_turn_after_one_press_even_if_dry():
    ref = table()
    ref.hit()
    assert ref.hitter() == 1 and ref.turn == 1
    ref.press(0)
    assert ref.hitter() is None and ref.turn == 2 and ref.hand[1] == 7


def test_pressing_when_nobody_owes_a_hit_is_refused():
    ref = table()
    assert "nobody owes a hit" in rejected(ref, ref.press, 2)


# -- matching and cards ----------------------------------------------------------------------


def test_a_card_must_match_colour_or_face():
    ref = table()
    msg = rejected(ref, ref.play, c("B7"))
    assert "does not go on R5" in msg and "red" in msg
    ref.play(c("B5"))
    assert ref.color == "B"


def test_a_card_not_in_the_deck_is_refused():
    ref = table()
    assert "not in the attack deck" in rejected(ref, ref.play, c("WD4"), color="R")
    assert "not in the attack deck" in rejected(ref, ref.play, c("R0"))


def test_a_wild_needs_a_colour_and_a_coloured_card_takes_none():
    ref = table()
    assert "needs a colour" in rejected(ref, ref.play, c("W"))
    assert "only a wild" in rejected(ref, ref.play, c("R7"), color="G")


def test_discard_all_takes_the_extra_cards_off_the_hand():
    ref = table()
    assert "0 to 6" in rejected(ref, ref.play, c("RDA"), discarded=7)
    ref.play(c("RDA"), discarded=3)
    assert ref.hand[1] == 3 and ref.top == "RDA"
    ref.play(c("BDA"), discarded=0)  # DA on DA changes colour
    assert ref.color == "B"


def test_trade_hands_swaps_hand_sizes_and_cannot_be_a_last_card():
    ref = table(deck="attack-1998")
    ref.play(c("R7"))  # Bob: 6
    ref.play(c("RTH"), target=1)  # Cat had 7, now 6 -> swaps with Bob's 6... make it uneven
    assert ref.hand[1] == 6 and ref.hand[2] == 6
    ref.hit()
    ref.press(4)  # Ann 11
    ref.play(c("RTH"), target=0)  # Bob 5 <-> Ann 11
    assert ref.hand[0] == 5 and ref.hand[1] == 11
    ref.hand[2] = 1
    assert "TH" in rejected(ref, ref.play, c("RTH"), target=0)


# -- skip, reverse, two players --------------------------------------------------------------


def test_skip_in_attack_lets_the_player_play_one_more_card_or_pass():
    ref = table(n=4)
    ref.play(c("RS"))  # Bob skips Cat, may play again
    assert ref.turn == 1 and ref.bonus
    assert "pass" in rejected(ref, ref.hit)
    ref.pass_turn()
    assert ref.turn == 3


def test_the_extra_card_after_skip_continues_past_the_skipped_player():
    ref = table(n=4)
    ref.play(c("RS"))
    ref.play(c("R9"))
    assert ref.turn == 3 and not ref.bonus


def test_skip_in_attack_1998_passes_straight_on():
    ref = table(n=4, deck="attack-1998")
    ref.play(c("RS"))
    assert ref.turn == 3 and not ref.bonus
    assert "only declines" in rejected(ref, ref.pass_turn)


def test_reverse_turns_play_around():
    ref = table(n=4, deck="attack-1998")
    ref.play(c("RR"))
    assert ref.direction == -1 and ref.turn == 0
    ref.play(c("R3"))
    assert ref.turn == 3


def test_two_players_reverse_acts_as_skip_and_hit2_gives_the_turn_back():
    ref = table(n=2, deck="attack-1998")  # Ann deals, Bob starts
    ref.play(c("RR"))
    assert ref.turn == 1 and ref.direction == 1
    ref.play(c("RH2"))
    assert ref.hitter() == 0
    ref.press(0)
    ref.press(0)
    assert ref.turn == 1


def test_two_players_skip_in_attack_is_a_full_turn_again():
    ref = table(n=2)
    ref.play(c("RS"))
    assert ref.turn == 1 and not ref.bonus
    ref.hit()  # a full turn: hitting is allowed
    assert ref.hitter() == 1


# -- first card turned up --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "deck", "hitters", "turn"),
    [
        ("RH2", "attack", [1, 1], 2),
        ("WH4", "attack", [1, 1, 1, 1], 2),
        ("WAA", "attack", [1, 1], 2),
        ("WAH", "attack-1998", [1, 2, 3], 1),
        ("RS", "attack", [], 2),
        ("R5", "attack", [], 1),
    ],
)
def test_first_card_effects(first, deck, hitters, turn):
    ref = table(n=4, deck=deck, first=first)
    seen = []
    while ref.hitter() is not None:
        seen.append(ref.hitter())
        ref.press(0)
    assert seen == hitters
    assert ref.turn == turn


def test_first_card_reverse_lets_the_dealer_start_going_right():
    ref = table(n=4, deck="attack-1998", first="RR")
    assert ref.turn == 0 and ref.direction == -1
    ref.play(c("R1"))
    assert ref.turn == 3


def test_first_card_hit_fire_and_trade_hands():
    ref = table(n=3, deck="attack-1998", first="WHF")
    ref.press(0)
    ref.press(1)
    assert ref.hitter() is None and ref.turn == 2
    fresh = Referee(["Ann", "Bob"], deck="attack-1998")
    with pytest.raises(RuleError, match="turn up another"):
        fresh.start_round(c("YTH"))
    with pytest.raises(RuleError, match="names a colour"):
        fresh.start_round(c("W"))
    assert fresh.phase == "deal"


# -- UNO -------------------------------------------------------------------------------------


def _down_to_two(ref: Referee, seat: int) -> None:
    ref.hand[seat] = 2


def test_catch_before_the_next_player_starts_costs_two_hits():
    ref = table()
    _down_to_two(ref, 1)
    ref.play(c("R7"))
    assert ref.uno == {"seat": 1, "called": False}
    ref.catch(1)
    assert ref.hitter() == 1
    ref.press(0)
    ref.press(2)
    assert ref.hand[1] == 3 and ref.turn == 2 and ref.hitter() is None


def test_uno_called_in_time_is_safe_and_a_late_catch_is_refused():
    ref = table()
    _down_to_two(ref, 1)
    ref.play(c("R7"), uno=True)
    assert "already called" in rejected(ref, ref.catch, 1)
    _down_to_two(ref, 2)
    ref.call_uno()  # said while holding two, before playing
    ref.play(c("R8"))
    assert ref.uno == {"seat": 2, "called": True}
    _down_to_two(ref, 0)
    ref.play(c("R9"))  # Ann forgets
    ref.hit()  # Bob starts: the window closes
    assert "cannot be caught" in rejected(ref, ref.catch, 0)


def test_going_out_on_hit2_still_makes_the_next_player_hit():
    ref = table()
    ref.hand[1] = 1
    ref.play(c("RH2"))
    assert ref.winner == 1 and ref.phase == "play" and ref.hitter() == 2
    ref.press(3)
    ref.press(0)
    assert ref.phase == "score" and ref.to_enter() == [0, 2]


# -- scoring ---------------------------------------------------------------------------------


def _finish_round(ref: Referee, winner: int) -> None:
    while ref.turn != winner:
        ref.hit()
        ref.press(0)
    ref.hand[winner] = 1
    ref.play(c("W"), color="R")
    assert ref.phase == "score"


def test_a_round_is_scored_from_the_entered_hands():
    ref = table()
    _finish_round(ref, 1)
    ref.hand[0], ref.hand[2] = 2, 1
    assert "should hold 2 cards" in rejected(ref, ref.enter_hand, 0, [c("R5")])
    ref.enter_hand(0, [c("R5"), c("WAA")])
    assert ref.phase == "score" and ref.to_enter() == [2]
    ref.enter_hand(2, [c("BH2")])
    assert ref.scores == [0, 75, 0]
    assert ref.phase == "deal" and ref.dealer == 1 and ref.round_no == 2
    assert ref.rounds[-1]["points"] == [55, 0, 20]


def test_more_copies_than_the_deck_holds_are_refused():
    ref = table()
    _finish_round(ref, 1)
    ref.hand[0], ref.hand[2] = 1, 2
    ref.enter_hand(0, [c("WH4")])
    assert "1 x WH4" in rejected(ref, ref.enter_hand, 2, [c("WH4"), c("R1")])


def test_a_count_mismatch_may_be_forced():
    ref = table()
    _finish_round(ref, 1)
    ref.enter_hand(0, [c("R5")], force=True)
    ref.enter_hand(2, [], force=True)
    assert ref.scores[1] == 5


def test_target_mode_ends_the_game_when_the_winner_reaches_the_target():
    ref = table(target=100)
    _finish_round(ref, 1)
    ref.enter_hand(0, [c("WAA"), c("WAA")], force=True)
    ref.enter_hand(2, [c("R1")], force=True)
    assert ref.phase == "over" and ref.game_winners == [1] and ref.scores[1] == 101
    assert "nothing" not in " ".join(ref.status())
    assert "game is over" in rejected(ref, ref.hit)


def test_lowest_mode_the_lowest_total_wins_once_someone_reaches_the_target():
    ref = table(mode="lowest", target=50)
    _finish_round(ref, 1)
    ref.enter_hand(0, [c("W")], force=True)
    ref.enter_hand(2, [c("R3")], force=True)
    assert ref.scores == [50, 0, 3]
    assert ref.phase == "over" and ref.game_winners == [1]


def test_elimination_takes_players_out_until_one_is_left():
    ref = table(mode="elimination", target=50)
    _finish_round(ref, 1)
    ref.enter_hand(0, [c("W")], force=True)
    ref.enter_hand(2, [c("R3")], force=True)
    assert ref.active == [False, True, True] and ref.phase == "deal"
    ref.start_round(c("Y5"))
    assert ref.hand == [0, 7, 7] and ref.turn == 2  # Bob dealt; Ann is out
    _finish_round(ref, 2)
    ref.enter_hand(1, [c("W")], force=True)
    assert ref.phase == "over" and ref.game_winners == [2]


def test_teams_score_the_other_teams_hands():
    ref = table(n=4, mode="teams", target=60)
    _finish_round(ref, 1)  # Bob (team 1 with Dan) goes out
    ref.enter_hand(0, [c("W")], force=True)
    ref.enter_hand(2, [c("R3")], force=True)
    ref.enter_hand(3, [c("R9")], force=True)  # partner's hand does not count
    assert ref.scores == [0, 53, 0, 53]
    assert ref.phase == "deal"


def test_bad_setups_are_usage_errors():
    with pytest.raises(InputError, match="2 to 10"):
        Referee(["Ann"])
    with pytest.raises(InputError, match="twice"):
        Referee(["Ann", "ann"])
    with pytest.raises(InputError, match="colour or a command"):
        Referee(["Ann", "R"])
    with pytest.raises(InputError, match="unknown deck"):
        Referee(["Ann", "Bob"], deck="nosuch")
    with pytest.raises(InputError, match="even number"):
        Referee(["Ann", "Bob", "Cat"], mode="teams")


# -- persistence and robustness --------------------------------------------------------------


def _random_step(ref: Referee, rng: random.Random) -> None:
    """One random input, legal or not, as a careless table would type it."""
    deck_cards = sorted(ref.deck.counts)
    roll = rng.random()
    if ref.phase == "deal":
        card = rng.choice(deck_cards)
        ref.start_round(card, rng.choice(COLORS) if card.is_wild else None)
    elif ref.phase == "score":
        seat = ref.to_enter()[0]
        cards = [rng.choice(deck_cards) for _ in range(ref.hand[seat])]
        ref.enter_hand(seat, cards, force=rng.random() < 0.2)
    elif ref.hitter() is not None or roll < 0.05:
        ref.press(rng.choice([0, 0, 0, 1, 2, 4]))
    elif roll < 0.25:
        ref.hit()
    elif roll < 0.3:
        ref.pass_turn()
    elif roll < 0.33:
        ref.catch(rng.randrange(len(ref.players)))
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
            uno=rng.random() < 0.5,
        )


@settings(max_examples=12)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 5),
    deck=st.sampled_from(["attack", "attack-1998"]),
    mode=st.sampled_from(["target", "lowest", "elimination", "teams"]),
)
def test_random_input_never_breaks_the_state(seed, players, deck, mode):
    """Whatever is typed: a refused action changes nothing, hand sizes stay sane, the state
    survives a JSON round trip, and the game always reaches its end with a low target."""
    rng = random.Random(seed)
    if mode == "teams":
        players = 4
    ref = Referee([f"P{i}" for i in range(players)], deck=deck, mode=mode, target=300)
    for step in range(4000):
        if ref.phase == "over":
            break
        before = ref.to_dict()
        try:
            _random_step(ref, rng)
        except RuleError:
            assert ref.to_dict() == before
        assert all(h >= 0 for h in ref.hand)
        assert sum(ref.presses_game) >= sum(ref.presses)
        if step % 16 == 0:
            data = json.loads(json.dumps(ref.to_dict()))
            assert Referee.from_dict(data).to_dict() == ref.to_dict()
    assert ref.phase == "over"
    assert ref.game_winners


# -- the session without a box ---------------------------------------------------------------


def _session(tmp_path, players="Ann,Bob,Cat"):
    import io

    from engine.table import TableSession

    out = io.StringIO()
    ref = Referee(players.split(","))
    return TableSession(ref, state_path=tmp_path / "s.json", out=out), out


def test_undo_takes_back_the_last_action_and_the_state_file_follows(tmp_path):
    from engine.table import load_state

    s, _ = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("RH2")
    assert s.ref.hitter() == 2
    s.handle_line("fired 3")
    assert s.ref.hand[2] == 10
    s.handle_line("undo")
    assert s.ref.hand[2] == 7 and s.ref.hitter() == 2
    s.handle_line("undo")
    assert s.ref.top == "R5" and s.ref.turn == 1 and not s.ref.pending
    ref, history, _ = load_state(tmp_path / "s.json")
    assert ref.to_dict() == s.ref.to_dict() and len(history) == 1


def test_missing_parts_of_a_play_are_asked_for_and_a_blank_line_cancels(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("WAA")
    assert s.prompt().startswith("colour for WAA")
    s.handle_line("")
    assert "cancelled" in out.getvalue() and s.ref.top == "R5"
    s.handle_line("waa")
    s.handle_line("b")
    assert s.prompt().startswith("WAA: player to aim at")
    s.handle_line("cat")
    assert s.ref.top == "WAA" and s.ref.color == "B" and s.ref.hitter() == 2


def test_a_second_card_on_one_line_is_refused_with_a_reason(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("R7 R8")
    assert "one card per line" in out.getvalue()
    s.handle_line("R7 Zed")
    assert "`Zed` after R7" in out.getvalue()
    assert s.ref.top == "R5"


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
    # One card left the box after press 2's burst: the hopper went 77 -> 76 without a fire.
    s.handle_event(_fire(4, 3, 2, 74))
    assert "1 card slipped out after Cat's last hit: Cat takes them (holds 11)" in out.getvalue()
    assert s.ref.hand[2] == 11 and s.ref.hand[0] == 9
    # A press on a locked button, or one a jammed box refuses, counts for nobody; a burst a
    # jam cuts short does count.
    s.handle_event(_fire(5, 4, 0, 74) | {"reason": "locked"})
    assert s.ref.presses == [1, 0, 2]
    s.handle_line("R7")  # Bob
    s.handle_line("hit")  # Cat
    s.handle_event(_fire(6, 5, 0, 74) | {"reason": "jammed", "planned": 0})
    assert s.ref.presses == [1, 0, 2] and s.ref.hitter() == 2
    assert "press 5 refused (jammed): it does not count" in out.getvalue()
    s.handle_event(_fire(7, 6, 1, 73) | {"reason": "jammed", "planned": 4})
    assert s.ref.presses == [1, 0, 3] and s.ref.hitter() is None


def test_a_hand_count_can_be_corrected_but_not_to_nothing(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("hand cat 9")
    assert s.ref.hand[2] == 9 and "Cat holds 9 cards (was 7)" in out.getvalue()
    s.handle_line("hand cat 0")
    assert "1 to 112" in out.getvalue() and s.ref.hand[2] == 9


def test_one_card_is_singular(tmp_path):
    s, out = _session(tmp_path)
    s.handle_line("R5")
    s.handle_line("hand bob 1")
    assert "Bob holds 1 card (was 7)" in out.getvalue()
    assert "1 cards" not in out.getvalue()


# -- classic: the referee dispenses every draw ----------------------------------------------


def test_classic_draw_dispenses_one_then_play_or_pass():
    ref = table(deck="classic")  # Ann deals, Bob starts
    assert "type `draw`" in rejected(ref, ref.hit)
    ref.draw()
    assert ref.dispense_due() == (1, 1) and ref.turn == 1
    assert "draws 1 more card" in rejected(ref, ref.play, c("R7"))
    ref.press(1)  # the dispense's fire event: 1 card ejected
    assert ref.hand[1] == 8 and ref.fired[1] == 1 and ref.dispense_due() is None
    assert "play the drawn card or `pass`" in rejected(ref, ref.draw)
    ref.pass_turn()
    assert ref.turn == 2 and ref.hand[1] == 8
    ref.draw()
    ref.press(1)
    ref.play(c("R9"))  # the drawn card was playable
    assert ref.hand[2] == 7 and ref.turn == 0 and ref.drawn is None


def test_classic_short_dispense_leaves_the_rest_owed():
    ref = table(deck="classic")
    ref.play(c("RD2"))  # Bob: Cat draws 2 and is skipped
    assert ref.dispense_due() == (2, 2) and ref.turn == 0
    ref.press(1)  # a jam cut the dispense short
    assert ref.dispense_due() == (2, 1) and ref.hand[2] == 8
    ref.press(1)
    assert ref.dispense_due() is None and ref.hand[2] == 9 and ref.turn == 0


def test_classic_d2_turned_up_makes_the_first_player_draw_and_skips_them():
    ref = table(deck="classic", first="BD2")
    assert ref.dispense_due() == (1, 2) and ref.turn == 2
    with pytest.raises(RuleError, match="WD4 goes back"):
        Referee(["Ann", "Bob"], deck="classic").start_round(c("WD4"), "G")


def test_classic_wd4_taken_without_challenge():
    ref = table(deck="classic")
    ref.play(c("WD4"), color="B")
    # Nothing is dispensed until Cat decides.
    assert ref.hitter() == 2 and ref.dispense_due() is None
    assert "challenge" in rejected(ref, ref.press, 4)
    ref.draw()  # Cat takes the four
    assert ref.dispense_due() == (2, 4)
    ref.press(4)
    assert ref.hand[2] == 11 and ref.turn == 0 and ref.color == "B"


def test_classic_wd4_challenge_legal_challenger_draws_six():
    ref = table(deck="classic")
    ref.play(c("WD4"), color="B")
    assert ref.wd4 == {"by": 1, "color": "R"}
    ref.challenge(True)
    assert ref.dispense_due() == (2, 6)
    ref.press(6)
    assert ref.hand == [7, 6, 13] and ref.turn == 0  # Cat is skipped
    assert "no Wild Draw Four" in rejected(ref, ref.challenge, True)


def test_classic_wd4_challenge_illegal_player_draws_four_challenger_plays():
    ref = table(deck="classic")
    ref.play(c("WD4"), color="B")
    ref.challenge(False)
    assert ref.dispense_due() == (1, 4)
    ref.press(4)
    assert ref.hand == [7, 10, 7] and ref.turn == 2 and ref.hitter() is None
    ref.play(c("B3"))
    assert ref.turn == 0


def test_classic_uno_penalties_are_two_cards_dispensed():
    ref = table(deck="classic")
    ref.set_hand(1, 2)
    ref.play(c("R7"))  # Bob down to one card, no UNO called
    ref.catch(1)
    assert ref.dispense_due() == (1, 2)
    ref.press(2)
    assert ref.hand[1] == 3 and ref.hitter() is None
    # A false UNO call (Cat holds 7) costs Cat 2 cards.
    ref.call_uno(2)
    assert ref.dispense_due() == (2, 2)
    ref.press(2)
    assert ref.hand[2] == 9
    # A wrong accusation: Cat says Ann forgot UNO; Ann holds 7. It costs Cat 2 cards.
    ref.catch(0, 2)
    assert ref.dispense_due() == (2, 2)
    ref.press(2)
    assert ref.hand[2] == 11
    # Without an accuser a wrong catch is refused as in UNO Attack.
    assert "cannot be caught" in rejected(ref, ref.catch, 0)


def test_classic_round_scores_classic_points_and_round_trips():
    ref = table(deck="classic")
    ref.set_hand(1, 1)
    ref.play(c("RD2"), uno=True)  # Bob goes out on D2: Cat still draws 2
    assert ref.phase == "play" and ref.dispense_due() == (2, 2)
    ref.press(2)
    assert ref.phase == "score" and ref.to_enter() == [0, 2]
    restored = Referee.from_dict(json.loads(json.dumps(ref.to_dict())))
    assert restored.to_dict() == ref.to_dict() and restored.classic
    ref.enter_hand(0, [c(x) for x in ["R5", "BD2", "WD4", "GS", "W", "Y0", "Y9"]])
    ref.enter_hand(2, [c(x) for x in ["B1", "G2", "R3", "Y4", "BR", "W", "G9", "G8", "G7"]])
    # 5+20+50+20+50+0+9 = 154 and 1+2+3+4+20+50+9+8+7 = 104
    assert ref.scores == [0, 258, 0] and ref.phase == "deal" and ref.dealer == 1
