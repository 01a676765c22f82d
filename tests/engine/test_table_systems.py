"""Seed 001's game systems at the table: `unoattack table --port none` fed a typed script, as a
table would type it, for each scoring mode the Chinese sheet describes (shared/seeds/
001_cf35fdddadb321d6.txt), quoting the sheet's sentence. The referee scores through
engine/scoring.py like the simulator (tests/engine/test_table_differential.py checks the two
agree move by move); these check what the table sees: the words, `status` and `--json`.

`hand NAME N` sets what a player holds so that a script can make them go out; `!` at the end of
a hand entered overrules the count the referee tracked.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main


def table(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    players: str,
    script: str,
    *args: str,
    new: bool = True,
) -> tuple[int, dict[str, Any], str]:
    """Run `unoattack table --port none --json` on `script`; (exit code, the JSON, the words)."""
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    argv = ["table", "--port", "none", "--players", players, "--json"]
    argv += ["--state", str(tmp_path / "t.json"), *args]
    code = main([*argv, "--new"] if new else argv)
    out, err = capsys.readouterr()
    return code, json.loads(out), err


# Ann deals R5; Bob goes out on R7, Cat on R8; Dan plays R9 down to one card; Ann goes out on G9.
KNOCKOUT_FIRST = "R5\nhand Bob 1\nR7\nstatus\nhand Cat 1\nR8\n"
KNOCKOUT_REST = "hand Dan 2\nR9 uno\nhand Ann 1\nG9\nstatus\n"


def test_knockout_plays_on_after_a_player_goes_out_until_one_is_left_the_loser(
    monkeypatch, capsys, tmp_path
):
    """淘汰制: "如果多人遊戲中有一人勝出，遊戲仍然繼續 ... 四人局變成三人局 ... 最後有一個人輸"
    (when one player goes out the round goes on with the rest, four becomes three, until one
    player is left: the loser)."""
    code, view, said = table(
        monkeypatch,
        capsys,
        tmp_path,
        "Ann,Bob,Cat,Dan",
        KNOCKOUT_FIRST,
        "--mode",
        "knockout",
    )
    assert code == 0
    assert "Bob is out!" in said and "Cat is out!" in said
    assert "round 1 is over" not in said  # four became three, then two: the round goes on
    assert "knockout mode: the last one left holding cards loses" in said
    assert "gone out: Bob" in said
    assert view["phase"] == "play" and view["finished"] == [1, 2]
    assert view["turn"] == 3  # after Cat: Dan, then Ann, Bob and Cat no longer in turn
    assert view["to_enter"] == [] and view["game_losers"] == []

    # The game is saved with who went out, and goes on from the file.
    code, view, said = table(
        monkeypatch,
        capsys,
        tmp_path,
        "Ann,Bob,Cat,Dan",
        KNOCKOUT_REST,
        new=False,
    )
    assert code == 0
    assert "Dan plays R9" in said and "Ann plays G9" in said and "Ann is out!" in said
    assert "round 1 is over: Dan is the last one left holding cards" in said
    assert "game over: Bob wins" in said and "game over: Dan loses" in said
    assert "cards left in" not in said  # no hands to count: the order of going out decides
    assert view["phase"] == "over"
    assert view["game_winners"] == [1] and view["game_losers"] == [3]
    assert view["rounds"][0]["finished"] == [1, 2, 0] and view["rounds"][0]["loser"] == 3
    assert "  Dan  (loses)" in said


# Round 1: Bob goes out; Ann holds R2 R3 (5), Cat B9 G1 Y2 (12). Round 2, Bob deals: Cat goes
# out; Ann holds nothing, Bob R8 R9 RS WAA R6 (93 points, more than the 37 chips he holds).
CHIPS = (
    "R5\nhand Bob 1\nR7\nR2 R3 !\nB9 G1 Y2 !\nstatus\nR4\nhand Cat 1\nG4\n- !\nR8 R9 RS WAA R6 !\n"
)


def test_chips_each_loser_pays_the_winner_and_the_most_chips_wins(monkeypatch, capsys, tmp_path):
    """籌碼制: "輸家按輸分將籌碼給贏家 ... 多盤累計，以籌碼多少論勝負" (each loser pays the winner
    chips for their points; totals over many games decide)."""
    code, view, said = table(
        monkeypatch, capsys, tmp_path, "Ann,Bob,Cat", CHIPS, "--mode", "chips", "--target", "20"
    )
    assert code == 0
    assert "chips mode, a stake of 20 chips each" in said
    assert "round 1 to Bob: Ann -5, Bob +17, Cat -12" in said
    assert "  Bob    37 chips" in said and "  Cat     8 chips" in said  # the ledger in status
    # Bob owes 93 and holds 37: he pays what he holds and is broke, which ends the game.
    assert "round 2 to Cat: Bob -37, Cat +37" in said
    assert "game over: Cat wins" in said and "game over: Bob loses" in said
    assert view["chips"] == [15, 0, 45] and view["scores"] == [-5, -20, 25]
    assert view["game_winners"] == [2] and view["game_losers"] == [1]


# Round 1: Bob goes out; Ann 5, Cat 12. Round 2: Cat goes out; Ann RS (20: 25 in all), Bob R2.
LOSING = "R5\nhand Bob 1\nR7\nR2 R3 !\nB9 G1 Y2 !\nR4\nhand Cat 1\nG4\nRS !\nR2 !\nstatus\n"


def test_losing_points_name_the_loser_past_the_agreed_total(monkeypatch, capsys, tmp_path):
    """輸分制: "只計輸家的輸分 ... 以輸分最多者為輸家" (only losses count; past the agreed total,
    the one with the most points is the loser)."""
    code, view, said = table(
        monkeypatch, capsys, tmp_path, "Ann,Bob,Cat", LOSING, "--mode", "losing", "--target", "20"
    )
    assert code == 0
    assert "losing mode: at 20 points the most points loses" in said
    assert view["scores"] == [25, 2, 12]
    assert "game over: Ann loses" in said and "wins" not in said.split("game over")[-1]
    assert view["game_losers"] == [0] and view["game_winners"] == []


# Six players, three teams: Ann & Dan, Bob & Eve, Cat & Fay. Bob goes out; the others hold
# Ann R2, Cat R3, Dan B9, Eve Y5, Fay G1.
TEAMS = "R5\nhand Bob 1\nR7\nR2 !\nR3 !\nB9 !\nY5 !\nG1 !\nstatus\n"


def test_teams_score_their_own_members_cards_in_n_teams(monkeypatch, capsys, tmp_path):
    """組隊比賽: "總計每位隊員手中持牌的點數和來做為該隊的分數" (a team's score is the sum of its
    own members' cards) and "兩人或多人組成一隊" (teams of two or more)."""
    code, view, said = table(
        monkeypatch,
        capsys,
        tmp_path,
        "Ann,Bob,Cat,Dan,Eve,Fay",
        TEAMS,
        "--mode",
        "teams",
        "--teams",
        "3",
        "--target",
        "10",
    )
    assert code == 0
    assert "3 teams, game to 10 points" in said
    # Bob went out, but his partner Eve's 5 points count for their team.
    assert view["scores"] == [11, 5, 4, 11, 5, 4]
    assert view["team_of"] == [0, 1, 2, 0, 1, 2] and view["teams"] == 3
    assert "game over: Cat & Fay win" in said and "game over: Ann & Dan lose" in said
    assert "  Cat     4  team 3  (wins)" in said


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--players", "Ann,Bob,Cat,Dan,Eve", "--mode", "teams", "--teams", "3"],
            "--teams 3: 5 players cannot sit as 3 teams of two or more partners each",
        ),
        (
            ["--players", "Ann,Bob,Cat,Dan", "--teams", "2"],
            "--teams 2: the number of teams is for --mode teams",
        ),
    ],
)
def test_teams_that_cannot_sit_are_a_usage_error(capsys, tmp_path, args, message):
    code = main(["table", "--port", "none", "--state", str(tmp_path / "t.json"), *args])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"unoattack: {message}"


