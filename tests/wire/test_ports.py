"""wire/ports.py: the one check of a port name, and the same one-line refusal (exit 2) from
every command that takes a port: `launcher run`, `launcher send`, `unoattack table`, `watch`
and the host client."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import termios
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial

from common.errors import UsageError
from engine.cli import main as unoattack
from firmware.cli import main as launcher
from tests.conftest import ROOT, run_main
from wire import ports
from wire.client import BoxClient, BoxError

_TTY_LIST = Path("/proc/tty/drivers")
needs_tty_list = pytest.mark.skipif(
    not os.access(_TTY_LIST, os.R_OK), reason="no /proc/tty/drivers (not Linux)"
)


@pytest.fixture
def odd(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Paths a careless user passes as a port: a folder, a file, a fifo, a socket, a pty."""
    (tmp_path / "adir").mkdir()
    (tmp_path / "notes.txt").write_text("precious\n")
    os.mkfifo(tmp_path / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    master, slave = os.openpty()
    try:
        yield {
            "adir": str(tmp_path / "adir"),
            "notes": str(tmp_path / "notes.txt"),
            "fifo": str(tmp_path / "fifo"),
            "sock": str(tmp_path / "sock"),
            "pty": os.ttyname(slave),
            "absent": str(tmp_path / "ttyV0"),
        }
    finally:
        sock.close()
        os.close(master)
        os.close(slave)


# (port with {placeholders} for the odd fixture, what the message must say)
REFUSED: list[tuple[str, str]] = [
    ("", "port '' is empty"),
    ("   ", "port '   ' is empty"),
    ("\t", "is empty"),
    (" /dev/ttyACM0", "has spaces around it"),
    ("/dev/ttyACM0\n", "has spaces around it"),
    ("/dev/tty\x00ACM0", "holds a control or undecodable character"),
    ("/dev/tty\udcffACM0", "holds a control or undecodable character"),
    ("{adir}", "is a directory, not a serial port"),
    ("{notes}", "is a regular file, not a serial port"),
    ("{fifo}", "is a pipe or socket, not a serial port"),
    ("{sock}", "is a pipe or socket, not a serial port"),
    ("/nonexistent-folder/ttyUSB0", "is in a folder that does not exist (/nonexistent-folder)"),
    ("ttyUSB0", "port 'ttyUSB0' does not exist here"),
    ("null", "does not exist here (did you mean /dev/null?)"),
    ("none", "means no box, but this command talks to one"),
    ("None", "means no box"),
    ("pty", "talk to that box on the path it printed (PORT /dev/pts/N)"),
    ("mock", "is no port (mock pins are `launcher run --mock`)"),
    ("garbage://x", "has an unknown URL scheme 'garbage://' (pyserial knows "),
    ("://x", "has an unknown URL scheme '://'"),
    ("socket://", "needs a host and a port from 1 to 65535"),
    ("socket://localhost", "needs a host and a port from 1 to 65535"),
    ("socket://localhost:0", "needs a host and a port"),
    ("socket://localhost:70000", "needs a host and a port"),
    ("rfc2217://:7000", "needs a host and a port"),
]


def _fill(port: str, odd: dict[str, str]) -> str:
    return port.format(**odd) if "{" in port else port


@pytest.mark.parametrize(("port", "needle"), REFUSED)
def test_a_port_that_can_never_work_is_one_line_naming_what_is_allowed(
    odd: dict[str, str], port: str, needle: str
) -> None:
    port = _fill(port, odd)
    with pytest.raises(ports.PortError) as info:
        ports.check_port(port)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message
    assert message.endswith(f"; give {ports.FORMS}")
    assert info.value.exit_code == 2 and info.value.code == "BAD_PORT"
    assert isinstance(info.value, UsageError | ValueError)


@needs_tty_list
@pytest.mark.parametrize(
    ("port", "needle"),
    [
        ("/dev/null", "is a character device but not a terminal, so not a serial port"),
        ("/dev/zero", "is a character device but not a terminal"),
        ("/dev/tty", "is a terminal of this computer"),
        ("/dev/ptmx", "is a terminal of this computer"),
    ],
)
def test_character_devices_that_are_not_serial_lines_are_refused(port: str, needle: str) -> None:
    if not os.path.exists(port):
        pytest.skip(f"no {port} here")
    with pytest.raises(ports.PortError, match=needle):
        ports.check_port(port)


@pytest.mark.parametrize(
    "port",
    [
        "loop://",
        "LOOP://",
        "socket://localhost:7000",
        "rfc2217://192.168.1.20:2217",
        "spy://loop://",
        "{pty}",
        "{absent}",  # a pty or udev link made later, in a folder that exists
        "/dev/ttyUSB-not-plugged-in",  # an unplugged adapter: the box waits, the host says so
        "/dev/serial/by-id/usb-not-plugged-in",  # its folder appears with the first adapter
    ],
)
def test_ports_that_may_work_pass(odd: dict[str, str], port: str) -> None:
    port = _fill(port, odd)
    assert ports.check_port(port) == port


def test_keywords_a_command_takes_come_back_in_lower_case() -> None:
    assert ports.check_port("pty", ports.BOX_WORDS) == "pty"
    assert ports.check_port("PTY", ports.BOX_WORDS) == "pty"
    assert ports.check_port("None", ports.BOX_WORDS) == "none"
    with pytest.raises(ports.PortError) as info:
        ports.check_port("mock", ports.BOX_WORDS)
    # what is allowed names the command's own words too
    assert str(info.value).endswith("pty (make a pty and print its path), or none (no host link)")


# -- opening: absent, busy, not allowed, not a tty -------------------------------------------


def _serial_error(number: int) -> serial.SerialException:
    return serial.SerialException(number, f"could not open port X: [Errno {number}] ...")


@pytest.mark.parametrize(
    ("number", "code", "needle"),
    [
        (errno.ENOENT, "UNREACHABLE", "no serial port at /dev/ttyACM0: is the box plugged in?"),
        (errno.EBUSY, "UNREACHABLE", "/dev/ttyACM0 is in use by another program"),
        (errno.EACCES, "UNREACHABLE", "permission denied (is this user in the dialout group?"),
        (errno.ENOTTY, "BAD_PORT", "port '/dev/ttyACM0' is not a serial port"),
        (errno.EIO, "UNREACHABLE", "cannot open /dev/ttyACM0: Input/output error"),
    ],
)
def test_an_open_that_fails_is_one_line(number: int, code: str, needle: str) -> None:
    got, message = ports.open_failure("/dev/ttyACM0", _serial_error(number))
    assert (got, "\n" in message) == (code, False)
    assert needle in message
    assert "Errno" not in message


def test_a_termios_error_inside_pyserials_is_named_not_dumped() -> None:
    # pyserial raises SerialException("Could not configure port: (25, 'Inappropriate ioctl
    # for device')") while handling the termios.error that holds the errno.
    inner = termios.error(errno.ENOTTY, "Inappropriate ioctl for device")
    exc = serial.SerialException(f"Could not configure port: {inner}")
    exc.__context__ = inner
    assert ports.reason(exc) == os.strerror(errno.ENOTTY)
    code, message = ports.open_failure("/dev/x", exc)
    assert code == "BAD_PORT" and "(25," not in message


# -- every command uses the one check, with the same message ---------------------------------


def _out(
    capsys: pytest.CaptureFixture[str], main: Callable[[list[str]], int], argv: list[str]
) -> tuple[int, str]:
    code, _, err = run_main(main, argv, capsys)
    return code, err


@pytest.mark.parametrize(("port", "needle"), [r for r in REFUSED if r[0] not in ("none", "None")])
def test_send_watch_and_table_refuse_it_the_same_way_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    odd: dict[str, str],
    port: str,
    needle: str,
) -> None:
    port = _fill(port, odd)
    with pytest.raises(ports.PortError) as info:
        ports.check_port(port)
    expected = str(info.value)
    state = tmp_path / "host.db"
    table_state = tmp_path / "table.json"
    runs = [
        _out(capsys, launcher, ["send", port, "status", "--state", str(state)]),
        _out(capsys, unoattack, ["watch", "--port", port]),
        _out(
            capsys,
            unoattack,
            ["table", "--port", port, "--players", "Ann,Bo", "--state", str(table_state)],
        ),
    ]
    for code, err in runs:
        assert code == 2, err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.rstrip("\n").endswith(expected)
    # refused before anything was written
    assert not state.exists() and not table_state.exists()


