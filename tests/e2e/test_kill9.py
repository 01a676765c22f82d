"""`kill -9` of the daemon in the middle of a burst, then a restart on the same journal and
plant state: the burst is not resumed, the interrupted press is reported once with
`reason: "interrupted"` and the cards that really left the box, and no event is lost."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.configs import merge
from tests.e2e.conftest import SOLENOID, BoxProcess
from tests.wait import wait_until
from wire.client import BoxClient

pytestmark = pytest.mark.slow  # run first: see tests/conftest.py
BURST = 10
# A solenoid fires exactly one card per pulse (no motor overrun), and the pulses come far apart
# (150 ms), so a kill after the third card lands mid-burst even when this test runs late by a
# second. (That a crash at any write keeps one fire per press is tests/firmware/
# test_crash_points.py, which needs no timing at all; this test is the real `kill -9`.)
SLOW_SOLENOID = merge(SOLENOID, {"ejector": {"recovery_ms": 150}})


def until(client: BoxClient, done: Callable[[dict[str, Any]], bool], timeout: float = 30.0):
    """Events up to and including the first one `done` accepts."""
    got: list[dict[str, Any]] = []
    for event in client.events(timeout=timeout):
        got.append(event)
        if done(event):
            return got
    raise AssertionError(
        f"no matching event within {timeout} s; got {got}; host at {client.position.seq},"
        f" box said {client.box}, stats {client.stats.as_dict()}"
    )


def fire_of(press_id: int) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e["kind"] == "fire" and e["press_id"] == press_id


def inflight_ejected(journal: Path) -> int | None:
    """Cards the daemon has recorded for the burst in flight (read-only peek at its journal)."""
    db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=1)
    try:
        row = db.execute(
            "SELECT body FROM presses WHERE body LIKE '%planned%' ORDER BY press_id LIMIT 1"
        ).fetchone()
    except sqlite3.OperationalError:  # busy or not created yet
        return None
    finally:
        db.close()
    return None if row is None else int(json.loads(row[0])["ejected"])


def wait_for_cards(journal: Path, cards: int, timeout: float = 20.0) -> int:
    def reached() -> int | None:
        counted = inflight_ejected(journal)
        return counted if counted is not None and counted >= cards else None

    return wait_until(reached, timeout, what=f"the burst reaching {cards} cards")


def test_kill9_mid_burst_reports_interrupted_press_and_loses_nothing(
    launcher_box: Callable[..., BoxProcess], tmp_path: Path
) -> None:
    box = launcher_box(jam={"mode": "fixed", "count": BURST}, **SLOW_SOLENOID)
    state = tmp_path / "host.sqlite"
    events: list[dict[str, Any]] = []

    with BoxClient(box.port, state_path=state, timeout=10) as client:
        first = client.press()
        events += until(client, fire_of(first))
        before = box.plant()["ejected_total"]
        victim = client.press()
        events += until(client, lambda e: e["kind"] == "state" and e["to"] == "ejecting")
        counted = wait_for_cards(box.journal, 3)
        box.kill9()
        at_kill = box.plant()["ejected_total"]
        events += list(client.events(timeout=0.5))  # whatever was on the line before the kill

    assert 3 <= at_kill - before < BURST, "the kill did not land mid-burst"
    box.restart()
    with BoxClient(box.port, state_path=state, timeout=10) as client:
        events += until(client, fire_of(victim))
        interrupted = events[-1]
        status = client.status()
        # the burst was not resumed: no card left the box since the kill
        assert status["state"] == "idle"
        assert box.plant()["ejected_total"] == at_kill
        after = client.press()
        events += until(client, fire_of(after))
        assert box.plant()["ejected_total"] == at_kill + BURST
        events += list(client.events(timeout=0.3))

    assert interrupted["reason"] == "interrupted"
    assert interrupted["planned"] == BURST
    # the cards the box had counted; the plant may have moved one more that the kill kept the
    # box from counting (it left the hopper just before the kill)
    assert at_kill - before - interrupted["ejected"] in (0, 1), "the box must report its cards"
    assert interrupted["ejected"] >= counted
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1)), f"events lost or repeated: {seqs}"
    fires = [e["press_id"] for e in events if e["kind"] == "fire"]
    presses = [e["press_id"] for e in events if e["kind"] == "press"]
    assert fires == presses == [first, victim, after]
    assert len({e["boot"] for e in events}) == 2 and len({e["stream"] for e in events}) == 1


def test_kill9_press_queued_behind_the_burst_still_gets_one_fire_result(
    launcher_box: Callable[..., BoxProcess], tmp_path: Path
) -> None:
    box = launcher_box(jam={"mode": "fixed", "count": BURST}, **SLOW_SOLENOID)
    state = tmp_path / "host.sqlite"
    with BoxClient(box.port, state_path=state, timeout=10) as client:
        victim = client.press()
        queued = client.press()
        wait_for_cards(box.journal, 2)
        box.kill9()
        events = list(client.events(timeout=0.5))
    box.restart()
    with BoxClient(box.port, state_path=state, timeout=10) as client:
        events += until(client, lambda e: e["kind"] == "hello" and e["seq"] > 1, timeout=10)
        events += list(client.events(timeout=2))
    fires = [e for e in events if e["kind"] == "fire"]
    assert [f["press_id"] for f in fires] == [victim, queued], "one fire result per press"
    assert fires[0]["reason"] == "interrupted" and fires[0]["ejected"] >= 2
    assert (fires[1]["reason"], fires[1]["ejected"]) == ("interrupted", 0)
