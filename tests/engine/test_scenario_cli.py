"""`unoattack scenario`: output shape, exit codes, malformed files, the documented examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.toml"))
KEYS = {
    "hands",
    "top",
    "color",
    "turn",
    "direction",
    "pending",
    "round_over",
    "winner",
    "round_points",
    "launcher_left",
    "log",
}

GOOD = """
deck = "attack"
players = 3
[start]
hands = [["YH2", "B1"], ["B2", "G3"], ["Y3"]]
top = "Y5"
turn = 0
launcher = [2]
pile = ["R1", "R2", "R3"]
[[actions]]
seat = 0
play = "yh2"
[[actions]]
seat = 1
hit = true
"""


def scenario_cli(tmp_path: Path, text: str, *flags: str) -> tuple[int, str, str]:
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["scenario", str(path), *flags])
    return code, str(path), ""


def test_json_output_has_every_documented_key(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code, _, _ = scenario_cli(tmp_path, GOOD, "--json")
    out = capsys.readouterr().out
    assert code == 0 and out.count("\n") == 1
    state = json.loads(out)
    assert set(state) >= KEYS
    assert state["pending"] == [{"seat": 1, "hits": 1}]
    assert state["hands"][1] == ["B2", "G3", "R1", "R2"]
    assert state["launcher_left"] == 1
    assert state["log"][-1] == "seat 1 hits: 2 cards"


def test_without_json_flag_output_is_indented_json(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    scenario_cli(tmp_path, GOOD)
    out = capsys.readouterr().out
    assert out.startswith("{\n")
    assert json.loads(out)["turn"] == 2


def test_illegal_action_exits_1_with_error_and_state(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bad = GOOD + '[[actions]]\nseat = 1\nplay = "B2"\n'
    code, _, _ = scenario_cli(tmp_path, bad, "--json")
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["error"] == {"action": 2, "message": "seat 1 must hit 1 more time before playing"}
    assert out["state"]["pending"] == [{"seat": 1, "hits": 1}]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("turn = 0", "turn = 0\nspeed = 3"), "unknown field `start.speed`"),
        (("players = 3", "players = 3\nspeed = 'x'"), "unknown field `speed`"),
        (("players = 3", "players = 3\nmode = 'x'"), "mode = 'x': one of target, lowest"),
        (("hit = true", "hit = true\ncolour = 'R'"), "unknown field `actions[1].colour`"),
        (('top = "Y5"', 'top = "Y55"'), "start.top: `Y55` is not a card"),
        (('top = "Y5"', 'top = "WD4"'), "start.top: `WD4` is not in the attack deck"),
        (('play = "yh2"', 'play = "R0"'), "actions[0].play: `R0` is not in the attack deck"),
        (("players = 3", 'players = "3"'), "players = '3': a whole number from 2 to 10"),
        (("turn = 0", "turn = 5"), "start.turn = 5"),
        (("launcher = [2]", "launcher = [-1]"), "start.launcher[0] = -1"),
        (("hit = true", "hit = 1"), "actions[1].hit = 1: write hit = true"),
        (("seat = 1", "seat = 1\ndraw = true"), "actions[1] needs exactly one of"),
        (
            ('"R1", "R2", "R3"', '"R1", "R1", "R1"'),
            "`R1` is used 3 times but the attack deck has 2",
        ),
        (
            ("[start]", "[options]\nstackng = true\n[start]"),
            "[options] unknown rule option `stackng`",
        ),
        (('deck = "attack"', 'deck = "uno"'), "deck: unknown deck `uno`"),
        (("[start]", "[start]\ndirection = 2"), "start.direction = 2"),
        (("turn = 0", "turn = 0\ncolor = 'P'"), "start.color = 'P'"),
    ],
)
def test_malformed_file_exits_2_with_one_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture, change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in GOOD
    code, path, _ = scenario_cli(tmp_path, GOOD.replace(old, new, 1), "--json")
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert message in err
    assert err.startswith(f"unoattack scenario: {path}: ")


def test_unreadable_or_invalid_toml_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["scenario", str(tmp_path / "missing.toml")]) == 2
    assert "cannot read" in capsys.readouterr().err
    code, _, _ = scenario_cli(tmp_path, "players = [", "--json")
    assert code == 2
    assert "not valid TOML" in capsys.readouterr().err


def test_pile_left_out_holds_the_rest_of_the_deck(capsys: pytest.CaptureFixture) -> None:
    main(["scenario", str(ROOT / "docs/examples/house-stacking.toml"), "--json"])
    state = json.loads(capsys.readouterr().out)
    held = sum(len(h) for h in state["hands"]) + len(state["discard"]) + state["launcher_left"]
    assert held == 112


def test_deck_file_relative_to_the_scenario(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "box.toml").write_text("[cards]\nR1 = 10\nB2 = 10\nW = 4\n", encoding="utf-8")
    text = (
        'deck = "box.toml"\nrules = "attack"\nplayers = 2\n[start]\n'
        'hands = [["R1", "W"], ["B2"]]\ntop = "R1"\nturn = 0\n'
        '[[actions]]\nseat = 0\nplay = "W"\ncolor = "B"\n'
    )
    code, _, _ = scenario_cli(tmp_path, text, "--json")
    state = json.loads(capsys.readouterr().out)
    assert code == 0 and state["color"] == "B" and state["launcher_left"] == 24 - 4


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_documented_examples_run(path: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["scenario", str(path), "--json"])
    out = json.loads(capsys.readouterr().out)
    if path.name.startswith("illegal"):
        assert code == 1 and "must hit 2 more times" in out["error"]["message"]
    else:
        assert code == 0 and set(out) >= KEYS
