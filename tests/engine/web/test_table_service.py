"""The adapter between the web app and the referee: lines in, the referee's own answers out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.cards import load_deck
from engine.table import load_state
from engine.web.table_service import MAX_LINE, check_line
from tests.engine.web.conftest import table_service


def service_for(tmp_path: Path, players: str = "Ann,Bob,Cat", deck: str = "attack") -> Any:
    return table_service(tmp_path / "table.json", players=players, deck=deck)


def test_lines_are_applied_and_published_with_the_referees_state(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    assert service.act("R5").ok
    out = service.act("RH2")
    assert out.ok and out.messages == ["Bob plays RH2", "Cat must hit 2 more times (RH2)"]
    update = service.updates[-1]
    assert update["cause"] == {"line": "RH2"}
    assert update["messages"] == out.messages
    view = update["view"]
    assert view == service.session.view()  # what `unoattack table --json` prints
    assert view["hitter"] == 2
    assert view["owes"] == ["Cat must hit 2 more times"]
    assert view["prompt"] == "[round 1] Cat: 2 more hits, press the button"
    assert service.act("fired 3").ok
    assert service.view()["hands"] == [7, 6, 10]


def test_a_refused_line_gives_the_referees_reason_and_changes_nothing(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    service.act("R5")
    before = service.view()
    published = len(service.updates)
    out = service.act("B7")
    assert not out.ok
    assert out.error == "B7 does not go on R5 (red): play a red card, a 5 or a wild"
    assert service.view() == before
    assert len(service.updates) == published
    assert load_state(tmp_path / "table.json").referee.to_dict() == service.session.ref.to_dict()


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (5, "line must be a string"),
        (None, "line must be a string"),
        (["R5"], "line must be a string"),
        ("R5\nhit", "the control character U+000A"),
        ("R5\x00", "the control character U+0000"),
        ("x" * (MAX_LINE + 1), f"at most {MAX_LINE}"),
        ("   ", "empty line"),
        ("quit", "`quit` is for the terminal"),
    ],
)
def test_lines_that_cannot_be_commands_are_refused_before_the_referee(
    tmp_path: Path, line: object, problem: str
) -> None:
    assert problem in (check_line(line) or "")
    service = service_for(tmp_path)
    before = service.view()
    out = service.act(line)
    assert not out.ok and problem in (out.error or "")
    assert service.view() == before and not service.updates


def test_a_question_comes_with_the_answers_the_referee_accepts(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    service.act("R5")
    out = service.act("WAA")
    assert out.ask == "colour for WAA (R Y G B)" and out.line == "WAA"
    assert out.choices == {"colour": ["R", "Y", "G", "B"]}  # `y` is yellow, not a second yes
    out = service.act("WAA G")
    assert out.ask == "WAA: player to aim at"
    assert out.choices == {"player": ["Ann", "Cat"]}  # Bob plays it: not at himself
    assert service.session.asking is None  # no half line left for the next page's action
    assert not service.updates[1:]
    assert service.act("WAA G Cat").ok
    assert service.view()["owes"] == ["Cat must hit 2 more times"]


def test_a_question_nothing_answers_is_the_refusal(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    service.act("R5")
    service.act("RH2")  # Cat owes two hits: nobody may play
    out = service.act("WAA G")
    assert not out.ok and out.ask is None
    assert out.error == "Cat must hit 2 more times before playing"  # as at the terminal


def test_queries_answer_the_asker_only(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    out = service.act("status")
    assert out.ok and out.messages[0].startswith("round 1 (deal)")
    assert service.act("help").messages[0] == "commands:"
    assert not service.updates


@pytest.mark.parametrize("deck", ["attack", "attack-1998", "classic"])
def test_the_card_picker_lists_the_active_deck(tmp_path: Path, deck: str) -> None:
    service = service_for(tmp_path, deck=deck)
    cards = service.static()["cards"]
    expected = load_deck(deck)
    assert [c["card"] for c in cards] == [str(c) for c in sorted(expected.counts)]
    assert sum(c["copies"] for c in cards) == expected.total
    assert all(c["points"] == expected.points[load_deck(deck).cards()[0]] for c in cards[:1])


def test_the_state_file_is_the_tables_and_a_new_service_resumes_it(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    for line in ("R5", "RH2", "fired 1", "fired 0"):
        assert service.act(line).ok
    saved = service.view()
    again = service_for(tmp_path)
    assert again.view() == saved
    # (by its name: the pages are not told the server's paths)
    assert again.startup_messages == ["resuming the game saved in table.json"]
    assert again.act("undo").ok  # the undo history came back too


def test_box_events_are_applied_as_the_table_applies_them(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    service.act("R5")
    service.act("RH2")
    fire = {
        "kind": "fire",
        "stream": "s1",
        "seq": 7,
        "press_id": 3,
        "source": "button",
        "planned": 2,
        "ejected": 2,
        "reason": "fired",
        "dry_streak": 1,
        "hopper": 40,
    }
    service.handle_event(fire)
    view = service.view()
    assert view["hands"][2] == 9 and view["presses"][2] == 1
    assert service.updates[-1]["box"]["bursts"][0] == {
        "press_id": 3,
        "source": "button",
        "seat": "Cat",
        "planned": 2,
        "ejected": 2,
        "reason": "fired",
    }
    assert service.updates[-1]["box"]["hopper"] == 40
    assert service.updates[-1]["cause"] == {"event": 7, "kind": "fire"}
    published = len(service.updates)
    service.handle_event(fire)  # a replayed event counts once
    assert service.view()["presses"][2] == 1
    assert len(service.updates) == published


def test_answers_are_the_referees_and_asking_changes_nothing(tmp_path: Path) -> None:
    service = service_for(tmp_path, deck="attack-1998")
    service.act("R5")
    before, published = service.view(), len(service.updates)
    out = service.act("RDA")
    assert out.ask == "how many more red cards went down with RDA"
    assert out.choices == {"number": [str(n) for n in range(7)]}  # Bob holds 7, RDA one
    assert service.view() == before and len(service.updates) == published
