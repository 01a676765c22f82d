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
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import i18n
from common.boxconfig import (
    MISSING,
    OUTPUT_PINS,
    PIN_MAX,
    PIN_MIN,
    SECTIONS,
    EjectorConfig,
    HostConfig,
    LimitsConfig,
    PinsConfig,
    PlantConfig,
    Section,
    TimingConfig,
    default_path,
    plain_number,
    read_for_host,
    read_host_sections,
    read_limits,
    read_toml,
    sections,
)
from common.errors import ConfigError
from common.jam import MAX_SEED, JamParams
from firmware import attenuation, patterns, sound_pack
from firmware.attenuation import AttenuationConfig
from firmware.door import DoorConfig
from firmware.looks import LightConfig, parse_color
from firmware.patterns import BUILTIN, PatternsConfig, merge, parse_pattern, shortened
from firmware.sound_pack import PLAYERS, SoundConfig

# The sections a host reads too, and their readers, are common/boxconfig.py's; these names
# are the box's whole file's.
__all__ = [
    "OUTPUT_PINS",
    "PIN_MAX",
    "PIN_MIN",
    "SECTIONS",
    "BoxConfig",
    "Config",
    "ConfigError",
    "EjectorConfig",
    "FeedbackConfig",
    "HostConfig",
    "LimitsConfig",
    "PinsConfig",
    "PlantConfig",
    "ServoConfig",
    "TimingConfig",
    "as_dict",
    "default_path",
    "load",
    "read_for_host",
    "read_limits",
    "register",
    "summary",
]

# The buzzer plays one octave either side of this note, so octaves 0 and 8-9 would not fit.
_NOTE = re.compile(r"[A-G][#b]?[1-7]")


@dataclass(frozen=True)
class BoxConfig:
    """`[box]`: what the box calls itself and how many seats it aims at."""

    name: str = "uno-attack-box"
    seats: int = 4


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


def load(path: str | Path) -> Config:
    """Read and check a config file. Raises `ConfigError` (one line, exit 78) on any problem."""
    path = Path(path)
    s = sections(str(path), read_toml(path))
    box = _read_box(s["box"])
    host = read_host_sections(s)
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


def _read_box(sec: Section) -> BoxConfig:
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


def _read_servo(sec: Section, box: BoxConfig, pins: PinsConfig) -> ServoConfig:
    """`[servo]`: one angle per seat when a servo is fitted."""
    min_angle = sec.getfloat("min_angle", ServoConfig.min_angle, lo=-180, hi=180)
    max_angle = sec.getfloat("max_angle", ServoConfig.max_angle, lo=-180, hi=180)
    if max_angle <= min_angle:
        raise sec.fail(
            "max_angle",
            sec.table.get("max_angle", max_angle),
            i18n._("must be above [servo] min_angle = {angle}").format(
                angle=plain_number(min_angle)
            ),
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


def _read_feedback(sec: Section, limits: LimitsConfig) -> FeedbackConfig:
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


def _check_light(pins_sec: Section, pins: PinsConfig) -> None:
    """An RGB light needs all three colour pins; a WS2812 takes their place."""
    rgb = [getattr(pins, k) for k in ("light_red", "light_green", "light_blue")]
    if any(p is not None for p in rgb) and None in rgb:
        missing = next(
            k for k in ("light_red", "light_green", "light_blue") if getattr(pins, k) is None
        )
        raise pins_sec.fail(
            missing, MISSING, i18n._("an RGB light needs light_red, light_green and light_blue")
        )
    if rgb[0] is not None and pins.light_data is not None:
        raise pins_sec.fail(
            "light_data",
            pins.light_data,
            i18n._("a WS2812 light or an RGB light, not both; leave one out"),
        )


def _read_sound(sec: Section) -> SoundConfig:
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


def _read_light(sec: Section) -> LightConfig:
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


def _read_patterns(sec: Section, limits: LimitsConfig) -> PatternsConfig:
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


def _read_attenuation(sec: Section) -> AttenuationConfig:
    """`[attenuation]`: every key is a personality setting too, checked by its own check."""
    config = AttenuationConfig(
        **{
            key: sec.get(key, getattr(AttenuationConfig, key), check)
            for key, check in attenuation.KEYS.items()
        }
    )
    sec.check_unknown()
    return config


def _read_door(sec: Section) -> DoorConfig:
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
