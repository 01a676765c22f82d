"""What may be given as a serial port: the one check of a `--port` value and the one set of
messages for a port that cannot be used, shared by the box's link (`launcher run`) and the host's
client (`launcher send`, `unoattack table`, `watch`, `demo`).

`check_port` refuses, before anything is opened, a name that can never be a box's serial port:
an empty name, spaces around it, a directory, a regular file, a character device that is not a
serial terminal (`/dev/null`), an unknown URL scheme, a keyword the command does not take. A
device path that is merely absent passes: an unplugged USB adapter appears later (the box waits
for it; the host says "is the box plugged in?" when it opens the port, `open_failure`).

Standard library only (pyserial is consulted lazily, for its list of URL schemes and ports), so
the host side imports it as freely as the box does.
"""

from __future__ import annotations

import errno
import os
import stat
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from common.errors import UsageError
from i18n import N_, _

__all__ = [
    "BOX_WORDS",
    "FORMS",
    "PortError",
    "PtyLink",
    "check_port",
    "is_pty",
    "link_of",
    "open_failure",
    "reason",
    "serial_ports",
]

# The words below are marked for the catalogs here and translated where a message shows them.
FORMS = N_(
    "a serial device (/dev/ttyACM0, /dev/ttyUSB0, /dev/serial0, a pty /dev/pts/N) "
    "or a pyserial URL (socket://HOST:PORT, rfc2217://HOST:PORT, loop://)"
)
# What `launcher run --port` takes besides a port, and what each means.
BOX_WORDS = {"pty": N_("make a pty and print its path"), "none": N_("no host link")}
# Words some commands take instead of a port, and what a command that does not take one says.
KEYWORDS: dict[str, str] = {
    "none": N_("means no box, but this command talks to one"),
    "pty": N_(
        "is for `launcher run --port pty`; talk to that box on the path it printed "
        "(PORT /dev/pts/N)"
    ),
    "mock": N_("is no port (mock pins are `launcher run --mock`)"),
}
# pyserial's URL handlers (serial/urlhandler/protocol_*.py), if pyserial cannot be asked.
_SCHEMES = ("alt", "cp2110", "hwgrep", "loop", "rfc2217", "socket", "spy")
_HOST_PORT_SCHEMES = ("socket", "rfc2217")
# /proc/tty/drivers types that are terminals of this computer, never a box's serial line.
_NOT_A_LINE = ("system", "pty:master", "console")

_Refuse = Callable[[str], "PortError"]  # builds the one-line error for a problem


class PortError(UsageError):
    """A port name that can never be a box's serial port (a usage error, exit 2; a ValueError).
    `str()` is one line naming the problem and what is allowed; the host client reports it as
    its `BAD_PORT` error."""

    code = "BAD_PORT"


def check_port(port: str, allow: Mapping[str, str] | None = None) -> str:
    """Return the port to use, or raise PortError (one line) for a name that can never work.

    `allow` maps the keywords the command takes (`pty`, `none`) to what each means, for the
    message; a keyword is matched in any case and returned in lower case. A path that does not
    exist passes when it may still appear (a device under /dev, or a name in a folder that
    exists): opening it finds out (`open_failure`).
    """
    allow = dict(allow or {})
    forms = _(FORMS)
    for i, (word, meaning) in enumerate(allow.items()):
        also = (
            _("{forms}, or {word} ({meaning})")
            if i == len(allow) - 1
            else _("{forms}, {word} ({meaning})")
        )
        forms = also.format(forms=forms, word=word, meaning=_(meaning))

    def refuse(problem: str) -> PortError:
        return PortError(
            _("port {port!r} {problem}; give {forms}").format(
                port=port, problem=problem, forms=forms
            )
        )

    if not isinstance(port, str) or not port.strip():
        raise refuse(_("is empty"))
    if port != port.strip():
        raise refuse(_("has spaces around it"))
    if "\x00" in port or not port.isprintable():
        raise refuse(_("holds a control or undecodable character"))
    word = port.lower()
    if word in allow:
        return word
    if word in KEYWORDS:
        raise refuse(_(KEYWORDS[word]))
    if "://" in port:
        _check_url(port, refuse)
        return port
    _check_path(port, refuse)
    return port


