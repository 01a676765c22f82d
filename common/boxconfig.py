"""A box's configuration file (`hardware/launcher.toml`): what the box and a host share of it.

Every value is read through a checking getter (as Klipper's `configfile.py` does) that knows the
key's type and allowed range; a key no getter asked for is unknown and rejected. Any problem is
one `ConfigError` line, `FILE: [section] key = value: what is allowed`.

Here: the checking getters (`Section`), the sections a host uses and their readers (`[pins]`,
`[ejector]`, `[timing]`, `[limits]`, `[jam]`, `[plant]`, and the checks between them), and
`read_for_host`, which reads only those: `unoattack sweep --set config=BOX.toml` takes a box's
own file on a laptop, whatever sound-pack folder it names. The box reads the whole file
(firmware/config.py `load`: these readers, then its own sections: `[servo]`, `[sound]`, ...).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

import i18n
from common import textfile
from common.checks import BadValue, Check, boolean, whole_number
from common.errors import ConfigError
from common.jam import (
    MAX_BURST_LIMIT,
    MAX_SEED,
    JamError,
    JamParams,
    check_limit,
    fold_weights,
    from_mapping,
)

__all__ = [
    "MISSING",
    "OUTPUT_PINS",
    "PIN_MAX",
    "PIN_MIN",
    "SECTIONS",
    "EjectorConfig",
    "HostConfig",
    "LimitsConfig",
    "PinsConfig",
    "PlantConfig",
    "Section",
    "TimingConfig",
    "check_ejector",
    "default_path",
    "is_number",
    "is_whole",
    "plain_number",
    "read_ejector",
    "read_for_host",
    "read_host_sections",
    "read_jam",
    "read_limits",
    "read_limits_section",
    "read_pins",
    "read_plant",
    "read_timing",
    "read_toml",
    "sections",
    "shown_value",
]

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


MISSING = object()


T = TypeVar("T")


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
    top = Path(__file__).resolve().parent.parent
    checkout = top / "hardware" / "launcher.toml"
    if checkout.is_file():
        return checkout
    return top / "firmware" / "launcher.toml"


def shown_value(value: object) -> str:
    """A value as it would be written in TOML, on one short line."""
    if value is MISSING:
        return "(missing)"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = json.dumps(value)  # escapes newlines, so the message stays one line
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(shown_value(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k} = {shown_value(v)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def plain_number(x: float) -> str:
    """1.0 -> "1", 0.3 -> "0.3": limits read like the file, not like Python floats."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def is_whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


