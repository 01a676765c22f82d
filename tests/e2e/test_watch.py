"""`unoattack watch`: the box's events as readable lines."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from common.boxconfig import default_path
from engine.mockbox import MockBox, demo_config
from engine.watch import describe

ROOT = Path(__file__).resolve().parents[2]


def test_a_fire_event_reads_as_one_line():
    line = describe(
        {
            "seq": 12,
            "t_ms": 4200,
            "kind": "fire",
            "press_id": 7,
            "source": "button",
            "planned": 3,
            "ejected": 3,
            "reason": "fired",
            "dry_streak": 2,
            "spinup_ms": 40,
            "first_card_ms": 95,
            "total_ms": 310,
            "hopper": 54,
        }
    )
    assert "\n" not in line
    assert line.startswith("#12")
    assert "press 7 (button): fired 3 cards, dry streak 2, hopper 54" in line
    assert "total 310 ms" in line
    jam = describe(
        {
            "seq": 13,
            "t_ms": 5000,
            "kind": "fire",
            "press_id": 8,
            "source": "host",
            "planned": 5,
            "ejected": 2,
            "reason": "jammed",
            "dry_streak": 0,
            "hopper": 52,
        }
    )
    assert "jammed: 2 of 5 fired" in jam


@pytest.mark.timeout(60)
def test_watch_prints_the_boxs_events_live():
    text = demo_config(default_path().read_text(), speed=20, players=3, seed=1)
    # a suspense pattern would add state events between the press and its fire: not watch's job
    text = re.sub(r"(\[patterns\]\n(?:.*\n)*?)enabled = true", r"\1enabled = false", text)
    assert "enabled = false" in text
    with MockBox(text) as box:
        human = subprocess.run(
            [sys.executable, "-m", "engine.cli", "watch", "--port", box.port, "--count", "2"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=30,
        )
        pressed = subprocess.run(
            [sys.executable, "-m", "firmware.cli", "send", box.port, "press"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=30,
        )
        assert pressed.returncode == 0, pressed.stderr
        raw = subprocess.run(
            [
                sys.executable,
                "-m",
                "engine.cli",
                "watch",
                "--port",
                box.port,
                "--json",
                "--replay",
                "--count",
                "4",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=30,
        )
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert lines[0].startswith("watching")
    assert "hello" in lines[1] and "hopper" in lines[1]
    assert "booting -> idle" in lines[2]
    # Every event was acked by someone; --replay shows the journal again from the start,
    # including the press made by `launcher send` and its fire result.
    assert raw.returncode == 0, raw.stderr
    events = [json.loads(line) for line in raw.stdout.splitlines()]
    assert [e["seq"] for e in events] == list(range(1, 5))
    kinds = [e["kind"] for e in events]
    assert kinds == ["hello", "state", "press", "fire"]
