"""The adapter between the web app and the referee: typed commands (or lines) in, the referee's
own answers out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.cards import load_deck
from engine.table.options import GameOptions
from engine.table.state_file import load_state
from engine.web.table_service import MAX_LINE, TableService, check_line, open_table
from i18n import language, say_in
from tests.engine.web.conftest import table_service
from wire.text import describe


def service_for(tmp_path: Path, players: str = "Ann,Bob,Cat", deck: str = "attack") -> Any:
    return table_service(tmp_path / "table.json", players=players, deck=deck)


def act(service: Any, line: object) -> Any:
    """A line sent as a script sends it (the page sends commands as data)."""
    return service.request({"line": line})


def test_lines_are_applied_and_published_with_the_referees_state(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    assert act(service, "R5").ok
    out = act(service, "RH2")
    assert out.ok and out.messages == ["Bob plays RH2", "Cat must hit 2 more times (RH2)"]
    update = service.updates[-1]
    assert update["cause"] == {
        "command": {
            "word": "play",
            "cards": ["RH2"],
            "color": None,
            "target": None,
            "discards": None,
            "uno": False,
            "jumper": None,
        }
    }
    assert update["messages"] == out.messages
    view = update["view"]
    assert view == service.session.view()  # what `unoattack table --json` prints
    assert view["hitter"] == 2
    assert view["owes"] == ["Cat must hit 2 more times"]
    assert view["prompt"] == "[round 1] Cat: 2 more hits, press the button"
    assert act(service, "fired 3").ok
    assert service.view()["hands"] == [7, 6, 10]


def test_a_refused_line_gives_the_referees_reason_and_changes_nothing(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    act(service, "R5")
    before = service.view()
    published = len(service.updates)
    out = act(service, "B7")
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
    assert problem in (check_line(line) or "") or line == "quit"  # a command, not for a page
    service = service_for(tmp_path)
    before = service.view()
    out = act(service, line)
    assert not out.ok and problem in (out.error or "")
    assert service.view() == before and not service.updates


def test_a_question_comes_with_the_answers_the_referee_accepts(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    act(service, "R5")
    out = act(service, "WAA")
    assert out.ask == "colour for WAA (R Y G B)" and out.command["cards"] == ["WAA"]
    assert out.choices == {"colour": ["R", "Y", "G", "B"]}  # `y` is yellow, not a second yes
    out = service.request({"command": out.answers["G"]})  # the page sends the answer's command
    assert out.ask == "WAA: player to aim at"
    assert out.choices == {"player": ["Ann", "Cat"]}  # Bob plays it: not at himself
    assert out.answers["Cat"] == {**out.command, "target": "Cat"}
    assert service.session.asking is None  # no half command left for the next page's action
    assert not service.updates[1:]
    assert service.request({"command": out.answers["Cat"]}).ok
    assert service.view()["owes"] == ["Cat must hit 2 more times"]


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ({"word": "fly"}, "unknown command 'fly'"),
        ({"word": "catch"}, "catch needs player"),
        ({"word": "catch", "player": "Bob", "seat": 1}, "catch takes player, by, not seat"),
        ({"word": "fired", "count": -1}, "fired: count must be a whole number"),
        ({"word": "fired", "count": True}, "fired: count must be a whole number"),
        ({"word": "play", "cards": "R5"}, "play: cards must be a list of"),
        ({"word": "play", "cards": ["R55"]}, "R55"),
        ({"word": "play", "cards": ["R5"], "color": "P"}, "colour 'P'"),
        ({"word": "quit"}, "`quit` is for the terminal"),
        ("hit", "a command is an object"),
    ],
)
def test_commands_that_are_not_commands_are_refused_in_one_line(
    tmp_path: Path, command: object, problem: str
) -> None:
    service = service_for(tmp_path)
    before = service.view()
    out = service.request({"command": command})
    assert not out.ok and problem in (out.error or ""), out.error
    assert service.view() == before and not service.updates


def test_a_typed_command_does_what_its_line_does(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    lines, typed = service_for(tmp_path / "a"), service_for(tmp_path / "b")
    for line, command in [
        ("R5", {"word": "play", "cards": ["R5"]}),
        ("RH2", {"word": "play", "cards": ["RH2"]}),
        ("fired 2", {"word": "fired", "count": 2}),
        ("uno Ann", {"word": "uno", "player": "Ann"}),
        ("catch Bob Cat", {"word": "catch", "player": "Bob", "by": "Cat"}),
        ("hand Cat 4", {"word": "hand", "player": "Cat", "count": 4}),
    ]:
        said = act(lines, line)
        assert typed.request({"command": command}).to_dict() == said.to_dict(), line
    assert lines.view() == typed.view()


def test_a_question_nothing_answers_is_the_refusal(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    act(service, "R5")
    act(service, "RH2")  # Cat owes two hits: nobody may play
    out = act(service, "WAA G")
    assert not out.ok and out.ask is None
    assert out.error == "Cat must hit 2 more times before playing"  # as at the terminal


def test_queries_answer_the_asker_only(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    out = act(service, "status")
    assert out.ok and out.messages[0].startswith("round 1 (deal)")
    assert act(service, "help").messages[0] == "commands:"
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
        assert act(service, line).ok
    saved = service.view()
    again = service_for(tmp_path)
    assert again.view() == saved
    # (by its name: the pages are not told the server's paths)
    assert again.startup_messages == ["resuming the game saved in table.json"]
    assert act(again, "undo").ok  # the undo history came back too


def test_box_events_are_applied_as_the_table_applies_them(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    act(service, "R5")
    act(service, "RH2")
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
    act(service, "R5")
    before, published = service.view(), len(service.updates)
    out = act(service, "RDA")
    assert out.ask == "how many more red cards went down with RDA"
    assert out.choices == {"number": [str(n) for n in range(7)]}  # Bob holds 7, RDA one
    assert service.view() == before and len(service.updates) == published


def score_a_round(service: Any) -> None:
    """Round 1 of Ann and Bob: Bob goes out on R7, Ann is left with 96 points."""
    for line in ("R5", "hand Bob 1", "R7", "R9 B9 G9 Y9 RS BS GS"):
        assert act(service, line).ok, line


def test_a_new_game_keeps_the_last_ones_results_in_the_history_file(tmp_path: Path) -> None:
    state = tmp_path / "table.json"
    service = table_service(state, players="Ann,Bob")
    score_a_round(service)
    out = service.new_game()
    assert out.ok
    assert out.messages == ["the last game is kept in table.games.jsonl", "new game: Ann, Bob"]
    thai = language("th").gettext  # and each page reads them in its own language
    assert (
        say_in(language("th"), out.to_dict())["messages"]
        == [
            thai("the last game is kept in {file}").format(file="table.games.jsonl"),
            thai("new game: {players}").format(players="Ann, Bob"),
        ]
        != out.messages
    )
    (line,) = (tmp_path / "table.games.jsonl").read_text().splitlines()
    kept = json.loads(line)
    assert kept["players"] == ["Ann", "Bob"] and kept["scores"] == [0, 96]
    assert [r["winner"] for r in kept["rounds"]] == [1] and kept["winners"] == []
    view = service.view()
    assert (view["phase"], view["round"], view["scores"], view["rounds"]) == ("deal", 1, [0, 0], [])
    assert view["undo"] == 0  # the last game's steps are not this one's
    saved = load_state(state).referee
    assert saved.to_dict() == service.session.ref.to_dict() and saved.round_no == 1
    update = service.updates[-1]
    assert update["cause"] == {"new_game": True} and update["messages"] == out.messages
    assert update["view"] == view
    assert act(service, "G3").ok  # and it plays
    # A game with no round scored leaves nothing to keep.
    assert service.new_game().messages == ["new game: Ann, Bob"]
    assert len((tmp_path / "table.games.jsonl").read_text().splitlines()) == 1


def test_a_new_game_keeps_the_rules_of_the_last(tmp_path: Path) -> None:
    options = GameOptions(
        ["Ann", "Bob", "Cat", "Dan"],
        mode="teams",
        target=200,
        rules={"stacking": True},
        state=tmp_path / "t.json",
    )
    service = TableService(open_table(options))
    act(service, "R5")
    assert service.new_game().ok
    ref = service.session.ref
    assert (ref.mode, ref.target, ref.options) == ("teams", 200, {"stacking": True})


def test_a_new_game_is_refused_when_the_history_cannot_be_written(tmp_path: Path) -> None:
    service = service_for(tmp_path, players="Ann,Bob")
    score_a_round(service)
    (tmp_path / "table.games.jsonl").mkdir()  # not a file: nothing can be appended
    before = service.view()
    published = len(service.updates)
    out = service.new_game()
    assert not out.ok
    assert out.error and out.error.startswith(
        "the last game could not be kept in table.games.jsonl"
    )
    assert service.view() == before and len(service.updates) == published
    assert load_state(tmp_path / "table.json").referee.rounds == before["rounds"]


def test_a_watching_table_starts_no_new_game(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    service.watch_only = "the bots are playing: watch only"
    assert service.new_game().error == "the bots are playing: watch only"


def test_a_console_line_alone_waits_for_the_next_update_or_a_quiet_box(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    act(service, "R5")
    act(service, "RH2")  # Cat must hit
    published = len(service.updates)
    press = {"kind": "press", "stream": "s1", "seq": 6, "press_id": 3, "source": "button"}
    service.handle_event(press)
    assert len(service.updates) == published  # nothing but its console line: not yet
    fire = {
        "kind": "fire",
        "stream": "s1",
        "seq": 7,
        "press_id": 3,
        "source": "button",
        "planned": 1,
        "ejected": 1,
        "reason": "fired",
        "dry_streak": 0,
        "hopper": 40,
    }
    service.handle_event(fire)
    first = service.updates[published]
    assert first["cause"] == {"event": 7, "kind": "fire"}
    assert [str(line) for line in first["console"]] == [describe(press), describe(fire)]
    service.handle_event({**press, "seq": 8, "press_id": 4})
    published = len(service.updates)
    service.flush_console()  # the box is quiet: the line goes alone
    (alone,) = service.updates[published:]
    assert alone["cause"] == {"console": True} and len(alone["console"]) == 1
    service.flush_console()
    assert len(service.updates) == published + 1  # nothing more to say


class Button:
    """The box's button as the session drives it (lock, unlock, aim), each call recorded."""

    def __init__(self) -> None:
        self.box: dict[str, Any] = {"stream": "s1", "seq": 4}
        self.calls: list[str] = []

    def lock(self) -> None:
        self.calls.append("lock")

    def unlock(self) -> None:
        self.calls.append("unlock")

    def aim(self, seat: int) -> None:
        self.calls.append(f"aim {seat}")


