"""Error tree for the launcher. Each error also subclasses the builtin it resembles,
so callers can catch either (as gpiozero does)."""

from __future__ import annotations

from i18n import Text

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_CONFIG = 78  # EX_CONFIG from sysexits.h; systemd is told not to restart on it


class LauncherError(Exception):
    """Base of every error the launcher raises on purpose."""

    exit_code = EXIT_RUNTIME


class UsageError(LauncherError, ValueError):
    """The command line asked for something that cannot be done."""

    exit_code = EXIT_USAGE


class ConfigError(LauncherError, ValueError):
    """The config file is missing, unreadable or wrong. The message names file, key and value."""

    exit_code = EXIT_CONFIG


class JournalError(LauncherError, OSError):
    """The journal cannot be opened, read or written (and could not be moved aside)."""


class CommandError(LauncherError):
    """A command from the host cannot be carried out; `code` is a wire-protocol error code."""

    def __init__(self, code: str, message: str | Text, *, extra: dict | None = None) -> None:
        super().__init__(str(message))
        self.code = code
        self.message = str(message)  # English: what the wire's error.message carries
        self.text = message if isinstance(message, Text) else None  # for the host's language
        self.extra = dict(extra or {})  # reply fields sent with the error (a self-test's checks)
