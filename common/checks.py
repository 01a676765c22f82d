"""What a key's value must be: one check per key, shared by the config file and the settings.

A check takes the value as written (TOML or JSON) and returns it normalised, or raises
`BadValue` whose `rule` says what the key takes, without the key or the value: the config
reader names both its way (``FILE: [attenuation] window_ms = -5: must be a whole number from 0
to 10000``), ``settings.set`` its own (``attenuation.window_ms must be a whole number from 0 to
10000, got -5``), with the same words in every language. A key the host may change too
(``settings.PERSONALITY``) has its check beside its section's dataclass
(``attenuation.KEYS``, ``patterns.KEYS``). Standard library and i18n only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from i18n import Text

T = TypeVar("T")
Check = Callable[[object], T]

__all__ = ["BadValue", "Check", "boolean", "whole_number"]


class BadValue(ValueError):
    """A value the key does not take; `rule` (a `Text`) says what it must be. ``str`` is the
    English rule (a log line)."""

    def __init__(self, rule: Text) -> None:
        super().__init__(str(rule))
        self.rule = rule


def boolean(value: object) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise BadValue(Text("must be true or false"))
    return value


def whole_number(lo: int, hi: int) -> Check[int]:
    """The check of a whole number from `lo` to `hi` inclusive."""

    def check(value: object) -> int:
        # `true` is not 1: a file's boolean is never a number
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise BadValue(Text("must be a whole number from {lo} to {hi}", lo=lo, hi=hi))
        return value

    return check
