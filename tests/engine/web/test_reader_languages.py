"""Each page reads the referee in its own language: what the table says is kept as
`i18n.Phrase`s, and saying them again in a language gives exactly what the referee says when it
runs in that language (the terminal's words); the hub encodes an update once per language read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

import i18n
from engine.table.referee import Referee
from engine.table.session import TableSession
from engine.web.hub import Hub
from engine.web.table_service import _Lines
from tests.engine.web.test_hub import arun

# Plays, hits, a refusal of each kind, questions and their answers, UNO calls and catches, hand
# corrections, undo, queries: most of what the referee and the session say at a table.
LINES = [
    "R5", "R7", "hit", "fired 2", "B3", "WAA", "B", "Bob", "fired 0", "fired 1", "pass",
    "uno Ann", "catch Bob", "hand Cat 3", "status", "scores", "help", "undo", "draw", "press",
    "load 5", "dealer Ann", "jump Ann R7", "nonsense", "RH2", "hit", "fired 3", "fired x",
    "challenge", "uno", "hand Zed 3", "B5", "RS", "YR", "GDA", "1", "WAA", "", "WD4",
]  # fmt: skip


@pytest.fixture
def back_to_english() -> Iterator[None]:
    yield
    i18n.use("en")


def said(code: str) -> tuple[list[str], list[object]]:
    """What a table says to the script in `code`: its lines, and each step's prompt and owes."""
    i18n.use(code)
    out = _Lines()
    session = TableSession(Referee(["Ann", "Bob", "Cat"], deck="attack"), out=out)  # type: ignore[arg-type]
    session.start()
    lines, views = list(out.take()), []
    for line in LINES:
        session.handle_line(line)
        lines += out.take()
        view = session.view()
        views.append([view["prompt"], view["owed"], view["owes"]])
    return lines, views


@pytest.mark.parametrize("code", [c for c in i18n.LANGUAGES if c != "en"])
def test_lines_said_again_are_the_lines_said_in_that_language(code, back_to_english):
    native_lines, native_views = said(code)
    lines, views = said("en")
    lang = i18n.language(code)
    assert len(lines) > 60
    assert i18n.say_in(lang, lines) == native_lines
    assert i18n.say_in(lang, views) == native_views
    # and in English again, from the lines made in that language
    assert i18n.say_in(i18n.language("en"), native_lines) == lines


def test_the_hub_encodes_an_update_once_per_language_read(back_to_english):
    i18n.use("en")
    out = _Lines()
    session = TableSession(Referee(["Ann", "Bob", "Cat"], deck="attack"), out=out)  # type: ignore[arg-type]
    session.start()
    session.handle_line("R5")
    hub = Hub()
    hub.publish({"messages": out.take(), "view": session.view(), "cause": {"line": "R5"}})

    frames: list[list[str]] = []

    async def fan_out() -> None:
        hub.bind(asyncio.get_running_loop())
        subs = [hub.subscribe(1, lang) for lang in ("th", "cy", "th", "cy", "th")]
        session.handle_line("R7")
        hub.publish({"messages": out.take(), "view": session.view(), "cause": {"line": "R7"}})
        await asyncio.sleep(0)
        frames.extend([sub.queue.get_nowait() for _ in range(sub.queue.qsize())] for sub in subs)

    arun(fan_out)
    th, cy = (json.loads(frames[i][0]) for i in (0, 1))
    t, c = i18n.language("th").gettext, i18n.language("cy").gettext
    assert th["messages"][0] == t("{player} plays {cards}").format(
        player="Bob", cards="R7 (7 สีแดง)"
    )
    assert cy["view"]["prompt"] != th["view"]["prompt"]
    assert c("red") in cy["view"]["prompt"]
    assert frames[0] == frames[2] == frames[4] and frames[1] == frames[3]
    # one frame per language read (and the same object for every page reading it)
    assert sorted(hub._log[-1].frames) == ["cy", "th"]
    assert frames[0][0] is frames[2][0]
    # a page of another language catching up later gets its own
    assert t("red") in hub.latest("th") and c("red") in hub.latest("cy")
    assert [r["line"] for r in hub.recent("cy")] == i18n.say_in(
        i18n.language("cy"), [line for _seq, line in hub._recent]
    )
