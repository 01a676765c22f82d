"""The page in each language, in a real browser at a phone's width: its own words follow the
browser's Accept-Language (or the picker), and so do the referee's (whatever `serve --lang`
says); the cards show their names beside the notation, and nothing is wider than a 360 px
screen. Two browsers in two languages at one table each read the referee in their own. One
screenshot per language (docs/images/web-<lang>.png with `make screenshots`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

import i18n
from engine.cards import parse_card
from engine.words import card_name
from tests.engine.web.conftest import PHONE, WAIT_MS, Served
from tests.engine.web.test_browser import join, tap

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]
BROWSER_TAGS = {"en": "en-GB", "th": "th-TH", "zh_Hant": "zh-TW", "ro": "ro-RO", "cy": "cy-GB"}

# Every element whose box reaches past the viewport's edges (unless a scrolling ancestor holds
# it: a row that scrolls is not a page overflow), or whose content is wider than its own box
# (text spilling out of a button, or cut off by a clipping table).
OVERFLOW = """() => {
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const inScroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) if (scrolls(p)) return true;
    return false;
  };
  const wide = [...document.querySelectorAll("body *")].filter((el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || inScroller(el)) return false;
    const out = r.right > innerWidth + 0.5 || r.left < -0.5;
    const spills = el.clientWidth > 0 && !scrolls(el) && el.scrollWidth > el.clientWidth + 1;
    return out || spills;
  }).map((el) => `${el.tagName.toLowerCase()}#${el.id}: ${el.textContent.slice(0, 40)}`);


  if (document.documentElement.scrollWidth > innerWidth) wide.push("the page scrolls sideways");
  return wide;
}"""


def open_page(browser: Any, url: str, code: str) -> Any:
    context = browser.new_context(
        viewport=PHONE,
        is_mobile=True,
        has_touch=True,
        bypass_csp=True,  # only so that the test may evaluate its own waits in the page
        extra_http_headers={"Accept-Language": f"{BROWSER_TAGS[code]},en;q=0.5"},
    )
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#conn.on")
    page.wait_for_function("unoattack.seq > 0")
    return page


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_the_page_in_each_language_fits_a_phone(
    code: str, serve: Callable[..., Served], browser: Any, screenshots: Path
) -> None:
    served = serve("--lang", code, "serve", "--port", "none", "--players", "Ann,Bob,Cat")
    page = open_page(browser, served.url, code)
    lang = i18n.language(code)
    t = lang.gettext
    assert page.get_attribute("html", "lang") == code.replace("_", "-")
    expect(page.locator("#join-open")).to_have_text(t("Join"))
    expect(page.locator("#lang")).to_have_value(code)
    join(page, served.code)
    expect(page.locator("#join-open")).to_have_text(t("Leave"))
    tap(page, "#picker [data-card='R5']")
    tap(page, "#picker [data-card='B7']", changes=False)
    said = t("{card} does not go on {top} ({colour}): play a {colour} card, a {face} or a wild")
    reply = said.format(card="B7", top="R5", colour=t("red"), face="5")
    expect(page.locator("#reply")).to_have_text(reply)
    tap(page, "#picker [data-card='RH2']")
    i18n.use(code)  # the card names the page shows are the terminal's, in the same language
    expect(page.locator("#top-name")).to_have_text(card_name(parse_card("RH2")))
    owes = lang.ngettext("{player} must hit {n} more time", "{player} must hit {n} more times", 2)
    expect(page.locator("#owes li").first).to_have_text(owes.format(player="Cat", n=2))
    assert page.evaluate(OVERFLOW) == []
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshots / f"web-{code}.png"))

    assert page.evaluate(OVERFLOW) == []
    page.context.close()


def test_the_picker_changes_the_pages_language(serve: Callable[..., Served], browser: Any) -> None:
    served = serve("serve", "--port", "none", "--players", "Ann,Bob")
    page = open_page(browser, served.url, "en")
    expect(page.locator("#join-open")).to_have_text("Join")
    with page.expect_navigation():
        page.select_option("#lang", "cy")
    page.wait_for_selector("#conn.on")
    assert page.get_attribute("html", "lang") == "cy"
    assert i18n.language("cy").gettext("Join") == "Ymuno"
    expect(page.locator("#join-open")).to_have_text("Ymuno")
    assert page.evaluate(OVERFLOW) == []
    page.context.close()


def referee_says(code: str, lines: list[str]) -> tuple[list[str], str | None, list[str]]:
    """What the referee says to `lines` when it runs in `code` (the terminal's words): every
    line said, the last refusal, and who owes what after them."""
    from engine.table.referee import Referee
    from engine.table.session import TableSession
    from engine.web.table_service import _Lines

    try:
        i18n.use(code)
        out = _Lines()
        session = TableSession(Referee(["Ann", "Bob", "Cat"], deck="attack"), out=out)  # type: ignore[arg-type]
        said: list[str] = []
        for line in lines:
            session.handle_line(line)
            said += map(str, out.take())
        owes = [str(line) for line in session.view()["owes"]]
        return said, None if session.refusal is None else str(session.refusal), owes
    finally:
        i18n.use("en")


def test_two_players_read_the_referee_each_in_their_own_language(
    serve: Callable[..., Served], browser: Any
) -> None:
    # The server speaks Romanian; the two browsers ask for Thai and Welsh.
    served = serve("--lang", "ro", "serve", "--port", "none", "--players", "Ann,Bob,Cat")
    thai, welsh = (open_page(browser, served.url, code) for code in ("th", "cy"))
    join(thai, served.code)
    join(welsh, served.code)
    tap(thai, "#picker [data-card='R5']")
    tap(thai, "#picker [data-card='RH2']")  # Bob: Cat must hit twice
    tap(welsh, "#picker [data-card='B7']", changes=False)  # refused: Cat must hit first
    for page, code in ((thai, "th"), (welsh, "cy")):
        said, refusal, owes = referee_says(code, ["R5", "RH2", "B7"])
        page.wait_for_function("n => unoattack.seq >= n", arg=3)
        expect(page.locator("#owes li")).to_have_text(owes)
        expect(page.locator("#messages li").first).to_have_text(said[-2])  # the hits owed
        assert said[-1] == "! " + refusal  # (refused: only the Welsh page asked)
        if page is welsh:
            expect(page.locator("#reply")).to_have_text(refusal)
        assert page.evaluate(OVERFLOW) == []
    assert (
        thai.locator("#owes li").first.text_content()
        != welsh.locator("#owes li").first.text_content()
    )
    for page in (thai, welsh):
        page.context.close()
