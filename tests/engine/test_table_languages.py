"""`unoattack table` in each language: the prompts, the referee's words and its refusals come
out in the language asked for (`--lang`, or the environment's), card notation stays as typed."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

import i18n
from engine.cli import main
from tests.conftest import ROOT, run_main

# A short game at a table without a box: a card turned up, a play, a hit that fires two cards,
# a play that does not match (refused), the WAA with its colour and target asked for.
LINES = "R5\nR7\nhit\nfired 2\nB3\nWAA\nB\nBob\nquit\n"


def referee(code: str, tmp_path, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(LINES))
    argv = ["--lang", code, "table", "--port", "none", "--players", "Ann,Bob,Cat"]
    code_, out, err = run_main(main, [*argv, "--state", str(tmp_path / "t.json")], capsys)
    assert err == ""
    return code_, out


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_the_referee_speaks_the_language_asked_for(code, tmp_path, monkeypatch, capsys):
    exit_code, out = referee(code, tmp_path, monkeypatch, capsys)
    assert exit_code == 1  # a piped session with a refused line
    lang = i18n.language(code)
    t = lang.gettext
    red, blue = t("red"), t("blue")
    expected = [
        # prompts
        "["
        + t("round {round}").format(round=1)
        + "] "
        + t("{dealer} deals: card turned up").format(dealer="Ann")
        + "> ",
        t("{player} ({count}) on {card} {colour}").format(
            player="Bob", count=7, card="R5", colour=red
        ),
        t("colour for {cards} (R Y G B)").format(cards="WAA") + "> ",
        t("{card}: player to aim at").format(card="WAA") + "> ",
        # what happened, with the cards' names beside the notation (not in English)
        t("{player} takes {cards} (holds {held})").format(
            player="Cat", cards=lang.ngettext("{n} card", "{n} cards", 2).format(n=2), held=9
        ),
        t("colour is now {colour}").format(colour=blue),
        # the refusal, worded by the referee with the colour's and card's words
        "! "
        + t(
            "{card} does not go on {top} ({colour}): play a {colour} card, a {face} or a wild"
        ).format(card="B3", top="R7", colour=red, face="7"),
        t("game saved in {path}; run the same command again to resume").format(
            path=tmp_path / "t.json"
        ),
    ]
    for line in expected:
        assert line in out, line
    if code == "en":
        assert "Bob plays R7\n" in out
    else:
        # Translated for real, and the notation typed stays, its local name beside it.
        assert t("game over") != "game over"
        face_7_red = t("{colour} {face}").format(colour=red, face="7")
        assert t("{player} plays {cards}").format(player="Bob", cards=f"R7 ({face_7_red})") in out
        assert "Bob plays" not in out and "press the button" not in out


def test_thai_table_reads_as_thai(tmp_path, monkeypatch, capsys):
    _, out = referee("th", tmp_path, monkeypatch, capsys)
    assert "[รอบ 1] Bob (7) บน R5 สีแดง> " in out
    assert "! B3 ลงบน R7 (สีแดง) ไม่ได้: เล่นไพ่สีแดง ไพ่ 7 หรือไพ่ Wild" in out
    assert "Cat ได้ไพ่ 2 ใบ (ถือ 9 ใบ)" in out


def test_welsh_counts_with_its_own_plural_forms(tmp_path, monkeypatch, capsys):
    _, out = referee("cy", tmp_path, monkeypatch, capsys)
    assert "mae Cat yn cymryd 2 gerdyn (yn dal 9)" in out  # dau + soft mutation


def test_the_environment_picks_the_language_and_a_bad_lang_is_one_line(tmp_path):
    env = {"PATH": "", "LANG": "zh_TW.UTF-8", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [
            *(sys.executable, "-m", "engine.cli", "table", "--port", "none"),
            *("--players", "Ann,Bob", "--state", str(tmp_path / "t.json")),
        ],
        input="quit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert "[第 1 局] Ann 發牌:翻開的牌> " in run.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "engine.cli", "--lang", "klingon", "score", "R5"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr == (
        "unoattack: --lang 'klingon': unknown language; use one of en, th, zh_Hant, ro, cy\n"
    )


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_help_is_in_the_language_asked_for(code, capsys):
    exit_code, out, _err = run_main(main, ["--lang", code, "table", "--help"], capsys)
    assert exit_code == 0
    t = i18n.language(code).gettext
    assert out.startswith(t("usage: ") + "unoattack table")
    assert f"\n{t('options')}:\n" in out
    assert " ".join(t("start a new game even if FILE exists").split()[:2]) in out