def test_a_new_game_locks_the_button_a_player_owed_hits_on(tmp_path: Path) -> None:
    button = Button()
    service = table_service(tmp_path / "table.json", box=button)
    act(service, "R5")
    act(service, "RH2")  # Cat owes two hits: the button is live for her
    assert button.calls[-2:] == ["aim 2", "unlock"]
    last_event = dict(service.session.boxsync.last_event)
    assert service.new_game().ok
    assert button.calls[-1] == "lock" and service.view()["button"]["locked"] is True
    # the box's events of the last game stay applied: a replay of one is not news
    assert service.session.boxsync.last_event == last_event


def test_the_page_is_sent_the_chip_ledger_and_the_loser(tmp_path: Path) -> None:
    """`unoattack serve --mode chips`: seed 001 籌碼制, "輸家按輸分將籌碼給贏家" (each loser pays
    the winner chips for their points); the page reads the ledger from the view it is sent."""
    options = GameOptions(["Ann", "Bob", "Cat"], mode="chips", target=20, state=tmp_path / "t.json")
    service = TableService(open_table(options, None))
    service.updates = []
    service.publish = service.updates.append
    for line in ["R5", "hand Bob 1", "R7", "R2 R3 !", "B9 G1 Y2 !"]:
        assert act(service, line).ok, line
    view = service.updates[-1]["view"]
    assert view["mode"] == "chips" and view["chips"] == [15, 37, 8]
    for line in ["R4", "hand Cat 1", "G4", "- !", "R8 R9 RS WAA R6 !"]:
        assert act(service, line).ok, line
    view = service.updates[-1]["view"]
    assert view["chips"] == [15, 0, 45] and view["phase"] == "over"
    assert view["game_winners"] == [2] and view["game_losers"] == [1]
    assert "game over: Bob loses" in service.updates[-1]["messages"]
