"""A real browser at a phone's size plays a round by tapping: without a box and with the mock
box. After each step the page must show what the referee's state says. The screenshots go to a
temporary folder; `make screenshots` puts them in docs/images/ for the README and docs/web.md."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.engine.web.conftest import PHONE, Served, live_page

# Generous bounds for a loaded 2-core machine: these wait on events, never on the clock.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]
# Cards to tap for a hand left at the end of a round: all different, so no deck runs out.
SPARE = [f"{colour}{n}" for n in range(1, 10) for colour in "RYGB"]


@pytest.fixture
def phone(browser: Any) -> Iterator[Callable[[str], Any]]:
    contexts: list[Any] = []

    def open_page(url: str) -> Any:
        # bypass_csp: only so that the test may evaluate its own waits in the page
        context = browser.new_context(
            viewport=PHONE, is_mobile=True, has_touch=True, bypass_csp=True
        )
        contexts.append(context)
        return live_page(context, url)

    yield open_page
    for context in contexts:
        context.close()


def state(served: Served) -> dict[str, Any]:
    return httpx.get(served.url + "api/state", timeout=10).json()


def join(page: Any, code: str) -> None:
    page.locator("#join-open").tap()
    page.locator("#code").fill(code)
    page.locator("#join-go").tap()
    page.wait_for_selector("body[data-role=player]")
    page.wait_for_selector("#conn.on")


def tap(page: Any, selector: str, *, changes: bool = True) -> None:
    """Tap and wait for the table to change (or, with changes=False, for the reply)."""
    seq = page.evaluate("unoattack.seq")
    page.evaluate("document.getElementById('reply').textContent = ''")
    page.locator(selector).first.tap()
    if changes:
        page.wait_for_function("s => unoattack.seq > s", arg=seq)
    else:
        page.wait_for_function("document.getElementById('reply').textContent !== ''")


def answer(page: Any, word: str) -> None:
    page.wait_for_selector("#ask[open]")
    page.locator(f"#ask-choices [data-word='{word}']").tap()


def matches_referee(page: Any, served: Served) -> dict[str, Any]:
    """The page shows what the referee's state says (waiting for it to have the newest)."""
    data = state(served)
    page.wait_for_function("s => unoattack.seq >= s", arg=data["seq"])
    view = ref = data["view"]
    assert page.get_attribute("#top", "data-card") == (ref["top"] or "")
    assert page.get_attribute("#colour", "data-color") == (ref["color"] or "")
    assert page.get_attribute("#direction", "data-direction") == str(ref["direction"])
    if ref["phase"] == "play":
        assert page.get_attribute("#turn", "data-seat") == str(ref["turn"])
    assert page.inner_text("#instruction")  # what happens next, in words
    assert "[" not in page.inner_text("#instruction")  # not the terminal's prompt
    owes = page.locator("#owes li:not(.order)").all_inner_texts()
    assert owes == view["owes"]
    for seat, _player in enumerate(ref["players"]):
        row = page.locator(f"#seats tr[data-seat='{seat}']")
        assert row.locator(".hand").inner_text() == str(ref["hands"][seat])
        fired = f"{ref['fired'][seat]} ({ref['presses'][seat]})"
        assert row.locator(".fired").inner_text() == fired
        score = (ref["chips"] or ref["scores"])[seat]  # chips mode: the chip ledger
        assert row.locator(".score").inner_text() == str(score)
    assert page.errors == []
    return data


def enter_hand(page: Any, cards: list[str], *, changes: bool = True) -> None:
    for card in cards:
        page.locator(f"#picker [data-card='{card}']").tap()
    tap(page, "#hand-enter", changes=changes)


def test_a_round_by_tapping_without_a_box(
    serve: Callable[..., Served], phone: Any, screenshots: Path
) -> None:
    served = serve("serve", "--port", "none", "--players", "Ann,Bob,Cat")
    page = phone(served.url)
    watcher = phone(served.url)
    assert page.locator("#actions").is_hidden()  # watching needs no code, and cannot act
    assert page.inner_text("#deck") == "attack deck · attack rules"  # what the game is played with
    join(page, served.code)
    tap(page, "#picker [data-card='R5']")
    matches_referee(page, served)
    tap(page, "#picker [data-card='B7']", changes=False)
    assert page.inner_text("#reply") == "B7 does not go on R5 (red): play a red card, a 5 or a wild"
    tap(page, "#picker [data-card='RH2']")
    assert page.locator("#owes li").first.inner_text() == "Cat must hit 2 more times"
    tap(page, "[data-act='fired 2']")
    tap(page, "[data-act='fired 0']")
    page.locator("#picker [data-card='WAA']").tap()
    answer(page, "G")
    answer(page, "Bob")
    page.wait_for_function("unoattack.view.top === 'WAA'")
    page.screenshot(path=str(screenshots / "web-none.png"))
    matches_referee(page, served)
    tap(page, "[data-act='fired 1']")
    tap(page, "[data-act='fired 0']")
    # Bob really holds one card: the referee's count is corrected, then Bob goes out.
    page.locator("#more summary").tap()
    page.select_option("#who", "Bob")
    page.locator("#count").fill("1")
    tap(page, "#set-hand")
    assert page.locator("#uno-toggle").is_hidden()  # one card: it goes out, no UNO to say
    tap(page, "#picker [data-card='G7']")
    data = matches_referee(page, served)
    assert data["view"]["phase"] == "score"
    enter_hand(page, SPARE[:6])  # Ann
    enter_hand(page, SPARE[:5], changes=False)  # Cat holds 9: refused, nothing changes
    assert "Cat should hold 9 cards, got 5" in page.inner_text("#reply")
    for card in SPARE[5:9]:
        page.locator(f"#picker [data-card='{card}']").tap()
    tap(page, "#hand-enter")
    data = matches_referee(page, served)
    ref = data["view"]
    assert ref["phase"] == "deal" and ref["round"] == 2 and ref["scores"][1] > 0
    assert page.locator("#rounds tr").count() == 2
    page.screenshot(path=str(screenshots / "web-scores.png"), full_page=True)
    matches_referee(watcher, served)  # the watching phone saw it all too


