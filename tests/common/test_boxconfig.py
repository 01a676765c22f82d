"""What the host reads of a box's config (common/boxconfig.py `read_for_host`): the jam
model, its limits and the timings, checked as the box checks them; the Pi's own parts are not
read."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.boxconfig import read_for_host
from common.errors import ConfigError
from firmware import config as box_config
from tests.configs import DEFAULT_CONFIG, write_config


def test_the_host_reads_what_the_box_reads_of_the_shared_sections() -> None:
    host = read_for_host(DEFAULT_CONFIG)
    box = box_config.load(DEFAULT_CONFIG)
    assert (host.pins, host.jam, host.limits, host.timing, host.ejector, host.plant) == (
        box.pins,
        box.jam,
        box.limits,
        box.timing,
        box.ejector,
        box.plant,
    )


def test_a_sound_pack_only_the_pi_has_is_not_the_hosts_business(tmp_path: Path) -> None:
    path = write_config(
        tmp_path / "box.toml", {"sound.player": "aplay", "sound.pack": "/home/pi/party"}
    )
    with pytest.raises(ConfigError, match="pack"):
        box_config.load(path)  # the box checks its pack
    assert read_for_host(path).jam == read_for_host(DEFAULT_CONFIG).jam


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"jam.base": 2.0}, "base"),
        ({"limits.max_burst": 0}, "max_burst"),
        ({"timing.cooldown_ms": -1}, "cooldown_ms"),
        ({"jam.colour": 1}, "colour"),
    ],
)
def test_the_shared_sections_are_checked_as_the_box_checks_them(
    tmp_path: Path, change: dict[str, object], key: str
) -> None:
    path = write_config(tmp_path / "box.toml", change)
    with pytest.raises(ConfigError) as host:
        read_for_host(path)
    with pytest.raises(ConfigError) as box:
        box_config.load(path)
    assert key in str(host.value)
    assert str(host.value) == str(box.value)
