"""wire/text.py: the one event-to-text, as watch and send log it and as a game tells it."""

from __future__ import annotations

from wire import text

STATE = {"kind": "state", "from": "ejecting", "to": "jammed", "why": "card timeout"}
FAULT = {"kind": "fault", "output": "ejector", "why": "on longer than max_on_ms = 5000"}


def test_a_state_change_reads_the_same_in_the_log_and_in_a_game() -> None:
    assert text.state_change(STATE) == "ejecting -> jammed (card timeout)"
    assert text.describe({**STATE, "seq": 4, "t_ms": 1500}).endswith(
        "state  ejecting -> jammed (card timeout)"
    )
    assert text.news(STATE) == "box: ejecting -> jammed"


def test_a_game_hears_of_refills_the_empty_hopper_faults_and_latches_only() -> None:
    assert text.news({"kind": "refill", "hopper": 60, "added": 60}) == (
        "box hopper loaded: 60 cards"
    )
    assert text.news({"kind": "empty", "press_id": 3, "hopper": 0}) == "box hopper empty"
    assert text.news(FAULT) == "box: FAULT on ejector: on longer than max_on_ms = 5000"
    assert text.describe({**FAULT, "seq": 1}).endswith(
        "FAULT on ejector: on longer than max_on_ms = 5000"
    )
    for quiet in (
        {"kind": "state", "from": "idle", "to": "spinup"},
        {"kind": "press", "press_id": 1, "source": "button"},
        {"kind": "fire", "press_id": 1, "reason": "dry"},
        {"kind": "hello", "name": "box"},
    ):
        assert text.news(quiet) is None
