"""`launcher model show | sample | fit`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from common.boxtoml import set_values
from common.jam import JamParams, describe, sample
from firmware.cli import main
from firmware.config import default_path, load
from firmware.jam_cli import read_counts
from tests.configs import write_config

KNOWN = JamParams(base=0.2, step=0.1, max_dry=6, burst_weights=(0, 1, 3, 4, 4, 3, 2, 1, 1))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["model", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------- show


def test_show_json_is_describe_of_the_configured_model(
    capsys: pytest.CaptureFixture[str], default_config_path: Path
) -> None:
    code, out, _ = run(capsys, "show", "--json", "--config", str(default_config_path))
    assert code == 0
    shown = json.loads(out)
    attenuation = shown.pop("attenuation")
    assert shown == json.loads(json.dumps(describe(load(default_config_path).jam)))
    rows = attenuation["by_rapid_press"]
    assert [r["factor"] for r in rows] == [1.0, 0.5, 0.25, 0.0]
    assert rows[0]["cards_per_press_mean"] == pytest.approx(shown["cards_per_press_mean"])
    assert rows[1]["cards_per_press_mean"] < rows[0]["cards_per_press_mean"] / 2  # rounded down


def test_show_explains_the_attenuation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show")
    assert code == 0
    assert "rapid-press attenuation: a button press within 700 ms" in out
    assert "rapid #3+ |   0.00" in out


def test_show_table_lists_chance_streaks_and_bursts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show")
    assert code == 0
    assert out.startswith("jam model: hazard (base 0.22, step 0.08, max_dry 10")
    assert "fires on 33.6% of presses" in out
    assert "chance to fire" in out and "per fire" in out
    assert "          3 |          46.0% |" in out  # p(3) = 0.22 + 3 * 0.08


def test_show_pattern_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "box.toml", {"jam.mode": "pattern"})
    code, out, _ = run(capsys, "show", "--config", str(cfg))
    assert code == 0
    assert out.startswith("jam model: pattern [0, 0, 3, 0, 5, 0, 0, 0, 2]")
    assert "fires on 33.3% of presses" in out


def test_show_bad_config_exits_78_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = write_config(tmp_path / "bad.toml", {"jam.base": 1.7})
    code, out, err = run(capsys, "show", "--config", str(cfg))
    assert code == 78
    assert out == ""
    assert err.count("\n") == 1 and "base" in err and "1.7" in err


# ----------------------------------------------------------------------------- sample


def test_sample_json_holds_counts_and_streak_stats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "sample", "--presses", "500", "--seed", "9", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["counts"] == sample(load(default_path()).jam, 500, seed=9)
    stats = data["stats"]
    assert stats["presses"] == 500
    assert stats["fires"] == sum(1 for c in data["counts"] if c)
    assert sum(stats["dry_streak_hist"]) == stats["streaks"]
    assert data["expected"]["fire_rate"] == pytest.approx(describe(JamParams())["fire_rate"])
    code, again, _ = run(capsys, "sample", "--presses", "500", "--seed", "9", "--json")
    assert again == out


def test_sample_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "sample", "--presses", "100", "--seed", "1")
    assert code == 0
    assert out.startswith("100 presses, seed 1:")
    assert " streak |  seen | model" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sample", "--presses", "0", "--seed", "1"], "--presses must be between 1 and"),
        (
            ["sample", "--presses", "10", "--seed", "-1"],
            "--seed: expected a whole number from 0 to 9223372036854775807, got -1",
        ),
        (
            ["sample", "--presses", "10", "--seed", str(2**63)],
            "--seed: expected a whole number from 0 to 9223372036854775807",
        ),
        (["sample", "--presses", "x", "--seed", "1"], "expected a whole number, got 'x'"),
        (["sample", "--presses", "10"], "the following arguments are required: --seed"),
    ],
)
def test_sample_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as info:
        code = main(["model", *argv])
        raise SystemExit(code)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


# ----------------------------------------------------------------------------- fit input


@pytest.mark.parametrize(
    "text",
    ["0\n3\n0\n0\n5\n", "0, 3, 0, 0, 5", "0 3 0\n0 5\n", "# by hand\n0 3  # first\n\n0,0 5\n"],
)
def test_plain_counts_in_any_separator(tmp_path: Path, text: str) -> None:
    path = tmp_path / "counts.txt"
    path.write_text(text)
    assert read_counts(str(path)) == [0, 3, 0, 0, 5]


BENCH_CSV = """row,press_id,card,planned,ejected,reason,dry_streak,interval_ms
press,1,,0,0,dry,0,
press,2,,3,3,fired,1,
card,2,1,,,,,61.2
card,2,2,,,,,58.9
card,2,3,,,,,60.1
press,3,,0,0,locked,0,
press,4,,2,1,jammed,0,
card,4,1,,,,,59.0
"""


def test_bench_csv_uses_press_rows_and_skips_unserved(tmp_path: Path) -> None:
    path = tmp_path / "bench.csv"
    path.write_text(BENCH_CSV)
    assert read_counts(str(path)) == [0, 3, 1]
    planned_only = tmp_path / "planned.csv"
    planned_only.write_text("planned\n0\n4\n")
    assert read_counts(str(planned_only)) == [0, 4]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0\n3\nx\n", "counts.txt:3: count 'x' is not a whole number of cards (0-12)"),
        ("0, 2, -1\n", "counts.txt:1: count '-1' is not a whole number of cards (0-12)"),
        ("1\n2\n\n14\n", "counts.txt:4: 14 cards is more than max_burst (12)"),
        ("\n# nothing\n", "counts.txt: no per-press counts found"),
        ("row,ejected\npress,2\npress,two\n", "counts.txt:3: ejected 'two' is not a whole number"),
        ("row,ejected\npress,2\npress,1,9\n", "counts.txt:3: more fields than the header has (2)"),
        ("row,planned\npress\n", "counts.txt:2: missing the 'planned' field"),
        ("press_id,cards\n1,2\n", "counts.txt:1: a CSV needs an 'ejected' or 'planned' column"),
        ("ejected\n3\n2.5\n", "counts.txt:3: ejected '2.5' is not a whole number"),
    ],
)
def test_bad_rows_name_the_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "counts.txt"
    path.write_text(text)
    code, out, err = run(capsys, "fit", str(path))
    assert code == 2
    assert out == ""
    assert err.startswith(f"launcher: {tmp_path / message}")
    assert err.count("\n") == 1


def test_fit_of_a_file_with_no_fire_exits_2(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    path = tmp_path / "dry.txt"
    path.write_text("0 0 0 0\n")
    code, _, err = run(capsys, "fit", str(path))
    assert code == 2
    assert "no press fired a card" in err


def test_fit_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "fit", str(tmp_path / "nope.csv"))
    assert code == 2
    missing = tmp_path / "nope.csv"
    assert err == f"launcher: {missing}: cannot read this file: No such file or directory\n"


# ----------------------------------------------------------------------------- fit output


def _recording(tmp_path: Path) -> Path:
    path = tmp_path / "recording.txt"
    path.write_text("\n".join(str(c) for c in sample(KNOWN, 20_000, seed=3)) + "\n")
    return path


def test_fit_json_recovers_the_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "fit", str(_recording(tmp_path)), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["params"]["max_dry"] == 6
    assert data["params"]["base"] == pytest.approx(0.2, abs=0.02)
    assert data["params"]["step"] == pytest.approx(0.1, abs=0.01)
    assert data["p_value"] > 0.001
    assert data["written"] is None


def test_fit_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "fit", str(_recording(tmp_path)))
    assert code == 0
    assert "fitted hazard model from 20,000 presses" in out
    assert "max_dry = 6" in out
    assert "goodness of fit on dry-streak lengths: chi-square" in out


def test_fit_write_config_changes_only_the_jam_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, default_config_path: Path
) -> None:
    cfg = write_config(tmp_path / "box.toml")  # the default as shipped
    original = cfg.read_text()
    code, out, _ = run(capsys, "fit", str(_recording(tmp_path)), "--write-config", str(cfg))
    assert code == 0
    assert f"wrote the fitted [jam] values into {cfg}" in out
    fitted = load(cfg).jam
    assert fitted.max_dry == 6
    assert fitted.base == pytest.approx(0.2, abs=0.02)
    assert fitted.pattern == load(default_config_path).jam.pattern  # untouched keys stay
    before = original.splitlines()
    after = cfg.read_text().splitlines()
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    keys = {before[i].split("=")[0].strip() for i in changed}
    assert keys <= {"base", "step", "max_dry", "burst_weights"}
    assert "base" in keys
    # Comments after the replaced values are kept.
    assert all("#" in after[i] for i in changed)


def test_fit_write_config_refuses_a_broken_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = tmp_path / "box.toml"
    cfg.write_text("[jam\nbase = 0.3\n")
    code, _, err = run(capsys, "fit", str(_recording(tmp_path)), "--write-config", str(cfg))
    assert code == 78
    assert "not valid TOML" in err
    assert cfg.read_text() == "[jam\nbase = 0.3\n"
    assert list(tmp_path.glob(".launcher-*")) == []


def test_the_config_editor_handles_multiline_arrays_missing_keys_and_no_section() -> None:
    text = (
        "[box]\nname = 'x'\n\n[jam]\nbase = 0.5 # chance\nburst_weights = [\n  1,\n  2,\n]\n"
        "seed = 3\n\n[plant]\nhopper = 10\n"
    )
    values = {"base": "0.25", "burst_weights": "[0, 1]", "step": "0.1"}
    new = set_values(text, {"jam": values})
    doc = tomllib.loads(new)
    assert doc["jam"] == {"base": 0.25, "burst_weights": [0, 1], "seed": 3, "step": 0.1}
    assert doc["plant"] == {"hopper": 10}
    assert "base = 0.25 # chance" in new
    bare = set_values("[box]\nname = 'x'", {"jam": {"base": "0.3"}})
    assert tomllib.loads(bare) == {"box": {"name": "x"}, "jam": {"base": 0.3}}
