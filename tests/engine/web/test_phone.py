"""The page as a player holds it: a real headless Chromium at a 390x844 phone. The answer to a
tap and the box's result arrive inside the viewport; the game at a glance stays in view while
the cards are scrolled; `?lang=` gives that language's page; the log has no line twice, after
opening or reconnecting; a claimed seat is highlighted and buzzes on its turn; dark mode; and
the box dashboard's test fire reaches the mock box, its switches survive the box's restart, it
warns when the hopper runs low; New game keeps the last game in the history file and every page
shows the new one.

One browser for the module (the session's), one `--port none` server shared by the tests
that do not need a box."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from playwright.sync_api import expect

import i18n
from tests.engine.web.conftest import WAIT_MS, Served, live_page
from tests.engine.web.test_browser import join, tap
from tests.engine.web.test_languages import OVERFLOW

PHONE = {"width": 390, "height": 844}  # the phone (conftest's is the smallest, 360)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]
# The Vibration and Screen Wake Lock APIs, recorded (a test browser has no motor, and no
# screen to keep on): `window.buzzes`, `window.wakeLocks`.
RECORD_PHONE_APIS = """
window.buzzes = [];
window.wakeLocks = [];
Object.defineProperty(Navigator.prototype, "vibrate", {
  configurable: true,
  value: function (pattern) { window.buzzes.push(pattern); return true; },
});
Object.defineProperty(Navigator.prototype, "wakeLock", {
  configurable: true,
  get: () => ({ request: async (type) => {
    window.wakeLocks.push(type);
    return { released: false, release: async () => {} };
  } }),
});
"""
IN_VIEW = """(sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight
    && r.left >= 0 && r.right <= innerWidth;
}"""


def open_phone(browser: Any, url: str, *, scheme: str = "light", **options: Any) -> Any:
    context = browser.new_context(
        viewport=PHONE,
        is_mobile=True,
        has_touch=True,
        color_scheme=scheme,
        bypass_csp=True,  # only so that the test may evaluate its own waits in the page
        **options,
    )
    context.add_init_script(RECORD_PHONE_APIS)
    return live_page(context, url)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `serve --port none` (Ann, Bob, Cat) for the tests that need no box."""
    folder = tmp_path_factory.mktemp("table")
    argv = [sys.executable, "-m", "engine.cli", "serve", "--port", "none"]
    argv += ["--players", "Ann,Bob,Cat", "--http", "127.0.0.1:0", "--code", "424242"]
    served = Served(argv, folder)
    yield served
    served.stop()


@contextlib.contextmanager
def api(served: Served) -> Iterator[httpx.Client]:
    """A joined HTTP client of `served` (a second referee at the table)."""
    origin = {"origin": served.url.rstrip("/")}
    with httpx.Client(base_url=served.url, headers=origin, timeout=30) as client:
        assert client.post("/api/join", json={"code": served.code}).status_code == 200
        yield client


def started(client: httpx.Client) -> None:
    """The shared table's round under way: Ann turned up R5 (unless another test did)."""
    if client.get("/api/state").json()["view"]["phase"] == "deal":
        assert client.post("/api/act", json={"line": "R5"}).json()["ok"]


def log_lines(page: Any) -> list[str]:
    return page.locator("#messages li").all_inner_texts()


