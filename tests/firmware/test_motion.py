"""Motion patterns and the retraction on the daemon, mock pins: steps, timings, deadlines."""

from __future__ import annotations

from tests.firmware.conftest import SOLENOID

_MS = 1_000_000


def _patterns(*patterns: dict) -> dict:
    return {
        "patterns.enabled": True,
        "patterns.seed": 3,
        "patterns.builtin": False,
        "patterns.pattern": list(patterns),
    }


SPLIT = {
    "name": "split",
    "fire": 1,
    "big": 1,
    "segments": [{"feed": 2}, {"pause": 200, "cue": "suspense"}, {"feed": "rest", "speed": 0.5}],
}
TEASE = {"name": "tease", "dry": 1000, "segments": [{"whir": 80, "speed": 0.5}, {"pause": 60}]}


def _runs(log: list, pin: str) -> list[tuple[int, int]]:
    """(on ns, off ns) of each time ``pin`` was on, from the plant's output log."""
    runs, since = [], None
    for name, t, value in log:
        if name != pin:
            continue
        if value > 0 and since is None:
            since = t
        elif value == 0 and since is not None:
            runs.append((since, t))
            since = None
    return runs


def test_a_split_pattern_pauses_the_feed_between_its_feed_steps(make_box) -> None:
    box = make_box({**_patterns(SPLIT), "jam.count": 5})
    box.command("press")
    fire = box.wait_fires(1)[0]
    assert fire["pattern"] == "split" and fire["reason"] == "fired" and fire["ejected"] == 5
    gaps = [b - a for a, b in zip(fire["card_ms"], fire["card_ms"][1:], strict=False)]
    assert gaps[1] >= 200  # the pause between card 2 and card 3
    feeds = _runs(box.plant.output_log, "ejector_forward")
    assert len(feeds) == 2  # fed, stopped for the pause, fed again
    assert (feeds[1][0] - feeds[0][1]) // _MS >= 200
    assert "suspense" in box.daemon.sound.sink.events()
    box.wait_state("idle")
    assert box.power_outputs_off()


def test_a_dry_press_can_fake_a_start_and_fire_nothing(make_box) -> None:
    box = make_box({**_patterns(TEASE, SPLIT), "jam.mode": "pattern", "jam.pattern": [0, 2]})
    hopper = box.plant.hopper
    box.command("press")
    fire = box.wait_fires(1)[0]
    assert fire["reason"] == "dry" and fire["pattern"] == "tease" and fire["ejected"] == 0
    assert fire["total_ms"] >= 80 + 60
    whirs = _runs(box.plant.output_log, "ejector_backward")
    assert len(whirs) == 1 and (whirs[0][1] - whirs[0][0]) // _MS >= 80
    assert _runs(box.plant.output_log, "ejector_forward") == []
    assert box.plant.hopper == hopper  # nothing left the box
    # the fire is told before the machine leaves spinup: wait for the end of the burst (a busy
    # machine, or an emulated Pi, gets there late)
    box.wait_state("idle")
    states = [e["to"] for e in box.daemon.events if e["kind"] == "state"]
    assert states[-3:] == ["spinup", "cooldown", "idle"]  # never ejecting
    assert box.daemon.call(lambda: box.daemon.presses.jam.dry_streak) == 1


def test_dispense_is_never_dressed(make_box) -> None:
    box = make_box({**_patterns(SPLIT)})
    assert box.command("dispense", count=4)["ok"]
    fire = box.wait_fires(1)[0]
    assert fire["pattern"] is None and fire["ejected"] == 4
    assert len(_runs(box.plant.output_log, "ejector_forward")) == 1


def test_patterns_off_by_setting(make_box) -> None:
    box = make_box({**_patterns(SPLIT), "jam.count": 4})
    assert box.command("settings.set", settings={"patterns.enabled": False})["ok"]
    box.command("press")
    assert box.wait_fires(1)[0]["pattern"] is None


def test_a_solenoid_splits_too_and_never_whirs(make_box) -> None:
    box = make_box({**SOLENOID, **_patterns(SPLIT, TEASE), "jam.mode": "pattern",
                    "jam.pattern": [0, 4]})  # fmt: skip
    box.command("press")
    box.command("press")
    dry, fired = box.wait_fires(2)
    assert dry["reason"] == "dry" and dry["pattern"] is None  # no whir without a reverse
    assert fired["pattern"] == "split" and fired["ejected"] == 4
    assert fired["card_ms"][2] - fired["card_ms"][1] >= 200


def test_retraction_runs_after_the_burst_and_before_its_fire(make_box) -> None:
    box = make_box({"ejector.retract_ms": 90, "ejector.retract_speed": 0.5, "jam.count": 3})
    box.plant.overrun(1)  # the roller would coast one more card out: the reverse pulls it back
    box.command("press")
    fire = box.wait_fires(1)[0]
    assert fire["ejected"] == 3 and fire["extra"] == 0
    assert 90 <= fire["retract_ms"] < 90 + 1000  # (a busy machine may be late to stop it)
    log = box.plant.output_log
    forward = _runs(log, "ejector_forward")
    back = _runs(log, "ejector_backward")
    assert len(back) == 1 and back[0][0] >= forward[-1][1]
    assert (back[0][1] - back[0][0]) // _MS >= 90
    assert [v for n, _, v in log if n == "ejector_enable"][-2:] == [0.5, 0]  # at its speed
    box.wait_state("idle")
    assert box.power_outputs_off()


def test_no_retraction_when_off_or_for_a_solenoid(make_box) -> None:
    box = make_box({**SOLENOID, "ejector.retract_ms": 90})
    box.command("press")
    assert box.wait_fires(1)[0]["retract_ms"] is None


def test_the_bench_measures_the_retraction(tmp_path, capsys) -> None:
    import json

    from firmware.cli import main
    from tests.conftest import run_main
    from tests.firmware.conftest import write_config

    path = write_config(tmp_path / "bench.toml", {"ejector.retract_ms": 60, **_patterns(SPLIT)})
    code, out, err = run_main(
        main,
        ["bench", "--mock", "--config", str(path), "--presses", "3", "--mode", "dispense",
         "--burst", "3", "--seed", "2", "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    retraction = data["summary"]["timings"]["retract_ms"]
    assert retraction["count"] == 3 and retraction["min"] >= 60
    assert all(row["retract_ms"] >= 60 for row in data["presses"] if row.get("planned"))
    assert data["summary"]["misfeeds"] == 0  # no pattern pauses in a bench run


def test_a_burst_cut_in_a_pause_leaves_nothing_behind(make_box) -> None:
    box = make_box({**_patterns(SPLIT), "jam.count": 5, "pins.door": 5})
    d = box.daemon
    box.command("press")
    sink = d.sound.sink
    sink.wait_until(lambda cues: "suspense" in [c.event for c in cues], timeout=20)
    box.plant.open_door()  # in the 200 ms pause between the two feeds (its cue just played)
    assert box.wait_fires(1)[0]["reason"] == "fault"
    assert box.power_outputs_off()
    box.plant.close_door()
    assert box.command("reset")["ok"]
    box.command("press")
    fire = box.wait_fires(2)[1]
    assert fire["reason"] == "fired" and fire["ejected"] == 5 and fire["pattern"] == "split"
