"""`unoattack sweep`: settings from a file and the command line, the report's JSON and CSV
shape, the plot, one-line errors for bad files and values, Ctrl-C keeping finished settings."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import engine.sweep as sweep
from common.boxconfig import read_for_host
from engine.cli import main
from engine.duration import BoxTimes, game_seconds
from engine.executors import InlineExecutor
from engine.scoring import SCORING_MODES
from firmware import config as box_config
from tests.configs import write_config

ROOT = Path(__file__).resolve().parents[2]
QUICK = ["--games", "2", "--seed", "4"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    if "--workers" not in argv and "--executor" not in argv:
        argv = (*argv, "--workers", "1")  # a pool only where a test is about one (lean CI)
    try:
        code = main(["sweep", *argv])
    except SystemExit as exc:  # argparse's own checks
        code = exc.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    assert err == ""  # no progress bar when stderr is not a terminal
    return json.loads(out)


def test_a_grid_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, *QUICK, "--vary", "jam.base=0.1,0.5", "--vary", "players=2,3")
    assert data["settings"] == data["finished"] == 4
    assert data["interrupted"] is False
    labels = [r["label"] for r in data["results"]]
    assert labels == [
        "jam.base=0.1 players=2",
        "jam.base=0.1 players=3",
        "jam.base=0.5 players=2",
        "jam.base=0.5 players=3",
    ]
    first = data["results"][0]
    assert first["varied"] == {"jam.base": 0.1, "players": 2}
    assert first["setting"]["jam"]["base"] == 0.1
    assert first["setting"]["players"] == 2
    assert first["games"] == 2
    # A box that fires more often leaves fewer dry hits.
    dry = {r["label"]: r["hits"]["dry_share"] for r in data["results"]}
    assert dry["jam.base=0.5 players=3"] < dry["jam.base=0.1 players=3"]


def test_same_seed_same_games_whatever_the_workers(capsys: pytest.CaptureFixture[str]) -> None:
    args = (*QUICK, "--vary", "option.stacking=true,false", "--set", "bots=heuristic/random")
    one = run_json(capsys, *args, "--set", "players=2", "--workers", "1")["results"]
    two = run_json(capsys, *args, "--set", "players=2", "--workers", "2")["results"]
    assert one == two
    assert one[0]["setting"]["bots"] == ["heuristic", "random"]
    assert one[0]["setting"]["options"] == {"stacking": True}


def test_a_file_with_base_grid_and_settings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "night.toml"
    path.write_text(
        """
games = 2
seed = 9

[base]
players = 3
jam = { max_dry = 6 }

[grid]
"jam.base" = [0.15, 0.3]

[[setting]]
label = "plain"

