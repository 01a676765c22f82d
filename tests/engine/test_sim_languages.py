"""`unoattack sim` and `sweep` tables in each language: the words of the catalog, numbers as
the language writes them, columns lined up by what a terminal shows; --json stays as it is."""

from __future__ import annotations

import json

import pytest

import i18n
from engine.cli import main
from i18n.layout import width
from tests.conftest import run_main

SIM = ["sim", "--games", "6", "--players", "3", "--seed", "2"]


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_sim_table_in_each_language(code, capsys):
    exit_code, out, _err = run_main(main, ["--lang", code, *SIM], capsys)
    assert exit_code == 0
    lang = i18n.language(code)
    t = lang.gettext
    for word in ("seat", "games won", "rounds won", "points", "mean rounds per game", "elapsed"):
        assert t(word) in out
        assert code == "en" or t(word) != word
    _, json_out, _ = run_main(main, ["--lang", code, *SIM, "--json"], capsys)
    data = json.loads(json_out)  # machine output: the same keys in every language
    assert lang.number(data["cards_fired"]) in out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith(t("seat")))
    table = lines[head : head + 4]
    # Right-aligned number columns end at the same terminal cell on every line.
    assert len({width(line) for line in table}) == 1, table


def test_romanian_groups_thousands_with_a_dot(capsys):
    _, out, _ = run_main(main, ["--lang", "ro", *SIM], capsys)
    _, json_out, _ = run_main(main, [*SIM, "--json"], capsys)
    fired = json.loads(json_out)["cards_fired"]
    assert fired >= 1000
    assert f"{fired:,}".replace(",", ".") in out


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_sweep_table_in_each_language(code, capsys):
    argv = ["--lang", code, "sweep", "--games", "2", "--vary", "jam.base=0.1,0.3"]
    exit_code, out, _err = run_main(main, argv, capsys)
    assert exit_code == 0
    t = i18n.language(code).gettext
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["#", t("setting"), t("rounds")]
    assert (
        t("per game (means): rounds, turns, presses, cards fired, minutes at the table (estimated)")
        in out
    )
