"""What the page's box panel and dashboard show: the box's state, hopper, dry streak, jams, last
bursts, the link to it, its firmware and uptime, and its switches.

Filled from the box's own words only: its `status` replies (state, hopper, dry streak, host
lock, aim, fault, jam-model summary, uptime, firmware version), its `settings.get`/`set`
replies (the personality switches in force) and its events (state changes, fires, jams,
refills, its `hello` at start); and from the host link (connected, reconnecting, lost). It
decides nothing: the dry streak is the one the box reports, not one counted here.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["BURSTS_SHOWN", "JAMS_SHOWN", "SWITCHES", "BoxPanel"]

BURSTS_SHOWN = 8  # last fire results kept for the panel
JAMS_SHOWN = 10  # last jams kept for the dashboard's jam history
# The box's personality switches the dashboard offers (the box's `settings.set` keys; the box
# checks each against its config: none of them touches a limit).
SWITCHES = ("sound.enabled", "light.enabled", "patterns.enabled")

_STATUS_KEYS = (
    "state",
    "hopper",
    "dry_streak",
    "locked",
    "aim",
    "fault",
    "ejector",
    "queue",
    "uptime_ms",
    "version",
)


class BoxPanel:
    """The box panel's data; `snapshot()` is the JSON the page gets. `low_cards`: at or below
    this many cards in the hopper the dashboard warns (one burst could take them all)."""

    def __init__(self, *, connected: bool, low_cards: int = 0) -> None:
        # (not the box's port: a server path is none of the watchers' business)
        self._data: dict[str, Any] = {
            "connected": connected,
            "link": "connected" if connected else None,  # connected | reconnecting | lost
            "state": None,
            "hopper": None,
            "hopper_full": None,  # the most the hopper held since it was last loaded
            "low_cards": low_cards,
            "dry_streak": None,
            "locked": None,
            "aim": None,
            "fault": None,
            "ejector": None,
            "queue": None,
            "uptime_ms": None,
            "version": None,  # the box's firmware (its `status` says)
            "name": None,  # the box's name (its `hello` event says)
            "jam": None,  # the jam model's summary (mode, base, step, max_dry)
            "model": None,  # every jam-model parameter, once asked for
            "settings": None,  # the personality settings in force, once asked for
            "switches": list(SWITCHES),
            "jams": 0,  # jam events seen since the server started
            "jam_log": [],  # newest first: press_id, retries, t_ms
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
        self._hopper(status.get("hopper"))

    def on_model(self, params: Any) -> None:
        """The jam model's parameters (a `model.get` or `model.set` reply)."""
        if isinstance(params, dict):
            self._data["model"] = dict(params)

    def on_settings(self, reply: Any) -> None:
        """A `settings.get` or `settings.set` reply: the settings in force."""
        if isinstance(reply, dict) and isinstance(reply.get("settings"), dict):
            self._data["settings"] = dict(reply["settings"])

    def on_link(self, state: str) -> None:
        """The host link: `connected`, `reconnecting` (the port went away; the client opens
        it again when it is back) or `lost` (for good)."""
        self._data["link"] = state
        if state == "connected":
            self._data["connected"] = True
            self._data["lost"] = None

    def on_event(self, event: dict[str, Any], seat: str | None = None) -> None:
        """One box event; `seat` is the player a fire counted for (None: nobody)."""
        data = self._data
        kind = event.get("kind")
        if kind == "refill" and isinstance(event.get("hopper"), int):
            data["hopper_full"] = event["hopper"]  # loaded: the gauge's new "full"
        if isinstance(event.get("hopper"), int):
            data["hopper"] = event["hopper"]
            self._hopper(event["hopper"])
        if kind == "hello":
            data["name"] = event.get("name")
            data["ejector"] = event.get("ejector")
            data["state"] = "booting"
            data["hopper_full"] = event.get("hopper")
        elif kind == "state":
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
            jam = {
                "press_id": event.get("press_id"),
                "retries": event.get("retries"),
                "t_ms": event.get("t_ms"),
            }
            data["jam_log"] = [jam, *data["jam_log"]][:JAMS_SHOWN]
        elif kind == "fault":
            data["fault"] = f"{event.get('output')}: {event.get('why')}"

    def lost(self, why: str) -> None:
        """The link to the box is gone for good."""
        self._data["connected"] = False
        self._data["link"] = "lost"
        self._data["lost"] = why

    def _hopper(self, hopper: Any) -> None:
        if isinstance(hopper, int):
            full = self._data["hopper_full"]
            self._data["hopper_full"] = hopper if full is None else max(full, hopper)
