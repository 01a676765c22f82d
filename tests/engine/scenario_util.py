"""Build and replay scenarios from Python data in rule tests (same parser as the CLI)."""

from __future__ import annotations

from typing import Any

from engine.scenario import parse_scenario

START_KEYS = ("hands", "top", "color", "turn", "direction", "launcher", "pile")


def scenario(
    *,
    deck: str = "attack",
    players: int | None = None,
    options: dict[str, Any] | None = None,
    actions: list[dict[str, Any]] | None = None,
    dealer: int = 0,
    seed: int = 0,
    mode: str | None = None,
    **start: Any,
) -> dict[str, Any]:
    """A scenario mapping: `start` keys go to [start] (hands, top, turn, pile, launcher, ...)."""
    for key in start:
        assert key in START_KEYS, key
    data: dict[str, Any] = {
        "deck": deck,
        "players": players if players is not None else len(start["hands"]),
        "dealer": dealer,
        "seed": seed,
        "start": start,
        "actions": actions or [],
    }
    if options:
        data["options"] = options
    if mode is not None:
        data["mode"] = mode
    return data


def run(**kwargs: Any) -> dict[str, Any]:
    """Replay a scenario that must succeed; returns the final state."""
    out, code = parse_scenario(scenario(**kwargs)).run()
    assert code == 0, out.get("error")
    return out


def run_error(**kwargs: Any) -> tuple[int, str, dict[str, Any]]:
    """Replay a scenario that must stop on an illegal action: (index, message, state)."""
    out, code = parse_scenario(scenario(**kwargs)).run()
    assert code == 1, out
    return out["error"]["action"], out["error"]["message"], out["state"]


def check(state: dict[str, Any], expected: dict[str, Any]) -> None:
    """Every expected key equals the state's value (a readable diff on failure)."""
    got = {k: state[k] for k in expected}
    assert got == expected
