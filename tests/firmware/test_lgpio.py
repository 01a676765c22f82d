"""The box through gpiozero's own lgpio backend, on the simulated chip (tests/simchip).

What MockFactory skips and a Pi on Raspberry Pi OS Bookworm runs: the pulls and PWM as lgpio
sets them, debounce (the mock ignores ``bounce_time``), edges delivered late from lgpio's alert
thread but dated by the kernel's stamp, and the failures of real pins (a factory that cannot
load, ``/dev/gpiochip0`` refused, a pin another program holds) as one line and an exit code.
The daemon's behaviour tests run on both factories too (``PIN_FACTORIES``: test_daemon,
test_safety, test_bench, test_light).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from common.errors import LauncherError, UsageError
from firmware.devices import MAX_EDGE_AGE_S, Aim, BigButton, Devices, ExitSensor, edge_time
from firmware.loop import FakeClock
from firmware.pins import make_factory
from tests.conftest import ROOT
from tests.firmware.conftest import write_config
from tests.firmware.test_daemon_run import LauncherProcess, _launcher
from tests.firmware.test_devices import Posts, RecordingGuard
from tests.simchip import lgpio as sim
from tests.simchip.chip import PULL_DOWN, PULL_UP
from tests.wait import wait_until

BOTH_EDGES = 3


def _frozen(factory: Any, clock: FakeClock) -> None:
    """gpiozero's ticks read the test's clock: an edge's age is then exact, however late its
    callback runs."""
    factory.ticks = lambda: clock() / 1e9


# -- gpiozero's lgpio backend on the chip ------------------------------------------------------


def test_the_box_sets_pulls_debounce_and_pwm_through_lgpio(
    lgpio_factory: Any, simulated_chip: Any, make_config: Any
) -> None:
    chip = simulated_chip
    cfg = make_config({"timing.debounce_ms": 20})
    pins = cfg.pins
    devices = Devices(
        cfg, factory=lgpio_factory, post=Posts(), guard=RecordingGuard(), clock=FakeClock()
    )
    try:
        # inputs: (claimed, output, bias, edges)
        assert chip.mode(pins.button) == (True, False, PULL_UP, BOTH_EDGES)
        assert chip.debounce_ns(pins.button) == 20_000_000  # bounce_time reaches lgpio
        assert chip.mode(pins.sensor) == (True, False, PULL_DOWN, BOTH_EDGES)
        assert chip.mode(pins.hopper_empty)[2] == chip.mode(pins.door)[2] == PULL_UP
        # outputs claimed low; the servo at its middle: 1.5 ms pulses at 50 Hz
        outputs = dict(pins.outputs())
        assert (chip.frequency(outputs.pop("servo")), chip.pulse_us(pins.servo)) == (50, 1500)
        for number in outputs.values():
            assert chip.mode(number)[1] and chip.value(number) == 0, number
        # the motor's EN as 100 Hz software PWM
        devices.ejector.forward(0.5)
        assert chip.value(pins.ejector_forward) == 1 and chip.value(pins.ejector_backward) == 0
        assert (chip.frequency(pins.ejector_enable), chip.value(pins.ejector_enable)) == (100, 0.5)
        devices.led.set(0.3)
        assert (chip.frequency(pins.button_led), chip.value(pins.button_led)) == (100, 0.3)
        devices.buzzer.tick()  # A4: 440 Hz at half duty, in lgpio's whole microseconds
        assert chip.frequency(pins.buzzer) == pytest.approx(440, abs=0.1)
        assert chip.value(pins.buzzer) == pytest.approx(0.5, abs=0.001)
        # silenced, the buzzer line is low, wherever lgpio stopped its pulses
        devices.buzzer.off()
        assert chip.frequency(pins.buzzer) is None and chip.value(pins.buzzer) == 0
    finally:
        devices.close()
    # closed: every output off and handed back as an input
    for number in dict(pins.outputs()).values():
        assert not chip.mode(number)[1] and chip.value(number) == 0, number


@pytest.mark.parametrize("pins", ["lgpio"], indirect=True)
def test_a_bouncing_button_is_one_press_on_lgpio(make_box: Any) -> None:
    box = make_box({"timing.debounce_ms": 20, "jam.count": 1})
    chip, button = box.plant.header, box.config.pins.button

    def presses() -> int:
        return len(box.presses())

    # A contact bouncing for 1.2 ms each way (the mock would count three presses and releases).
    chip.bounce(button, [False, True, False, True, False], 300_000)
    wait_until(lambda: presses() == 1, what="the press")
    time.sleep(0.05)  # held for 50 ms at least (longer than the debounce time)
    chip.bounce(button, [True, False, True, False, True], 300_000)
    time.sleep(0.05)  # released as long
    chip.bounce(button, [False], 0)  # a second, clean press
    wait_until(lambda: sim.quiet(chip.number), what="lgpio's last report")
    box.daemon.call(lambda: None)  # the loop has handled every edge lgpio reported
    assert presses() == 2


# -- the aiming servo: lgpio's own servo pulses ---------------------------------------------------


def test_the_servo_is_pulsed_to_the_microsecond_and_left_low(
    lgpio_factory: Any, simulated_chip: Any
) -> None:
    chip = simulated_chip
    aim = Aim(19, factory=lgpio_factory, min_angle=-90, max_angle=90, seat_angles=(-60, 20.5))
    try:
        # 1 ms at -90°, 2 ms at 90°: -60° is 1166.7 µs, 20.5° is 1613.9 µs (gpiozero's whole
        # percent would send 1000 and 1600)
        aim.aim(0)
        assert (chip.pulse_us(19), chip.frequency(19)) == (1167, 50)
        aim.aim(1)
        assert chip.pulse_us(19) == 1614
        assert aim.servo.angle == pytest.approx(20.5, abs=0.1)
        aim.off()  # detached: no pulses, and the line low although lgpio stopped mid-pulse
        assert (chip.pulse_us(19), chip.value(19), aim.servo.angle) == (None, 0, None)
        aim.off()
        aim.aim(0)
        assert chip.pulse_us(19) == 1167
    finally:
        aim.close()
        aim.close()
    assert not chip.mode(19)[1] and chip.value(19) == 0  # handed back as an input


def test_gpiozero_alone_would_stop_the_servo_pulses_mid_pulse(
    lgpio_factory: Any, simulated_chip: Any
) -> None:
    # Why the box drives the line low itself: gpiozero's detach only stops lgpio's pulses, and
    # lgpio leaves the line at its last level, which the chip takes as high.
    from gpiozero import AngularServo

    servo = AngularServo(19, pin_factory=lgpio_factory)
    try:
        servo.detach()
        assert simulated_chip.value(19) == 1
    finally:
        servo.close()


@pytest.mark.parametrize(
    ("call", "outcome"),
    [
        (lambda h: sim.tx_servo(h, 19, 1500), 9),  # started: one queue entry used
        (lambda h: sim.tx_servo(h, 19, 0), "bad PWM micros"),  # nothing to stop
        (lambda h: sim.tx_servo(h, 19, 499), "bad servo pulsewidth"),
        (lambda h: sim.tx_servo(h, 19, 2501), "bad servo pulsewidth"),
        (lambda h: sim.tx_servo(h, 19, 1500, 39), "bad servo frequency"),
        (lambda h: sim.tx_servo(h, 19, 2500, 500), "bad servo pulsewidth"),  # 2 ms cycle
        (lambda h: sim.tx_servo(h, 19, 1500.0), TypeError),  # a C int
        (lambda h: sim.tx_pwm(h, 19, 50, 7.5), 9),  # a float duty: 1500 µs too
        (lambda h: sim.tx_pwm(h, 19, 0, 0), "bad PWM micros"),
    ],
)
def test_the_simulated_lgpio_pulses_as_lgTxPulse_does(simulated_chip: Any, call, outcome) -> None:
    handle = sim.gpiochip_open(0)
    try:
        if isinstance(outcome, int):
            assert call(handle) == outcome
            # an unclaimed line became an output; 1.5 ms of each 20 ms cycle high
            assert (simulated_chip.pulse_us(19), simulated_chip.frequency(19)) == (1500, 50)
        elif isinstance(outcome, str):
            with pytest.raises(sim.error) as caught:
                call(handle)
            assert caught.value.value == outcome
        else:
            with pytest.raises(outcome):
                call(handle)
    finally:
        sim.gpiochip_close(handle)


# -- edge times --------------------------------------------------------------------------------


def test_a_card_is_dated_by_the_kernels_stamp_not_by_its_callback(
    lgpio_factory: Any, simulated_chip: Any
) -> None:
    chip = simulated_chip
    clock = FakeClock(time.monotonic_ns() + 10**9)  # a second after the edges; then frozen
    _frozen(lgpio_factory, clock)
    posts = Posts()
    sensor = ExitSensor(27, factory=lgpio_factory, post=posts, clock=clock)
    try:
        # two cards, 40 ms apart, reported by lgpio's alert thread whenever it gets to them
        chip.bounce(27, [True, False, True], 40_000_000)
        wait_until(lambda: sum(k == "card" for k, _ in posts.items) == 2, what="two cards")
    finally:
        sensor.close()
    rising = [e.t_ns for e in chip.edges_of(27) if e.level == 1]
    stamped = [d["at_ns"] for k, d in posts.items if k == "card"]
    assert stamped == pytest.approx(rising, abs=1_000)  # within a microsecond of the kernel
    assert [t for _, t in sensor.crossed_after(0)] == stamped  # the burst's claim: the same


def test_a_debounced_press_is_dated_when_lgpio_saw_it_settle(
    lgpio_factory: Any, simulated_chip: Any
) -> None:
    chip = simulated_chip
    clock = FakeClock(time.monotonic_ns() + 10**9)
    _frozen(lgpio_factory, clock)
    posts = Posts()
    button = BigButton(17, factory=lgpio_factory, post=posts, hold_s=1, debounce_ms=20, clock=clock)
    try:
        chip.bounce(17, [False, True, False], 200_000)
        at_ns = posts.wait("button")["at_ns"]
        last_bounce = chip.edges_of(17)[-1].t_ns
    finally:
        chip.drive(17, True)  # let go: gpiozero's hold thread ends at the release
        button.close()
    # lgpio stamps a debounced edge when the line has been stable for the debounce time
    assert at_ns == pytest.approx(last_bounce + 20_000_000, abs=1_000)


def test_mock_pins_date_an_input_when_its_callback_runs(mock_factory: Any) -> None:
    clock = FakeClock(5_000_000)
    posts = Posts()
    sensor = ExitSensor(27, factory=mock_factory, post=posts, clock=clock)
    mock_factory.pin(27).drive_high()
    sensor.close()
    assert posts.wait("card")["at_ns"] == 5_000_000


class _Input:
    def __init__(self, age: float | None) -> None:
        self.active_time = self.inactive_time = age


@pytest.mark.parametrize(
    ("age", "expected"),
    [(0.25, 750_000_000), (0.0, 10**9), (None, 10**9), (-0.001, 10**9), (1e6, 10**9)],
)
def test_edge_time_is_now_less_the_edges_age_or_now_when_that_cannot_be(
    age: float | None, expected: int
) -> None:
    assert MAX_EDGE_AGE_S < 1e6
    assert edge_time(_Input(age), True, lambda: 10**9) == expected


# -- real pins that fail: one line, an exit code ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("lgpio", "the lgpio module is not installed"),
        ("rpigpio", "the RPi module is not installed"),
        ("native", "this is not a Raspberry Pi"),
    ],
)
def test_a_named_factory_that_cannot_load_here_is_one_line(
    monkeypatch: pytest.MonkeyPatch, name: str, why: str
) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", name)
    try:
        factory = make_factory(mock=False)
    except LauncherError as exc:
        message = str(exc)
    else:  # pragma: no cover - a Pi with that library
        factory.close()
        pytest.skip(f"this machine has {name}")
    assert "\n" not in message
    assert message.startswith(f"GPIOZERO_PIN_FACTORY={name}: {why}")
    assert message.endswith("unset it to let gpiozero choose, or use --mock")


def test_an_unknown_factory_name_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "gpiod")
    with pytest.raises(UsageError, match=r"'gpiod' names no pin factory; use one of .*lgpio"):
        make_factory(mock=False)


def test_a_refused_gpiochip_is_one_line(
    simulated_chip: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulated_chip.permitted = False  # /dev/gpiochip0 0660 root:gpio, user not in gpio
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    with pytest.raises(LauncherError) as caught:
        make_factory(mock=False)
    assert str(caught.value).startswith(
        "GPIOZERO_PIN_FACTORY=lgpio: cannot open the GPIO chip /dev/gpiochip*: it is missing, "
        "or this user may not use it (add it to the gpio group)"
    )
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY")  # gpiozero's own choice says it too
    with pytest.raises(LauncherError, match=r"^no GPIO library .*\(lgpio: cannot open the GPIO"):
        make_factory(mock=False)


@pytest.mark.parametrize(
    ("held", "part"), [(24, "ejector_backward"), (19, "servo"), (17, "button")]
)
def test_a_pin_another_program_holds_is_one_line_and_nothing_stays_claimed(
    lgpio_factory: Any, simulated_chip: Any, make_config: Any, held: int, part: str
) -> None:
    chip = simulated_chip
    chip.hold(held, "gpioset")
    cfg = make_config()
    with pytest.raises(LauncherError) as caught:
        Devices(cfg, factory=lgpio_factory, post=Posts(), guard=RecordingGuard(), clock=FakeClock())
    assert str(caught.value) == (
        f"GPIO {held} ([pins] {part}) is busy: another program holds it (a second launcher, "
        f"gpioset or gpiomon, a device-tree overlay); stop it or wire {part} to another pin"
    )
    # what was built before it was closed: its outputs are inputs again, and low
    for number in dict(cfg.pins.outputs()).values():
        assert not chip.mode(number)[1] and chip.value(number) == 0


# -- whole commands on the simulated chip ------------------------------------------------------


def _simchip(*args: str, tmp_path: Path, env: dict[str, str] | None = None) -> LauncherProcess:
    """``launcher ARGS`` on the simulated chip (``python -m tests.simchip``), its pins lock in
    ``tmp_path``."""
    return _launcher(
        *args, env={"XDG_RUNTIME_DIR": str(tmp_path), **(env or {})}, module="tests.simchip"
    )


@pytest.mark.parametrize(
    ("env", "line", "code"),
    [
        ({"SIMCHIP_BUSY": "27"}, "launcher: GPIO 27 ([pins] sensor) is busy: ", 1),
        (
            {"SIMCHIP_DENY": "1", "GPIOZERO_PIN_FACTORY": "lgpio"},
            "launcher: GPIOZERO_PIN_FACTORY=lgpio: cannot open the GPIO chip",
            1,
        ),
        ({"GPIOZERO_PIN_FACTORY": "LGPIO2"}, "launcher: GPIOZERO_PIN_FACTORY='LGPIO2' names", 2),
    ],
)
def test_launcher_run_on_real_pin_failures_prints_one_line(
    tmp_path: Path, env: dict[str, str], line: str, code: int
) -> None:
    config = write_config(tmp_path / "box.toml")
    proc = _simchip("run", "--port", "none", "--config", str(config), tmp_path=tmp_path, env=env)
    proc.communicate(timeout=60)
    err = proc.err
    assert proc.returncode == code, err
    assert err.count("\n") == 1 and err.startswith(line), err


def test_launcher_run_on_lgpio_fires_and_sigterm_turns_every_output_off(tmp_path: Path) -> None:
    config = write_config(tmp_path / "slow.toml", {"jam.count": 12, "plant.feed_interval_ms": 80})
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify.sock"))
    notify.settimeout(60)
    proc = _simchip(
        "run", "--port", "none", "--console", "--config", str(config),
        tmp_path=tmp_path, env={"NOTIFY_SOCKET": str(tmp_path / "notify.sock")},
    )  # fmt: skip
    try:
        ready = b""
        while b"READY=1" not in ready:
            ready = notify.recv(4096)
        assert b"STATUS=idle; motor ejector; lgpio, simulated chip pins" in ready
        proc.stdin.write("press\n")
        proc.stdin.flush()
        proc.read_until(lambda e: e.get("kind") == "state" and e.get("to") == "ejecting")
        proc.send_signal(signal.SIGTERM)
        proc.read_to_end()
        code = proc.wait(30)
    finally:
        proc.kill()
        notify.close()
    err, seen = proc.err, proc.seen
    assert code == 0, err
    fire = next(e for e in seen if e.get("kind") == "fire")
    assert fire["reason"] in ("stopping", "fired")
    exit_line = next(e for e in seen if e.get("type") == "exit")
    assert exit_line["outputs"] and all(v == 0 for v in exit_line["outputs"].values())


def test_launcher_bench_on_lgpio_measures_the_plant(tmp_path: Path) -> None:
    config = write_config(tmp_path / "bench.toml", {"timing.card_timeout_ms": 1000})
    proc = _simchip(
        "bench", "--config", str(config), "--mode", "dispense", "--presses", "3", "--burst", "4",
        "--json", tmp_path=tmp_path,
    )  # fmt: skip
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, proc.err
    summary = json.loads(out)["summary"]
    assert summary["pins"] == "lgpio, simulated chip"
    assert summary["cards"] == 12 and summary["reasons"] == {"fired": 3}
    # the plant's 40 ms feed interval comes back out, within its jitter and a busy machine's
    assert 37 <= summary["timings"]["interval_ms"]["median"] <= 80


def test_the_simchip_folder_runs_the_installed_launcher(tmp_path: Path) -> None:
    # pi-check's way in: the folder itself, from elsewhere, so the launcher is the one installed
    # (tests/ must not come on the path: its firmware/ and i18n/ would hide the real packages)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "simchip"), "config", "check"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith("launcher.toml: OK")