def test_a_claimed_seat_buzzes_and_is_highlighted_on_its_turn(table: Served, browser: Any) -> None:
    page = open_phone(browser, table.url)
    watcher = open_phone(browser, table.url)
    with api(table) as other:  # another phone referees
        started(other)  # Bob's turn on R5
        join(page, table.code)
        page.locator("#alerts").check()  # the player turns the alerts on (a tap: sound may play)
        page.select_option("#claim", "2")  # "I am Cat"
        page.wait_for_function("unoattack.me === 2 && unoattack.claims.includes(2)")
        # every page shows the seat as claimed
        expect(watcher.locator("#seats tr[data-seat='2'] .badge.phone")).to_be_visible()
        expect(page.locator("#me-strip")).to_contain_text("Cat")
        assert not page.evaluate("document.body.classList.contains('my-turn')")
        buzzes = page.evaluate("window.buzzes.length")
        reply = other.post("/api/act", json={"line": "R7"}).json()  # Bob plays: Cat's turn
        assert reply["ok"], reply
    page.wait_for_function("unoattack.view && unoattack.view.turn === 2")
    page.wait_for_function("document.body.classList.contains('my-turn')")
    page.wait_for_function("n => window.buzzes.length > n", arg=buzzes)
    assert page.evaluate("window.buzzes.at(-1)") == [200, 100, 200]
    expect(page.locator("#me-strip")).to_contain_text("Your turn!")
    assert page.evaluate("window.wakeLocks") == ["screen"]  # a game runs: the screen stays on
    assert page.evaluate(IN_VIEW, "#me-strip")
    # Leave: the seat is free again, for every page
    page.locator("#join-open").tap()
    watcher.wait_for_function("!unoattack.claims.includes(2)")
    assert page.errors == [] and watcher.errors == []
    page.context.close()
    watcher.context.close()


def test_no_log_line_twice_after_opening_and_after_reconnecting(
    table: Served, browser: Any
) -> None:
    with api(table) as other:
        started(other)
        for line in ("hand Ann 8", "hand Cat 9"):
            assert other.post("/api/act", json={"line": line}).json()["ok"]
        page = open_phone(browser, table.url)
        first = log_lines(page)
        assert first and len(first) == len(set(first)), first
        page.evaluate("unoattack.reconnect()")
        page.wait_for_function("unoattack.hellos === 2")
        assert other.post("/api/act", json={"line": "hand Bob 6"}).json()["ok"]
        page.wait_for_function(
            "n => document.querySelectorAll('#messages li').length > n", arg=len(first)
        )
        again = log_lines(page)
    assert len(again) == len(set(again)) == len(first) + 1, again
    assert again[1:] == first
    assert page.errors == []
    page.context.close()


def test_lang_query_gives_that_languages_page_and_is_remembered(
    table: Served, browser: Any
) -> None:
    thai = i18n.language("th").gettext
    page = open_phone(
        browser, table.url + "?lang=th", extra_http_headers={"Accept-Language": "en-GB"}
    )
    assert page.get_attribute("html", "lang") == "th"
    expect(page.locator("#join-open")).to_have_text(thai("Join"))
    expect(page.locator("#lang")).to_have_value("th")
    assert "th" in page.evaluate("unoattack.table && document.documentElement.lang")
    page.goto(table.url)  # no query: the cookie keeps the page Thai
    page.wait_for_function("unoattack.seq > 0")
    expect(page.locator("#join-open")).to_have_text(thai("Join"))
    page.select_option("#lang", "cy")  # the picker opens the page in Welsh
    page.wait_for_function("document.documentElement.lang === 'cy'")
    page.wait_for_function("unoattack.seq > 0")
    expect(page.locator("#join-open")).to_have_text(i18n.language("cy").gettext("Join"))
    page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_both_colour_schemes_render(
    scheme: str, table: Served, browser: Any, screenshots: Path
) -> None:
    page = open_phone(browser, table.url, scheme=scheme)
    background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    channels = [int(c) for c in background[background.index("(") + 1 : -1].split(",")[:3]]
    assert (sum(channels) < 150) == (scheme == "dark"), background
    page.screenshot(path=str(screenshots / f"web-{scheme}.png"))
    # the toggle overrides the phone's scheme: auto -> dark -> light
    page.locator("#theme").tap()
    page.locator("#theme").tap()
    assert page.get_attribute("html", "data-theme") == "light"
    assert page.errors == []
    page.context.close()


