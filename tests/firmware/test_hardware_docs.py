"""hardware/README.md's wiring table must match the default pin map in hardware/launcher.toml."""

from __future__ import annotations

import re
from pathlib import Path

from firmware import config

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "hardware" / "README.md"

# BCM GPIO -> physical pin on the 40-pin header (the same on every 40-pin Pi).
HEADER = {
    2: 3, 3: 5, 4: 7, 17: 11, 27: 13, 22: 15, 10: 19, 9: 21, 11: 23, 5: 29, 6: 31, 13: 33,
    19: 35, 26: 37, 14: 8, 15: 10, 18: 12, 23: 16, 24: 18, 25: 22, 8: 24, 7: 26, 12: 32,
    16: 36, 20: 38, 21: 40,
}  # fmt: skip


def _wiring_rows() -> dict[str, tuple[int, int, str]]:
    """key -> (GPIO, header pin, whole row) from the README's wiring table."""
    rows: dict[str, tuple[int, int, str]] = {}
    for line in README.read_text().splitlines():
        found = re.match(r"\| `(\w+)` \| (\d+) \| (\d+) \|", line)
        if found:
            rows[found.group(1)] = (int(found.group(2)), int(found.group(3)), line)
    return rows


def test_wiring_table_matches_the_default_pin_map() -> None:
    pins = config.load(config.default_path()).pins.used()
    rows = _wiring_rows()
    assert {key: gpio for key, (gpio, _, _) in rows.items()} == pins


def test_wiring_table_header_pins_are_right() -> None:
    for key, (gpio, header, _) in _wiring_rows().items():
        assert HEADER[gpio] == header, f"{key}: GPIO {gpio} is header pin {HEADER[gpio]}"


def test_every_output_has_a_pull_down_and_sits_on_a_pin_pulled_low_at_boot() -> None:
    for key, (gpio, _, row) in _wiring_rows().items():
        if key in config.OUTPUT_PINS:
            assert "10 kΩ to GND" in row, key
            # GPIO 0-8 come up pulled high at power-on and would switch a driver on.
            assert gpio >= 9, key
