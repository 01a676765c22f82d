"""The systemd notify protocol (`sd_notify(3)`) with the standard library.

Under `Type=notify` systemd passes `NOTIFY_SOCKET`, the address of a datagram socket; the daemon
sends `READY=1` once the config is loaded and the self-test passed, `WATCHDOG=1` from its loop
while it is healthy, `STATUS=...` lines for `systemctl status`, and `STOPPING=1` on the way out.
Without `NOTIFY_SOCKET` (a shell, the tests, the demo) every call is a no-op returning False, so
the daemon calls these unconditionally.

`watchdog_interval()` reads `WATCHDOG_USEC` (set from the unit's `WatchdogSec=`); the daemon pings
at half of it so one late loop turn does not get the box killed.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)

__all__ = [
    "extend_timeout",
    "notify",
    "ready",
    "status",
    "stopping",
    "watchdog",
    "watchdog_interval",
]


def _address() -> str | None:
    """The socket address from `NOTIFY_SOCKET`: a path, or `@name` for the abstract namespace."""
    name = os.environ.get("NOTIFY_SOCKET", "")
    if name.startswith("@"):
        return "\0" + name[1:]  # abstract namespace: leading NUL instead of '@'
    if name.startswith("/"):
        return name
    if name:
        # e.g. systemd 254's "vsock:..." addresses; a box never gets those, so say so once.
        log.debug("NOTIFY_SOCKET=%r is not a unix socket address; not notifying", name)
    return None


def _one_line(text: str) -> str:
    # A newline would start a new KEY=VALUE assignment in the datagram.
    return " ".join(text.splitlines())


def notify(*assignments: str) -> bool:
    """Send `KEY=VALUE` assignments in one datagram. Returns True if it was sent, False when
    there is no notify socket or sending failed (logged; a lost notification must never take the
    daemon down: the watchdog will say so if it matters)."""
    address = _address()
    if address is None or not assignments:
        return False
    payload = "\n".join(assignments).encode("utf-8")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(payload)
    except OSError as exc:
        log.warning("systemd notify failed: %s", exc)
        return False
    return True


def ready(status_text: str | None = None) -> bool:
    """Tell systemd start-up is complete (config loaded, self-test passed)."""
    if status_text is None:
        return notify("READY=1")
    return notify("READY=1", f"STATUS={_one_line(status_text)}")


def status(text: str) -> bool:
    """Set the one-line status shown by `systemctl status launcher`."""
    return notify(f"STATUS={_one_line(text)}")


def watchdog() -> bool:
    """Ping the service watchdog; call it from the control loop only while the loop is healthy."""
    return notify("WATCHDOG=1")


def stopping(status_text: str | None = None) -> bool:
    """Tell systemd the daemon is shutting down (outputs are being turned off)."""
    if status_text is None:
        return notify("STOPPING=1")
    return notify("STOPPING=1", f"STATUS={_one_line(status_text)}")


def extend_timeout(seconds: float) -> bool:
    """Ask for `seconds` more before the start (or stop) timeout, e.g. during a long self-test."""
    return notify(f"EXTEND_TIMEOUT_USEC={max(0, round(seconds * 1_000_000))}")


def watchdog_interval() -> float | None:
    """The watchdog timeout in seconds, or None when no watchdog is armed for this process.

    `WATCHDOG_PID`, when set, names the process the watchdog belongs to; a child that inherited
    the environment must not believe it is being watched (as `sd_watchdog_enabled(3)`).
    """
    usec = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", "")
    try:
        micros = int(usec)
    except ValueError:
        return None
    if micros <= 0:
        return None
    if pid:
        try:
            if int(pid) != os.getpid():
                return None
        except ValueError:
            return None
    return micros / 1_000_000
