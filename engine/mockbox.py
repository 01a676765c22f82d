"""The mock box: `launcher run --mock --port pty` as a child process, on a config made for it.

`unoattack demo`, `unoattack serve --port mock` and the tests start the same box: mock pins plus
the plant (the simulated mechanism) behind a real pty, so the host talks to a real daemon over a
real serial link on any laptop. `mock_config` is the config it runs with: the default
`launcher.toml` with its timings divided by `--speed` (safety limits untouched), one aiming
angle per seat, and every random choice of the box seeded (`demo_config` edits the file's text
with common/boxtoml.py, the one editor of a box's file: comments and every other key kept).

The child is always stopped (SIGTERM, then SIGKILL) on the way out: `stop()` is idempotent, the
child gets SIGTERM from the kernel when its parent dies, and it runs in a session of its own so
a Ctrl-C reaches the parent, which stops it.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common.boxconfig import default_path
from common.boxtoml import assignments, set_values
from common.commandline import die_with_parent
from engine.errors import InputError, UnoError
from i18n import _

__all__ = [
    "DEFAULT_SPEED",
    "MockBox",
    "check_speed",
    "demo_config",
    "mock_config",
]

DEFAULT_SPEED = 5.0
START_TIMEOUT_S = 30.0

# Timings the demo shortens: (section, key) -> the lowest value the config checker allows or the
# plant can simulate faithfully (a card must stay in the beam long enough for the daemon's
# edge callbacks to count it). Limits ([limits]) are never touched.
SCALED: dict[tuple[str, str], float] = {
    ("plant", "feed_interval_ms"): 30,
    ("plant", "feed_jitter_ms"): 0,
    ("plant", "beam_ms"): 6,
    ("plant", "spinup_ms"): 0,
    ("timing", "card_timeout_ms"): 200,
    ("timing", "cooldown_ms"): 20,  # time for a card behind the burst to reach the beam
    # Motor: the box keeps counting late cards this long after the feed stops, before it reports
    # the fire. Never below one (scaled) feed interval plus one beam time, so a card a coasting
    # roller still brings counts in its burst; see _settle_floor.
    ("timing", "settle_ms"): 0,
    ("timing", "hold_clear_s"): 0.5,
    ("timing", "debounce_ms"): 0,
    ("ejector", "soft_start_ms"): 0,
    ("ejector", "reverse_pulse_ms"): 10,
    ("ejector", "pulse_ms"): 1,
    ("ejector", "recovery_ms"): 0,
    ("ejector", "flywheel_spinup_ms"): 0,
    ("ejector", "retract_ms"): 1,  # the reverse phase after every motor burst
}


# -- the config the child runs with ----------------------------------------------------------


# The config sections with a `seed`, and the offset of each from the demo's seed.
_SEEDED = {"jam": 1, "plant": 2, "patterns": 3, "sound": 4}


def demo_config(text: str, *, speed: float, players: int, seed: int) -> str:
    """`text` (a launcher.toml) with its timings divided by `speed`, one aiming angle per seat,
    and the jam model, plant, patterns and sounds seeded from `seed`. Comments and every other
    key are kept (common/boxtoml.py, the one editor of a box's file)."""
    if speed <= 0:
        raise InputError(_("--speed {speed}: must be above 0").format(speed=f"{speed:g}"))
    step = 160 / max(1, players - 1)
    angles = ", ".join(f"{-80 + round(i * step)}" for i in range(players))
    written = list(assignments(text))
    plant = {
        key: float(value)
        for section, key, value in written
        if section == "plant" and key in ("feed_interval_ms", "feed_jitter_ms", "beam_ms")
    }
    changes: dict[str, dict[str, str]] = {}
    for section, key, value in written:
        new: str | None = None
        floor = SCALED.get((section, key))
        if floor is not None:
            number = float(value) / speed
            if key == "feed_jitter_ms":
                # keep the jitter a small share of the (possibly floored) interval
                interval = max(
                    SCALED[("plant", "feed_interval_ms")], plant["feed_interval_ms"] / speed
                )
                number = min(number, interval / 4)
            elif key == "settle_ms":
                floor = _settle_floor(plant, speed)
            number = max(floor, number) if number > 0 else 0.0  # what is off (0) stays off
            new = f"{number:.2f}" if key.endswith("_s") else str(round(number))
        elif section == "patterns" and key == "time_scale":
            new = f"{min(1.0, float(value) / speed):.4g}"  # suspense pauses shorten too
        elif section == "box" and key == "seats":
            new = str(max(2, players))
        elif section == "servo" and key == "seat_angles":
            new = f"[{angles}]"
        elif section in _SEEDED and key == "seed":
            # every random choice of the box replays with the demo's seed (0 would be "new")
            new = str(seed % 1_000_000_007 + _SEEDED[section])
        if new is not None:
            changes.setdefault(section, {})[key] = new
    return set_values(text, changes, add=False)


def _settle_floor(plant: dict[str, float], speed: float) -> float:
    """The shortest settle window that still counts a card the roller coasts on with: it comes
    one feed interval (plus at most the jitter) after the last planned card and breaks the beam
    for `beam_ms`, all as scaled and floored above: 38 ms at the default config's floors, about
    six beam times."""

    def scaled(key: str) -> float:
        return max(SCALED[("plant", key)], plant.get(key, SCALED[("plant", key)]) / speed)

    interval = scaled("feed_interval_ms")
    jitter = min(plant.get("feed_jitter_ms", 0.0) / speed, interval / 4)
    return interval + jitter + scaled("beam_ms")


# -- the child process -------------------------------------------------------------------------


class MockBox:
    """`launcher run --mock --port pty` as a child process, in a temporary directory.

    `start()` returns the pty path; `stop()` terminates the child (SIGTERM, wait, SIGKILL) and is
    idempotent. The plant keeps its hopper in `plant_state` (JSON), the daemon its journal in
    `journal`; the child's log goes to `log_path`.
    """

    def __init__(self, config_text: str, *, workdir: Path | None = None) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="unoattack-demo-")
            workdir = Path(self._tmp.name)
        self.workdir = Path(workdir)
        self.config_path = self.workdir / "launcher.toml"
        self.config_path.write_text(config_text, encoding="utf-8")
        self.journal = self.workdir / "journal.db"
        self.plant_state = self.workdir / "plant.json"
        self.log_path = self.workdir / "launcher.log"
        self.sound_log = self.workdir / "sounds.jsonl"  # what the box would have played
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: str | None = None
        self._log: Any = None

    def command(self) -> list[str]:
        """The child's command line."""
        return [
            sys.executable,
            "-m",
            "firmware.cli",
            "run",
            "--mock",
            "--port",
            "pty",
            "--journal",
            str(self.journal),
            "--plant-state",
            str(self.plant_state),
            "--config",
            str(self.config_path),
            "--sound-log",
            str(self.sound_log),
        ]

    def sounds(self) -> dict[str, int]:
        """How many cues of each event the box would have played (its `--sound-log`), most
        frequent first; empty when the config has no sound."""
        counts: collections.Counter[str] = collections.Counter()
        with contextlib.suppress(OSError):
            for line in self.sound_log.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    counts[str(json.loads(line)["event"])] += 1
        return dict(counts.most_common())

    def start(self, timeout: float = START_TIMEOUT_S) -> str:
        """Start the child and wait for its `PORT /dev/pts/N` line; returns the port."""
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("GPIOZERO_PIN_FACTORY", None)
        self.proc = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            start_new_session=True,  # Ctrl-C reaches the demo, which stops the child itself
            preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
        )
        atexit.register(self.stop)
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = b""
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise UnoError(
                    f"the mock box did not start within {timeout:g} s: {self.log_tail()}"
                )
            ready, _w, _x = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    code = self.proc.wait()
                    self.stop()
                    raise UnoError(f"the mock box exited with code {code}: {self.log_tail()}")
                buf += chunk
        first = buf.split(b"\n", 1)[0].decode(errors="replace").strip()
        if not first.startswith("PORT "):
            self.stop()
            raise UnoError(f"the mock box said {first!r} instead of `PORT <path>`")
        self.port = first.split(None, 1)[1]
        return self.port

    @property
    def pid(self) -> int | None:
        """The child's process id (None before start)."""
        return None if self.proc is None else self.proc.pid

    def plant(self) -> dict[str, Any]:
        """The plant's state file: `hopper` and `ejected_total`."""
        return json.loads(self.plant_state.read_text(encoding="utf-8"))

    def log_tail(self, lines: int = 3) -> str:
        """The last lines of the child's log, on one line (for error messages)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        tail = [ln for ln in text.splitlines() if ln.strip()][-lines:]
        return " | ".join(tail) or "(empty log)"

    def stop(self, timeout: float = 5.0) -> int | None:
        """Stop the child: SIGTERM, wait up to `timeout`, then SIGKILL. Idempotent."""
        proc, code = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    proc.wait()
            code = proc.returncode
            if proc.stdout is not None:
                proc.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def cleanup(self) -> None:
        """Stop the child and remove the temporary directory."""
        self.stop()
        atexit.unregister(self.stop)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> MockBox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def check_speed(speed: float) -> None:
    """The mock box's `--speed`: InputError (exit 2) unless above 0 and at most 1000."""
    if not 0 < speed <= 1000:
        raise InputError(f"--speed {speed:g}: above 0 and at most 1000")


def mock_config(*, speed: float, players: int, seed: int) -> str:
    """The config the mock box runs with: the default launcher.toml, its timings divided by
    `speed`, one aiming angle per seat, the jam model and plant seeded from `seed`."""
    text = default_path().read_text(encoding="utf-8")
    return demo_config(text, speed=speed, players=players, seed=seed)
