"""`launcher` in each language: a config mistake, a `send` mistake and the box's event lines come
out in the language asked for, as one line with the same exit code; the config keys, the op names
and the values the box sent stay as written."""

from __future__ import annotations

import pytest

import i18n
from common.errors import EXIT_CONFIG, EXIT_USAGE
from firmware.cli import main
from tests.conftest import run_main
from tests.firmware.conftest import write_config
from wire.ports import FORMS
from wire.text import describe, fire_result

TRANSLATED = [code for code in i18n.LANGUAGES if code != "en"]


@pytest.mark.parametrize("code", TRANSLATED)
def test_config_check_error_is_one_line_in_the_language(code, tmp_path, capsys):
    cfg = write_config(tmp_path / "box.toml", {"box.seats": 99})
    exit_code, out, err = run_main(main, ["--lang", code, "config", "check", str(cfg)], capsys)
    allowed = i18n.language(code).gettext("must be a whole number from {lo} to {hi}")
    assert exit_code == EXIT_CONFIG and out == ""
    assert err.count("\n") == 1 and "[box] seats = 99: " in err
    assert allowed.format(lo=2, hi=10) in err and "must be" not in err


@pytest.mark.parametrize("code", TRANSLATED)
def test_config_check_summary_in_the_language(code, tmp_path, capsys):
    cfg = write_config(tmp_path / "box.toml")
    exit_code, out, _err = run_main(main, ["--lang", code, "config", "check", str(cfg)], capsys)
    t = i18n.language(code).gettext
    assert exit_code == 0
    assert t("{path}: OK").format(path=cfg) in out
    assert t("fitted: {parts}").split("{")[0] in out and "fitted:" not in out


@pytest.mark.parametrize("code", TRANSLATED)
def test_send_usage_error_is_one_line_in_the_language(code, tmp_path, capsys):
    argv = ["--lang", code, "send", str(tmp_path / "no-port"), "spin"]
    exit_code, out, err = run_main(main, argv, capsys)
    expected = i18n.language(code).gettext("unknown operation {op!r}; allowed: {allowed}")
    assert exit_code == EXIT_USAGE and out == ""
    assert err.count("\n") == 1
    assert err.startswith("launcher send: " + expected.split("{")[0])
    assert "'spin'" in err and "unknown operation" not in err


FIRE = {"kind": "fire", "seq": 12, "t_ms": 4500, "press_id": 7, "source": "button",
        "reason": "fired", "ejected": 3, "planned": 3, "dry_streak": 0, "hopper": 97,
        "spinup_ms": 80, "first_card_ms": 120, "total_ms": 300, "retries": 1}  # fmt: skip


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_event_lines_in_the_language(code):
    lang = i18n.use(code)
    t, n = lang.gettext, lang.ngettext
    line = describe(FIRE)
    assert line.startswith("#12        4.500s  fire   ")  # the head is the same everywhere
    cards = n("{n} card", "{n} cards", 3).format(n=3)
    assert t("fired {cards}").format(cards=cards) in line
    assert n("; unjam retry {n}", "; unjam retries {n}", 1).format(n=1) in line
    answer = fire_result(FIRE)
    assert t("hopper {n}").format(n=97) in answer and "7" in answer
    jam = describe({"kind": "jam", "seq": 13, "press_id": 7, "retries": 3})
    assert "`clear`" in jam
    if code != "en":
        assert "fired" not in line and "hopper" not in answer and "JAM" not in jam


@pytest.mark.parametrize("code", TRANSLATED)
def test_jam_range_error_is_one_line_in_the_language(code, tmp_path, capsys):
    cfg = write_config(tmp_path / "box.toml", {"jam.base": 2})
    exit_code, out, err = run_main(main, ["--lang", code, "config", "check", str(cfg)], capsys)
    rule = i18n.language(code).gettext("must be between {lo} and {hi}")
    assert exit_code == EXIT_CONFIG and out == ""
    assert err.count("\n") == 1 and "[jam] base = 2: " in err
    assert rule.format(lo=0, hi=1) in err and "must be" not in err


@pytest.fixture
def box_port(make_box, tmp_path):
    """A real daemon on mock pins behind a pty: (its PORT path, a raw host on the same link)."""
    from firmware.journal import SqliteJournal
    from firmware.link import Link

    journal = SqliteJournal(tmp_path / "journal.db")
    link = Link("pty", make_box(journal=journal).daemon, journal)
    link.start()
    try:
        yield link.port_path
    finally:
        link.stop()


