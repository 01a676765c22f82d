"""The settings file: persisted across a restart, checked, corrupt files replaced, factory reset."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from firmware.settings import SettingsStore, check_personality, path_for


def test_settings_survive_a_reopen(tmp_path: Path) -> None:
    path = path_for(tmp_path / "journal.db")
    assert path == tmp_path / "journal.db.settings.json"
    store = SettingsStore(path)
    store.set_jam({"base": 0.3})
    store.set_jam({"step": 0.1})
    assert store.set_personality({"sound.enabled": False, "attenuation.curve": [1, 0.5]}) == {
        "sound.enabled": False,
        "attenuation.curve": [1.0, 0.5],
    }
    again = SettingsStore(path)
    assert again.problem is None
    assert again.jam == {"base": 0.3, "step": 0.1}
    assert again.personality == {"sound.enabled": False, "attenuation.curve": [1.0, 0.5]}
    again.reset()
    assert SettingsStore(path).to_dict() == {"format": 1, "jam": {}, "personality": {}}
    assert not list(tmp_path.glob("*.tmp"))


def test_memory_store_writes_nothing(tmp_path: Path) -> None:
    store = SettingsStore(path_for(None))
    store.set_jam({"base": 0.5})
    assert store.jam == {"base": 0.5} and store.path is None


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{not json", "Expecting property name"),
        (b'{"format": 2}', "not a format 1 settings file"),
        (b"[1, 2]", "not a format 1 settings file"),
        (b'{"format": 1, "mood": 1}', "unknown key 'mood'"),
        (b'{"format": 1, "jam": 3}', "jam must be a mapping"),
        (b'{"format": 1, "personality": {"sound.enabled": 1}}', "sound.enabled must be true"),
        (b'{"format": 1, "personality": {"attenuation.curve": [2]}}', "numbers from 0 to 1"),
        (b"\xff\xfe", "codec can't decode"),
    ],
)
def test_a_corrupt_file_is_one_log_line_and_replaced_by_defaults(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes, why: str
) -> None:
    path = tmp_path / "j.db.settings.json"
    path.write_bytes(content)
    with caplog.at_level(logging.ERROR, logger="firmware.settings"):
        store = SettingsStore(path)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and why in lines[0] and "\n" not in lines[0]
    assert "moved to j.db.settings.json.bad" in lines[0] and "config's values" in lines[0]
    assert store.problem == lines[0]
    assert store.jam == {} and store.personality == {}
    assert (tmp_path / "j.db.settings.json.bad").read_bytes() == content  # kept for a person
    assert json.loads(path.read_text()) == {"format": 1, "jam": {}, "personality": {}}
    assert SettingsStore(path).problem is None  # the replacement reads fine


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"volume": 3}, "unknown setting 'volume'"),
        ({"attenuation.window_ms": -5}, "from 0 to 10000"),
        ({"attenuation.window_ms": True}, "whole number"),
        ({"attenuation.curve": []}, "list of 1 to 16"),
        ({"light.enabled": "yes"}, "light.enabled must be true or false"),
    ],
)
def test_personality_values_are_checked(values: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        check_personality(values)
