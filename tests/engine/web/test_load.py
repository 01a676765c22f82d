"""Twenty phones watch a whole game through the mock box (`demo --web`): every page receives
every update, in order, and a page whose connection drops mid-game catches up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import pytest

from tests.engine.web.conftest import PHONE, WAIT_MS, Served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
PAGES = 20
GAME_TIMEOUT_MS = 480_000


# What a page holds, read in one go (an update landing between two reads cannot split it).
SEEN = (
    "({seq: unoattack.seq, received: unoattack.received, gaps: unoattack.gaps,"
    " view: unoattack.view})"
)


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
        # The game is over; its last updates (the box's status, the demo's word) may still be on
        # their way. The end is the server's newest update once every page holds it and nothing
        # newer came meanwhile: a late update costs one more round, not a failed test (no quiet
        # spell to guess, which a loaded machine outlasts).
        while True:
            final = newest(served)
            seq = final["seq"]
            for page in pages:
                page.wait_for_function("s => unoattack.seq >= s", arg=seq)
            seen = [page.evaluate(SEEN) for page in pages]
            if newest(served)["seq"] == seq and all(s["seq"] == seq for s in seen):
                break
        for got in seen:
            received = got["received"]
            assert received == list(range(received[0], seq + 1)), "every update, in order"
            assert received[0] <= 3  # connected before the bots started
            assert got["gaps"] == 0
            assert got["view"] == final["view"]
        assert dropped.evaluate("unoattack.hellos") == 2
        assert final["view"]["phase"] == "over"
    finally:
        context.close()
    served.read_more(0.5)
    assert "page(s) watching: the bots start" in served.output
    assert "wins with" in served.output and "cards conserved: yes" in served.output
