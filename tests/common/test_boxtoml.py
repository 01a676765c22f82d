"""The one editor of a box's launcher.toml (common/boxtoml.py): values set, the rest kept."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from common.boxtoml import assignments, set_values, toml_value

DEFAULT = Path(__file__).resolve().parents[2] / "hardware" / "launcher.toml"


def test_the_default_config_reads_as_tomllib_reads_it() -> None:
    text = DEFAULT.read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    seen = {(section, key) for section, key, _value in assignments(text)}
    flat = {(s, k) for s, table in doc.items() if isinstance(table, dict) for k in table}
    assert seen == flat  # a colour's "#" is not a comment, a list may span lines


def test_changing_every_value_keeps_every_comment() -> None:
    text = DEFAULT.read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    changes = {s: {k: toml_value(v) for k, v in t.items()} for s, t in doc.items()}
    new = set_values(text, changes)
    assert tomllib.loads(new) == doc
    comments = [line.split("#", 1)[1].strip() for line in text.splitlines() if " # " in line]
    for comment in comments:
        assert comment in new


def test_a_comment_stays_aligned_and_a_string_keeps_its_hash() -> None:
    text = '[light]\nseat_colors = ["#e53935", "#1e88e5"]  # seat 0 first\npixels = 1\n'
    new = set_values(text, {"light": {"seat_colors": toml_value(["#ffffff"]), "pixels": "2"}})
    assert tomllib.loads(new) == {"light": {"seat_colors": ["#ffffff"], "pixels": 2}}
    before, after = text.splitlines()[1], new.splitlines()[1]
    assert after.index("# seat 0 first") == before.index("# seat 0 first")


def test_without_add_only_written_keys_change() -> None:
    text = "[box]\nseats = 4\n"
    assert set_values(
        text, {"box": {"seats": "3", "name": '"x"'}, "jam": {"seed": "1"}}, add=False
    ) == ("[box]\nseats = 3\n")


def test_keys_of_an_array_of_tables_are_left_alone() -> None:
    text = "[patterns]\nseed = 0\n\n[[patterns.pattern]]\nname = 'x'\nseed = 5\n"
    new = set_values(
        text, {"patterns": {"seed": "7"}, "patterns.pattern": {"seed": "9"}}, add=False
    )
    assert tomllib.loads(new) == {"patterns": {"seed": 7, "pattern": [{"name": "x", "seed": 5}]}}


def test_missing_keys_go_to_their_section_and_missing_sections_to_the_end() -> None:
    text = "[box]\nname = 'x'\n\n[jam]\nbase = 0.5\n\n[plant]\nhopper = 1\n"
    new = set_values(
        text, {"jam": {"step": "0.1"}, "box": {"seats": "3"}, "door": {"warn_interval_s": "5.0"}}
    )
    assert tomllib.loads(new) == {
        "box": {"name": "x", "seats": 3},
        "jam": {"base": 0.5, "step": 0.1},
        "plant": {"hopper": 1},
        "door": {"warn_interval_s": 5.0},
    }
    assert (
        new.index("seats = 3") < new.index("[jam]") < new.index("step = 0.1") < new.index("[plant]")
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), (3, "3"), (0.25, "0.25"), ('a "b"', '"a \\"b\\""'), ([1, 2.5], "[1, 2.5]")],
)
def test_toml_value(value: object, text: str) -> None:
    assert toml_value(value) == text
    assert tomllib.loads(f"x = {text}")["x"] == value
