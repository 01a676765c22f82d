"""`unoattack demo` in each language: the transcript is in the language asked for, with the
cards' names beside the notation, and the same game as in English."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import i18n
from engine.cards import parse_card
from engine.words import card_name

ROOT = Path(__file__).resolve().parents[2]


def demo(code: str) -> tuple[str, dict]:
    args = ["--players", "2", "--seed", "3", "--speed", "50", "--target", "40", "--json"]
    run = subprocess.run(
        [sys.executable, "-m", "engine.cli", "--lang", code, "demo", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=80,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    return run.stdout, json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(90)
@pytest.mark.parametrize("code", [c for c in i18n.LANGUAGES if c != "en"])
def test_the_demo_transcript_is_in_the_language_asked_for(code):
    out, summary = demo(code)
    t = i18n.language(code).gettext
    won = summary["winner"]
    assert (
        t("{player} wins with {points} points!").format(
            player=summary["winner_name"], points=summary["scores"][won]
        )
        in out
    )
    pile = re.escape(t("conservation: launcher pile {pile} = box hopper {hopper}"))
    pile = pile.replace(r"\{pile\}", r"(\d+)").replace(r"\{hopper\}", r"(\d+)")
    checks = re.findall(pile, out)
    assert len(checks) == summary["rounds"] >= 1 and all(a == b for a, b in checks)
    press = re.escape(t("press {press} -> {got}")).replace(r"\{press\}", r"(\d+)")
    presses = [int(p) for p in re.findall(press.replace(r"\{got\}", ""), out)]
    assert len(presses) == summary["presses"] and presses == sorted(presses)
    # The cards are shown in notation with their names in this language beside them.
    i18n.use(code)
    named = re.findall(r"(?<![\w-])([RYGB]?(?:[0-9]|[A-Z][A-Z0-9]*)) \(([^()]+)\)", out)
    assert len(named) >= summary["turns"] // 2, out[:2000]
    assert all(name == card_name(parse_card(card)) for card, name in named)
    assert " plays " not in out and "wins with" not in out
