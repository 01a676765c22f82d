"""Sound packs: a folder of WAV files and a TOML manifest mapping box events to weighted sounds.

A pack is a folder holding ``pack.toml`` and the WAV files it names::

    [pack]
    name = "uno-attack-default"   # shown in logs and `launcher sound check`
    format = 1                    # manifest format version (this module reads 1)
    licence = "CC0-1.0"           # the licence of the sounds (required: say what may be shared)

    [events]
    press = ["press-1.wav", "press-2.wav"]                  # weight 1 each
    fire = [{ file = "fire-1.wav", weight = 3 }, "fire-2.wav"]

Every event the box cues (``EVENTS``) may be listed; an event left out is silent. A file is a
path inside the folder (no ``..``, no absolute path), a readable PCM WAV. Any problem is one
``ConfigError`` line naming the manifest, the event and what is allowed (exit 78), as for the
config file.

:class:`Picker` chooses a sound for an event: seeded, weighted, and never the same sound twice
before every sound of that event's list has played once (a shuffle bag per event; a new round
of the bag does not start with the sound that ended the last one).

Standard library only: the host and tests read packs without any audio library.
"""

from __future__ import annotations

import difflib
import json
import random
import tomllib
import wave
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from common import textfile
from common.errors import ConfigError

MANIFEST = "pack.toml"
FORMAT = 1

# What the box cues, in the order a game meets them. A pack maps any of them to sounds.
EVENTS: dict[str, str] = {
    "ready": "the box is ready (after boot, and once when the door closes after boot)",
    "press": "a press was taken (the primary feedback, before the jam model's verdict)",
    "dry": "the press fired nothing",
    "suspense": "a motion pattern pauses before it fires",
    "fire": "the press fired cards",
    "burst_big": "the press fired a big burst (at least [sound] big_burst cards)",
    "spam": "presses came faster than [attenuation] window_ms and the burst was cut",
    "jam": "the feed jammed",
    "empty": "the hopper ran empty",
    "fault": "a safety trip latched fault",
    "door_open": "the hopper door is open (repeated while it stays open)",
}

MAX_SOUNDS = 64  # per event
MAX_SECONDS = 10.0  # per file: a cue, not a soundtrack
DEFAULT_PACK = Path(__file__).resolve().parent / "sounds" / "default"


PLAYERS = ("auto", "aplay", "none")


@dataclass(frozen=True)
class SoundConfig:
    """``[sound]``: which player, which pack, the ALSA device and the picker's seed.

    ``player``: ``auto`` (``aplay`` on real pins, the recording sink on mock pins), ``aplay``
    (the same, said outright) or ``none`` (silent). ``pack``: ``"default"`` or a folder
    (relative to the config file). ``seed`` 0: a fresh order each start.
    """

    player: str = "auto"
    pack: str = "default"
    device: str = ""
    seed: int = 0


@dataclass(frozen=True)
class Sound:
    """One WAV file of a pack: ``path`` (absolute), ``file`` (as the manifest names it),
    ``weight`` and ``duration_ms``."""

    file: str
    path: Path
    weight: float
    duration_ms: int


@dataclass(frozen=True)
class SoundPack:
    """A checked pack: ``events`` maps an event name to its sounds (manifest order)."""

    name: str
    root: Path
    licence: str
    events: dict[str, tuple[Sound, ...]]

    def sounds(self, event: str) -> tuple[Sound, ...]:
        """The sounds of ``event`` (empty when the pack leaves it silent)."""
        return self.events.get(event, ())


def resolve(spec: str, *, base: Path | None = None) -> Path:
    """Where pack ``spec`` lives: ``"default"`` is the packaged pack; anything else is a folder,
    relative to ``base`` (the config file's folder) when it is not absolute."""
    if spec == "default":
        return DEFAULT_PACK
    path = Path(spec).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    return path


def _fail(where: str, text: str) -> ConfigError:
    return ConfigError(f"{where}: {text}")


def wav_duration_ms(path: Path) -> int:
    """Length of a PCM WAV file in ms; ``ValueError`` (one line) when it is not one, OSError
    when it cannot be read."""
    try:
        with wave.open(str(path), "rb") as w:
            frames, rate = w.getnframes(), w.getframerate()
            if w.getsampwidth() not in (1, 2, 3, 4) or rate <= 0:
                raise ValueError("not a PCM WAV file")
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"not a PCM WAV file ({exc})") from None
    return round(1000 * frames / rate)


def _entry(where: str, event: str, item: object) -> tuple[str, float]:
    allowed = 'each sound is "FILE.wav" or { file = "FILE.wav", weight = NUMBER above 0 }'
    if isinstance(item, str):
        return item, 1.0
    if isinstance(item, dict) and set(item) <= {"file", "weight"} and "file" in item:
        file, weight = item["file"], item.get("weight", 1.0)
        ok = isinstance(file, str) and isinstance(weight, int | float)
        if ok and not isinstance(weight, bool) and 0 < float(weight) <= 1000:
            return file, float(weight)
    shown = json.dumps(item, default=str)[:60]
    raise _fail(where, f"[events] {event}: {shown}: {allowed}")


