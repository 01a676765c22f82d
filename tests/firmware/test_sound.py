"""Sound packs (manifest checks, seeded no-repeat choice), the default pack, and the players."""

from __future__ import annotations

import itertools
import threading
import wave
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.errors import ConfigError
from firmware import sound_pack, sound_synth
from firmware.loop import FakeClock
from firmware.sound import AplayPlayer, RecordingSink, SoundFeature
from firmware.sound_pack import DEFAULT_PACK, Picker, load


def _pack(tmp_path: Path, events: str, *, head: str | None = None) -> Path:
    for name in ("a.wav", "b.wav", "c.wav"):
        sound_synth.write_wav(tmp_path / name, sound_synth.tone(440, 50))
    if head is None:
        head = '[pack]\nname = "t"\nformat = 1\nlicence = "CC0-1.0"\n'
    (tmp_path / "pack.toml").write_text(head + "[events]\n" + events)
    return tmp_path


def test_default_pack_loads_and_covers_every_event() -> None:
    pack = load(DEFAULT_PACK)
    assert pack.licence == "CC0-1.0"
    assert set(pack.events) == set(sound_pack.EVENTS)
    assert all(0 < s.duration_ms <= 1000 for v in pack.events.values() for s in v)
    assert (DEFAULT_PACK / "LICENSE").read_text().count("CC0") >= 1


def test_default_pack_is_what_the_script_makes(tmp_path: Path) -> None:
    """The shipped files are the generator's output (sample by sample, within one step)."""
    sound_synth.make_pack(tmp_path)
    assert (tmp_path / "pack.toml").read_text() == (DEFAULT_PACK / "pack.toml").read_text()
    shipped = sorted(p.name for p in DEFAULT_PACK.glob("*.wav"))
    assert shipped == sorted(p.name for p in tmp_path.glob("*.wav"))
    for name in shipped:
        with wave.open(str(tmp_path / name)) as a, wave.open(str(DEFAULT_PACK / name)) as b:
            assert a.getparams() == b.getparams()
            fa, fb = a.readframes(a.getnframes()), b.readframes(b.getnframes())
        xa = memoryview(fa).cast("h")
        xb = memoryview(fb).cast("h")
        assert max((abs(p - q) for p, q in zip(xa, xb, strict=True)), default=0) <= 1, name


@pytest.mark.parametrize(
    ("events", "head", "needle"),
    [
        ('pres = ["a.wav"]\n', None, "unknown event; did you mean press?"),
        ('press = ["../a.wav"]\n', None, "must be a file inside the pack folder"),
        ('press = ["/etc/a.wav"]\n', None, "must be a file inside the pack folder"),
        ('press = ["a.mp3"]\n', None, "must be a .wav file"),
        ('press = ["missing.wav"]\n', None, "press: missing.wav: cannot read this file"),
        ('press = ["pack.wav"]\n', None, "not a PCM WAV"),
        ('press = [{ file = "a.wav", weight = 0 }]\n', None, "weight = NUMBER above 0"),
        ('press = ["a.wav", "a.wav"]\n', None, "listed twice"),
        ("press = []\n", None, "list of 1 to 64 sounds"),
        ('press = ["a.wav"]\n', '[pack]\nname = "t"\n', "licence: required"),
        ('press = ["a.wav"]\n', "[pack]\nformat = 2\nlicence = 'x'\n", "reads format 1"),
        ('press = ["a.wav"]\n[extra]\n', None, "unknown section"),
        ("press = [\n", None, "not valid TOML"),
    ],
)
def test_bad_manifest_is_one_line(
    tmp_path: Path, events: str, head: str | None, needle: str
) -> None:
    (tmp_path / "pack.wav").write_text("not audio")
    folder = _pack(tmp_path, events, head=head)
    with pytest.raises(ConfigError) as info:
        load(folder)
    message = str(info.value)
    assert needle in message and "\n" not in message
    assert message.startswith(str(folder))


def test_missing_folder_and_manifest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such sound pack folder"):
        load(tmp_path / "nope")
    with pytest.raises(ConfigError, match=r"pack\.toml: missing"):
        load(tmp_path)


