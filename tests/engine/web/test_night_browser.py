"""Two tables of a game night served as two `unoattack serve --night FILE --table T` processes
(both without a box): a round table 2 records reaches table 1's page in a real browser, whose
standings show both tables; once table 1's rounds are over its **Next seating** seats the
rotation's next players (seed 001 玩家位置變化)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from engine.cli import main
from tests.engine.web.conftest import Served
from tests.engine.web.test_browser import join
from tests.engine.web.test_phone import api, open_phone

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

NAMES = "Ann,Bob,Cat,Dan,Eve,Fay,Gus,Hal"


def one_round(a: str, b: str, c: str, d: str) -> list[str]:
    """A deals; B goes out on R7; the others' hands are entered: 1, 2 and 3 points."""
    return [
        "R5",
        f"hand {a} 1",
        f"hand {c} 1",
        f"hand {d} 1",
        f"hand {b} 1",
        "R7",
        "R1",
        "G2",
        "B3",
    ]


def test_two_served_tables_share_one_nights_standings(
    serve: Callable[..., Served], browser: Any, tmp_path: Path
) -> None:
    night = tmp_path / "night.json"
    assert main(["schedule", "--players", "8", "--names", NAMES, "--night", str(night)]) == 0
    # (named from the folder both run in: a command line naming the folder is one the fixture
    # takes for a process left behind)
    first = serve("serve", "--port", "none", "--night", night.name, "--table", "1")
    second = serve("serve", "--port", "none", "--night", night.name, "--table", "2")
    page = open_phone(browser, first.url)
    expect(page.locator("#night-title")).to_have_text("Night · table 1 of 2")
    expect(page.locator("#new-game")).to_be_hidden()  # not joined; and mid-stage anyway
    with api(second) as table2:
        for line in one_round("Eve", "Gus", "Fay", "Hal"):
            assert table2.post("/api/act", json={"line": line}).json()["ok"], line
    # Table 2's round reaches table 1's page by itself: Eve, Gus, Fay, Hal played one round.
    page.wait_for_function("unoattack.view.night.standings.played.Eve === 1")
    expect(page.locator("#night-tables li").nth(1)).to_have_text(
        "table 2: round 2 · Eve Gus Fay Hal"
    )
    expect(page.locator("#standings tr")).to_have_count(9)  # the heading, eight players
    join(page, first.code)
    with api(first) as table1:
        for _ in range(4):
            for line in one_round("Ann", "Cat", "Bob", "Dan"):
                assert table1.post("/api/act", json={"line": line}).json()["ok"], line
    page.wait_for_function("unoattack.view.phase === 'over'")
    expect(page.locator("#night-next")).to_contain_text(
        "next here, rounds 5-8: Ann, Eve, Cat, Gus (clockwise)"
    )
    expect(page.locator("#night-next")).to_contain_text("Eve: still playing at table 2")
    expect(page.locator("#night-champion")).to_contain_text("leading:")
    button = page.locator("#new-game")
    expect(button).to_have_text("Next seating")
    page.once("dialog", lambda dialog: dialog.accept())
    button.scroll_into_view_if_needed()
    button.tap()
    page.wait_for_function("unoattack.view.round === 5")
    expect(page.locator("#round")).to_contain_text("rounds 5-8 of the night")
    assert page.evaluate("unoattack.view.players") == ["Ann", "Eve", "Cat", "Gus"]
    assert page.errors == []
