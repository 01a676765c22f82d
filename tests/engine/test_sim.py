"""`unoattack sim`: whole games, seeded statistics, guards and usage errors."""

from __future__ import annotations

import io
import json

import pytest

import engine.sim as sim
from engine.cards import PRESETS
from engine.cli import main
from engine.game import Action, Round
from engine.launchers import ScriptedLauncher
from engine.rules import rules_for

TIMING = ("elapsed_s", "rounds_per_s")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sim", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    assert err == ""  # no progress bar when stderr is not a terminal
    return json.loads(out)


def without_timing(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in TIMING}


def test_json_has_the_documented_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "--players", "3", "--games", "4", "--seed", "9")
    for key in (
        "games",
        "rounds",
        "wins",
        "mean_rounds_per_game",
        "mean_turns_per_round",
        "hits",
        "cards_fired",
        "elapsed_s",
    ):
        assert key in data
    assert data["games"] == 4
    assert len(data["wins"]) == 3
    assert sum(data["wins"]) == 4  # target mode: one winner per game
    assert sum(data["round_wins"]) == data["rounds"]
    assert data["mean_rounds_per_game"] == pytest.approx(data["rounds"] / 4)
    assert data["hits"] > data["dry_hits"] > 0
    assert data["cards_fired"] > 0
    # Target mode: whoever won a game scored at least the target.
    assert max(data["points_scored"]) >= 500
    assert data["bots"] == ["heuristic"] * 3


def test_same_seed_same_results_other_seed_other_results(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ("--players", "4", "--games", "3", "--bots", "heuristic,random,random,heuristic")
    first = run_json(capsys, *args, "--seed", "5")
    again = run_json(capsys, *args, "--seed", "5")
    other = run_json(capsys, *args, "--seed", "6")
    assert without_timing(first) == without_timing(again)
    assert without_timing(first) != without_timing(other)


def test_game_i_does_not_depend_on_how_many_games_run() -> None:
    assert sim.game_seed(3, 7) == sim.game_seed(3, 7)
    assert sim.game_seed(3, 7) != sim.game_seed(3, 8)
    assert sim.game_seed(3, 7) != sim.game_seed(4, 7)


def test_classic_draws_are_dispensed_not_hit(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "--players", "2", "--games", "2", "--deck", "classic")
    assert data["hits"] == 0
    assert data["cards_fired"] > 0
    assert data["rules"] == "classic"


@pytest.mark.parametrize(
    ("mode", "players"), [("lowest", 3), ("elimination", 3), ("teams", 4), ("target", 10)]
)
def test_every_scoring_mode_runs_to_a_winner(
    capsys: pytest.CaptureFixture[str], mode: str, players: int
) -> None:
    data = run_json(
        capsys, "--players", str(players), "--games", "2", "--mode", mode, "--target", "150"
    )
    assert data["games"] == 2
    assert data["mode"] == mode
    assert sum(data["wins"]) >= 2  # ties and teams give a game several winners


def test_rule_options_pass_through(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys, "--games", "2", "--option", "stacking=true", "--option", "custom_wild_effect=WAA"
    )
    assert data["options"] == {"stacking": True, "custom_wild_effect": "WAA"}


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--players", "2", "--games", "2", "--bots", "heuristic,random")
    assert code == 0
    assert err == ""
    assert out.startswith("2 games, ")
    assert "heuristic" in out
    assert "mean turns per round" in out
    assert "cards fired" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--players", "1"], "--players 1"),
        (["--players", "11"], "--players 11"),
        (["--bots", "heuristic,genius"], "genius"),
        (["--players", "3", "--bots", "random,random"], "--bots"),
        (["--deck", "poker"], "poker"),
        (["--rules", "bridge"], "bridge"),
        (["--mode", "sudden-death"], "sudden-death"),
        (["--games", "0"], "--games"),
        (["--target", "0"], "--target"),
        (["--option", "speed=3"], "speed"),
        (["--option", "stacking"], "NAME=VALUE"),
        (["--mode", "teams", "--players", "3"], "teams"),
    ],
)
def test_bad_values_are_one_line_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert needle in err


class _AlwaysHit:
    """Never plays: a round between such players cannot end."""

    def choose(self, rnd: Round, seat: int) -> Action:
        return next(a for a in rnd.legal_actions(seat) if a.kind == "hit")

    def react(self, rnd: Round, seat: int) -> None:
        return None


def test_a_round_that_never_ends_is_cut_with_a_clear_error() -> None:
    rnd = Round(
        PRESETS["attack"], rules_for("attack", 2), ScriptedLauncher([3] * 100), players=2, seed=1
    )
    with pytest.raises(sim.RunawayError, match="ran past 500 actions"):
        sim.play_round(rnd, [_AlwaysHit(), _AlwaysHit()], max_actions=500)


def test_runaway_guard_stops_the_command_with_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No real round ends within 3 actions, so the guard trips in the first round.
    monkeypatch.setattr(sim, "MAX_ACTIONS_PER_ROUND", 3)
    code, out, err = run(capsys, "--games", "1", "--seed", "4")
    assert code == 1
    assert out == ""
    assert "game 0 round 1 (seed 4) ran past 3 actions" in err
    assert len(err.strip().splitlines()) == 1


def test_runaway_game_is_cut_too() -> None:
    # A target nobody reaches in one round, and a guard of one round.
    settings = sim.SimSettings(
        players=2,
        games=1,
        seed=0,
        deck=PRESETS["attack"],
        preset="attack",
        mode="target",
        target=100_000,
        bots=("random", "random"),
        max_rounds=1,
    )
    with pytest.raises(sim.RunawayError, match="ran past 1 rounds"):
        sim.run_sim(settings)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal() -> None:
    tty = _Tty()
    bar = sim.ProgressBar(tty)
    for done in range(1, 5):
        bar(done, 4)
    text = tty.getvalue()
    assert "\r" in text
    assert text.endswith("4/4 games\n")
    pipe = io.StringIO()
    quiet = sim.ProgressBar(pipe)
    quiet(1, 1)
    assert pipe.getvalue() == ""