def test_chips_the_page_shows_the_ledger_and_names_the_broke_player_the_loser(
    serve: Callable[..., Served], phone: Any
) -> None:
    """Seed 001 籌碼制: "輸家按輸分將籌碼給贏家 ... 多盤累計，以籌碼多少論勝負" (each loser pays the
    winner chips for their points; the chips decide)."""
    served = serve(
        "serve", "--port", "none", "--players", "Ann,Bob,Cat", "--mode", "chips", "--target", "20"
    )
    page = phone(served.url)
    join(page, served.code)
    tap(page, "#picker [data-card='R5']")
    page.locator("#more summary").tap()
    page.select_option("#who", "Bob")
    page.locator("#count").fill("1")
    tap(page, "#set-hand")
    tap(page, "#picker [data-card='R7']")  # Bob goes out
    enter_hand(page, SPARE[:7])  # Ann: 10 points, pays 10 chips
    enter_hand(page, SPARE[7:14])  # Cat: 22 points, holds 20 chips: pays 20 and is broke
    data = matches_referee(page, served)
    assert data["view"]["chips"] == [10, 50, 0] and data["view"]["phase"] == "over"
    rows = page.locator("#scores tr").all_inner_texts()
    assert [r.split() for r in rows] == [
        ["Bob", "★", "wins", "50"],
        ["Ann", "10"],
        ["Cat", "✗", "loses", "0"],
    ]
    said = page.inner_text("#instruction")
    assert "Game over: Bob wins!" in said and "Game over: Cat loses." in said
    assert page.errors == []


def test_a_round_by_tapping_with_the_mock_box(
    serve: Callable[..., Served], phone: Any, screenshots: Path
) -> None:
    served = serve("serve", "--port", "mock", "--players", "Ann,Bob,Cat", "--speed", "20")
    page = phone(served.url)
    page.wait_for_selector("[data-fact=state]")
    join(page, served.code)
    tap(page, "#picker [data-card='R5']")
    tap(page, "#picker [data-card='RH2']")
    page.wait_for_selector("#button-state .live")
    assert page.inner_text("#button-state") == "● button live for Cat"
    for presses in (1, 2):
        page.locator("[data-act='press']").tap()
        page.wait_for_function(f"unoattack.view.presses[2] === {presses}")
        if presses == 1:  # Cat owes one more hit, the button is live for her again
            page.wait_for_selector("#button-state .live")
    page.wait_for_function("unoattack.view.button.locked === true")
    data = matches_referee(page, served)
    box = data["box"]
    assert len(box["bursts"]) == 2 and all(b["seat"] == "Cat" for b in box["bursts"])
    assert page.locator("#bursts li").count() == 2
    assert page.inner_text("[data-fact=hopper]") == str(box["hopper"])
    page.screenshot(path=str(screenshots / "web-phone-full.png"), full_page=True)
    # Ann hits: the button is live for her, one press ends her turn.
    tap(page, "[data-act='hit']")
    page.locator("[data-act='press']").tap()
    page.wait_for_function("unoattack.view.presses[0] === 1")
    matches_referee(page, served)
    # Bob goes out; the hands left are entered and the round is scored.
    page.locator("#more summary").tap()
    page.select_option("#who", "Bob")
    page.locator("#count").fill("1")
    tap(page, "#set-hand")
    tap(page, "#picker [data-card='R9']")
    ref = matches_referee(page, served)["view"]
    assert ref["phase"] == "score"
    for seat in (0, 2):
        enter_hand(page, SPARE[: ref["hands"][seat]])
    ref = matches_referee(page, served)["view"]
    assert ref["round"] == 2 and ref["rounds"][0]["winner"] == 1
