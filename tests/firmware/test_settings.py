"""The settings file: persisted across a restart, checked, corrupt files replaced, factory reset."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from common.errors import ConfigError
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
        (b'{"format": 1, "personality": {"attenuation.curve": [2]}}', "factors from 0 to 1"),
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
        ({"attenuation.curve": []}, "attenuation.curve must list 1 to 16 factors from 0 to 1"),
        ({"light.enabled": "yes"}, "light.enabled must be true or false"),
    ],
)
def test_personality_values_are_checked(values: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        check_personality(values)


@pytest.mark.parametrize("code", ["th", "zh_Hant", "ro", "cy"])
def test_a_refused_setting_reads_in_the_readers_language(code: str) -> None:
    # settings.set refusals travel as a Text (wire/errors: English message plus template), so
    # `launcher send` can say them in the reader's language.
    from i18n import Text, language

    lang = language(code)
    with pytest.raises(ValueError) as caught:
        check_personality({"attenuation.window_ms": -5})
    text = caught.value.args[0]
    assert isinstance(text, Text)
    said = text.render(lang)
    assert str(text) == "attenuation.window_ms must be a whole number from 0 to 10000, got -5"
    rule = lang.gettext("must be a whole number from {lo} to {hi}").split("{")[0]
    assert rule.strip() and rule in said and "attenuation.window_ms" in said


# Each personality key that is also a config key, with a value neither takes.
CONFIG_KEYS = [
    ("patterns.enabled", 1),
    ("attenuation.window_ms", -5),
    ("attenuation.curve", [0.5, 2]),
    ("attenuation.spam_sound", "yes"),
]


@pytest.mark.parametrize("code", ["en", "th", "zh_Hant", "ro", "cy"])
@pytest.mark.parametrize(("key", "value"), CONFIG_KEYS)
def test_the_config_file_and_settings_set_refuse_a_value_in_the_same_words(
    tmp_path: Path, key: str, value: object, code: str
) -> None:
    # One check per key (beside its section's dataclass) serves both readers, so the rule a
    # person reads is the same whether the value came from the file or over the link.
    import i18n
    from firmware import config
    from tests.configs import write_config

    lang = i18n.language(code)
    section, name = key.split(".")
    with pytest.raises(ValueError) as from_link:
        check_personality({key: value})
    with i18n.speaking(lang), pytest.raises(ConfigError) as from_file:
        config.load(write_config(tmp_path / "box.toml", {key: value}))
    text = from_link.value.args[0]
    rule = text.args["rule"].render(lang)
    assert rule.strip() and rule in text.render(lang) and key in text.render(lang)
    assert f"[{section}] {name} = " in str(from_file.value)
    assert str(from_file.value).endswith(": " + rule), str(from_file.value)


# --------------------------------------------------------------------------- on the daemon


def test_settings_persist_across_a_restart_within_the_config_limits(
    make_box, tmp_path: Path
) -> None:
    from firmware.journal import SqliteJournal

    journal_path = tmp_path / "journal.db"
    box = make_box({"jam.mode": "hazard"}, journal=SqliteJournal(journal_path))
    reply = box.command("model.set", params={"base": 0.5, "max_dry": 4})
    assert reply["ok"]
    assert box.command("settings.set", settings={"attenuation.window_ms": 250})["ok"]
    too_big = box.command("model.set", params={"max_burst": 99})
    assert too_big["ok"] is False  # the config's limit holds, and nothing is stored
    box.daemon.stop()
    box.daemon.journal.close()

    again = make_box({"jam.mode": "hazard"}, journal=SqliteJournal(journal_path))
    params = again.command("model.get")["params"]
    assert params["base"] == 0.5 and params["max_dry"] == 4
    got = again.command("settings.get")
    assert got["settings"]["attenuation.window_ms"] == 250 and got["persistent"] is True
    assert got["jam_stored"] == ["base", "max_dry"]
    reset = again.command("settings.reset")
    assert reset["ok"] and reset["stored"] == [] and reset["jam_stored"] == []
    assert again.command("model.get")["params"]["base"] == again.config.jam.base
    assert again.command("settings.get")["settings"]["attenuation.window_ms"] == 0  # FAST's
    again.daemon.stop()
    again.daemon.journal.close()


def test_stored_jam_the_config_no_longer_allows_is_dropped_with_a_log_line(
    make_box, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from firmware.journal import SqliteJournal

    journal_path = tmp_path / "journal.db"
    (tmp_path / "journal.db.settings.json").write_text(
        json.dumps({"format": 1, "jam": {"burst_weights": [1] * 12}, "personality": {}})
    )
    with caplog.at_level(logging.ERROR, logger="firmware.settings"):
        box = make_box({"limits.max_burst": 6}, journal=SqliteJournal(journal_path))
    lines = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(lines) == 1 and "config's [jam] holds" in lines[0]
    assert box.command("model.get")["params"]["burst_weights"] == list(box.config.jam.burst_weights)
    box.daemon.stop()
    box.daemon.journal.close()


def test_a_corrupt_settings_file_at_start_is_reported_and_replaced(
    make_box, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from firmware.journal import SqliteJournal

    (tmp_path / "journal.db.settings.json").write_bytes(b'{"format": 1, "jam": {"ba')
    with caplog.at_level(logging.ERROR, logger="firmware.settings"):
        box = make_box(journal=SqliteJournal(tmp_path / "journal.db"))
    assert box.daemon.settings.store.problem is not None
    assert [r.getMessage() for r in caplog.records] == [box.daemon.settings.store.problem]
    assert box.command("model.get")["params"] == box.config.jam.to_dict()
    assert box.command("settings.set", settings={"sound.enabled": False})["ok"]
    assert SettingsStore(tmp_path / "journal.db.settings.json").personality == {
        "sound.enabled": False
    }
    box.daemon.stop()
    box.daemon.journal.close()


def test_settings_set_rejects_bad_values_in_one_line(make_box) -> None:
    box = make_box()
    reply = box.command("settings.set", settings={"attenuation.curve": [1.5]})
    assert reply["ok"] is False and reply["error"]["code"] == "BAD_ARG"
    assert "attenuation.curve" in reply["error"]["message"]
    assert box.command("settings.set", settings={})["error"]["code"] == "BAD_ARG"
    assert box.command("settings.get")["persistent"] is False  # no journal file: memory only
