"""A table of a game night on the web (`unoattack serve --night FILE --table T`): the page's
view carries the night (this table, where every table is, the standings over all of them),
New game becomes the rotation's next seating once the table's rounds are over, and a round
another table records reaches the page without anyone touching this one (seed 001
玩家位置變化: "要把每局的分數記錄下來 ... 便可依累計分數產生冠軍")."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from engine.night_book import NightBook
from engine.schedule import rotation
from engine.table.night_table import NightTable
from engine.table.options import GameOptions
from engine.web.table_service import TableService, open_table

NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal"]


def night_service(tmp_path: Path, table: int = 0) -> tuple[Any, NightBook]:
    path = tmp_path / "night.json"
    if not path.exists():
        NightBook.create(path, rotation(8, 2, NAMES))
    book = NightBook.load(path)
    night = NightTable(book, table)
    options = GameOptions(
        night.referee().players, state=tmp_path / f"t{table + 1}.json", night=night
    )
    service: Any = TableService(open_table(options))
    service.updates = []
    service.publish = service.updates.append
    return service, book


def play_round(service: Any) -> None:
    """Ann, Cat, Bob, Dan: Cat goes out; Bob, Dan and Ann hold 1, 2 and 3 points."""
    for line in ("R5", "hand Ann 1", "hand Bob 1", "hand Dan 1", "hand Cat 1", "R7"):
        assert service.request({"line": line}).ok, line
    for hand in ("R1", "G2", "B3"):
        assert service.request({"line": hand}).ok, hand


def test_the_page_shows_the_night_and_new_game_is_the_next_seating(tmp_path: Path) -> None:
    service, _book = night_service(tmp_path)
    view = service.view()
    night = view["night"]
    assert night["table"] == 1 and [t["table"] for t in night["tables"]] == [1, 2]
    assert night["game_rounds"] == [1, 4] and night["next"] is None
    assert night["file"] == "night.json"  # its name: pages are not told the server's paths
    assert [r["name"] for r in night["standings"]["ranking"]] == NAMES
    play_round(service)
    refused = service.new_game()
    assert not refused.ok and "rounds 1-4 are being played" in refused.error
    for _ in range(3):
        play_round(service)
    view = service.view()
    assert view["phase"] == "over"
    assert view["night"]["next"]["players"] == ["Ann", "Eve", "Cat", "Gus"]
    assert view["night"]["next"]["elsewhere"] == {"Eve": 2, "Gus": 2}
    assert view["night"]["standings"]["played"]["Ann"] == 4
    out = service.new_game()
    assert out.ok, out.error
    assert any("rounds 5-8: Ann, Eve, Cat, Gus clockwise" in m for m in out.messages)
    assert service.view()["players"] == ["Ann", "Eve", "Cat", "Gus"]
    assert service.static()["players"] == ["Ann", "Eve", "Cat", "Gus"]


def test_a_round_another_table_records_reaches_this_tables_page(tmp_path: Path) -> None:
    service, _book = night_service(tmp_path)
    other = NightBook.load(tmp_path / "night.json")
    stop = threading.Event()
    watcher = threading.Thread(target=service.follow_night, args=(stop,), daemon=True)
    watcher.start()
    try:
        seated = other.seating(1, 1)
        other.record_game(1, (1, 4), {1: dict.fromkeys(seated, 7)})
        for _ in range(200):  # the watch looks every second: wait for its update, or fail
            if any(u["cause"] == {"night": True} for u in service.updates):
                break
            stop.wait(0.1)
        update = next(u for u in service.updates if u["cause"] == {"night": True})
    finally:
        stop.set()
        watcher.join()
    standings = update["view"]["night"]["standings"]
    assert all(standings["totals"][name] == 7 for name in seated)
    assert update["view"]["night"]["tables"][1]["next_round"] == 2