[[setting]]
label = "house"
option.stacking = true
turn_seconds = 6
""",
        encoding="utf-8",
    )
    data = run_json(capsys, str(path), "--set", "jam.step=0.05")
    assert [r["label"] for r in data["results"]] == ["plain", "plain", "house", "house"]
    assert [r["varied"]["jam.base"] for r in data["results"]] == [0.15, 0.3, 0.15, 0.3]
    assert all(r["setting"]["jam"]["max_dry"] == 6 for r in data["results"])
    assert all(r["setting"]["jam"]["step"] == 0.05 for r in data["results"])  # --set on top
    assert data["results"][2]["setting"]["options"] == {"stacking": True}
    assert data["results"][2]["setting"]["turn_seconds"] == 6.0
    assert data["seed"] == 9 and data["games_per_setting"] == 2
    # More seconds per turn, same games: a longer estimate.
    plain, house = data["results"][0], data["results"][2]
    assert plain["setting"]["options"] == {}
    assert house["per_game"]["minutes"]["mean"] > 0


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, *QUICK, "--set", "bots=heuristic,random,random,random")
    assert set(data) == {
        "seed",
        "games_per_setting",
        "settings",
        "finished",
        "interrupted",
        "elapsed_s",
        "games_per_s",
        "results",
    }
    (result,) = data["results"]
    assert set(result) == {
        "index",
        "label",
        "varied",
        "setting",
        "games",
        "rounds",
        "per_game",
        "hits",
        "wins_by_seat",
        "wins_by_bot",
        "launcher_decided",
    }
    assert result["label"] == "base"
    assert set(result["per_game"]) == {"rounds", "turns", "presses", "cards_fired", "minutes"}
    for spread in result["per_game"].values():
        assert set(spread) == {"mean", "p10", "p50", "p90", "max"}
        assert spread["p10"] <= spread["p50"] <= spread["p90"] <= spread["max"]
    hits = result["hits"]
    assert set(hits) == {
        "presses",
        "dry_share",
        "cards_per_hit",
        "cards_per_firing_hit",
        "distribution",
    }
    assert sum(hits["distribution"]) == pytest.approx(1.0, abs=1e-3)
    assert hits["distribution"][0] == hits["dry_share"]
    assert len(result["wins_by_seat"]) == 4
    assert set(result["wins_by_bot"]) == {"heuristic", "random"}
    assert 0 <= result["launcher_decided"] <= 1


def test_csv_has_the_documented_columns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    data = run_json(capsys, *QUICK, "--vary", "players=2,5", "--csv", str(out))
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert tuple(rows[0]) == sweep.CSV_COLUMNS
    assert [r["label"] for r in rows] == ["players=2", "players=5"]
    for row, result in zip(rows, data["results"], strict=True):
        assert int(row["games"]) == result["games"] == 2
        assert float(row["dry_share"]) == result["hits"]["dry_share"]
        assert float(row["minutes_per_game"]) == result["per_game"]["minutes"]["mean"]
        assert float(row["win_heuristic"]) == result["wins_by_bot"]["heuristic"]
        assert row["win_random"] == ""  # no random player seated
    assert rows[0]["win_seat_1"] != "" and rows[0]["win_seat_2"] == ""  # two seats only
    # The docs name every column.
    doc = (ROOT / "docs" / "sim.md").read_text(encoding="utf-8")
    missing = [c for c in sweep.CSV_COLUMNS if f"`{c}`" not in doc and "_seat_" not in c]
    assert missing == []


def test_plot_is_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "sweep.png"
    code, text, err = run(capsys, *QUICK, "--vary", "jam.base=0.1,0.4", "--plot", str(out))
    assert code == 0, err
    assert f"plot written to {out}" in text
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000


class _InterruptAfter:
    """Hands over `n` block results, then Ctrl-C arrives (deterministic: inline blocks)."""

    def __init__(self, n: int) -> None:
        self.inner, self.n, self.workers = InlineExecutor(), n, 1

    def run(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        results = self.inner.run(fn, tasks)
        for _ in range(self.n):
            yield next(results)
        raise KeyboardInterrupt

    def close(self) -> None:
        pass


def test_ctrl_c_keeps_the_settings_finished(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3 settings of 3 games, one block per game: after 7 blocks, settings 0 and 1 are done.
    monkeypatch.setattr(sweep, "open_executor", lambda args, tasks, ctrl_c: _InterruptAfter(7))
    rows, picture = tmp_path / "rows.csv", tmp_path / "cut.png"
    argv = ["--games", "3", "--vary", "jam.base=0.1,0.2,0.3", "--csv", str(rows)]
    code, out, _err = run(capsys, *argv, "--plot", str(picture), "--json")
    assert code == 130
    data = json.loads(out)
    assert data["interrupted"] is True
    assert data["settings"] == 3 and data["finished"] == 2
    assert [r["label"] for r in data["results"]] == ["jam.base=0.1", "jam.base=0.2"]
    assert all(r["games"] == 3 for r in data["results"])
    assert len(list(csv.DictReader(rows.open(encoding="utf-8")))) == 2
    assert picture.exists()
    # The finished settings are exactly what an uninterrupted sweep reports for them.
    monkeypatch.undo()
    whole = run_json(capsys, "--games", "3", "--vary", "jam.base=0.1,0.2,0.3")
    assert whole["results"][:2] == data["results"]
    # The table says so too.
    monkeypatch.setattr(sweep, "open_executor", lambda args, tasks, ctrl_c: _InterruptAfter(7))
    code, out, _err = run(capsys, *argv[:4])
    assert code == 130
    assert "interrupted by Ctrl-C: 2 of 3 settings finished" in out


BAD_FILES = [
    ("games = 2\nspeed = 3\n", "unknown key `speed`"),
    ("games = 'many'\n", 'games = "many": a whole number'),
    ("[base]\nplayer = 3\n", "unknown key `player`"),
    ("[base]\nplayers = 'three'\n", '[base] players = "three": a whole number'),
    ("[base]\nplayers = 11\n", "players 11: from 2 to 10"),
    ("[base]\nbots = ['heuristic', 'random']\n", "bots lists 2 bots for 4 players"),
    ("[base]\nbots = 'genius'\n", "unknown bot `genius`"),
    ("[base]\ndeck = 'poker'\n", "poker"),
    ("[base]\njam.base = 1.5\n", "jam.base must be between 0 and 1"),
    ("[base]\njam.seed = 4\n", "jam.seed = 4: not a sweep key"),
    ("[base]\njam.speed = 4\n", "unknown jam key"),
    ("[base]\noption.speed = true\n", "unknown rule option"),
    ("[base]\noption.stacking = 3\n", "stacking = 3: true or false"),
    ("[base]\nmode = 'teams'\nplayers = 3\n", "3 players cannot sit as 2 teams"),
    ("[base]\nmode = 'teams'\nplayers = 6\nteams = 4\n", "6 players cannot sit as 4 teams"),
    ("[base]\nteams = 2\n", "teams 2: the number of teams is for mode teams"),
    ("[base]\nturn_seconds = -1\n", "turn_seconds = -1: seconds from 0 to 3600"),
    ("[base]\ntable = { x = 1 }\n", "table: not a table of keys"),
    ('[grid]\n"jam.base" = 0.2\n', "a list of the values to try"),
    ("[grid]\nplayers = []\n", "a list of the values to try"),
    ("[grid]\nplayers = [3, 'x']\n", '[grid] players = "x": a whole number'),
    ('[grid]\n"jam.pattern" = [1, 2]\n', "a list of lists"),
    ("[grid]\nlabel = ['a']\n", "label: name a setting in [[setting]]"),
    ("[grid]\nplayers = [3]\n[[setting]]\nplayers = 4\n", "players is also in [grid]"),
    ("[[setting]]\njam.max_dry = 500\n", "[[setting]] 1: jam.max_dry = 500"),
    ("setting = 3\n", "setting must be tables"),
    ("games = 2\n[base\n", "not valid TOML"),
    ("games = 0\n", "games 0: from 1 to"),
    (
        "[grid]\nplayers = [2,3,4,5,6,7,8,9,10]\ntarget = " + str(list(range(1, 1200))) + "\n",
        "settings: at most 10000",
    ),
]


@pytest.mark.parametrize(("text", "needle"), BAD_FILES)
def test_a_bad_sweep_file_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, needle: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, str(path))
    assert code == 2, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err
    assert str(path) in err or needle.startswith(("players 11", "games 0"))


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: d / "missing.toml", "missing.toml: cannot read this file: No such file"),
        (lambda d: d, ": cannot read this file: Is a directory"),
        (lambda d: _binary(d), "not a text file"),
    ],
)
def test_an_unusable_sweep_file_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: Callable[[Path], Path], needle: str
) -> None:
    code, out, err = run(capsys, str(make(tmp_path)))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert needle in err


def _binary(folder: Path) -> Path:
    path = folder / "sweep.toml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")  # an image given by mistake
    return path


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--set", "players"], "--set 'players': write KEY=VALUE"),
        (["--vary", "jam.base=0.1,,0.2"], "a comma list of values"),
        (["--vary", "jam.base=high,low"], '--vary jam.base = "high"'),
        (["--set", "colour=red"], "unknown key `colour`"),
        (["--set", "label=x"], "--set label"),
        (["--vary", "players=2,11"], "players 11: from 2 to 10"),
        (["--set", "config=/no/such/box.toml"], "/no/such/box.toml"),
        (["--plot", "out.txt"], "--plot out.txt: name the image file"),
        (["--csv", "/no/such/dir/rows.csv"], "folder /no/such/dir does not exist"),
        (["--games", "0"], "games 0"),
        (["--workers", "0"], "--workers 0"),
    ],
)
def test_bad_command_line_values_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code in (2, 78), err
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err


def test_a_bad_box_config_exits_78(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    box = write_config(tmp_path / "box.toml", {"timing.cooldown_ms": -5})
    code, out, err = run(capsys, "--set", f"config={box}", *QUICK)
    assert code == 78
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "cooldown_ms" in err


def test_a_box_config_sets_the_jam_model_and_the_timings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    box = write_config(tmp_path / "box.toml", {"timing.cooldown_ms": 5000})
    data = run_json(capsys, *QUICK, "--vary", f"config={box},{ROOT / 'hardware/launcher.toml'}")
    slow, usual = data["results"]
    assert slow["rounds"] == usual["rounds"]  # the same games
    assert slow["per_game"]["minutes"]["mean"] > usual["per_game"]["minutes"]["mean"]


def test_a_box_config_naming_the_pis_own_sound_pack_reads_on_a_laptop(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The box checks its sound pack's folder (a folder on the Pi); the host reads only the
    # sections it uses, so a box's own config sweeps as it is.
    pack = "/usr/share/unoattack-no-such-box/sounds/our-pack"
    box = write_config(
        tmp_path / "box.toml",
        {"sound.player": "aplay", "sound.pack": pack, "timing.cooldown_ms": 0},
    )
    with pytest.raises(box_config.ConfigError, match="our-pack"):
        box_config.load(box)  # the box itself refuses it, as it should
    data = run_json(capsys, *QUICK, "--set", f"config={box}")
    assert data["results"][0]["rounds"] > 0
    assert read_for_host(box).timing.cooldown_ms == 0


def test_box_times_from_the_default_config() -> None:
    cfg = read_for_host(ROOT / "hardware" / "launcher.toml")
    box = BoxTimes.from_config(cfg)
    # cooldown 300 + flywheel 250 + soft start 150 + motor spin-up 40 + settle 100; 60 per card.
    assert box == BoxTimes(burst_ms=840.0, card_ms=60.0)
    seconds = game_seconds(box, turns=100, presses=40, bursts=10, cards=30)
    assert seconds == pytest.approx(100 * 4.0 + 40 * 1.0 + (10 * 840 + 30 * 60) / 1000)


def test_a_solenoid_box_times_its_pulses(tmp_path: Path) -> None:
    solenoid = {"ejector.kind": "solenoid", "pins.ejector_backward": None}
    box = write_config(
        tmp_path / "solenoid.toml", solenoid, {"pins.ejector_enable": None, "pins.flywheel": None}
    )
    times = BoxTimes.from_config(read_for_host(box))
    assert times == BoxTimes(burst_ms=300.0, card_ms=40.0 + 120.0)


def test_files_named_in_a_sweep_file_are_found_next_to_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_config(tmp_path / "box.toml")
    (tmp_path / "night.toml").write_text('games = 1\n[base]\nconfig = "box.toml"\n', "utf-8")
    data = run_json(capsys, str(tmp_path / "night.toml"))
    assert data["results"][0]["setting"]["config"] == str(tmp_path / "box.toml")


def test_the_documented_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, str(ROOT / "docs/examples/sweep/tune-box.toml"), "--games", "1")
    assert data["settings"] == 6


def test_the_modes_example_compares_every_mode(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, str(ROOT / "docs/examples/sweep/modes.toml"), "--games", "2")
    modes = [r["setting"]["mode"] for r in data["results"]]
    assert sorted(modes) == sorted(SCORING_MODES)
    for result in data["results"]:
        named_loser = result["setting"]["mode"] in ("teams", "knockout", "chips", "losing")
        assert ("losses_by_seat" in result) == named_loser
        assert ("chips_by_seat" in result) == (result["setting"]["mode"] == "chips")
