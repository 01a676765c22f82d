"""The one way tests read a systemd unit or drop-in: its settings, key -> values in order."""

from __future__ import annotations

from pathlib import Path


def unit_settings(path: Path) -> dict[str, list[str]]:
    """Every `Key=value` of a unit file (keys may repeat: each value in order; an empty value,
    which resets a list in systemd, is kept as ""); comments and section headers left out."""
    out: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out
