"""What the page's box panel shows: the box's state, hopper, dry streak, jams and last bursts.

Filled from the box's own words only: its `status` replies (state, hopper, dry streak, host
lock, aim, fault, jam-model summary) and its events (state changes, fires, jams, refills). It
decides nothing: the dry streak is the one the box reports, not one counted here.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["BURSTS_SHOWN", "BoxPanel"]

BURSTS_SHOWN = 8  # last fire results kept for the panel

_STATUS_KEYS = ("state", "hopper", "dry_streak", "locked", "aim", "fault", "ejector", "queue")


class BoxPanel:
    """The box panel's data; `snapshot()` is the JSON the page gets."""

    def __init__(self, *, connected: bool) -> None:
        # (not the box's port: a server path is none of the watchers' business)
        self._data: dict[str, Any] = {
            "connected": connected,
            "state": None,
            "hopper": None,
            "dry_streak": None,
            "locked": None,
            "aim": None,
            "fault": None,
            "ejector": None,
            "queue": None,
            "jam": None,  # the jam model's summary (mode, base, step, max_dry)
            "model": None,  # every jam-model parameter, once asked for
            "jams": 0,  # jam events seen since the server started
            "bursts": [],  # newest first: press_id, source, seat, planned, ejected, reason
            "lost": None,
        }

    def snapshot(self) -> dict[str, Any]:
        """A copy of the panel's data."""
        return copy.deepcopy(self._data)

    def on_status(self, status: dict[str, Any]) -> None:
        """A `status` reply of the box."""
        for key in _STATUS_KEYS:
            if key in status:
                self._data[key] = status[key]
        if isinstance(status.get("jam"), dict):
            self._data["jam"] = dict(status["jam"])

    def on_model(self, params: Any) -> None:
        """The jam model's parameters (a `model.get` or `model.set` reply)."""
        if isinstance(params, dict):
            self._data["model"] = dict(params)

    def on_event(self, event: dict[str, Any], seat: str | None = None) -> None:
        """One box event; `seat` is the player a fire counted for (None: nobody)."""
        data = self._data
        kind = event.get("kind")
        if isinstance(event.get("hopper"), int):
            data["hopper"] = event["hopper"]
        if kind == "state":
            data["state"] = event.get("to")
        elif kind == "fire":
            burst = {
                "press_id": event.get("press_id"),
                "source": event.get("source"),
                "seat": seat,
                "planned": event.get("planned"),
                "ejected": event.get("ejected"),
                "reason": event.get("reason"),
            }
            data["bursts"] = [burst, *data["bursts"]][:BURSTS_SHOWN]
        elif kind == "jam":
            data["jams"] += 1
        elif kind == "fault":
            data["fault"] = f"{event.get('output')}: {event.get('why')}"

    def lost(self, why: str) -> None:
        """The link to the box is gone for good."""
        self._data["connected"] = False
        self._data["lost"] = why
