"""Sound: the box's cues played from a sound pack, never blocking the control thread.

:class:`SoundFeature` turns what the box does (its journaled events) into cues (``press``,
``dry``, ``fire``, ``burst_big``, ``jam``, ...; ``firmware.sound_pack.EVENTS``), picks a sound
with the pack's seeded :class:`~firmware.sound_pack.Picker` and hands it to a player:

- :class:`AplayPlayer`: the system's ALSA player (``aplay``, from Debian's ``alsa-utils``, on
  every Raspberry Pi OS image) run by a worker thread; the loop only queues the file. A new cue
  cuts the one playing (the newest news wins, as on the real box). No ``aplay`` on the PATH:
  one log line and the box stays silent.
- :class:`RecordingSink`: on mock pins, keeps what would have played with its loop-clock time
  (tests, the perf benchmark, ``launcher run --mock --sound-log``).
- :class:`SilentPlayer`: ``[sound] player = "none"``.

Standard library only (the ``Sound`` feature at the end plugs it into the daemon).
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from firmware.feature import Feature
from firmware.pins import is_mock
from firmware.sound_pack import Picker, Sound, SoundConfig, SoundPack, resolve
from firmware.sound_pack import load as load_pack

if TYPE_CHECKING:
    from firmware.daemon import Daemon

log = logging.getLogger(__name__)

_MS = 1_000_000
SINK_KEEP = 2000  # cues a recording sink keeps (the newest)


class Player(Protocol):
    """Where cues go. ``play`` is called on the loop thread and must return at once."""

    def play(self, sound: Sound, event: str) -> None: ...
    def close(self) -> None: ...


class SilentPlayer:
    """Plays nothing (``[sound] player = "none"``, or no player on this machine)."""

    def play(self, sound: Sound, event: str) -> None:
        """Nothing to do."""

    def close(self) -> None:
        """Nothing to close."""


@dataclass(frozen=True)
class Played:
    """One cue a :class:`RecordingSink` kept: loop-clock ``t_ns``, the event and the file."""

    t_ns: int
    event: str
    file: str
    duration_ms: int

    def to_dict(self, boot_ns: int = 0) -> dict[str, Any]:
        """JSON-able, with ``t_ms`` counted from ``boot_ns``."""
        return {
            "t_ms": (self.t_ns - boot_ns) // _MS,
            "event": self.event,
            "file": self.file,
            "duration_ms": self.duration_ms,
        }


class RecordingSink:
    """Keeps every cue with the time it was handed over (the newest ``SINK_KEEP``).

    ``clock`` is the loop's clock (monotonic ns); ``out``, if given, gets one JSON line per cue
    (``launcher run --mock --sound-log PATH``). Thread-safe reads: ``played`` is a copy.
    """

    def __init__(self, clock: Callable[[], int], *, out: TextIO | None = None) -> None:
        self._clock = clock
        self._boot_ns = clock()
        self._out = out
        self._lock = threading.Lock()
        self._played: deque[Played] = deque(maxlen=SINK_KEEP)
        self._cond = threading.Condition(self._lock)

    def log_to(self, out: TextIO | None) -> None:
        """From now on also write one JSON line per cue to ``out`` (None: stop)."""
        self._out = out

    def play(self, sound: Sound, event: str) -> None:
        """Record the cue now."""
        item = Played(self._clock(), event, sound.file, sound.duration_ms)
        with self._cond:
            self._played.append(item)
            self._cond.notify_all()
        if self._out is not None:
            try:
                self._out.write(json.dumps(item.to_dict(self._boot_ns)) + "\n")
                self._out.flush()
            except (OSError, ValueError):
                log.warning("sound log cannot be written; no more cues go to it")
                self._out = None

    @property
    def played(self) -> list[Played]:
        """The cues so far, oldest first."""
        with self._lock:
            return list(self._played)

    def transcript(self) -> list[dict[str, Any]]:
        """The cues so far as dicts, ``t_ms`` counted from the sink's creation (the demo's log)."""
        return [p.to_dict(self._boot_ns) for p in self.played]

    def events(self) -> list[str]:
        """The cue names so far, oldest first."""
        return [p.event for p in self.played]

    def wait(self, count: int, timeout: float) -> list[Played]:
        """Wait until at least ``count`` cues were recorded (``TimeoutError`` after ``timeout``)."""
        return self.wait_until(lambda played: len(played) >= count, timeout)

    def wait_until(self, predicate: Callable[[list[Played]], bool], timeout: float) -> list[Played]:
        """Wait until ``predicate(cues so far)`` holds (``TimeoutError`` after ``timeout``)."""
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(list(self._played)), timeout):
                raise TimeoutError(
                    f"not within {timeout} s; cues: {[p.event for p in self._played]}"
                )
            return list(self._played)

    def close(self) -> None:
        """Stop writing the log (the kept cues stay readable)."""
        self._out = None


class AplayPlayer:
    """Plays WAV files with ``aplay`` from a worker thread; the newest cue cuts the one playing.

    ``device`` is an ALSA device name (``-D``; empty: the system default). ``runner`` replaces
    ``subprocess.Popen`` in tests. ``close()`` stops the worker and the sound playing.
    """

    def __init__(
        self,
        device: str = "",
        *,
        command: str = "aplay",
        runner: Callable[..., Any] = subprocess.Popen,
    ) -> None:
        self.device = device
        self.executable = shutil.which(command) if runner is subprocess.Popen else command
        self._runner = runner
        self._cond = threading.Condition()
        self._next: Path | None = None
        self._closed = False
        self._proc: Any = None
        self.started = 0  # players started
        self.failures = 0  # players that could not start or exited with an error
        self._thread: threading.Thread | None = None
        if self.executable is None:
            log.warning("sound: %r not found (install alsa-utils); the box stays silent", command)
            return
        self._thread = threading.Thread(target=self._run, name="sound-player", daemon=True)
        self._thread.start()

    def command(self, path: Path) -> list[str]:
        """The command line that plays ``path``."""
        cmd = [str(self.executable), "-q"]
        if self.device:
            cmd += ["-D", self.device]
        return [*cmd, str(path)]

    def play(self, sound: Sound, event: str) -> None:
        """Queue ``sound`` (replacing a queued one) and cut the one playing; returns at once."""
        if self._thread is None:
            return
        with self._cond:
            self._next = sound.path
            proc = self._proc
            self._cond.notify()
        if proc is not None and proc.poll() is None:
            proc.terminate()

    def close(self) -> None:
        """Stop the worker and any sound playing; idempotent."""
        with self._cond:
            self._closed = True
            proc = self._proc
            self._cond.notify()
        if proc is not None and proc.poll() is None:
            proc.terminate()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(2)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._next is None and not self._closed:
                    self._cond.wait()
                if self._closed or self._next is None:  # (not None unless closed)
                    return
                path, self._next = self._next, None
                try:
                    self._proc = self._runner(
                        self.command(path),
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE,
                    )
                    self.started += 1
                except OSError as exc:
                    self._proc = None
                    self._failed(f"cannot start {self.executable}: {exc.strerror or exc}")
                    continue
                proc = self._proc
            _, err = proc.communicate()
            with self._cond:
                self._proc = None
            if proc.returncode not in (0, -15, None):  # -15: cut by the next cue (SIGTERM)
                text = (err or b"").decode("utf-8", "replace").strip().splitlines()
                self._failed(f"aplay exited {proc.returncode}: {text[-1] if text else ''}")

    def _failed(self, why: str) -> None:
        self.failures += 1
        if self.failures in (1, 10, 100) or self.failures % 1000 == 0:  # no log flood
            log.warning("sound: %s (%d failures so far)", why, self.failures)


class SoundFeature:
    """The box's cues. ``on_event(event)`` is the daemon's subscriber; ``cue(name)`` plays one.

    ``big_burst``: a fire of at least this many cards cues ``burst_big`` instead of ``fire``.
    ``enabled`` False: nothing is picked or played (``[sound] player = "none"``).
    """

    def __init__(
        self, pack: SoundPack, player: Player, *, seed: int = 0, big_burst: int = 6
    ) -> None:
        self.pack = pack
        self.player = player
        self.picker = Picker(pack, seed)
        self.big_burst = big_burst
        self.cues = 0

    def cue(self, event: str) -> Sound | None:
        """Pick and play a sound for ``event``; the sound, or None when the pack has none."""
        sound = self.picker.pick(event)
        if sound is None:
            return None
        self.cues += 1
        try:
            self.player.play(sound, event)
        except Exception:  # a sound must never stop the box
            log.exception("sound: playing %s failed", sound.file)
        return sound

    def cue_for(self, event: dict[str, Any]) -> str | None:
        """The cue a journaled box event calls for (None: none)."""
        kind = event.get("kind")
        if kind == "press":
            return "press"
        if kind == "fire":
            reason = event.get("reason")
            if reason == "dry":
                return "dry"
            if reason == "fired":
                return "burst_big" if int(event.get("ejected", 0)) >= self.big_burst else "fire"
            return None
        if kind in ("jam", "empty", "fault"):
            return str(kind)
        if kind == "state" and event.get("from") == "booting" and event.get("to") == "idle":
            return "ready"
        return None

    def on_event(self, event: dict[str, Any]) -> None:
        """Daemon subscriber: cue what ``event`` calls for."""
        name = self.cue_for(event)
        if name is not None:
            self.cue(name)

    def close(self) -> None:
        """Close the player."""
        self.player.close()


# --------------------------------------------------------------------------- the box's feature


def make_player(config: SoundConfig, *, mock: bool, clock: Callable[[], int]) -> Player:
    """The player ``[sound] player`` calls for: a sink on mock pins, aplay on a Pi, or none."""
    if config.player == "none":
        return SilentPlayer()
    if mock:
        return RecordingSink(clock)
    return AplayPlayer(config.device)


class SoundCues(Feature):
    """The sound cues of the box (``box.sound``): journaled events cue themselves, and the other
    features call :meth:`cue` (``spam``, ``suspense``, ``door_open``, ``ready`` after the door).

    On mock pins the player is a :class:`RecordingSink` (``sink``); ``[sound] player = "none"``
    or the ``sound.enabled`` setting off keep it silent.
    """

    def __init__(self, box: Daemon, *, player: Player | None = None) -> None:
        super().__init__(box)
        cfg = box.config.sound
        base = Path(box.config_path).parent if box.config_path else None
        pack = load_pack(resolve(cfg.pack, base=base))
        mock = box.plant is not None or is_mock(box.factory)
        self.player = player or make_player(cfg, mock=mock, clock=box.clock)
        self.cues = SoundFeature(
            pack, self.player, seed=cfg.seed, big_burst=box.config.feedback.big_burst
        )
        box.subscribe(self._on_event)

    @property
    def sink(self) -> RecordingSink | None:
        """The recording sink on mock pins (None with a real player)."""
        return self.player if isinstance(self.player, RecordingSink) else None

    @property
    def enabled(self) -> bool:
        """The ``sound.enabled`` setting."""
        return bool(self.box.settings.value("sound.enabled"))

    def cue(self, name: str) -> Sound | None:
        """Play cue ``name`` (``sound_pack.EVENTS``) unless sound is off; the sound played."""
        return self.cues.cue(name) if self.enabled else None

    def _on_event(self, event: dict[str, Any]) -> None:
        name = self.cues.cue_for(event)
        if name == "ready" and self.box.hopper.door_open():
            return  # booted with the door open: the door's warning, and ready once it closes
        if name is not None:
            self.cue(name)

    def close(self) -> None:
        """Stop the player (the daemon's stop)."""
        self.player.close()