def _check_url(url: str, refuse: _Refuse) -> None:
    scheme = url.split("://", 1)[0].lower()
    schemes = _known_schemes()
    if scheme not in schemes:
        raise refuse(
            _("has an unknown URL scheme {scheme!r} (pyserial knows {known})").format(
                scheme=scheme + "://", known=", ".join(s + "://" for s in schemes)
            )
        )
    if scheme in _HOST_PORT_SCHEMES:
        parts = urllib.parse.urlsplit(url)
        try:
            number = parts.port
        except ValueError:
            number = None
        if not parts.hostname or number is None or not 0 < number < 65536:
            raise refuse(
                _("needs a host and a port from 1 to 65535, like {example}").format(
                    example=f"{scheme}://192.168.1.20:7000"
                )
            )


def _known_schemes() -> tuple[str, ...]:
    """The URL schemes pyserial has a handler for (its own list when it is installed)."""
    try:
        import pkgutil

        import serial.urlhandler

        found = sorted(
            m.name.removeprefix("protocol_")
            for m in pkgutil.iter_modules(serial.urlhandler.__path__)
            if m.name.startswith("protocol_")
        )
    except Exception:  # no pyserial here: its handlers as of 3.5
        found = []
    return tuple(found) or _SCHEMES


def _check_path(port: str, refuse: _Refuse) -> None:
    path = Path(port)
    try:
        mode = path.stat()
    except FileNotFoundError:
        _check_absent(path, refuse)
        return
    except OSError as exc:
        why = reason(exc)
        raise refuse(_("cannot be used: {error}").format(error=why[0].lower() + why[1:])) from None
    kind = mode.st_mode
    if stat.S_ISDIR(kind):
        raise refuse(_("is a directory, not a serial port"))
    if stat.S_ISREG(kind):
        raise refuse(_("is a regular file, not a serial port"))
    if not stat.S_ISCHR(kind):
        if stat.S_ISBLK(kind):
            raise refuse(_("is a block device, not a serial port"))
        raise refuse(_("is a pipe or socket, not a serial port"))
    driver = _tty_driver(os.major(mode.st_rdev), os.minor(mode.st_rdev))
    if driver == "":
        raise refuse(_("is a character device but not a terminal, so not a serial port"))
    if driver is not None and driver.startswith(_NOT_A_LINE):
        raise refuse(
            _(
                "is a terminal of this computer (a console, /dev/tty or the pty "
                "multiplexer), not a serial port"
            )
        )


def _check_absent(path: Path, refuse: _Refuse) -> None:
    """A missing path passes if a device may still appear there; else it is a mistake."""
    text = str(path)
    if "/" not in text:
        guess = Path("/dev") / text
        if guess.exists():
            raise refuse(_("does not exist here (did you mean {guess}?)").format(guess=guess))
        raise refuse(_("does not exist here"))
    if text.startswith("/dev/") or path.parent.is_dir():
        return  # an unplugged adapter, a by-id link, a pty made later
    raise refuse(_("is in a folder that does not exist ({folder})").format(folder=path.parent))


def _tty_driver(major: int, minor: int) -> str | None:
    """The /proc/tty/drivers type of a character device: `serial`, `pty:slave`, ... ("" if no
    tty driver owns it; None when the kernel's list cannot be read, e.g. not Linux)."""
    try:
        lines = Path("/proc/tty/drivers").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in lines.splitlines():
        fields = line.split()
        if len(fields) < 5 or not fields[2].isdigit() or int(fields[2]) != major:
            continue
        low, _dash, high = fields[3].partition("-")
        if low.isdigit() and int(low) <= minor <= int(high if high.isdigit() else low):
            return fields[4]
    return ""


def is_pty(port: str) -> bool:
    """True when `port` names a pseudo-terminal's slave directly (`/dev/pts/N`, not a symlink to
    one). Such a path dies with the program that made the pty and its number is soon given to
    another pty, so a client must never reopen it: it would reach whatever opened next (another
    box, another terminal). A stable symlink (the way udev names USB serial ports) is followed
    anew at every open instead."""
    try:
        mode = os.lstat(port)
    except (OSError, ValueError):
        return False
    if not stat.S_ISCHR(mode.st_mode):
        return False
    return _tty_driver(os.major(mode.st_rdev), os.minor(mode.st_rdev)) == "pty:slave"


