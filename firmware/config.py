"""The box's configuration: `hardware/launcher.toml` read into frozen dataclasses, with checks.

Every value is read through a checking getter (as Klipper's `configfile.py` does) that knows the
key's type and allowed range; a key no getter asked for is unknown and rejected. Any problem is
one `ConfigError` line, `FILE: [section] key = value: what is allowed`, so `launcher` exits 78 and
systemd does not restart a box that can never start.

Optional pins are left out of the file when the part is not fitted (they load as `None`); there
is no "-1" or `false` spelling, so a typo cannot silently disable a part.

`launcher config check [FILE]` runs the same checks and prints a short summary.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import math
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

import i18n
from firmware import attenuation, patterns, sound_pack, textfile
from firmware.attenuation import AttenuationConfig
from firmware.checks import BadValue, Check, boolean, whole_number
from firmware.door import DoorConfig
from firmware.errors import ConfigError
from firmware.jam import (
    MAX_BURST_LIMIT,
    MAX_SEED,
    JamError,
    JamParams,
    check_limit,
    fold_weights,
    from_mapping,
)
from firmware.looks import LightConfig, parse_color
from firmware.patterns import BUILTIN, PatternsConfig, merge, parse_pattern, shortened
from firmware.sound_pack import PLAYERS, SoundConfig

# BCM numbers a part may use on the 40-pin header: GPIO 0 and 1 carry the HAT ID EEPROM bus.
PIN_MIN = 2
PIN_MAX = 27

# Pins the daemon drives as outputs; the safe-off script (systemd/launcher-safe-off) drives
# exactly these low, so the two lists must agree (tests/firmware/test_systemd.py checks it).
OUTPUT_PINS: tuple[str, ...] = (
    "ejector_forward",
    "ejector_backward",
    "ejector_enable",
    "flywheel",
    "button_led",
    "buzzer",
    "servo",
    "light_red",
    "light_green",
    "light_blue",
    "light_data",
)

# The buzzer plays one octave either side of this note, so octaves 0 and 8-9 would not fit.
_NOTE = re.compile(r"[A-G][#b]?[1-7]")
_MISSING = object()
T = TypeVar("T")


@dataclass(frozen=True)
class BoxConfig:
    """`[box]`: what the box calls itself and how many seats it aims at."""

    name: str = "uno-attack-box"
    seats: int = 4


@dataclass(frozen=True)
class PinsConfig:
    """`[pins]`: BCM GPIO numbers; `None` means the part is not fitted."""

    button: int
    ejector_forward: int
    sensor: int
    button_led: int | None = None
    ejector_backward: int | None = None
    ejector_enable: int | None = None
    flywheel: int | None = None
    buzzer: int | None = None
    servo: int | None = None
    hopper_empty: int | None = None
    door: int | None = None
    light_red: int | None = None  # RGB button light (all three, or none)
    light_green: int | None = None
    light_blue: int | None = None
    light_data: int | None = None  # WS2812 data line (instead of the RGB pins)

    def used(self) -> dict[str, int]:
        """Every fitted part and its pin, in declaration order."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None
        }

    def outputs(self) -> dict[str, int]:
        """The fitted parts the daemon drives (the pins the safe-off script pulls low)."""
        return {name: pin for name, pin in self.used().items() if name in OUTPUT_PINS}


@dataclass(frozen=True)
class EjectorConfig:
    """`[ejector]`: which mechanism pushes the cards out and its timings (ms)."""

    kind: str = "motor"
    soft_start_ms: int = 150
    reverse_pulse_ms: int = 120
    pulse_ms: int = 40
    recovery_ms: int = 120
    flywheel_spinup_ms: int = 250
    retract_ms: int = 100  # motor: reverse phase after every burst (0 = off; solenoid: unused)
    retract_speed: float = 0.6


@dataclass(frozen=True)
class TimingConfig:
    """`[timing]`: jam detection, cooldown, end-of-burst settle and button timings."""

    card_timeout_ms: int = 800
    cooldown_ms: int = 300
    settle_ms: int = 100
    hold_clear_s: float = 2.0
    debounce_ms: int = 20


@dataclass(frozen=True)
class LimitsConfig:
    """`[limits]`: safety limits; only this file sets them, never the serial link."""

    ejector_max_on_ms: int = 8000
    flywheel_max_on_ms: int = 15000
    solenoid_max_on_ms: int = 100
    solenoid_duty_max: float = 0.30
    solenoid_duty_window_ms: int = 10000
    unjam_retries: int = 2
    max_burst: int = 12
    press_queue: int = 16