def _file_in(root: Path, where: str, event: str, file: str) -> Path:
    pure = PurePosixPath(file)
    if not file or pure.is_absolute() or ".." in pure.parts or "\\" in file:
        raise _fail(where, f"[events] {event}: {file!r}: must be a file inside the pack folder")
    if pure.suffix.lower() != ".wav":
        raise _fail(where, f"[events] {event}: {file!r}: must be a .wav file")
    return root / pure


def load(folder: str | Path) -> SoundPack:
    """Read and check the pack in ``folder``; ``ConfigError`` (one line) on any problem."""
    root = Path(folder)
    manifest = root / MANIFEST
    where = str(manifest)
    if not root.is_dir():
        raise ConfigError(f"{root}: no such sound pack folder (it needs a {MANIFEST})")
    try:
        doc = textfile.parse_toml(textfile.read_text(manifest))  # (not /dev/zero: textfile)
    except FileNotFoundError:
        raise ConfigError(f"{where}: missing: a sound pack folder needs a {MANIFEST}") from None
    except OSError as exc:
        raise ConfigError(textfile.cannot_read(manifest, exc).render()) from None
    except UnicodeDecodeError:
        raise _fail(where, "not a text file: TOML must be UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(where, f"not valid TOML: {exc}") from None
    for key in doc:
        if key not in ("pack", "events"):
            raise _fail(where, f"[{key}]: unknown section; known sections: pack, events")
    head = doc.get("pack", {})
    events_doc = doc.get("events", {})
    if not isinstance(head, dict) or not isinstance(events_doc, dict):
        raise _fail(where, "[pack] and [events] must be sections")
    for key in head:
        if key not in ("name", "format", "licence"):
            raise _fail(where, f"[pack] {key}: unknown key; known keys: name, format, licence")
    if head.get("format", FORMAT) != FORMAT:
        raise _fail(where, f"[pack] format = {head.get('format')!r}: this box reads format 1")
    name = head.get("name", root.name)
    licence = head.get("licence")
    if not isinstance(name, str) or not name.strip():
        raise _fail(where, "[pack] name: must be a non-empty string")
    if not isinstance(licence, str) or not licence.strip():
        raise _fail(where, '[pack] licence: required (the sounds\' licence, like "CC0-1.0")')
    events: dict[str, tuple[Sound, ...]] = {}
    for event, items in events_doc.items():
        if event not in EVENTS:
            close = difflib.get_close_matches(event, EVENTS, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise _fail(where, f"[events] {event}: unknown event; {hint}known: {', '.join(EVENTS)}")
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_SOUNDS:
            raise _fail(where, f"[events] {event}: must be a list of 1 to {MAX_SOUNDS} sounds")
        sounds = []
        seen: set[str] = set()
        for item in items:
            file, weight = _entry(where, event, item)
            if file in seen:
                raise _fail(where, f"[events] {event}: {file!r} is listed twice; use a weight")
            seen.add(file)
            path = _file_in(root, where, event, file)
            try:
                duration = wav_duration_ms(path)
            except ValueError as exc:
                raise _fail(where, f"[events] {event}: {file}: {exc}") from None
            except OSError as exc:
                unread = textfile.cannot_read(file, exc).render()
                raise _fail(where, f"[events] {event}: {unread}") from None
            if duration > MAX_SECONDS * 1000:
                raise _fail(
                    where, f"[events] {event}: {file}: {duration} ms; at most {MAX_SECONDS:g} s"
                )
            sounds.append(Sound(file, path, weight, duration))
        events[event] = tuple(sounds)
    return SoundPack(name=name.strip(), root=root, licence=licence.strip(), events=events)


class Picker:
    """Seeded choice of a pack's sounds: weighted, no repeat before the list is used up.

    Each event has a bag holding the sounds not yet played in this round of its list; a sound
    is drawn from the bag with chance proportional to its weight and taken out. An empty bag is
    refilled, and the sound that ended the last round is not the first of the next one, so the
    same sound never plays twice in a row (for a list of two or more). The weights shape the
    order within a round, not how often a sound plays: every sound plays once per round.
    """

    def __init__(self, pack: SoundPack, seed: int = 0) -> None:
        self.pack = pack
        self._rng = random.Random(seed)
        self._bags: dict[str, list[int]] = {}
        self._last: dict[str, int] = {}

    def pick(self, event: str) -> Sound | None:
        """The sound to play for ``event``, or None when the pack leaves it silent."""
        sounds = self.pack.sounds(event)
        if not sounds:
            return None
        bag = self._bags.get(event)
        if not bag:
            bag = self._bags[event] = list(range(len(sounds)))
        last = self._last.get(event)
        candidates = [i for i in bag if i != last] or bag
        index = self._rng.choices(candidates, weights=[sounds[i].weight for i in candidates])[0]
        bag.remove(index)
        self._last[event] = index
        return sounds[index]
