"""The rule summaries in the players' languages (docs/rules.{th,zh_Hant,ro,cy}.md) keep up with
docs/rules.md: each names every scoring mode, every rule option, the seat rotation's command,
that the table and the page referee every mode, and the night at real tables, so a player finds
in their language what `--help` offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.rules import OPTION_NAMES
from engine.scoring import SCORING_MODES

DOCS = Path(__file__).resolve().parents[2] / "docs"
LANGUAGES = ("th", "zh_Hant", "ro", "cy")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_summary_names_every_mode_option_and_the_schedule(lang: str) -> None:
    text = (DOCS / f"rules.{lang}.md").read_text(encoding="utf-8")
    missing = [f"`{name}`" for name in (*SCORING_MODES, *OPTION_NAMES) if f"`{name}`" not in text]
    assert not missing, f"rules.{lang}.md does not name {', '.join(missing)}"
    assert "unoattack schedule --players N" in text and "`--teams N`" in text
    # the table and the page referee every mode, and follow a night at real tables
    for command in ("`unoattack table`", "`unoattack serve`", "--night night.json --table T"):
        assert command in text, f"rules.{lang}.md does not name {command}"
    assert "unoattack standings night.json" in text and "`next`" in text