@dataclass(frozen=True)
class PtyLink:
    """A symlink to a pty's slave, as a client found it when it opened the pty through it: the
    link itself (device, inode, change time, target) and the pty's node (device, inode, change time;
    a pty made anew under the same number has a new node)."""

    link: tuple[int, int, int, str]
    pty: tuple[int, int, int]

    @classmethod
    def opened(cls, link: tuple[int, int, int, str] | None, fd: int) -> PtyLink | None:
        """What to check before reopening: `link` is `link_of(port)` taken before the open,
        `fd` the descriptor opened. None unless that was a symlink and `fd` a pty's slave."""
        if link is None:
            return None
        node = _pty_node(os.fstat(fd))
        return cls(link, node) if node is not None else None

    def stale(self, port: str) -> bool:
        """True when `port` is still this very link but no longer leads to this pty: the box
        that made both is gone without replacing the link (killed, or a test that dropped its
        box), and the pty's number may already belong to another pty (another box, a terminal)
        that a reopen would share, each taking some of the other's bytes. A link made anew (a
        restarted box), one that is gone, or the same pty still there: False."""
        if link_of(port) != self.link:
            return False
        try:
            node = _pty_node(os.stat(port))
        except (OSError, ValueError):
            return False  # leads nowhere: an open fails by itself
        return node != self.pty


def link_of(port: str) -> tuple[int, int, int, str] | None:
    """The identity of the symlink `port` (device, inode, change time, target); None when it is
    not one. A link made anew (written and renamed) has a new one, even with the same target."""
    try:
        st = os.lstat(port)
        if not stat.S_ISLNK(st.st_mode):
            return None
        return (st.st_dev, st.st_ino, st.st_ctime_ns, os.readlink(port))
    except (OSError, ValueError):
        return None


def _pty_node(st: os.stat_result) -> tuple[int, int, int] | None:
    if not stat.S_ISCHR(st.st_mode):
        return None
    if _tty_driver(os.major(st.st_rdev), os.minor(st.st_rdev)) != "pty:slave":
        return None
    return (st.st_rdev, st.st_ino, st.st_ctime_ns)


def reason(exc: BaseException) -> str:
    """A short reason for a port error, without pyserial's repetition of the port name or the
    raw `(25, 'Inappropriate ioctl for device')` of a termios error."""
    number = _errno(exc)
    if number is not None:
        return os.strerror(number)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _errno(exc: BaseException) -> int | None:
    """The errno behind `exc`: pyserial wraps the OSError or termios.error that has it."""
    seen: BaseException | None = exc
    while seen is not None:
        number = getattr(seen, "errno", None)
        if number is None and seen.args and isinstance(seen.args[0], int):
            number = seen.args[0]  # termios.error(25, "...")
        if isinstance(number, int) and number > 0:
            return number
        seen = seen.__cause__ or seen.__context__
    return None


def open_failure(port: str, exc: BaseException) -> tuple[str, str]:
    """(code, one line) for a port that passed `check_port` but could not be opened: `BAD_PORT`
    when it is not a serial port after all, else `UNREACHABLE` (absent, busy, not allowed)."""
    number = _errno(exc)
    if number == errno.ENOENT:
        return "UNREACHABLE", _(
            "no serial port at {port}: is the box plugged in? serial ports here: {ports}"
        ).format(port=port, ports=serial_ports())
    if number in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EBUSY):
        # The host client opens ports exclusively: a referee or `watch` already holds this one.
        return "UNREACHABLE", _(
            "{port} is in use by another program (a referee or `unoattack watch`?)"
        ).format(port=port)
    if number in (errno.EACCES, errno.EPERM):
        return "UNREACHABLE", _(
            "cannot open {port}: permission denied (is this user in the dialout group? "
            "sudo usermod -aG dialout $USER, then log in again)"
        ).format(port=port)
    if number == errno.ENOTTY:
        return "BAD_PORT", _("port {port!r} is not a serial port; give {forms}").format(
            port=port, forms=_(FORMS)
        )
    return "UNREACHABLE", _("cannot open {port}: {error}").format(port=port, error=reason(exc))


def serial_ports() -> str:
    """The serial ports this machine has, for a message (pyserial's list; best effort)."""
    try:
        from serial.tools import list_ports

        names = sorted(p.device for p in list_ports.comports())
    except Exception:  # only decorates an error message
        names = []
    return ", ".join(names) if names else _("none found")
