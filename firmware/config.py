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
    SECTIONS,
    EjectorConfig,
    LimitsConfig,
    PlantConfig,
    Section,
    TimingConfig,
    default_path,
    plain_number,
    read_ejector,
    read_jam,
    read_limits_section,
    read_plant,
    read_timing,
    read_toml,
    sections,
)
from common.errors import ConfigError
from common.jam import MAX_SEED, JamParams
from firmware import sound_pack
from firmware.attenuation import MAX_CURVE, MAX_WINDOW_MS, AttenuationConfig
from firmware.door import DoorConfig
from firmware.looks import LightConfig, parse_color
from firmware.patterns import BUILTIN, PatternsConfig, merge, parse_pattern, shortened
from firmware.sound_pack import PLAYERS, SoundConfig

# The parts the host reads too are in common.boxconfig; these names are the box's file's.
__all__ = [
    "SECTIONS",
    "BoxConfig",
    "Config",
    "EjectorConfig",
    "FeedbackConfig",
    "LimitsConfig",
    "PinsConfig",
    "PlantConfig",
    "ServoConfig",
    "TimingConfig",
    "as_dict",
    "default_path",
    "load",
    "register",
    "summary",
]

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


def _read_pins(sec: Section) -> PinsConfig:
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


def load(path: str | Path) -> Config:
    """Read and check a config file. Raises `ConfigError` (one line, exit 78) on any problem."""
    path = Path(path)
    doc = read_toml(path)
    where = str(path)
    s = sections(where, doc)

    sec = s["box"]
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

    pins = _read_pins(s["pins"])

    ejector_sec = s["ejector"]
    ejector = read_ejector(ejector_sec)

    timing = read_timing(s["timing"])

    limits_sec = s["limits"]
    limits = read_limits_section(limits_sec)

    jam = read_jam(s["jam"], limits)

    sec = s["servo"]
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

    sec = s["feedback"]
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

    plant = read_plant(s["plant"])

    _check_ejector(s["pins"], ejector_sec, limits_sec, pins, ejector, timing, limits)
    _check_light(s["pins"], pins)
    personality = _read_personality(s, limits)
    return Config(
        path=where,
        box=box,
        pins=pins,
        ejector=ejector,
        timing=timing,
        limits=limits,
        jam=jam,
        servo=servo,
        feedback=feedback,
        plant=plant,
        **personality,
    )


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


def _read_personality(s: dict[str, Section], limits: LimitsConfig) -> dict[str, Any]:
    """``[sound]``, ``[light]``, ``[patterns]``, ``[attenuation]``, ``[door]``: the box's
    character. None of them can raise a limit: they are read after ``[limits]`` and checked
    against it."""
    sec = s["sound"]
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

    sec = s["light"]
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

    sec = s["patterns"]
    enabled = sec._get("enabled", PatternsConfig.enabled)
    if not isinstance(enabled, bool):
        raise sec.fail("enabled", enabled, i18n._("must be true or false"))
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
    builtin = sec._get("builtin", PatternsConfig.builtin)
    if not isinstance(builtin, bool):
        raise sec.fail("builtin", builtin, i18n._("must be true or false"))
    if not builtin and not own:
        raise sec.fail("builtin", builtin, i18n._("needs [[patterns.pattern]] tables of your own"))
    time_scale = sec.getfloat("time_scale", PatternsConfig.time_scale, lo=0, hi=1, above=True)
    patterns = PatternsConfig(
        enabled=enabled,
        seed=sec.getint("seed", PatternsConfig.seed, lo=0, hi=MAX_SEED),
        builtin=builtin,
        time_scale=time_scale,
        patterns=shortened(merge(BUILTIN if builtin else (), own), time_scale),
    )
    sec.check_unknown()

    sec = s["attenuation"]
    spam = sec._get("spam_sound", AttenuationConfig.spam_sound)
    if not isinstance(spam, bool):
        raise sec.fail("spam_sound", spam, i18n._("must be true or false"))
    curve = sec.getnumbers("curve", list(AttenuationConfig.curve), lo=0, hi=1)
    if not 1 <= len(curve) <= MAX_CURVE:
        raise sec.fail(
            "curve",
            list(curve),
            i18n._("must list 1 to {most} factors from 0 to 1").format(most=MAX_CURVE),
        )
    attenuation = AttenuationConfig(
        window_ms=sec.getint("window_ms", AttenuationConfig.window_ms, lo=0, hi=MAX_WINDOW_MS),
        curve=curve,
        spam_sound=spam,
    )
    sec.check_unknown()

    sec = s["door"]
    door = DoorConfig(
        warn_interval_s=sec.getfloat("warn_interval_s", DoorConfig.warn_interval_s, lo=1, hi=3600)
    )
    sec.check_unknown()
    return {
        "sound": sound,
        "light": light,
        "patterns": patterns,
        "attenuation": attenuation,
        "door": door,
    }


def _is_color(text: str) -> bool:
    try:
        parse_color(text)
    except ValueError:
        return False
    return True


def _check_ejector(
    pins_sec: Section,
    ejector_sec: Section,
    limits_sec: Section,
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
                MISSING,
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
