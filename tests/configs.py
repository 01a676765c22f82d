"""The one way tests write a launcher config: the documented default with some keys changed.

Limits come from a config file only, so every test that needs a box writes one. It starts from
``hardware/launcher.toml`` and changes keys in place, as a person edits the file: comments, order
and layout stay as shipped, a changed line loses only its trailing comment, a key the default
does not have is added at the end of its section (a section it does not have, at the end).

Changes come in layers, later layers winning, each either dotted (``{"timing.cooldown_ms": 5}``)
or by section (``{"timing": {"cooldown_ms": 5}}``); a value of ``None`` leaves the key out (an
optional pin, say). The speed presets live with their tests: ``tests/firmware/conftest.FAST``
(in-process daemons), ``tests/e2e/conftest.FAST`` (daemon processes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.conftest import DEFAULT_CONFIG

Layer = Mapping[str, Any]

_HEADER = re.compile(r"\s*\[([a-z_]+)\]")
_ITEM = re.compile(r"\s*([a-z_]+)\s*=")


def toml_value(value: Any) -> str:
    """A Python value as a TOML literal (the types a launcher config uses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):  # an inline table ([[patterns.pattern]] entries, segments)
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")


def merge(*layers: Layer) -> dict[str, dict[str, Any]]:
    """Layers of changes (dotted or by section) as one ``{section: {key: value}}``; later win."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for name, value in layer.items():
            if "." in name:
                section, key = name.split(".", 1)
                merged.setdefault(section, {})[key] = value
            elif isinstance(value, Mapping):
                merged.setdefault(name, {}).update(value)
            else:
                raise ValueError(f"config change {name!r}: give 'section.key' or a section table")
    return merged


def config_text(*layers: Layer, base: Path = DEFAULT_CONFIG) -> str:
    """The text of ``base`` (the documented default) with ``layers`` of changes applied."""
    todo = merge(*layers)
    out: list[str] = []
    section: str | None = None

    def add_missing() -> None:
        # Keys the file does not have, at the end of their section (before the next header).
        rest = todo.pop(section, {}) if section is not None else {}
        out.extend(f"{k} = {toml_value(v)}" for k, v in rest.items() if v is not None)

    for line in base.read_text(encoding="utf-8").splitlines():
        header = _HEADER.match(line)
        if header:
            add_missing()
            section = header.group(1)
        item = _ITEM.match(line)
        if item and section is not None and item.group(1) in todo.get(section, {}):
            value = todo[section].pop(item.group(1))
            if value is None:
                continue
            line = f"{item.group(1)} = {toml_value(value)}"
        out.append(line)
    add_missing()
    for name, rest in todo.items():
        keys = [f"{k} = {toml_value(v)}" for k, v in rest.items() if v is not None]
        if keys:
            out.extend(["", f"[{name}]", *keys])
    return "\n".join(out) + "\n"


def write_config(path: Path, *layers: Layer, base: Path = DEFAULT_CONFIG) -> Path:
    """Write ``base`` (the documented default) with ``layers`` of changes to ``path``; returns
    ``path``."""
    path.write_text(config_text(*layers, base=base), encoding="utf-8")
    return path
