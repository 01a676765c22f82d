"""Config loading and `launcher config check`: the default file, defaults, and bad configs that
must each give exit 78 with one line naming file, section, key, value and what is allowed."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from common.errors import EXIT_CONFIG, ConfigError
from common.jam import JamParams
from firmware import config
from firmware.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "hardware" / "launcher.toml"
DEFAULT_TEXT = DEFAULT.read_text()

# The smallest motor config: the required pins plus what the default motor needs.
MINIMAL = """
[pins]
button = 17
ejector_forward = 23
ejector_backward = 24
ejector_enable = 12
sensor = 27
"""

SOLENOID = """
[pins]
button = 17
ejector_forward = 23
sensor = 27

[ejector]
kind = "solenoid"
pulse_ms = 40
"""


def edit(text: str, section: str, key: str, value: str | None) -> str:
    """`text` with `key` in `[section]` set to the TOML `value` (None removes the key; a key not
    there yet is added at the top of the section)."""
    lines = text.splitlines()
    start = lines.index(f"[{section}]")
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("[")),
        len(lines),
    )
    for i in range(start + 1, end):
        if re.match(rf"{re.escape(key)}\s*=", lines[i]):
            if value is None:
                del lines[i]
            else:
                lines[i] = f"{key} = {value}"
            return "\n".join(lines) + "\n"
    assert value is not None, f"{key} not in [{section}]"
    lines.insert(start + 1, f"{key} = {value}")
    return "\n".join(lines) + "\n"


def edits(*changes: tuple[str, str, str | None], base: str = DEFAULT_TEXT) -> str:
    for section, key, value in changes:
        base = edit(base, section, key, value)
    return base


# id -> (file content: str | bytes | None for "no file" | "DIR" for a directory, expected part)
BAD: dict[str, tuple[str | bytes | None, str]] = {
    "missing-file": (None, ": cannot read this file: No such file or directory"),
    "directory": ("DIR", ": cannot read this file: Is a directory"),
    "toml-syntax": (DEFAULT_TEXT.replace("seats = 4", "seats 4"), ": not valid TOML: "),
    "not-utf8": (b'[box]\nname = "\xff\xfe"\n', ": not a text file: TOML must be UTF-8"),
    "unknown-section": (
        DEFAULT_TEXT + "\n[pin]\nbutton = 3\n",
        ": [pin]: unknown section; did you mean [pins]? known sections: box, pins,",
    ),
    "section-not-table": ("box = 3\n[pins]\nbutton = 17\n", ": box = 3: must be a section"),
    "unknown-key": (
        edit(DEFAULT_TEXT, "pins", "buton", "3"),
        ": [pins] buton = 3: unknown key; did you mean button? known keys: button,",
    ),
    "nested-table": (
        DEFAULT_TEXT + "\n[pins.extra]\nled = 4\n",
        ": [pins] extra = {led = 4}: unknown key",
    ),
    "seats-too-many": (
        edit(DEFAULT_TEXT, "box", "seats", "11"),
        ": [box] seats = 11: must be a whole number from 2 to 10",
    ),
    "seats-string": (
        edit(DEFAULT_TEXT, "box", "seats", '"4"'),
        ': [box] seats = "4": must be a whole number from 2 to 10',
    ),
    "seats-bool": (
        edit(DEFAULT_TEXT, "box", "seats", "true"),
        ": [box] seats = true: must be a whole number",
    ),
    "settle-too-long": (
        edit(DEFAULT_TEXT, "timing", "settle_ms", "60000"),
        ": [timing] settle_ms = 60000: must be a whole number from 0 to 5000",
    ),
    "seats-float": (
        edit(DEFAULT_TEXT, "box", "seats", "4.0"),
        ": [box] seats = 4.0: must be a whole number",
    ),
    "name-empty": (
        edit(DEFAULT_TEXT, "box", "name", '""'),
        ': [box] name = "": must be 1 to 32 printable ASCII characters',
    ),
    "name-newline": (
        edit(DEFAULT_TEXT, "box", "name", '"two\\nlines"'),
        ': [box] name = "two\\nlines": must be 1 to 32 printable ASCII characters',
    ),
    "pin-below-header": (
        edit(DEFAULT_TEXT, "pins", "button", "1"),
        ": [pins] button = 1: must be a BCM GPIO number from 2 to 27",
    ),
    "pin-above-header": (
        edit(DEFAULT_TEXT, "pins", "servo", "28"),
        ": [pins] servo = 28: must be a BCM GPIO number from 2 to 27 (leave the key out",
    ),
    "pin-minus-one": (
        edit(DEFAULT_TEXT, "pins", "flywheel", "-1"),
        ": [pins] flywheel = -1: must be a BCM GPIO number from 2 to 27 (leave the key out",
    ),
    "pin-false": (
        edit(DEFAULT_TEXT, "pins", "flywheel", "false"),
        ": [pins] flywheel = false: must be a BCM GPIO number",
    ),
    "pin-string": (
        edit(DEFAULT_TEXT, "pins", "sensor", '"GPIO27"'),
        ': [pins] sensor = "GPIO27": must be a BCM GPIO number',
    ),
    "pin-used-twice": (
        edit(DEFAULT_TEXT, "pins", "servo", "17"),
        ": [pins] servo = 17: GPIO 17 is already used by button; each pin has one part",
    ),
    "required-pin-missing": (
        edit(DEFAULT_TEXT, "pins", "sensor", None),
        ": [pins] sensor = (missing): required",
    ),
    "pins-section-missing": ("[box]\nseats = 4\n", ": [pins] button = (missing): required"),
    "kind-unknown": (
        edit(DEFAULT_TEXT, "ejector", "kind", '"spring"'),
        ': [ejector] kind = "spring": must be one of "motor", "solenoid"',
    ),
    "motor-without-backward": (
        edit(DEFAULT_TEXT, "pins", "ejector_backward", None),
        ': [pins] ejector_backward = (missing): required with [ejector] kind = "motor"',
    ),
    "soft-start-without-enable": (
        edit(DEFAULT_TEXT, "pins", "ejector_enable", None),
        ": [ejector] soft_start_ms = 150: soft start needs [pins] ejector_enable",
    ),
    "solenoid-with-backward": (
        edit(SOLENOID, "pins", "ejector_backward", "24"),
        ': [pins] ejector_backward = 24: not used with [ejector] kind = "solenoid"',
    ),
    "solenoid-pulse-over-limit": (
        edit(SOLENOID, "ejector", "pulse_ms", "150"),
        ": [ejector] pulse_ms = 150: must be at most [limits] solenoid_max_on_ms = 100",
    ),
    "reverse-pulse-zero": (
        edit(DEFAULT_TEXT, "ejector", "reverse_pulse_ms", "0"),
        ": [ejector] reverse_pulse_ms = 0: must be a whole number from 10 to 2000",
    ),
    "hold-clear-string": (
        edit(DEFAULT_TEXT, "timing", "hold_clear_s", '"2s"'),
        ': [timing] hold_clear_s = "2s": must be a number from 0.5 to 30',
    ),
    "hold-clear-nan": (
        edit(DEFAULT_TEXT, "timing", "hold_clear_s", "nan"),
        ": [timing] hold_clear_s = nan: must be a number from 0.5 to 30",
    ),
    "card-timeout-over-max-on": (
        edit(DEFAULT_TEXT, "timing", "card_timeout_ms", "9000"),
        ": [limits] ejector_max_on_ms = 8000: must be above [timing] card_timeout_ms = 9000",
    ),
    "duty-zero": (
        edit(DEFAULT_TEXT, "limits", "solenoid_duty_max", "0"),
        ": [limits] solenoid_duty_max = 0: must be a number above 0 and at most 1",
    ),
    "duty-over-one": (
        edit(DEFAULT_TEXT, "limits", "solenoid_duty_max", "1.5"),
        ": [limits] solenoid_duty_max = 1.5: must be a number above 0 and at most 1",
    ),
    "max-burst-zero": (
        edit(DEFAULT_TEXT, "limits", "max_burst", "0"),
        ": [limits] max_burst = 0: must be a whole number from 1 to 50",
    ),
    "negative-retries": (
        edit(DEFAULT_TEXT, "limits", "unjam_retries", "-1"),
        ": [limits] unjam_retries = -1: must be a whole number from 0 to 10",
    ),
    "jam-base-out-of-range": (
        edit(DEFAULT_TEXT, "jam", "base", "1.5"),
        ": [jam] base = 1.5: must be between 0 and 1",
    ),
    "jam-mode-unknown": (
        edit(DEFAULT_TEXT, "jam", "mode", '"random"'),
        ': [jam] mode = "random": must be one of hazard, pattern, fixed',
    ),
    "jam-unknown-key": (
        edit(DEFAULT_TEXT, "jam", "bse", "0.3"),
        ": [jam] bse = 0.3: unknown key; did you mean base?",
    ),
    "jam-max-burst-is-a-limit": (
        edit(DEFAULT_TEXT, "jam", "max_burst", "40"),
        ": [jam] max_burst = 40: unknown key",
    ),
    "jam-pattern-over-max-burst": (
        edit(DEFAULT_TEXT, "limits", "max_burst", "4"),
        ": [jam] pattern = [0, 0, 3, 0, 5, 0, 0, 0, 2]: must hold whole numbers",
    ),
    "seat-angles-wrong-length": (
        edit(DEFAULT_TEXT, "servo", "seat_angles", "[-60, 0, 60]"),
        ": [servo] seat_angles = [-60.0, 0.0, 60.0]: must list one angle per seat: 4 angles",
    ),
    "seat-angle-outside-range": (
        edit(DEFAULT_TEXT, "servo", "seat_angles", "[-60, -20, 20, 120]"),
        ": [servo] seat_angles = [-60, -20, 20, 120]: must be a list of numbers from -90 to 90",
    ),
    "servo-range-inverted": (
        edit(DEFAULT_TEXT, "servo", "max_angle", "-90"),
        ": [servo] max_angle = -90: must be above [servo] min_angle = -90",
    ),
    "buzzer-tone": (
        edit(DEFAULT_TEXT, "feedback", "buzzer_tone", '"H4"'),
        ': [feedback] buzzer_tone = "H4": must be a note name in octaves 1 to 7, like "A4"',
    ),
    "buzzer-tone-too-high": (
        edit(DEFAULT_TEXT, "feedback", "buzzer_tone", '"C9"'),
        ': [feedback] buzzer_tone = "C9": must be a note name in octaves 1 to 7',
    ),
    "led-rate-zero": (
        edit(DEFAULT_TEXT, "feedback", "led_base_hz", "0"),
        ": [feedback] led_base_hz = 0: must be a number above 0 and at most 50",
    ),
    "plant-jitter-over-interval": (
        edit(DEFAULT_TEXT, "plant", "feed_jitter_ms", "60"),
        ": [plant] feed_jitter_ms = 60: must be a whole number from 0 to 59",
    ),
    "plant-beam-too-long": (
        edit(DEFAULT_TEXT, "plant", "beam_ms", "50"),
        ": [plant] beam_ms = 50: must be a whole number from 1 to 49",
    ),
}


def _write(tmp_path: Path, content: str | bytes | None) -> Path:
    path = tmp_path / "bad.toml"
    if content == "DIR":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    return path


def test_there_are_at_least_twenty_bad_configs() -> None:
    assert len(BAD) >= 20
    assert len({content for content, _ in BAD.values() if not isinstance(content, bytes)}) == len(
        [c for c, _ in BAD.values() if not isinstance(c, bytes)]
    ), "two bad-config cases have the same content"


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_exits_78_with_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content, expected = BAD[case]
    path = _write(tmp_path, content)
    code = main(["config", "check", str(path)])
    out, err = capsys.readouterr()
    assert code == EXIT_CONFIG == 78
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith(f"launcher: {path}: "), err
    assert expected in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("case", ["pin-used-twice", "toml-syntax"])
def test_load_raises_config_error_that_is_also_a_value_error(case: str, tmp_path: Path) -> None:
    content, expected = BAD[case]
    path = _write(tmp_path, content)
    with pytest.raises(ValueError) as info:
        config.load(path)
    assert isinstance(info.value, ConfigError)
    assert info.value.exit_code == 78
    assert expected in str(info.value)


def test_installed_command_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    path = _write(tmp_path, BAD["pin-used-twice"][0])
    exe = Path(sys.executable).parent / "launcher"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "firmware.cli"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [*cmd, "config", "check", str(path)], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 78
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"launcher: {path}: [pins] servo = 17: GPIO 17 is already used by button; "
        "each pin has one part"
    ]


def test_default_config_checks_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check", str(DEFAULT)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{DEFAULT}: OK"
    assert "motor on GPIO 23/24" in out


def test_check_without_file_uses_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{config.default_path()}: OK"


def test_check_json_round_trips_the_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check", "--json", str(DEFAULT)]) == 0
    data = json.loads(capsys.readouterr().out)
    cfg = config.load(DEFAULT)
    assert data["pins"]["ejector_forward"] == cfg.pins.ejector_forward
    assert data["servo"]["seat_angles"] == list(cfg.servo.seat_angles)
    assert data["jam"]["mode"] == cfg.jam.mode


def test_default_file_loads_into_frozen_sections() -> None:
    cfg = config.load(DEFAULT)
    assert cfg.path == str(DEFAULT)
    assert cfg.box.seats == 4
    assert cfg.pins.used() == {
        "button": 17,
        "ejector_forward": 23,
        "sensor": 27,
        "button_led": 18,
        "ejector_backward": 24,
        "ejector_enable": 12,
        "flywheel": 25,
        "buzzer": 13,
        "servo": 19,
        "hopper_empty": 22,
        "door": 5,
        "light_red": 16,
        "light_green": 20,
        "light_blue": 26,
    }
    # every output but the WS2812 line, which replaces the RGB pins
    assert set(cfg.pins.outputs()) == set(config.OUTPUT_PINS) - {"light_data"}
    assert isinstance(cfg.jam, JamParams)
    assert cfg.jam.max_burst == cfg.limits.max_burst
    assert cfg.servo.seat_angles == (-60.0, -20.0, 20.0, 60.0)
    assert isinstance(cfg.timing.hold_clear_s, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.box.seats = 6  # type: ignore[misc]


def test_attribute_names_equal_the_toml_keys() -> None:
    import tomllib

    doc = tomllib.loads(DEFAULT_TEXT)
    cfg = config.load(DEFAULT)
    assert list(doc) == list(config.SECTIONS)
    for section, table in doc.items():
        value = getattr(cfg, section)
        for key in table:
            assert hasattr(value, key), f"[{section}] {key}"


def test_defaults_in_code_match_the_documented_file(tmp_path: Path) -> None:
    """A section left out of a file gets the same values as hardware/launcher.toml documents."""
    path = tmp_path / "minimal.toml"
    path.write_text(MINIMAL)
    small = config.load(path)
    full = config.load(DEFAULT)
    for section in ("box", "ejector", "timing", "limits", "servo", "feedback", "plant"):
        assert getattr(small, section) == getattr(full, section), section


def test_optional_pins_left_out_are_none(tmp_path: Path) -> None:
    path = tmp_path / "solenoid.toml"
    path.write_text(SOLENOID)
    cfg = config.load(path)
    assert cfg.ejector.kind == "solenoid"
    assert cfg.pins.servo is None and cfg.pins.ejector_backward is None
    assert cfg.pins.outputs() == {"ejector_forward": 23}


def test_seat_angles_are_not_tied_to_seats_without_a_servo(tmp_path: Path) -> None:
    path = tmp_path / "noservo.toml"
    path.write_text(edits(("box", "seats", "6"), ("pins", "servo", None)))
    assert config.load(path).box.seats == 6


def test_values_may_be_integers_where_numbers_are_expected(tmp_path: Path) -> None:
    path = tmp_path / "ints.toml"
    path.write_text(edits(("timing", "hold_clear_s", "3"), ("limits", "solenoid_duty_max", "1")))
    cfg = config.load(path)
    assert cfg.timing.hold_clear_s == 3.0 and cfg.limits.solenoid_duty_max == 1.0


def test_packaged_copy_equals_the_documented_default() -> None:
    """firmware/launcher.toml (a symlink in the checkout) is what a wheel installs."""
    packaged = ROOT / "firmware" / "launcher.toml"
    assert packaged.read_bytes() == DEFAULT.read_bytes()


def test_default_path_prefers_the_checkout() -> None:
    assert config.default_path() == DEFAULT


# --------------------------------------------------------------------------- the host's reader

# A bad value in each section the host reads, and one in the sections it leaves to the box.
HOST_SECTIONS = [
    {"timing.cooldown_ms": -5},
    {"limits.max_burst": 0},
    {"jam.base": 2},
    {"jam.burst_weights": [1] * 20},  # past [limits] max_burst: [jam] checked against [limits]
    {"ejector.kind": "catapult"},
    {"plant.feed_interval_ms": 0},
    {"pins.ejector_backward": None},  # a motor needs it: the check between sections
    {"timing.card_timeout_ms": 9000},  # past [limits] ejector_max_on_ms
    {"timing.hold": 3},  # an unknown key
]
BOX_ONLY = [
    {"sound.player": "aplay", "sound.pack": "/usr/share/no-such-pack"},
    {"light.pixels": 0},
    {"box.seats": 1},
    {"servo.max_angle": -100},
    {"feedback.buzzer_tone": "H9"},
    {"patterns.enabled": "yes"},
    {"attenuation.curve": [2]},
    {"door.warn_interval_s": 0},
]


@pytest.mark.parametrize("change", HOST_SECTIONS)
def test_the_host_reads_its_sections_with_the_boxs_own_readers(
    tmp_path: Path, change: dict
) -> None:
    from tests.configs import write_config

    path = write_config(tmp_path / "box.toml", change)
    with pytest.raises(ConfigError) as box_says:
        config.load(path)
    with pytest.raises(ConfigError) as host_says:
        config.read_for_host(path)
    assert str(host_says.value) == str(box_says.value)  # the same reader said it


@pytest.mark.parametrize("change", BOX_ONLY)
def test_the_host_leaves_the_boxs_own_sections_to_the_box(tmp_path: Path, change: dict) -> None:
    from tests.configs import write_config

    path = write_config(tmp_path / "box.toml", {"timing.settle_ms": 7}, change)
    with pytest.raises(ConfigError):
        config.load(path)
    host = config.read_for_host(path)
    assert host.timing.settle_ms == 7 and host.path == str(path)


def test_the_host_reads_what_the_box_reads() -> None:
    box, host = config.load(DEFAULT), config.read_for_host(DEFAULT)
    for field in dataclasses.fields(host):
        assert getattr(host, field.name) == getattr(box, field.name), field.name
