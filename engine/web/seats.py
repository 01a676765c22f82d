""" "I am Bo": which joined phone plays which seat.

A joined phone may claim one seat: the server remembers it for the phone's session (its
cookie), every page is told which seats are claimed (a claimed seat is shown as such, and no
other phone may claim it), and it is released when the phone leaves or its session ends. A
claim changes nothing in the game: any joined phone still referees for everyone; the phone of
a claimed seat highlights that player's turn and what they owe, and may buzz and beep for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from i18n import _

__all__ = ["Claims"]


class Claims:
    """Seat claims by session token. `valid(token)` says whether a session still exists (a
    claim of an ended session no longer counts)."""

    def __init__(self, valid: Callable[[object], bool]) -> None:
        self._valid = valid
        self._by_token: dict[str, int] = {}
        self._lock = threading.Lock()

    def of(self, token: object) -> int | None:
        """The seat `token`'s phone claimed, or None."""
        if not isinstance(token, str) or not self._valid(token):
            return None
        with self._lock:
            return self._by_token.get(token)

    def seats(self) -> list[int]:
        """Every claimed seat, in seat order."""
        with self._lock:
            tokens = list(self._by_token.items())
        return sorted({seat for token, seat in tokens if self._valid(token)})

    def claim(self, token: str, seat: int | None, players: list[str]) -> str | None:
        """Claim `seat` for `token` (None: release it); why not, in one line, or None."""
        if seat is None:
            self.release(token)
            return None
        if not 0 <= seat < len(players):
            return _("no seat {seat}: the seats are 0 to {last}").format(
                seat=seat, last=len(players) - 1
            )
        with self._lock:
            for other, taken in list(self._by_token.items()):
                if taken == seat and other != token:
                    if self._valid(other):
                        return _("{player} is already claimed by another phone").format(
                            player=players[seat]
                        )
                    del self._by_token[other]
            self._by_token[token] = seat
        return None

    def release(self, token: object) -> bool:
        """Drop `token`'s claim; True when it had one."""
        with self._lock:
            return isinstance(token, str) and self._by_token.pop(token, None) is not None