@dataclass(frozen=True)
class ServoConfig:
    """`[servo]`: aiming servo range and one angle per seat (degrees)."""

    min_angle: float = -90.0
    max_angle: float = 90.0
    seat_angles: tuple[float, ...] = (-60.0, -20.0, 20.0, 60.0)


@dataclass(frozen=True)
class FeedbackConfig:
    """`[feedback]`: LED/buzzer pulse rate that speeds up with each dry press."""

    led_base_hz: float = 1.0
    led_step_hz: float = 1.0
    buzzer_tone: str = "A4"
    big_burst: int = 6  # a burst of this many cards or more is big (sound and patterns)


@dataclass(frozen=True)
class PlantConfig:
    """`[plant]`: the simulated mechanism used on mock pins (ignored on real pins)."""

    hopper: int = 112
    feed_interval_ms: int = 60
    feed_jitter_ms: int = 10
    beam_ms: int = 8
    spinup_ms: int = 40
    seed: int = 1


@dataclass(frozen=True)
class HostConfig:
    """What a host reads of a box's config (`read_for_host`): the jam model and the limits it
    sims with, the timings a game's duration is estimated from (`engine/duration.py`), and the
    pins that say which parts those timings need."""

    path: str
    pins: PinsConfig
    ejector: EjectorConfig
    timing: TimingConfig
    limits: LimitsConfig
    jam: JamParams
    plant: PlantConfig


@dataclass(frozen=True)
class Config:
    """The whole file; `path` is where it was read from (reported in the `hello` event)."""

    path: str
    box: BoxConfig
    pins: PinsConfig
    ejector: EjectorConfig
    timing: TimingConfig
    limits: LimitsConfig
    jam: JamParams
    servo: ServoConfig
    feedback: FeedbackConfig
    plant: PlantConfig
    sound: SoundConfig
    light: LightConfig
    patterns: PatternsConfig
    attenuation: AttenuationConfig
    door: DoorConfig


SECTIONS: tuple[str, ...] = (
    "box",
    "pins",
    "ejector",
    "timing",
    "limits",
    "jam",
    "servo",
    "feedback",
    "plant",
    "sound",
    "light",
    "patterns",
    "attenuation",
    "door",
)

# [jam] keys are JamParams fields except max_burst, which is the safety limit [limits] max_burst.
_JAM_KEYS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(JamParams) if f.name != "max_burst"
)


def default_path() -> Path:
    """The documented default config: `hardware/launcher.toml` in a source checkout, else the
    copy installed with the package (`firmware/launcher.toml`)."""
    here = Path(__file__).resolve().parent
    checkout = here.parent / "hardware" / "launcher.toml"
    if checkout.is_file():
        return checkout
    return here / "launcher.toml"


