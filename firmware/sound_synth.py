"""The default sound pack, synthesised: tones, sweeps and seeded noise written with ``wave``.

``python -m firmware.sound_synth DIR`` (or ``launcher sound new DIR``) writes the pack the box
ships in ``firmware/sounds/default``: the same bytes every time (the noise is seeded), 16 kHz
16-bit mono, about a fifth of a second to a second per cue. The project made every sound here
from arithmetic alone, so the pack is dedicated to the public domain (CC0-1.0), as its manifest
and ``LICENSE`` say. A test regenerates it and compares it with the shipped files.
"""

from __future__ import annotations

import math
import random
import struct
import sys
import wave
from collections.abc import Callable, Iterable
from pathlib import Path

RATE = 16_000
LICENCE = "CC0-1.0"
NAME = "uno-attack-default"

Wave = Callable[[float], float]  # phase in cycles -> sample in -1..1


def _sine(phase: float) -> float:
    return math.sin(2 * math.pi * phase)


def _square(phase: float) -> float:
    return 1.0 if (phase % 1.0) < 0.5 else -1.0


def _tri(phase: float) -> float:
    p = phase % 1.0
    return 4 * p - 1 if p < 0.5 else 3 - 4 * p


def tone(
    f0: float,
    ms: float,
    *,
    f1: float | None = None,
    shape: Wave = _sine,
    level: float = 0.6,
    attack_ms: float = 5,
    release_ms: float = 30,
) -> list[float]:
    """A note from ``f0`` Hz (gliding to ``f1``) for ``ms``, with a short attack and release."""
    n = int(RATE * ms / 1000)
    f1 = f0 if f1 is None else f1
    out = []
    phase = 0.0
    a, r = max(1, int(RATE * attack_ms / 1000)), max(1, int(RATE * release_ms / 1000))
    for i in range(n):
        f = f0 + (f1 - f0) * i / max(1, n - 1)
        phase += f / RATE
        env = min(1.0, i / a, (n - i) / r)
        out.append(level * env * shape(phase))
    return out


def noise(ms: float, *, seed: int, level: float = 0.4, decay: float = 0.0) -> list[float]:
    """Seeded white noise, fading by ``decay`` (0: flat; 1: to silence at the end)."""
    rng = random.Random(seed)
    n = int(RATE * ms / 1000)
    return [level * (1 - decay * i / n) * rng.uniform(-1, 1) for i in range(n)]


def rest(ms: float) -> list[float]:
    """Silence."""
    return [0.0] * int(RATE * ms / 1000)


def mix(*parts: list[float]) -> list[float]:
    """Sum of ``parts`` sample by sample (the longest sets the length)."""
    n = max(len(p) for p in parts)
    return [sum(p[i] for p in parts if i < len(p)) for i in range(n)]


def seq(*parts: Iterable[float]) -> list[float]:
    """``parts`` one after another."""
    out: list[float] = []
    for p in parts:
        out.extend(p)
    return out


def _note(name: str) -> float:
    names = {"C": -9, "D": -7, "E": -5, "F": -4, "G": -2, "A": 0, "B": 2}
    semis = names[name[0]] + (1 if "#" in name else 0) + 12 * (int(name[-1]) - 4)
    return 440.0 * 2 ** (semis / 12)


def notes(spec: str, ms: float, **kw: object) -> list[float]:
    """A melody: space-separated note names (``"C5 E5 G5"``), each ``ms`` long."""
    return seq(*(tone(_note(n), ms, **kw) for n in spec.split()))  # type: ignore[arg-type]


def _times(n: int, *parts: list[float]) -> list[float]:
    """``parts`` in sequence, ``n`` times over."""
    return seq(*(seq(*parts) for _ in range(n)))


def _drumroll() -> list[float]:
    return seq(*(noise(35, seed=10 + i, decay=1) + rest(45) for i in range(8)))