@pytest.mark.parametrize("code", TRANSLATED)
def test_the_boxs_refusal_reads_in_the_language_and_stays_english_on_the_wire(
    code, box_port, capsys
):
    from tests.firmware.linkhelp import Host

    i18n.use(code)  # the box's own process speaking another language changes nothing on the wire
    host = Host(box_port)
    try:
        error = host.command("dispense", count=99)["error"]
    finally:
        host.close()
    assert error["code"] == "BAD_ARG" and error["message"].startswith("count must be from 1 to")
    assert error["text"]["template"] == "{name} must be from {lo} to {hi}, got {value}"
    exit_code, out, err = run_main(
        main, ["--lang", code, "send", box_port, "dispense", "99"], capsys
    )
    hi = error["text"]["args"]["hi"]
    wanted = i18n.language(code).gettext(error["text"]["template"])
    assert exit_code == EXIT_USAGE and out == "" and err.count("\n") == 1
    assert err == f"launcher send: BAD_ARG: {wanted.format(name='count', lo=1, hi=hi, value=99)}\n"
    assert "must be" not in err


@pytest.mark.parametrize("code", TRANSLATED)
def test_a_box_that_cannot_be_reached_is_one_line_in_the_language(code, tmp_path, capsys):
    from wire.ports import open_failure

    argv = ["--lang", code, "send", str(tmp_path), "status"]  # a folder is never a port
    exit_code, out, err = run_main(main, argv, capsys)
    t = i18n.language(code).gettext
    assert exit_code == EXIT_USAGE and out == "" and err.count("\n") == 1
    assert t("is a directory, not a serial port") in err and t(FORMS) in err
    assert "directory" not in err

    i18n.use(code)
    for number, message in [
        (2, "no serial port at {port}: is the box plugged in? serial ports here: {ports}"),
        (16, "{port} is in use by another program (a referee or `unoattack watch`?)"),
    ]:
        got = open_failure("/dev/ttyX", OSError(number, "x"))
        assert got[0] == "UNREACHABLE" and got[1].startswith(t(message).split("{")[0])
        assert "\n" not in got[1] and "serial port" not in got[1] and "in use" not in got[1]