@settings(max_examples=60, deadline=None)
@given(
    weights=st.lists(st.floats(0.1, 10), min_size=1, max_size=3),
    seed=st.integers(0, 2**32),
    rounds=st.integers(1, 5),
)
def test_picker_never_repeats_before_the_list_is_used_up(
    tmp_path_factory: pytest.TempPathFactory, weights: list[float], seed: int, rounds: int
) -> None:
    files = ["a.wav", "b.wav", "c.wav"][: len(weights)]
    items = ", ".join(
        f'{{ file = "{f}", weight = {w} }}' for f, w in zip(files, weights, strict=True)
    )
    pack = load(_pack(tmp_path_factory.mktemp("p"), f"fire = [{items}]\n"))
    picker = Picker(pack, seed)
    picks = [picker.pick("fire").file for _ in range(len(files) * rounds)]  # type: ignore[union-attr]
    for start in range(0, len(picks), len(files)):
        assert sorted(picks[start : start + len(files)]) == sorted(files)  # each once a round
    if len(files) > 1:
        assert all(a != b for a, b in itertools.pairwise(picks))  # never twice in a row
    again = Picker(pack, seed)
    assert [again.pick("fire").file for _ in picks] == picks  # type: ignore[union-attr]
    assert picker.pick("press") is None  # an event the pack leaves out is silent


def test_feature_cues_a_seeded_game_into_the_sink() -> None:
    clock = FakeClock()
    sink = RecordingSink(clock)
    feature = SoundFeature(load(DEFAULT_PACK), sink, seed=5, big_burst=6)
    game = [
        {"kind": "state", "from": "booting", "to": "idle"},
        {"kind": "press", "press_id": 1},
        {"kind": "fire", "reason": "dry", "ejected": 0},
        {"kind": "press", "press_id": 2},
        {"kind": "fire", "reason": "fired", "ejected": 3},
        {"kind": "press", "press_id": 3},
        {"kind": "fire", "reason": "fired", "ejected": 7},
        {"kind": "fire", "reason": "locked", "ejected": 0},
        {"kind": "jam", "press_id": 4},
        {"kind": "refill", "hopper": 3},
    ]
    for event in game:
        feature.on_event(event)
        clock.advance(100)
    log = [(c["t_ms"], c["event"]) for c in sink.transcript()]
    assert log == [
        (0, "ready"), (100, "press"), (200, "dry"), (300, "press"), (400, "fire"),
        (500, "press"), (600, "burst_big"), (800, "jam"),
    ]  # fmt: skip
    again = RecordingSink(FakeClock())
    replay = SoundFeature(load(DEFAULT_PACK), again, seed=5, big_burst=6)
    for event in game:
        replay.on_event(event)
    assert [p.file for p in again.played] == [p.file for p in sink.played]


class _FakeProc:
    def __init__(self, cmd: list[str], **kw: object) -> None:
        self.cmd = cmd
        self.returncode: int | None = None
        self.done = threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def terminate(self) -> None:
        self.returncode = -15
        self.done.set()

    def communicate(self) -> tuple[bytes, bytes]:
        self.done.wait(10)
        return b"", b""


def test_aplay_player_never_blocks_and_the_newest_cue_wins() -> None:
    procs: list[_FakeProc] = []
    started = threading.Semaphore(0)

    def runner(cmd: list[str], **kw: object) -> _FakeProc:
        procs.append(_FakeProc(cmd, **kw))
        started.release()
        return procs[-1]

    player = AplayPlayer("hw:1,0", command="aplay", runner=runner)
    pack = load(DEFAULT_PACK)
    try:
        player.play(pack.sounds("press")[0], "press")  # returns at once: the worker plays it
        assert started.acquire(timeout=10)
        assert procs[0].cmd[:4] == ["aplay", "-q", "-D", "hw:1,0"]
        player.play(pack.sounds("fire")[0], "fire")  # cuts the press cue
        assert started.acquire(timeout=10)
        assert procs[0].returncode == -15
        assert procs[1].cmd[-1].endswith("fire-1.wav")
    finally:
        player.close()
    assert procs[1].returncode == -15  # closing stops the sound playing


def test_aplay_missing_is_one_log_line_and_silence(caplog: pytest.LogCaptureFixture) -> None:
    player = AplayPlayer(command="no-such-player-here")
    player.play(load(DEFAULT_PACK).sounds("press")[0], "press")
    player.close()
    assert player.started == 0
    assert [r.message for r in caplog.records if "not found" in r.message]


# --------------------------------------------------------------------------- on the daemon

GAME = {"jam.mode": "hazard", "jam.seed": 21, "jam.base": 0.3, "sound.seed": 9}