class Section:
    """Checking getters over one TOML table. Remembers which keys were asked for, so the keys
    nobody asked for can be reported as unknown."""

    def __init__(self, path: str, name: str, table: dict[str, Any]) -> None:
        self.path = path
        self.name = name
        self.table = table
        self.asked: list[str] = []

    def fail(self, key: str, value: object, allowed: str) -> ConfigError:
        """The one-line error for `key` (raise what this returns)."""
        return ConfigError(f"{self.path}: [{self.name}] {key} = {shown_value(value)}: {allowed}")

    def _get(self, key: str, default: object) -> object:
        self.asked.append(key)
        value = self.table.get(key, MISSING)
        if value is MISSING and default is MISSING:
            raise self.fail(key, value, i18n._("required"))
        return default if value is MISSING else value

    def get(self, key: str, default: object, check: Check[T]) -> T:
        """The value `check` makes of what the file says (the key's own check, shared with
        ``settings.set``: common/checks.py); its rule is what is allowed."""
        value = self._get(key, default)
        try:
            return check(value)
        except BadValue as exc:
            raise self.fail(key, value, exc.rule.render()) from None

    def getint(self, key: str, default: object = MISSING, *, lo: int, hi: int) -> int:
        """A whole number from `lo` to `hi` inclusive."""
        return self.get(key, default, whole_number(lo, hi))

    def getbool(self, key: str, default: object) -> bool:
        """``true`` or ``false``."""
        return self.get(key, default, boolean)

    def getfloat(
        self,
        key: str,
        default: object = MISSING,
        *,
        lo: float,
        hi: float,
        above: bool = False,
    ) -> float:
        """A number from `lo` (or just above it, with `above`) to `hi` inclusive."""
        value = self._get(key, default)
        if not is_number(value):
            raise self.fail(key, value, self._range(lo, hi, above))
        number = float(value)
        if number > hi or number < lo or (above and number == lo):
            raise self.fail(key, value, self._range(lo, hi, above))
        return number

    @staticmethod
    def _range(lo: float, hi: float, above: bool) -> str:
        if above:
            return i18n._("must be a number above {lo} and at most {hi}").format(
                lo=plain_number(lo), hi=plain_number(hi)
            )
        return i18n._("must be a number from {lo} to {hi}").format(
            lo=plain_number(lo), hi=plain_number(hi)
        )

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
            lo=plain_number(lo), hi=plain_number(hi)
        )
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, value, allowed)
        if not all(is_number(v) and lo <= float(v) <= hi for v in value):
            raise self.fail(key, value, allowed)
        return tuple(float(v) for v in value)

    def getpin(self, key: str, *, required: bool) -> int | None:
        """A BCM GPIO number on the header; optional pins may be left out (`None`)."""
        value = self._get(key, MISSING if required else None)
        if value is None:
            return None
        if not is_whole(value) or not PIN_MIN <= value <= PIN_MAX:
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
        return self.table.get(key, MISSING)

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


def read_toml(path: Path) -> dict[str, Any]:
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


def sections(path: str, doc: dict[str, Any]) -> dict[str, Section]:
    found: dict[str, Section] = {}
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
                ).format(path=path, name=name, value=shown_value(table))
            )
    for name in SECTIONS:
        found[name] = Section(path, name, doc.get(name, {}))
    return found


def read_pins(sec: Section) -> PinsConfig:
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


def read_jam(sec: Section, limits: LimitsConfig) -> JamParams:
    mapping: dict[str, object] = {}
    for key in _JAM_KEYS:
        value = sec.raw(key)
        if value is not MISSING:
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


def read_limits_section(sec: Section) -> LimitsConfig:
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
    s = sections(str(path), read_toml(path))
    return read_limits_section(s["limits"])


def read_for_host(path: str | Path) -> HostConfig:
    """What a host reads of a box's config (`HostConfig`: the jam model, the limits, the
    timings), each of those sections checked as `load` checks it (the same readers), the
    others left to the box: a config naming the Pi's own sound-pack folder reads on a laptop
    (`unoattack sweep --set config=BOX.toml`). `ConfigError` (one line, exit 78)."""
    path = Path(path)
    return read_host_sections(sections(str(path), read_toml(path)))


def read_host_sections(s: dict[str, Section]) -> HostConfig:
    """The sections a host reads ([pins], [ejector], [timing], [limits], [jam], [plant]) and
    the checks between them."""
    pins = read_pins(s["pins"])
    ejector = read_ejector(s["ejector"])
    timing = read_timing(s["timing"])
    limits = read_limits_section(s["limits"])
    jam = read_jam(s["jam"], limits)
    plant = read_plant(s["plant"])
    check_ejector(s["pins"], s["ejector"], s["limits"], pins, ejector, timing, limits)
    return HostConfig(
        path=s["box"].path,
        pins=pins,
        ejector=ejector,
        timing=timing,
        limits=limits,
        jam=jam,
        plant=plant,
    )


def read_ejector(sec: Section) -> EjectorConfig:
    """`[ejector]` (what it needs of the pins and the limits: `check_ejector`)."""
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


def read_timing(sec: Section) -> TimingConfig:
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


def read_plant(sec: Section) -> PlantConfig:
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


def check_ejector(
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