def _table(lines: list[str], first: str) -> list[str]:
    """The lines of the table whose heading starts with `first`, up to the next blank line (or
    the first line without a bar, in a table with bars)."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(first + " "))
    bars = "|" in lines[start]
    end = next(
        (i for i in range(start, len(lines)) if not lines[i].strip() or bars > ("|" in lines[i])),
        len(lines),
    )
    return lines[start:end]


def _aligned(rows: list[str]) -> bool:
    """Every line of a right-aligned table ends at the same terminal cell, and its bars line up."""
    from i18n.layout import width

    bars = {tuple(width(line[:i]) for i, ch in enumerate(line) if ch == "|") for line in rows}
    return len({width(line) for line in rows}) == 1 and len(bars) == 1


@pytest.mark.parametrize("code", TRANSLATED)
def test_model_show_tables_in_the_language(code, capsys):
    exit_code, out, _err = run_main(
        main, ["--lang", code, "model", "show", "--max-n", "12"], capsys
    )
    t = i18n.language(code).gettext
    lines = out.splitlines()
    assert exit_code == 0 and "chance to fire" not in out and "rapid-press" not in out
    for heading in ("after n dry", "cards", "press in a rapid run"):
        table = _table(lines, t(heading))
        assert len(table) > 3 and _aligned(table), table
    assert i18n.language(code).percent(0.22) in _table(lines, t("after n dry"))[1]
    assert t("rapid #{n}+").format(n=3) in out


@pytest.mark.parametrize("code", TRANSLATED)
def test_model_sample_and_fit_in_the_language(code, tmp_path, capsys):
    argv = ["--lang", code, "model", "sample", "--presses", "2000", "--seed", "4"]
    exit_code, out, _err = run_main(main, argv, capsys)
    lang = i18n.language(code)
    assert (
        exit_code == 0
        and lang.ngettext("{n} press", "{n} presses", 2000).format(n=lang.number(2000))
        in out.splitlines()[0]
    )
    assert _aligned(_table(out.splitlines(), lang.gettext("streak")))
    counts = tmp_path / "counts.txt"
    counts.write_text(" ".join(out.splitlines()[-1].split()[1:-1]))  # the first 40 counts shown
    exit_code, out, _err = run_main(main, ["--lang", code, "model", "fit", str(counts)], capsys)
    assert exit_code == 0 and "fitted hazard" not in out and "goodness" not in out
    assert "  base = " in out  # the values as a config writes them
    assert _aligned(_table(out.splitlines(), lang.gettext("streak")))


@pytest.mark.parametrize("code", TRANSLATED)
def test_bench_summary_in_the_language(code):
    from firmware.bench import format_summary

    lang = i18n.use(code)
    timing = {"count": 2, "min": 5, "median": 12.5, "p95": 1234, "max": 1234}
    summary = {
        "presses": 3, "mode": "fire", "cards": 7, "planned": 8, "elapsed_s": 1234.5,
        "ejector": "solenoid", "pins": "mock", "seed": 9, "stopped": "jammed",
        "timings": dict.fromkeys(["spinup_ms", "first_card_ms", "interval_ms", "total_ms",
                                  "on_ms", "retract_ms"], timing),
        "reasons": {"fired": 2, "jammed": 1}, "misfeeds": 1, "misfeed_rate": 0.125,
        "short_bursts": 1, "short_burst_rate": 0.5, "jams": 1, "retries": 2, "jam_rate": 0.5,
        "solenoid_duty": {"max": 0.25, "window_ms": 1000, "cap": 0.5},
        "plant": {"feed_interval_ms": 15, "feed_jitter_ms": 3, "spinup_ms": 40},
        "cards_per_press": [1, 0, 1, 0, 1],
    }  # fmt: skip
    text = format_summary(summary)
    table = _table(text.splitlines(), lang.gettext("timing (ms)"))
    assert len(table) == 7 and "timing" not in text and "misfeeds" not in text
    assert len({i18n.layout.width(line) for line in table}) == 1  # numbers end in one column
    assert lang.number(1234.5, 1) in text and lang.number(1234) in table[1]
    assert lang.percent(0.125) in text and "fired 2" in text  # the box's reasons as it says them


# -- real pins that cannot be had, and the sound pack: one line / a listing in the language ------


@pytest.mark.parametrize("code", TRANSLATED)
def test_real_pin_failures_are_one_line_in_the_language(
    code, lgpio_factory, simulated_chip, make_config, monkeypatch
):
    from common.errors import LauncherError, UsageError
    from firmware.devices import Devices
    from firmware.loop import FakeClock
    from firmware.pins import factory_names, make_factory
    from tests.firmware.test_devices import Posts, RecordingGuard

    t = i18n.use(code).gettext
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "gpiod")  # no such factory
    with pytest.raises(UsageError) as caught:
        make_factory(mock=False)
    factories = ", ".join(sorted(factory_names()))
    assert str(caught.value) == t(
        "GPIOZERO_PIN_FACTORY={name!r} names no pin factory; use one of {factories}, or unset "
        "it to let gpiozero choose"
    ).format(name="gpiod", factories=factories)

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "rpigpio")  # its library is not installed here
    with pytest.raises(LauncherError) as caught:
        make_factory(mock=False)
    missing = t("the {module} module is not installed").format(module="RPi")
    assert str(caught.value) == t(
        "GPIOZERO_PIN_FACTORY={name}: {reason}; unset it to let gpiozero choose, or use --mock"
    ).format(name="rpigpio", reason=missing)

    simulated_chip.hold(24, "gpioset")  # a pin another program holds
    with pytest.raises(LauncherError) as caught:
        Devices(make_config(), factory=lgpio_factory, post=Posts(), guard=RecordingGuard(),
                clock=FakeClock())  # fmt: skip
    assert str(caught.value) == t(
        "GPIO {number} ([pins] {name}) is busy: another program holds it (a second launcher, "
        "gpioset or gpiomon, a device-tree overlay); stop it or wire {name} to another pin"
    ).format(number=24, name="ejector_backward")

    simulated_chip.permitted = False  # the chip refused (no gpio group)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    with pytest.raises(LauncherError) as caught:
        make_factory(mock=False)
    refused = t(
        "cannot open the GPIO chip /dev/gpiochip*: it is missing, or this user may not use it "
        "(add it to the gpio group)"
    )
    assert str(caught.value) == t(
        "GPIOZERO_PIN_FACTORY={name}: {reason}; unset it to let gpiozero choose, or use --mock"
    ).format(name="lgpio", reason=refused)
    assert "cannot" not in str(caught.value) and "\n" not in str(caught.value)


def test_a_busy_pin_is_said_in_the_language_by_the_command(tmp_path):
    from tests.firmware.test_lgpio import _simchip

    config = write_config(tmp_path / "box.toml")
    proc = _simchip(
        "--lang", "cy", "run", "--port", "none", "--config", str(config),
        tmp_path=tmp_path, env={"SIMCHIP_BUSY": "27"},
    )  # fmt: skip
    proc.communicate(timeout=60)
    err = proc.err  # (a file, not a pipe: LauncherProcess)
    busy = i18n.language("cy").gettext(
        "GPIO {number} ([pins] {name}) is busy: another program holds it (a second launcher, "
        "gpioset or gpiomon, a device-tree overlay); stop it or wire {name} to another pin"
    )
    assert proc.returncode == 1 and err == f"launcher: {busy.format(number=27, name='sensor')}\n"


@pytest.mark.parametrize("code", TRANSLATED)
def test_sound_check_lists_the_pack_in_the_language(code, capsys):
    exit_code, out, _err = run_main(main, ["--lang", code, "sound", "check"], capsys)
    lang = i18n.language(code)
    t = lang.gettext
    head, *events = out.splitlines()
    assert exit_code == 0
    assert head.endswith(  # the pack's folder, then the rest of the line
        t("{path}: OK, pack {name!r}, licence {licence}").format(
            path="", name="uno-attack-default", licence="CC0-1.0"
        )
    )
    dry = next(line for line in events if line.split()[0] == "dry")  # event names as typed
    assert (
        t("{file} ({ms} ms, weight {weight})").format(
            file="dry-1.wav", ms=lang.number(440), weight=lang.number(2)
        )
        in dry
    )
    assert "weight" not in out and "licence" not in out