# event -> list of (file name, weight, samples); weights other than 1 show the manifest's form.
def sounds() -> dict[str, list[tuple[str, float, list[float]]]]:
    """Every sound of the default pack, by event."""
    square, tri = _square, _tri
    return {
        "ready": [("ready-1.wav", 1, notes("C5 E5 G5 C6", 90, shape=tri))],
        "press": [
            ("press-1.wav", 1, tone(1400, 45, f1=1800, release_ms=15)),
            ("press-2.wav", 1, tone(1100, 45, f1=1500, shape=tri, release_ms=15)),
            ("press-3.wav", 1, mix(tone(1600, 40, release_ms=10), noise(25, seed=3, level=0.2))),
        ],
        "dry": [
            ("dry-1.wav", 2, seq(tone(392, 180, f1=330), tone(330, 260, f1=262))),
            ("dry-2.wav", 1, tone(180, 300, shape=square, level=0.3)),
            ("dry-3.wav", 1, seq(tone(600, 90), rest(40), tone(450, 160, f1=380))),
        ],
        "suspense": [
            ("suspense-1.wav", 1, _drumroll()),
            ("suspense-2.wav", 1, tone(200, 700, f1=800, shape=tri, level=0.4)),
        ],
        "fire": [
            ("fire-1.wav", 1, mix(noise(350, seed=21, decay=1), tone(900, 350, f1=300, level=0.3))),
            ("fire-2.wav", 1, seq(tone(700, 60), tone(1050, 160, f1=1400))),
        ],
        "burst_big": [
            ("burst-big-1.wav", 1, seq(notes("G4 C5 E5", 80), notes("G5", 400, shape=tri))),
            (
                "burst-big-2.wav",
                1,
                mix(noise(600, seed=33, decay=1, level=0.5), notes("C5 G5", 300)),
            ),
        ],
        "spam": [
            ("spam-1.wav", 1, _times(6, tone(2000, 30, release_ms=5), rest(25))),
            ("spam-2.wav", 1, tone(150, 250, shape=square, level=0.35)),
        ],
        "jam": [("jam-1.wav", 1, _times(3, tone(110, 120, shape=square, level=0.4), rest(60)))],
        "empty": [("empty-1.wav", 1, notes("G5 E5 C5", 140, shape=tri))],
        "fault": [("fault-1.wav", 1, _times(3, tone(880, 150), tone(660, 150)))],
        "door_open": [("door-open-1.wav", 1, seq(notes("E5", 160), rest(60), notes("C5", 220)))],
    }


def write_wav(path: Path, samples: list[float]) -> None:
    """16-bit mono PCM at ``RATE``."""
    frames = b"".join(struct.pack("<h", round(max(-1.0, min(1.0, s)) * 32767)) for s in samples)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(frames)


def manifest(table: dict[str, list[tuple[str, float, list[float]]]]) -> str:
    """The pack's ``pack.toml``."""
    lines = [
        "# The default sound pack of the UNO Attack launcher box: synthesised tones and noise,",
        "# written by `python -m firmware.sound_synth DIR` (firmware/sound_synth.py).",
        "# Format: docs/personality.md. Sounds: CC0-1.0 (see LICENSE).",
        "",
        "[pack]",
        f'name = "{NAME}"',
        "format = 1",
        f'licence = "{LICENCE}"',
        "",
        "[events]",
    ]
    for event, entries in table.items():
        items = [
            f'"{file}"' if weight == 1 else f'{{ file = "{file}", weight = {weight:g} }}'
            for file, weight, _ in entries
        ]
        lines.append(f"{event} = [{', '.join(items)}]")
    return "\n".join(lines) + "\n"


LICENSE_TEXT = """\
The sounds in this folder were synthesised by firmware/sound_synth.py of the UNO Attack
launcher project from arithmetic alone (tones, sweeps and seeded noise); no recording was used.

To the extent possible under law, the authors have dedicated these sounds to the public domain
worldwide (Creative Commons CC0 1.0 Universal,
https://creativecommons.org/publicdomain/zero/1.0/). Use them for anything.
"""


def make_pack(folder: str | Path) -> Path:
    """Write the default pack into ``folder`` (created if missing); returns the folder."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    table = sounds()
    for entries in table.values():
        for file, _, samples in entries:
            write_wav(out / file, samples)
    (out / "pack.toml").write_text(manifest(table))
    (out / "LICENSE").write_text(LICENSE_TEXT)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m firmware.sound_synth DIR", file=sys.stderr)
        sys.exit(2)
    print(make_pack(sys.argv[1]))
