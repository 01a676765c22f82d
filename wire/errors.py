"""The base of the host side's errors, shared by the wire client and the engine.

``engine.errors`` builds its tree on :class:`UnoError`; the wire client's ``BoxError`` is one
too, so every ``unoattack`` command catches a box error the way it catches a rule error.
"""

from __future__ import annotations


class UnoError(Exception):
    """Base of every error the host (engine, wire client) raises on purpose."""

    exit_code = 1