def test_a_resumed_game_keeps_its_teams(monkeypatch, capsys, tmp_path):
    players = "Ann,Bob,Cat,Dan,Eve,Fay"
    table(monkeypatch, capsys, tmp_path, players, "", "--mode", "teams", "--teams", "3")
    state = str(tmp_path / "t.json")
    code = main(["table", "--port", "none", "--players", players, "--state", state, "--teams", "2"])
    assert code == 2  # the saved game is teams mode with 3 teams: --teams 2 is refused
    assert code == 2
    assert "--teams 2: " in capsys.readouterr().err


@pytest.mark.parametrize("command", ["table", "serve"])
def test_help_offers_every_mode_and_teams(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for mode in ("knockout (淘汰制", "chips (籌碼制", "losing (輸分制", "teams (組隊比賽"):
        assert mode in text
    assert "--teams N" in text


def test_a_player_gone_out_of_a_knockout_round_holds_nothing(monkeypatch, capsys, tmp_path):
    script = "R5\nhand Bob 1\nR7\nhand Bob 3\n"
    code, view, said = table(
        monkeypatch, capsys, tmp_path, "Ann,Bob,Cat", script, "--mode", "knockout"
    )
    assert code == 1  # a piped line was refused
    assert "! Bob has gone out of this round" in said
    assert view["hands"][1] == 0 and view["finished"] == [1]


def test_chips_add_up_over_the_games_of_a_night_at_the_table(monkeypatch, capsys, tmp_path):
    """籌碼制: "多盤累計，以籌碼多少論勝負" (over many games the chips decide): `next` starts
    a new game with fresh stakes, and the chips each player won or lost in the games kept are
    totalled in `scores`, `--json` (`night_chips`) and the page."""
    code, view, said = table(
        monkeypatch,
        capsys,
        tmp_path,
        "Ann,Bob,Cat",
        CHIPS + "next\nscores\n",
        "--mode",
        "chips",
        "--target",
        "20",
    )
    assert code == 0, said
    assert "game over: Cat wins" in said and "the last game is kept in t.games.jsonl" in said
    assert "new game: Ann, Bob, Cat" in said
    assert view["phase"] == "deal" and view["chips"] == [20, 20, 20]  # fresh stakes
    assert view["night_chips"] == {"Ann": -5, "Bob": -20, "Cat": 25}
    assert "chips over every game kept: Cat +25, Ann -5, Bob -20" in said