def _show(value: object) -> str:
    """A value as it would be written in TOML, on one short line."""
    if value is _MISSING:
        return "(missing)"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = json.dumps(value)  # escapes newlines, so the message stays one line
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(_show(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k} = {_show(v)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _num(x: float) -> str:
    """1.0 -> "1", 0.3 -> "0.3": limits read like the file, not like Python floats."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[int | float]:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


class _Section:
    """Checking getters over one TOML table. Remembers which keys were asked for, so the keys
    nobody asked for can be reported as unknown."""

    def __init__(self, path: str, name: str, table: dict[str, Any]) -> None:
        self.path = path
        self.name = name
        self.table = table
        self.asked: list[str] = []

    def fail(self, key: str, value: object, allowed: str) -> ConfigError:
        """The one-line error for `key` (raise what this returns)."""
        return ConfigError(f"{self.path}: [{self.name}] {key} = {_show(value)}: {allowed}")

    def _get(self, key: str, default: object) -> object:
        self.asked.append(key)
        value = self.table.get(key, _MISSING)
        if value is _MISSING and default is _MISSING:
            raise self.fail(key, value, i18n._("required"))
        return default if value is _MISSING else value

    def get(self, key: str, default: object, check: Check[T]) -> T:
        """The value `check` makes of what the file says (the key's own check, shared with
        ``settings.set``: firmware/checks.py); its rule is what is allowed."""
        value = self._get(key, default)
        try:
            return check(value)
        except BadValue as exc:
            raise self.fail(key, value, exc.rule.render()) from None

    def getint(self, key: str, default: object = _MISSING, *, lo: int, hi: int) -> int:
        """A whole number from `lo` to `hi` inclusive."""
        return self.get(key, default, whole_number(lo, hi))

    def getbool(self, key: str, default: object) -> bool:
        """``true`` or ``false``."""
        return self.get(key, default, boolean)

    def getfloat(
        self,
        key: str,
        default: object = _MISSING,
        *,
        lo: float,
        hi: float,
        above: bool = False,
    ) -> float:
        """A number from `lo` (or just above it, with `above`) to `hi` inclusive."""
        value = self._get(key, default)
        if not _is_number(value):
            raise self.fail(key, value, self._range(lo, hi, above))
        number = float(value)
        if number > hi or number < lo or (above and number == lo):
            raise self.fail(key, value, self._range(lo, hi, above))
        return number

    @staticmethod
    def _range(lo: float, hi: float, above: bool) -> str:
        if above:
            return i18n._("must be a number above {lo} and at most {hi}").format(
                lo=_num(lo), hi=_num(hi)
            )
        return i18n._("must be a number from {lo} to {hi}").format(lo=_num(lo), hi=_num(hi))

    def getchoice(self, key: str, default: object, choices: Iterable[str]) -> str:
        """One of a fixed set of strings."""
        value = self._get(key, default)
        choices = tuple(choices)
        if value not in choices:
            listed = ", ".join(json.dumps(c) for c in choices)
            raise self.fail(key, value, i18n._("must be one of {listed}").format(listed=listed))
        return str(value)

    def getstr(
        self, key: str, default: object, *, check: Callable[[str], bool], allowed: str
    ) -> str:
        """A string that passes `check`; `allowed` says what passes."""
        value = self._get(key, default)
        if not isinstance(value, str) or not check(value):
            raise self.fail(key, value, allowed)
        return value

    def getnumbers(self, key: str, default: object, *, lo: float, hi: float) -> tuple[float, ...]:
        """A list of numbers, each from `lo` to `hi`."""
        value = self._get(key, default)
        allowed = i18n._("must be a list of numbers from {lo} to {hi}").format(
            lo=_num(lo), hi=_num(hi)
        )
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, value, allowed)
        if not all(_is_number(v) and lo <= float(v) <= hi for v in value):
            raise self.fail(key, value, allowed)
        return tuple(float(v) for v in value)

    def getpin(self, key: str, *, required: bool) -> int | None:
        """A BCM GPIO number on the header; optional pins may be left out (`None`)."""
        value = self._get(key, _MISSING if required else None)
        if value is None:
            return None
        if not _is_int(value) or not PIN_MIN <= value <= PIN_MAX:
            allowed = i18n._("must be a BCM GPIO number from {low} to {high}").format(
                low=PIN_MIN, high=PIN_MAX
            )
            if not required:
                allowed = i18n._(
                    "must be a BCM GPIO number from {low} to {high} "
                    "(leave the key out if the part is not fitted)"
                ).format(low=PIN_MIN, high=PIN_MAX)
            raise self.fail(key, value, allowed)
        return value

    def raw(self, key: str) -> object:
        """The value as written, for keys checked by someone else (the jam model)."""
        self.asked.append(key)
        return self.table.get(key, _MISSING)

    def check_unknown(self) -> None:
        """Reject any key no getter asked for, suggesting the closest known key."""
        for key, value in self.table.items():
            if key in self.asked:
                continue
            close = difflib.get_close_matches(key, self.asked, n=1)
            known = ", ".join(self.asked)
            allowed = (
                i18n._("unknown key; did you mean {close}? known keys: {known}")
                if close
                else i18n._("unknown key; known keys: {known}")
            )
            raise self.fail(
                key, value, allowed.format(close=close[0] if close else "", known=known)
            )


def _read(path: Path) -> dict[str, Any]:
    try:
        data = textfile.read_bytes(path)  # (at most textfile.MOST_BYTES: not /dev/zero)
    except OSError as exc:
        raise ConfigError(textfile.cannot_read(path, exc).render()) from None
    try:
        return textfile.parse_toml(textfile.decode(data))
    except UnicodeDecodeError:
        raise ConfigError(
            i18n._("{path}: not a text file: TOML must be UTF-8").format(path=path)
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            i18n._("{path}: not valid TOML: {error}").format(path=path, error=exc)
        ) from None


def _sections(path: str, doc: dict[str, Any]) -> dict[str, _Section]:
    sections: dict[str, _Section] = {}
    for name, table in doc.items():
        if name not in SECTIONS:
            close = difflib.get_close_matches(name, SECTIONS, n=1)
            text = (
                i18n._(
                    "{path}: [{name}]: unknown section; did you mean [{close}]? "
                    "known sections: {known}"
                )
                if close
                else i18n._("{path}: [{name}]: unknown section; known sections: {known}")
            )
            raise ConfigError(
                text.format(
                    path=path, name=name, close=close[0] if close else "", known=", ".join(SECTIONS)
                )
            )
        if not isinstance(table, dict):
            raise ConfigError(
                i18n._(
                    "{path}: {name} = {value}: must be a section, written [{name}] on its own line"
                ).format(path=path, name=name, value=_show(table))
            )
    for name in SECTIONS:
        sections[name] = _Section(path, name, doc.get(name, {}))
    return sections


def _read_pins(sec: _Section) -> PinsConfig:
    pins: dict[str, int | None] = {}
    owner: dict[int, str] = {}
    for f in dataclasses.fields(PinsConfig):
        required = f.default is dataclasses.MISSING
        pin = sec.getpin(f.name, required=required)
        if pin is not None and pin in owner:
            raise sec.fail(
                f.name,
                pin,
                i18n._("GPIO {pin} is already used by {owner}; each pin has one part").format(
                    pin=pin, owner=owner[pin]
                ),
            )
        if pin is not None:
            owner[pin] = f.name
        pins[f.name] = pin
    sec.check_unknown()
    return PinsConfig(**pins)  # type: ignore[arg-type]


def _read_jam(sec: _Section, limits: LimitsConfig) -> JamParams:
    mapping: dict[str, object] = {}
    for key in _JAM_KEYS:
        value = sec.raw(key)
        if value is not _MISSING:
            mapping[key] = value
    sec.check_unknown()
    mapping["max_burst"] = limits.max_burst
    weights = mapping.get("burst_weights", JamParams.burst_weights)
    unused = "burst_weights" not in mapping or mapping.get("mode", JamParams.mode) != "hazard"
    if unused and isinstance(weights, list | tuple):
        # Weights the file does not use (the defaults, or another mode's): folded at the limit,
        # the same distribution the cap gives, so a later switch to hazard fits the box. Weights
        # a hazard-mode file lists past its limit are a mistake check_limit names.
        mapping["burst_weights"] = fold_weights(weights, limits.max_burst)
    try:
        params = from_mapping(mapping)
        check_limit(params, limits.max_burst)
    except JamError as exc:
        # The jam model owns its ranges and says which key broke which rule.
        if exc.key is not None and exc.rule is not None and exc.key in mapping:
            raise sec.fail(exc.key, mapping[exc.key], exc.rule.render()) from None
        raise ConfigError(f"{sec.path}: [jam]: {i18n.in_reader_language(exc)}") from None
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{sec.path}: [jam]: {exc}") from None
    return params


def _read_limits(sec: _Section) -> LimitsConfig:
    """`[limits]`, every key checked (the one reader of the safety limits)."""
    limits = LimitsConfig(
        ejector_max_on_ms=sec.getint(
            "ejector_max_on_ms", LimitsConfig.ejector_max_on_ms, lo=100, hi=120000
        ),
        flywheel_max_on_ms=sec.getint(
            "flywheel_max_on_ms", LimitsConfig.flywheel_max_on_ms, lo=100, hi=600000
        ),
        solenoid_max_on_ms=sec.getint(
            "solenoid_max_on_ms", LimitsConfig.solenoid_max_on_ms, lo=1, hi=1000
        ),
        solenoid_duty_max=sec.getfloat(
            "solenoid_duty_max", LimitsConfig.solenoid_duty_max, lo=0, hi=1, above=True
        ),
        solenoid_duty_window_ms=sec.getint(
            "solenoid_duty_window_ms", LimitsConfig.solenoid_duty_window_ms, lo=100, hi=600000
        ),
        unjam_retries=sec.getint("unjam_retries", LimitsConfig.unjam_retries, lo=0, hi=10),
        max_burst=sec.getint("max_burst", LimitsConfig.max_burst, lo=1, hi=MAX_BURST_LIMIT),
        press_queue=sec.getint("press_queue", LimitsConfig.press_queue, lo=1, hi=256),
    )
    sec.check_unknown()
    return limits


def read_limits(path: str | Path) -> LimitsConfig:
    """Only the ``[limits]`` of a config file, checked as `load` checks them (ConfigError), for
    a tool that must know them before the rest of the file is right (`model fit
    --write-config` replaces the [jam] values the file's limits must allow)."""
    path = Path(path)
    s = _sections(str(path), _read(path))
    return _read_limits(s["limits"])


def read_for_host(path: str | Path) -> HostConfig:
    """What a host reads of a box's config (`HostConfig`: the jam model, the limits, the
    timings), each of those sections checked as `load` checks it (the same readers), the
    others left to the box: a config naming the Pi's own sound-pack folder reads on a laptop
    (`unoattack sweep --set config=BOX.toml`). `ConfigError` (one line, exit 78)."""
    path = Path(path)
    return _read_host(_sections(str(path), _read(path)))


def load(path: str | Path) -> Config:
    """Read and check a config file. Raises `ConfigError` (one line, exit 78) on any problem."""
    path = Path(path)
    s = _sections(str(path), _read(path))
    box = _read_box(s["box"])
    host = _read_host(s)
    pins, limits = host.pins, host.limits
    servo = _read_servo(s["servo"], box, pins)
    feedback = _read_feedback(s["feedback"], limits)
    _check_light(s["pins"], pins)
    # The box's character ([sound] to [door]): none of it can raise a limit (read after
    # [limits], checked against it).
    return Config(
        path=host.path,
        box=box,
        pins=pins,
        ejector=host.ejector,
        timing=host.timing,
        limits=limits,
        jam=host.jam,
        servo=servo,
        feedback=feedback,
        plant=host.plant,
        sound=_read_sound(s["sound"]),
        light=_read_light(s["light"]),
        patterns=_read_patterns(s["patterns"], limits),
        attenuation=_read_attenuation(s["attenuation"]),
        door=_read_door(s["door"]),
    )


def _read_host(s: dict[str, _Section]) -> HostConfig:
    """The sections a host reads ([pins], [ejector], [timing], [limits], [jam], [plant]) and
    the checks between them."""
    pins = _read_pins(s["pins"])
    ejector = _read_ejector(s["ejector"])
    timing = _read_timing(s["timing"])
    limits = _read_limits(s["limits"])
    jam = _read_jam(s["jam"], limits)
    plant = _read_plant(s["plant"])
    _check_ejector(s["pins"], s["ejector"], s["limits"], pins, ejector, timing, limits)
    return HostConfig(
        path=s["box"].path,
        pins=pins,
        ejector=ejector,
        timing=timing,
        limits=limits,
        jam=jam,
        plant=plant,
    )


def _read_box(sec: _Section) -> BoxConfig:
    """`[box]`."""
    box = BoxConfig(
        name=sec.getstr(
            "name",
            BoxConfig.name,
            check=lambda v: 1 <= len(v) <= 32 and v.isascii() and v.isprintable(),
            allowed=i18n._("must be 1 to 32 printable ASCII characters"),
        ),
        seats=sec.getint("seats", BoxConfig.seats, lo=2, hi=10),
    )
    sec.check_unknown()
    return box


def _read_ejector(sec: _Section) -> EjectorConfig:
    """`[ejector]` (what it needs of the pins and the limits: `_check_ejector`)."""
    ejector = EjectorConfig(
        kind=sec.getchoice("kind", EjectorConfig.kind, ("motor", "solenoid")),
        soft_start_ms=sec.getint("soft_start_ms", EjectorConfig.soft_start_ms, lo=0, hi=2000),
        reverse_pulse_ms=sec.getint(
            "reverse_pulse_ms", EjectorConfig.reverse_pulse_ms, lo=10, hi=2000
        ),
        pulse_ms=sec.getint("pulse_ms", EjectorConfig.pulse_ms, lo=1, hi=1000),
        recovery_ms=sec.getint("recovery_ms", EjectorConfig.recovery_ms, lo=0, hi=10000),
        flywheel_spinup_ms=sec.getint(
            "flywheel_spinup_ms", EjectorConfig.flywheel_spinup_ms, lo=0, hi=10000
        ),
        retract_ms=sec.getint("retract_ms", EjectorConfig.retract_ms, lo=0, hi=2000),
        retract_speed=sec.getfloat("retract_speed", EjectorConfig.retract_speed, lo=0.2, hi=1.0),
    )
    sec.check_unknown()
    return ejector


def _read_timing(sec: _Section) -> TimingConfig:
    """`[timing]`."""
    timing = TimingConfig(
        card_timeout_ms=sec.getint(
            "card_timeout_ms", TimingConfig.card_timeout_ms, lo=50, hi=60000
        ),
        cooldown_ms=sec.getint("cooldown_ms", TimingConfig.cooldown_ms, lo=0, hi=60000),
        settle_ms=sec.getint("settle_ms", TimingConfig.settle_ms, lo=0, hi=5000),
        hold_clear_s=sec.getfloat("hold_clear_s", TimingConfig.hold_clear_s, lo=0.5, hi=30),
        debounce_ms=sec.getint("debounce_ms", TimingConfig.debounce_ms, lo=0, hi=500),
    )
    sec.check_unknown()
    return timing


def _read_servo(sec: _Section, box: BoxConfig, pins: PinsConfig) -> ServoConfig:
    """`[servo]`: one angle per seat when a servo is fitted."""
    min_angle = sec.getfloat("min_angle", ServoConfig.min_angle, lo=-180, hi=180)
    max_angle = sec.getfloat("max_angle", ServoConfig.max_angle, lo=-180, hi=180)
    if max_angle <= min_angle:
        raise sec.fail(
            "max_angle",
            sec.table.get("max_angle", max_angle),
            i18n._("must be above [servo] min_angle = {angle}").format(angle=_num(min_angle)),
        )
    seat_angles = sec.getnumbers(
        "seat_angles", list(ServoConfig.seat_angles), lo=min_angle, hi=max_angle
    )
    if pins.servo is not None and len(seat_angles) != box.seats:
        raise sec.fail(
            "seat_angles",
            list(seat_angles),
            i18n._("must list one angle per seat: {seats} angles for [box] seats = {seats}").format(
                seats=box.seats
            ),
        )
    servo = ServoConfig(min_angle=min_angle, max_angle=max_angle, seat_angles=seat_angles)
    sec.check_unknown()
    return servo


def _read_feedback(sec: _Section, limits: LimitsConfig) -> FeedbackConfig:
    """`[feedback]`."""
    feedback = FeedbackConfig(
        led_base_hz=sec.getfloat(
            "led_base_hz", FeedbackConfig.led_base_hz, lo=0, hi=50, above=True
        ),
        led_step_hz=sec.getfloat("led_step_hz", FeedbackConfig.led_step_hz, lo=0, hi=50),
        buzzer_tone=sec.getstr(
            "buzzer_tone",
            FeedbackConfig.buzzer_tone,
            check=lambda v: _NOTE.fullmatch(v) is not None,
            allowed=i18n._('must be a note name in octaves 1 to 7, like "A4", "C#5" or "Bb3"'),
        ),
        big_burst=sec.getint("big_burst", FeedbackConfig.big_burst, lo=1, hi=limits.max_burst),
    )
    sec.check_unknown()
    return feedback


def _read_plant(sec: _Section) -> PlantConfig:
    """`[plant]`: the simulated mechanism."""
    feed_interval = sec.getint("feed_interval_ms", PlantConfig.feed_interval_ms, lo=1, hi=10000)
    jitter = sec.getint("feed_jitter_ms", PlantConfig.feed_jitter_ms, lo=0, hi=feed_interval - 1)
    plant = PlantConfig(
        hopper=sec.getint("hopper", PlantConfig.hopper, lo=0, hi=1_000_000),
        feed_interval_ms=feed_interval,
        feed_jitter_ms=jitter,
        # A card must leave the beam before the next one can arrive, or two cards count as one.
        beam_ms=sec.getint(
            "beam_ms", PlantConfig.beam_ms, lo=1, hi=max(1, feed_interval - jitter - 1)
        ),
        spinup_ms=sec.getint("spinup_ms", PlantConfig.spinup_ms, lo=0, hi=10000),
        seed=sec.getint("seed", PlantConfig.seed, lo=0, hi=MAX_SEED),
    )
    sec.check_unknown()
    return plant


def _check_light(pins_sec: _Section, pins: PinsConfig) -> None:
    """An RGB light needs all three colour pins; a WS2812 takes their place."""
    rgb = [getattr(pins, k) for k in ("light_red", "light_green", "light_blue")]
    if any(p is not None for p in rgb) and None in rgb:
        missing = next(
            k for k in ("light_red", "light_green", "light_blue") if getattr(pins, k) is None
        )
        raise pins_sec.fail(
            missing, _MISSING, i18n._("an RGB light needs light_red, light_green and light_blue")
        )
    if rgb[0] is not None and pins.light_data is not None:
        raise pins_sec.fail(
            "light_data",
            pins.light_data,
            i18n._("a WS2812 light or an RGB light, not both; leave one out"),
        )


def _read_sound(sec: _Section) -> SoundConfig:
    """`[sound]`: a pack that cannot play is a config mistake, said now (a folder on the box:
    `read_for_host` leaves this section alone)."""
    sound = SoundConfig(
        player=sec.getchoice("player", SoundConfig.player, PLAYERS),
        pack=sec.getstr(
            "pack",
            SoundConfig.pack,
            check=lambda v: 0 < len(v) <= 4096 and "\0" not in v,
            allowed=i18n._('must be "default" or the folder of a sound pack'),
        ),
        device=sec.getstr(
            "device",
            SoundConfig.device,
            check=lambda v: len(v) <= 64 and v.isascii() and v.isprintable() and " " not in v,
            allowed=i18n._('must be an ALSA device name like "hw:1,0" or "" (the default device)'),
        ),
        seed=sec.getint("seed", SoundConfig.seed, lo=0, hi=MAX_SEED),
    )
    sec.check_unknown()
    if sound.player != "none":
        # A pack that cannot play is a config mistake: said now, in one line (exit 78).
        try:
            sound_pack.load(sound_pack.resolve(sound.pack, base=Path(sec.path).parent))
        except ConfigError as exc:
            raise sec.fail("pack", sound.pack, str(exc)) from None
    return sound


def _read_light(sec: _Section) -> LightConfig:
    """`[light]`."""
    colors = sec._get("seat_colors", list(LightConfig.seat_colors))
    if (
        not isinstance(colors, list)
        or not 1 <= len(colors) <= 10
        or not all(isinstance(c, str) and _is_color(c) for c in colors)
    ):
        raise sec.fail(
            "seat_colors", colors, i18n._('must be a list of 1 to 10 colours like "#e53935"')
        )
    light = LightConfig(
        pixels=sec.getint("pixels", LightConfig.pixels, lo=1, hi=64),
        brightness=sec.getfloat("brightness", LightConfig.brightness, lo=0, hi=1, above=True),
        seat_colors=tuple(colors),
    )
    sec.check_unknown()
    return light


def _read_patterns(sec: _Section, limits: LimitsConfig) -> PatternsConfig:
    """`[patterns]`: a whir stays below `[limits] ejector_max_on_ms`."""
    enabled = sec.get("enabled", PatternsConfig.enabled, patterns.KEYS["enabled"])
    raw = sec._get("pattern", [])
    if not isinstance(raw, list):
        raise sec.fail("pattern", raw, i18n._("must be written as [[patterns.pattern]] tables"))
    own = []
    whir_max = limits.ejector_max_on_ms - 1
    for item in raw:
        try:
            own.append(parse_pattern(item, whir_max_ms=whir_max))
        except ValueError as exc:
            raise ConfigError(f"{sec.path}: [[patterns.pattern]] {exc}") from None
    builtin = sec.getbool("builtin", PatternsConfig.builtin)
    if not builtin and not own:
        raise sec.fail("builtin", builtin, i18n._("needs [[patterns.pattern]] tables of your own"))
    time_scale = sec.getfloat("time_scale", PatternsConfig.time_scale, lo=0, hi=1, above=True)
    config = PatternsConfig(
        enabled=enabled,
        seed=sec.getint("seed", PatternsConfig.seed, lo=0, hi=MAX_SEED),
        builtin=builtin,
        time_scale=time_scale,
        patterns=shortened(merge(BUILTIN if builtin else (), own), time_scale),
    )
    sec.check_unknown()
    return config


def _read_attenuation(sec: _Section) -> AttenuationConfig:
    """`[attenuation]`: every key is a personality setting too, checked by its own check."""
    config = AttenuationConfig(
        **{
            key: sec.get(key, getattr(AttenuationConfig, key), check)
            for key, check in attenuation.KEYS.items()
        }
    )
    sec.check_unknown()
    return config


def _read_door(sec: _Section) -> DoorConfig:
    """`[door]`."""
    door = DoorConfig(
        warn_interval_s=sec.getfloat("warn_interval_s", DoorConfig.warn_interval_s, lo=1, hi=3600)
    )
    sec.check_unknown()
    return door


def _is_color(text: str) -> bool:
    try:
        parse_color(text)
    except ValueError:
        return False
    return True


def _check_ejector(
    pins_sec: _Section,
    ejector_sec: _Section,
    limits_sec: _Section,
    pins: PinsConfig,
    ejector: EjectorConfig,
    timing: TimingConfig,
    limits: LimitsConfig,
) -> None:
    """Requirements that depend on the ejector kind and on other sections."""
    if ejector.kind == "motor":
        if pins.ejector_backward is None:
            raise pins_sec.fail(
                "ejector_backward",
                _MISSING,
                i18n._('required with [ejector] kind = "motor" (H-bridge IN2)'),
            )
        if ejector.soft_start_ms > 0 and pins.ejector_enable is None:
            raise ejector_sec.fail(
                "soft_start_ms",
                ejector.soft_start_ms,
                i18n._("soft start needs [pins] ejector_enable (H-bridge EN); set it or use 0"),
            )
        if ejector.retract_ms >= limits.ejector_max_on_ms:
            raise ejector_sec.fail(
                "retract_ms",
                ejector.retract_ms,
                i18n._("must be below [limits] ejector_max_on_ms = {ms}").format(
                    ms=limits.ejector_max_on_ms
                ),
            )
        if timing.card_timeout_ms >= limits.ejector_max_on_ms:
            raise limits_sec.fail(
                "ejector_max_on_ms",
                limits.ejector_max_on_ms,
                i18n._("must be above [timing] card_timeout_ms = {ms}").format(
                    ms=timing.card_timeout_ms
                ),
            )
    else:
        for key in ("ejector_backward", "ejector_enable"):
            if getattr(pins, key) is not None:
                raise pins_sec.fail(
                    key,
                    getattr(pins, key),
                    i18n._('not used with [ejector] kind = "solenoid"; leave it out'),
                )
        if ejector.pulse_ms > limits.solenoid_max_on_ms:
            raise ejector_sec.fail(
                "pulse_ms",
                ejector.pulse_ms,
                i18n._("must be at most [limits] solenoid_max_on_ms = {ms}").format(
                    ms=limits.solenoid_max_on_ms
                ),
            )
    if pins.flywheel is not None and ejector.flywheel_spinup_ms >= limits.flywheel_max_on_ms:
        raise ejector_sec.fail(
            "flywheel_spinup_ms",
            ejector.flywheel_spinup_ms,
            i18n._("must be below [limits] flywheel_max_on_ms = {ms}").format(
                ms=limits.flywheel_max_on_ms
            ),
        )


# --- `launcher config check` -------------------------------------------------------------------


def summary(cfg: Config) -> list[str]:
    """A few lines describing a checked config, for `launcher config check`."""
    pins = cfg.pins
    ejector = cfg.ejector
    if ejector.kind == "motor":
        drive = i18n._("motor on GPIO {forward}/{backward}").format(
            forward=pins.ejector_forward, backward=pins.ejector_backward
        )
        if pins.ejector_enable is not None:
            drive = i18n._("{drive}, enable GPIO {pin}").format(
                drive=drive, pin=pins.ejector_enable
            )
            if ejector.soft_start_ms:
                drive = i18n._("{drive} (soft start {ms} ms)").format(
                    drive=drive, ms=ejector.soft_start_ms
                )
    else:
        drive = i18n._("solenoid on GPIO {pin} ({on} ms on, {off} ms off)").format(
            pin=pins.ejector_forward, on=ejector.pulse_ms, off=ejector.recovery_ms
        )
    optional = [
        f.name
        for f in dataclasses.fields(PinsConfig)
        if f.default is None and getattr(pins, f.name) is not None
    ]
    lim = cfg.limits
    jam = cfg.jam
    if jam.mode == "hazard":
        model = i18n._("hazard (base {base}, step {step}, max_dry {max_dry})").format(
            base=f"{jam.base:g}", step=f"{jam.step:g}", max_dry=jam.max_dry
        )
    elif jam.mode == "pattern":
        model = i18n.ngettext(
            "pattern of {n} press", "pattern of {n} presses", len(jam.pattern)
        ).format(n=len(jam.pattern))
    else:
        model = i18n._("fixed {count} per press").format(count=jam.count)
    return [
        i18n._("{path}: OK").format(path=cfg.path),
        "  "
        + i18n.ngettext(
            "box {name}, {seats} seat", "box {name}, {seats} seats", cfg.box.seats
        ).format(name=repr(cfg.box.name), seats=cfg.box.seats),
        "  "
        + i18n._("ejector: {drive}; button GPIO {button}, sensor GPIO {sensor}").format(
            drive=drive, button=pins.button, sensor=pins.sensor
        ),
        "  "
        + i18n._("fitted: {parts}").format(
            parts=", ".join(optional) if optional else i18n._("nothing optional")
        ),
        "  "
        + i18n._(
            "limits: ejector {ms} ms, max_burst {burst}, unjam_retries {retries}, queue {queue}"
        ).format(
            ms=lim.ejector_max_on_ms,
            burst=lim.max_burst,
            retries=lim.unjam_retries,
            queue=lim.press_queue,
        ),
        "  "
        + i18n._("jam model: {model}, seed {seed}").format(
            model=model, seed=jam.seed or i18n._("fresh each start")
        ),
    ]


def as_dict(cfg: Config) -> dict[str, Any]:
    """The checked config as plain JSON-able data (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(cfg)))


def _check(args: argparse.Namespace) -> int:
    cfg = load(args.file)
    if args.json:
        print(json.dumps(as_dict(cfg), indent=2))
    else:
        print("\n".join(summary(cfg)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `launcher config check [FILE] [--json]`."""
    parser = subparsers.add_parser("config", help=i18n._("check the box's configuration file"))
    sub = parser.add_subparsers(dest="config_command", metavar="ACTION")
    sub.required = True
    check = sub.add_parser(
        "check",
        help=i18n._("validate a config file (exit 0 if good, 78 with one line naming the problem)"),
        description=i18n._(
            "Validate a launcher config file. Exit 0 and a summary if it is good; "
            "otherwise one line naming file, section, key, value and what is allowed, exit 78."
        ),
    )
    check.add_argument(
        "file",
        nargs="?",
        default=str(default_path()),
        metavar="FILE",
        help=i18n._("config file (default: the packaged hardware/launcher.toml)"),
    )
    check.add_argument(
        "--json", action="store_true", help=i18n._("print the checked config as JSON")
    )
    check.set_defaults(func=_check)