@pytest.fixture
def box_port(tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    """A mock box behind a stable name (a symlink, as udev names a USB serial port): a
    restarted box is reached again under it. (The box's own folder is outside `tmp_path`.)"""
    from engine.boxport import mock_config
    from engine.demo import MockBox

    box = MockBox(mock_config(speed=20, players=3, seed=1))
    link = tmp_path / "box-port"
    try:
        os.symlink(box.start(), link)
        yield box, link
    finally:
        box.cleanup()


def state(served: Served) -> dict[str, Any]:
    return httpx.get(served.url + "api/state", timeout=10).json()


def test_answers_in_view_and_the_box_dashboard(
    box_port: tuple[Any, Path],  # first: the box outlives the server, whose goodbye locks it
    serve: Callable[..., Served],
    browser: Any,
    screenshots: Path,
) -> None:
    box, link = box_port
    served = serve("serve", "--port", str(link), "--players", "Ann,Bob,Cat")
    page = open_phone(browser, served.url)
    join(page, served.code)
    expect(page.locator("#uno-toggle")).to_be_hidden()  # the deal: no UNO to say
    tap(page, "#picker [data-card='R5']")
    tap(page, "#picker [data-card='RH2']")  # Cat must hit twice
    page.wait_for_selector("#button-state .live")
    # While Cat owes hits, her presses only: no Hit or Pass for anyone
    expect(page.locator("#act-buttons [data-act='press']")).to_be_visible()
    for line in ("hit", "pass"):
        expect(page.locator(f"#act-buttons [data-act='{line}']")).to_have_count(0)
    # The strip stays in view while the cards are scrolled (the last row of the picker).
    page.locator("#picker [data-card='WC']").scroll_into_view_if_needed()
    assert page.evaluate("window.scrollY") > 0
    for part in ("#strip", "#top", "#turn", "#owes li"):
        assert page.evaluate(IN_VIEW, part), part
    # A refusal arrives where the thumb is.
    tap(page, "#picker [data-card='B7']", changes=False)
    expect(page.locator("#reply")).to_contain_text("Cat must hit")
    assert page.evaluate(IN_VIEW, "#reply")
    # A press: its result as a toast, in view.
    page.locator("[data-act='press']").tap()
    page.wait_for_function("unoattack.view.presses[2] === 1")
    burst = state(served)["box"]["bursts"][0]
    said = f"Cat: {burst['ejected']} card" if burst["ejected"] else "Cat: dry"
    expect(page.locator("#box-result")).to_contain_text(said)
    assert page.evaluate(IN_VIEW, "#box-result")
    # the README's picture: Cat owes one more hit, the button is live for her, the toast
    page.wait_for_selector("#button-state .live")
    page.screenshot(path=str(screenshots / "web-phone.png"))
    page.locator("[data-act='press']").tap()
    page.wait_for_function("unoattack.view.presses[2] === 2")

    # The dashboard: firmware, uptime, the hopper gauge, the console.
    page.locator("#boxpanel").scroll_into_view_if_needed()
    expect(page.locator("#dashboard")).to_be_visible()
    expect(page.locator("#link")).to_have_attribute("data-link", "connected")
    expect(page.locator("[data-fact=firmware]")).not_to_be_empty()
    expect(page.locator("[data-fact=uptime]")).not_to_be_empty()
    assert (
        page.evaluate("document.getElementById('hopper-gauge').value")
        == state(served)["box"]["hopper"]
    )
    expect(page.locator("#console li").first).to_be_visible()
    # Test fire: `dispense 1` through the op table; its fire event arrives, and counts for nobody.
    presses = state(served)["view"]["presses"]
    page.locator("#test-fire").tap()
    page.wait_for_function(
        "unoattack.box.bursts.length && unoattack.box.bursts[0].source === 'dispense'"
    )
    data = state(served)
    assert data["box"]["bursts"][0]["source"] == "dispense"
    assert data["view"]["presses"] == presses
    expect(page.locator("#console")).to_contain_text("fire")
    assert page.evaluate(OVERFLOW) == []  # the dashboard too fits the phone
    page.screenshot(path=str(screenshots / "web-dashboard.png"), full_page=True)
    # The box's sound off (its settings.set); it stays off across a restart of the box.
    sound = page.locator("[data-setting='sound.enabled']")
    expect(sound).to_be_checked()
    sound.uncheck()
    page.wait_for_function("unoattack.box.settings['sound.enabled'] === false")
    box.stop()  # the box restarts: the dashboard shows the link waiting for it
    page.wait_for_function("unoattack.box.link === 'reconnecting'")
    link.unlink()
    os.symlink(box.start(), link)
    page.wait_for_function("unoattack.box.link === 'connected'", timeout=WAIT_MS)
    page.wait_for_function("unoattack.box.settings['sound.enabled'] === false")
    expect(sound).not_to_be_checked()
    # Reconnect: this page's connection anew, then the box's status asked
    hellos = page.evaluate("unoattack.hellos")
    page.locator("#box-reconnect").tap()
    page.wait_for_function("n => unoattack.hellos > n", arg=hellos)
    expect(page.locator("#reply")).to_have_text("box: status done")
    stored = json.loads(Path(f"{box.journal}.settings.json").read_text())
    assert stored["personality"]["sound.enabled"] is False
    # Few cards left in the hopper (fewer than one burst may take): the dashboard warns.
    expect(page.locator("#hopper-low")).to_be_hidden()
    with api(served) as other:
        assert other.post("/api/act", json={"line": "load 5"}).json()["ok"]
    page.wait_for_function("unoattack.box.hopper === 5")
    expect(page.locator("#hopper-low")).to_have_text("Only 5 cards left: load the launcher soon")
    assert page.errors == []
    page.context.close()


def test_new_game_keeps_the_last_games_rounds_in_the_history(
    serve: Callable[..., Served], browser: Any, tmp_path: Path
) -> None:
    state_file = tmp_path / "night.json"
    served = serve("serve", "--port", "none", "--players", "Ann,Bob", "--state", str(state_file))
    page = open_phone(browser, served.url)
    watcher = open_phone(browser, served.url)
    expect(page.locator("#new-game")).to_be_hidden()  # not for a page that only watches
    join(page, served.code)
    with api(served) as other:  # round 1: Bob goes out, Ann is left with 96 points
        for line in ("R5", "hand Bob 1", "R7", "R9 B9 G9 Y9 RS BS GS"):
            assert other.post("/api/act", json={"line": line}).json()["ok"], line
    page.wait_for_function("unoattack.view.rounds.length === 1")
    expect(page.locator("#rounds tr")).to_have_count(2)  # the heading, round 1
    expect(page.locator("#csv")).to_be_visible()
    expect(page.locator("#uno-toggle")).to_be_hidden()  # a round's end: no UNO to say
    page.once("dialog", lambda dialog: dialog.dismiss())  # "Start a new game...?" No
    page.locator("#new-game").scroll_into_view_if_needed()
    page.locator("#new-game").tap()
    assert not (tmp_path / "night.games.jsonl").exists()
    assert page.evaluate("unoattack.view.rounds.length") == 1
    page.once("dialog", lambda dialog: dialog.accept())  # Yes
    page.locator("#new-game").tap()
    expect(page.locator("#reply")).to_have_text(
        "the last game is kept in night.games.jsonl · new game: Ann, Bob"
    )
    assert page.evaluate(IN_VIEW, "#reply")
    for phone in (page, watcher):  # every page shows the new game
        phone.wait_for_function("unoattack.view.rounds.length === 0 && unoattack.view.round === 1")
        expect(phone.locator("#rounds tr")).to_have_count(0)
        expect(phone.locator("#messages li").first).to_have_text("new game: Ann, Bob")
    (kept,) = (tmp_path / "night.games.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(kept)["scores"] == [0, 96]
    assert page.errors == [] and watcher.errors == []
    page.context.close()
    watcher.context.close()