def test_the_client_refuses_a_bad_name_before_touching_its_state_file(tmp_path: Path) -> None:
    with pytest.raises(BoxError) as info:
        BoxClient("", state_path=tmp_path / "s.db")
    assert (info.value.code, info.value.exit_code) == ("BAD_PORT", 2)
    assert not (tmp_path / "s.db").exists()


def test_none_is_the_tables_own_word_and_nobody_elses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = _out(capsys, unoattack, ["watch", "--port", "none"])
    assert code == 2 and "means no box, but this command talks to one" in err
    code, err = _out(capsys, launcher, ["send", "none", "status"])
    assert code == 2 and "means no box" in err


@pytest.mark.parametrize(
    ("port", "needle"),
    [
        ("", "port '' is empty"),
        ("  ", "is empty"),
        ("/dev/null", "not a serial port"),
        ("{adir}", "is a directory, not a serial port"),
        ("mock", "is no port (mock pins are `launcher run --mock`)"),
        ("garbage://x", "unknown URL scheme"),
    ],
)
def test_launcher_run_refuses_a_bad_port_at_once_exit_2(
    odd: dict[str, str], port: str, needle: str
) -> None:
    # It used to retry `""` and /dev/null for ever; now it is the only line printed.
    port = _fill(port, odd)
    if port == "/dev/null" and not os.access(_TTY_LIST, os.R_OK):
        pytest.skip("no /proc/tty/drivers (not Linux)")
    proc = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "run", "--mock", "--port", port],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr
    assert proc.stderr.startswith("launcher: port ")
    assert proc.stderr.rstrip().endswith(
        "pty (make a pty and print its path), or none (no host link)"
    )


def test_a_device_path_that_is_not_there_yet_is_waited_for(tmp_path: Path) -> None:
    # Not every absent path is a mistake: the daemon keeps waiting for an unplugged adapter.
    proc = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "run", "--mock", "--port", "/dev/ttyUSB-later"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline() for _ in range(2)]  # this and "ready", in either order
        assert any("port /dev/ttyUSB-later unavailable (No such file or" in x for x in lines)
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
