"""Twenty phones watch a whole game through the mock box (`demo --web`): every page receives
every update, in order, and a page whose connection drops mid-game catches up."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import pytest

from tests.engine.web.conftest import PHONE, WAIT_MS, Served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
PAGES = 20
GAME_TIMEOUT_MS = 480_000


def newest(served: Served) -> dict[str, Any]:
    return httpx.get(served.url + "api/state", timeout=10).json()


def test_twenty_pages_follow_a_whole_mock_box_game(
    serve: Callable[..., Served], browser: Any
) -> None:
    served = serve(
        # A short whole game (one round of some 80 moves): 20 pages render every update.
        "demo", "--web", "--pace", "0", "--players", "3", "--target", "50", "--speed", "50",
        "--seed", "5",
        "--wait-pages", str(PAGES),
    )  # fmt: skip
    context = browser.new_context(viewport=PHONE, bypass_csp=True)
    context.set_default_timeout(WAIT_MS)
    try:
        pages = []
        for _ in range(PAGES):
            page = context.new_page()
            page.goto(served.url)
            pages.append(page)
        for page in pages:
            page.wait_for_function("unoattack.seq > 0")
        first = pages[0]
        first.wait_for_function("unoattack.seq > 60", timeout=GAME_TIMEOUT_MS)
        dropped = pages[PAGES // 2]
        dropped.evaluate("unoattack.reconnect()")  # the phone slept, or walked out of the Wi-Fi
        first.wait_for_function(
            "unoattack.view && unoattack.view.phase === 'over'", timeout=GAME_TIMEOUT_MS
        )
        # The game is over; the box's last status reply may still be on its way.
        seq = newest(served)["seq"]
        while True:
            time.sleep(0.5)
            now = newest(served)
            if now["seq"] == seq:
                break
            seq = now["seq"]
        final = now
        for page in pages:
            page.wait_for_function("s => unoattack.seq === s", arg=seq)
            got = page.evaluate("unoattack.received")
            assert got == list(range(got[0], seq + 1)), "every update, in order"
            assert got[0] <= 3  # connected before the bots started
            assert page.evaluate("unoattack.gaps") == 0
            assert page.evaluate("unoattack.view") == final["view"]
        assert dropped.evaluate("unoattack.hellos") == 2
        assert final["view"]["phase"] == "over"
    finally:
        context.close()
    served.read_more(0.5)
    assert "page(s) watching: the bots start" in served.output
    assert "wins with" in served.output and "cards conserved: yes" in served.output