def _play_game(make_box, presses: int = 10) -> tuple[list[dict], list[tuple[str, str]]]:
    box = make_box(GAME)
    for i in range(presses):
        box.command("press")
        box.wait_fires(i + 1)
        box.wait_state("idle")
    sink = box.daemon.sound.sink
    expected = 1 + 2 * presses  # ready, then press + dry/fire for each
    played = sink.wait(expected, timeout=20)
    box.daemon.stop()  # the next game gets the pins
    return box.fires(), [(p.event, p.file) for p in played]


def test_the_sink_logs_a_seeded_game(make_box) -> None:
    fires, cues = _play_game(make_box)
    assert cues[0][0] == "ready"
    want = []
    for fire in fires:
        want.append("press")
        want.append(
            "dry" if fire["reason"] == "dry" else ("burst_big" if fire["ejected"] >= 6 else "fire")
        )
    assert [event for event, _ in cues[1:]] == want
    assert {"dry", "fire"} <= set(want)  # the seed gives both
    again_fires, again = _play_game(make_box)
    assert [f["ejected"] for f in again_fires] == [f["ejected"] for f in fires]
    assert again == cues  # the same sounds in the same order


def test_press_cue_comes_at_the_press_and_sound_can_be_switched_off(make_box) -> None:
    box = make_box(GAME)
    sink = box.daemon.sound.sink
    sink.wait(1, timeout=20)  # ready
    box.daemon.press()
    box.wait_fires(1)
    press_event = box.presses()[0]
    cue = sink.wait(2, timeout=20)[1]
    assert cue.event == "press"
    reply = box.command("settings.set", settings={"sound.enabled": False})
    assert reply["ok"] and reply["settings"]["sound.enabled"] is False
    box.wait_state("idle")
    box.daemon.press()
    box.wait_fires(2)
    box.daemon.call(lambda: None)
    assert len(sink.played) == 3  # the first press's result cue, nothing after
    assert press_event["press_id"] == 1


def test_player_none_is_silent(make_box) -> None:
    box = make_box({**GAME, "sound.player": "none"})
    box.command("press")
    box.wait_fires(1)
    assert box.daemon.sound.sink is None
    assert box.daemon.settings.value("sound.enabled") is False


# --------------------------------------------------------------------------- command line


def test_sound_check_new_and_play(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from firmware.cli import main
    from tests.conftest import run_main

    code, out, _ = run_main(main, ["sound", "check"], capsys)
    assert code == 0 and "licence CC0-1.0" in out and "dry-1.wav (440 ms, weight 2)" in out
    code, out, _ = run_main(main, ["sound", "new", str(tmp_path / "mine")], capsys)
    assert code == 0 and load(tmp_path / "mine").licence == "CC0-1.0"
    code, _, err = run_main(main, ["sound", "new", str(tmp_path / "mine")], capsys)
    assert code == 2 and "not an empty folder" in err and err.count("\n") == 1
    (tmp_path / "mine" / "pack.toml").write_text(
        '[pack]\nlicence = "x"\n[events]\nfire = ["no.wav"]\n'
    )
    code, _, err = run_main(main, ["sound", "check", str(tmp_path / "mine")], capsys)
    assert code == 78 and "no.wav: cannot read this file" in err and err.count("\n") == 1
    code, _, err = run_main(main, ["sound", "play", "party"], capsys)
    assert code == 2 and "unknown event 'party'" in err


def test_run_writes_the_sound_log_on_mock_pins(tmp_path: Path) -> None:
    import json
    import signal
    import subprocess
    import sys

    from tests.firmware.test_daemon_run import _launcher
    from tests.wait import wait_until

    log = tmp_path / "sound.jsonl"
    proc = _launcher("run", "--mock", "--console", "--sound-log", str(log))
    try:
        proc.stdin.write("dispense 2\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        proc.read_until(lambda e: e.get("kind") == "fire")
        # the log is written as the cues come: ready, press, and the fire's
        wait_until(lambda: log.read_text().count("\n") >= 3, what="the fire's cue in the log")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.read_to_end(timeout=30)
        proc.wait(30)
    assert proc.returncode == 0, proc.err
    cues = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["event"] for c in cues][:2] == ["ready", "press"]
    assert set(cues[0]) == {"t_ms", "event", "file", "duration_ms"}
    bad = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "run", "--sound-log", str(log)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "needs --mock" in bad.stderr
