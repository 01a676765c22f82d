"""Settings that survive a restart: what the host changed over the link, kept beside the journal.

The config file says what the box is and what it may do; the settings file only remembers what
the host chose within that: jam-model parameters set with ``model.set`` and the personality
keys of ``settings.set`` (``PERSONALITY``). At start the daemon applies the file over the config;
a stored value the config no longer allows (a lower ``[limits] max_burst``) is dropped with one
log line, so the config stays the source of every limit. ``settings.reset`` is the factory
reset: the file is emptied and the config's values hold again.

The file is ``JOURNAL.settings.json`` (beside ``launcher run --journal JOURNAL``; a box without a
journal keeps its settings in memory only)::

    {"format": 1, "jam": {"base": 0.3}, "personality": {"sound.enabled": false}}

It is written atomically (temporary file, fsync, rename). A file that cannot be read as format 1
(bad JSON, another format, a value out of range) is reported in one log line, moved aside to
``...settings.json.bad`` and replaced by an empty one: the box starts on its config's values.

The store is standard library only; :class:`Settings` is the daemon's feature over it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import textfile
from common.checks import BadValue, Check, boolean
from common.errors import CommandError
from common.jam import check_limit, from_mapping
from firmware import attenuation, patterns
from firmware.feature import Feature
from i18n import Text

if TYPE_CHECKING:
    from firmware.daemon import Daemon

log = logging.getLogger(__name__)

FORMAT = 1
SUFFIX = ".settings.json"


# The personality keys the host may set: key -> (check, what it does). A key of a config
# section runs that section's own check (the config file's reader runs the same one, so both say
# the same words). None of them touches a limit: the attenuation factors only take cards away,
# the switches only silence or darken.
PERSONALITY: dict[str, tuple[Check[Any], str]] = {
    "sound.enabled": (boolean, "play the sound pack's cues"),
    "light.enabled": (boolean, "show the colour light's looks"),
    "patterns.enabled": (patterns.KEYS["enabled"], "dress bursts in motion patterns"),
    "attenuation.window_ms": (attenuation.KEYS["window_ms"], "rapid-press window (0: off)"),
    "attenuation.curve": (
        attenuation.KEYS["curve"],
        "factors of the 1st, 2nd, ... rapid press",
    ),
    "attenuation.spam_sound": (attenuation.KEYS["spam_sound"], "a cut press cues 'spam'"),
}


def check_personality(values: Mapping[str, object]) -> dict[str, Any]:
    """Normalised personality ``values`` (as JSON writes them: a list, not a tuple);
    ``ValueError`` naming the first bad key, its `Text` as ``args[0]``."""
    if not isinstance(values, Mapping):
        raise ValueError(Text("settings must be a mapping of setting names to values"))
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in PERSONALITY:
            raise ValueError(
                Text(
                    "unknown setting {key}; known: {known}",
                    key=repr(key),
                    known=", ".join(PERSONALITY),
                )
            )
        try:
            checked = PERSONALITY[key][0](value)
        except BadValue as exc:
            raise ValueError(
                Text(
                    "{key} {rule}, got {value}",
                    key=key,
                    rule=exc.rule,
                    value=json.dumps(value)[:40],
                )
            ) from None
        out[key] = list(checked) if isinstance(checked, tuple) else checked
    return out


def path_for(journal_path: str | os.PathLike[str] | None) -> Path | None:
    """The settings file beside a journal (None for a journal in memory)."""
    if journal_path is None:
        return None
    journal = Path(journal_path)
    return journal.with_name(journal.name + SUFFIX)


class SettingsStore:
    """The stored settings: ``jam`` (partial jam parameters) and ``personality``.

    ``path`` None keeps them in memory. ``problem`` is the one line logged when the file was
    found corrupt at open (None when it was fine or absent).
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self.jam: dict[str, Any] = {}
        self.personality: dict[str, Any] = {}
        self.problem: str | None = None
        if self.path is not None:
            self._open()

    def _open(self) -> None:
        assert self.path is not None
        try:
            raw = textfile.read_bytes(self.path)  # (at most textfile.MOST_BYTES)
        except FileNotFoundError:
            return
        except OSError as exc:
            self._corrupt(str(textfile.cannot_read(self.path, exc)))
            return
        try:
            doc = textfile.parse_json(raw.decode("utf-8"))  # (nested too deep: ValueError)
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise ValueError(f"not a format {FORMAT} settings file")
            unknown = set(doc) - {"format", "jam", "personality"}
            if unknown:
                raise ValueError(f"unknown key {sorted(unknown)[0]!r}")
            jam = doc.get("jam", {})
            if not isinstance(jam, dict):
                raise ValueError("jam must be a mapping")
            personality = check_personality(doc.get("personality", {}))
        except (ValueError, UnicodeDecodeError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._corrupt(f"{self.path}: {why}")
            return
        self.jam, self.personality = dict(jam), personality

    def _corrupt(self, problem: str) -> None:
        """The file is unusable (`problem`: one English line naming it): moved aside, one log
        line, the config's values hold."""
        assert self.path is not None
        bad = self.path.with_name(self.path.name + ".bad")
        try:
            os.replace(self.path, bad)
            kept = f"moved to {bad.name}"
        except OSError:
            kept = "left in place"
        self.problem = f"settings {problem}; {kept}, starting from the config's values"
        log.error("%s", self.problem)
        self.jam, self.personality = {}, {}
        with contextlib.suppress(OSError):
            self.save()

    def drop_jam(self, why: str) -> None:
        """Forget the stored jam parameters (the config no longer allows them); one log line."""
        log.error("settings %s: stored jam parameters dropped: %s", self.path or "(memory)", why)
        self.jam = {}
        self.save()

    def set_jam(self, params: Mapping[str, Any]) -> None:
        """Remember jam parameters the host set (merged with those stored before) and save."""
        self.jam.update(params)
        self.save()

    def set_personality(self, values: Mapping[str, object]) -> dict[str, Any]:
        """Check, remember and save personality ``values``; returns them normalised."""
        checked = check_personality(values)
        self.personality.update(checked)
        self.save()
        return checked

    def reset(self) -> None:
        """Factory reset: nothing stored, the config's values hold."""
        self.jam, self.personality = {}, {}
        self.save()

    def to_dict(self) -> dict[str, Any]:
        """What the file holds."""
        return {"format": FORMAT, "jam": dict(self.jam), "personality": dict(self.personality)}

    def save(self) -> None:
        """Write the file atomically (no-op in memory). ``OSError`` when the disk refuses."""
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        data = json.dumps(self.to_dict(), indent=1, sort_keys=True).encode() + b"\n"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        with contextlib.suppress(OSError):
            fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


# --------------------------------------------------------------------------- the box's feature


class Settings(Feature):
    """The box's stored settings: applied at start, changed by ops, read by the features.

    Ops: ``settings.get``, ``settings.set`` (``settings``: a mapping of ``PERSONALITY`` keys),
    ``settings.reset`` (factory reset). ``model.set`` (the press queue's) stores its parameters
    here too (:meth:`remember_jam`).
    """

    def __init__(self, box: Daemon) -> None:
        super().__init__(box)
        self.store = SettingsStore(path_for(box.journal.path))
        self._apply_jam()
        box.serve("settings.get", self._op_get)
        box.serve("settings.set", self._op_set)
        box.serve("settings.reset", self._op_reset)

    def defaults(self) -> dict[str, Any]:
        """Each personality key's value from the config file (what a factory reset restores)."""
        cfg = self.box.config
        return {
            "sound.enabled": cfg.sound.player != "none",
            "light.enabled": True,
            "patterns.enabled": cfg.patterns.enabled,
            "attenuation.window_ms": cfg.attenuation.window_ms,
            "attenuation.curve": list(cfg.attenuation.curve),
            "attenuation.spam_sound": cfg.attenuation.spam_sound,
        }

    def value(self, key: str) -> Any:
        """The value of personality ``key`` in force (stored, else the config's)."""
        if key in self.store.personality:
            return self.store.personality[key]
        return self.defaults()[key]

    def effective(self) -> dict[str, Any]:
        """Every personality key's value in force."""
        return {**self.defaults(), **self.store.personality}

    def _apply_jam(self) -> None:
        if not self.store.jam:
            return
        cfg = self.box.config
        try:
            params = from_mapping(self.store.jam, defaults=cfg.jam)
            check_limit(params, cfg.limits.max_burst)  # the config's limit, whatever was stored
        except (ValueError, TypeError) as exc:
            self.store.drop_jam(f"{exc}; the config's [jam] holds")
            return
        self.box.presses.jam.set_params(params)

    def remember_jam(self, params: dict[str, Any]) -> None:
        """``model.set`` changed the jam model (already checked): keep it for the next start."""
        self._save(lambda: self.store.set_jam(params))

    def _save(self, change: Callable[[], Any]) -> Any:
        try:
            return change()
        except OSError as exc:
            raise CommandError(
                "INTERNAL", f"settings {self.store.path}: cannot write: {exc.strerror or exc}"
            ) from None

    def _reply(self) -> dict[str, Any]:
        return {
            "settings": self.effective(),
            "stored": sorted(self.store.personality),
            "jam_stored": sorted(self.store.jam),
            "persistent": self.store.path is not None,
        }

    def _op_get(self, args: dict) -> dict:
        return self._reply()

    def _op_set(self, args: dict) -> dict:
        values = args.get("settings")
        if not isinstance(values, dict) or not values:
            raise CommandError(
                "BAD_ARG",
                Text(
                    "settings.set needs settings: a mapping of {keys}", keys=", ".join(PERSONALITY)
                ),
            )
        try:
            check_personality(values)
        except ValueError as exc:
            why = exc.args[0] if exc.args and isinstance(exc.args[0], Text) else str(exc)
            raise CommandError("BAD_ARG", why) from None
        self._save(lambda: self.store.set_personality(values))
        self.box.light.refresh()  # a light switched off goes dark now
        return self._reply()

    def _op_reset(self, args: dict) -> dict:
        self._save(self.store.reset)
        self.box.presses.jam.set_params(self.box.config.jam)
        self.box.light.refresh()  # a light switched off goes dark now
        return self._reply()
