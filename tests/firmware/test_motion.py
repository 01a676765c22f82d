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
    coast = 10  # slots the roller would coast on (40 ms apart) if nothing reversed it
    box.plant.overrun(coast)
    box.command("press")
    fire = box.wait_fires(1)[0]
    log = box.plant.output_log
    forward = _runs(log, "ejector_forward")
    back = _runs(log, "ejector_backward")
    assert len(back) == 1 and back[0][0] >= forward[-1][1]
    # Judged by what the plant did, not by how quick the loop was to reverse: the cards that
    # coasted out before the reverse are the fire's extra, none came after it, and the reverse
    # pulled the rest back.
    coasted = [t for t in box.plant.crossings if t > forward[-1][1]]
    assert fire["ejected"] == 3 and fire["extra"] == len(coasted) < coast
    assert all(t < back[0][0] for t in coasted)
    assert (back[0][1] - back[0][0]) // _MS >= 90
    # The daemon dates the retraction right after its last pin write at either end: the speed
    # set on EN as it starts (after the IN pin), the IN pin let go as it ends (after EN). Dated
    # from the IN pin's own run it would count the writes between, milliseconds on a slow Pi.
    started = _runs(log, "ejector_enable")[-1][0]
    assert back[0][0] <= started and abs(fire["retract_ms"] - (back[0][1] - started) // _MS) <= 1
    assert [v for n, _, v in log if n == "ejector_enable"][-2:] == [0.5, 0]  # at its speed
    box.wait_state("idle")
    assert box.power_outputs_off()


def test_no_retraction_when_off_or_for_a_solenoid(make_box) -> None:
    box = make_box({**SOLENOID, "ejector.retract_ms": 90})
    box.command("press")
    assert box.wait_fires(1)[0]["retract_ms"] is None


def test_the_bench_measures_the_retraction_and_runs_without_patterns(
    tmp_path, capsys, monkeypatch
) -> None:
    import json

    from firmware import plant as plant_mod
    from firmware.cli import main
    from tests.conftest import run_main
    from tests.firmware.conftest import write_config

    plants: list[plant_mod.Plant] = []

    class Watched(plant_mod.Plant):  # the bench's own plant, kept for its output log
        def start(self) -> plant_mod.Plant:
            plants.append(self)
            return super().start()

    monkeypatch.setattr(plant_mod, "Plant", Watched)
    # Presses, not dispenses: a split pattern dresses every one of these bursts of 3 cards,
    # unless the bench turns patterns off (a dispense never gets one either way).
    overrides = {"ejector.retract_ms": 60, "jam.mode": "fixed", "jam.count": 3}
    path = write_config(tmp_path / "bench.toml", {**overrides, **_patterns(SPLIT)})
    code, out, err = run_main(
        main,
        ["bench", "--mock", "--config", str(path), "--presses", "3", "--mode", "fire",
         "--seed", "2", "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    retraction = data["summary"]["timings"]["retract_ms"]
    assert retraction["count"] == 3 and retraction["min"] >= 60
    assert all(row["retract_ms"] >= 60 for row in data["presses"] if row.get("planned"))
    assert [row["ejected"] for row in data["presses"]] == [3, 3, 3]
    # No pattern pauses in a bench run, from what the motor really did (the plant's output
    # log), not from the bench's reading of card gaps, which a late thread stretches: one
    # forward run per burst, each followed by its retraction.
    (plant,) = plants
    assert len(_runs(plant.output_log, "ejector_forward")) == 3
    assert len(_runs(plant.output_log, "ejector_backward")) == 3


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
