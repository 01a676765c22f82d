"""The state machine tables, the model's routing, and the generated diagram."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from transitions import MachineError

from firmware import machine
from tests.conftest import ROOT


class FakeHopper:
    """The hopper the model's guards read."""

    def __init__(self) -> None:
        self.count: int | None = None
        self.switch = False

    def switch_empty(self) -> bool:
        return self.switch


class FakeBox:
    """Records what the model asks of the daemon."""

    def __init__(self) -> None:
        self.host_locked = False
        self.hopper = FakeHopper()
        self.calls: list[str] = []
        self.changes: list[tuple[str, str, str]] = []

    def begin_spinup(self) -> None:
        self.calls.append("begin_spinup")

    def begin_feed(self) -> None:
        self.calls.append("begin_feed")

    def begin_cooldown(self) -> None:
        self.calls.append("begin_cooldown")

    def outputs_off(self) -> None:
        self.calls.append("outputs_off")

    def state_changed(self, source: str, dest: str, why: str) -> None:
        self.changes.append((source, dest, why))


@pytest.fixture
def model():
    box = FakeBox()
    m = machine.LauncherModel(box)
    machine.build_machine(m)
    return m


def test_states_are_exactly_the_protocol_names():
    assert machine.STATES == [
        "booting", "idle", "locked", "spinup", "ejecting",
        "cooldown", "jammed", "empty", "fault", "stopping",
    ]  # fmt: skip


def test_every_transition_names_known_states_and_callbacks():
    names = set(machine.STATES)
    for t in machine.TRANSITIONS:
        sources = [t["source"]] if isinstance(t["source"], str) else t["source"]
        assert set(sources) <= names and t["dest"] in names
        for key in ("conditions", "unless", "before", "after"):
            for name in [t[key]] if isinstance(t.get(key), str) else t.get(key, []):
                assert callable(getattr(machine.LauncherModel, name))


def test_no_auto_transitions_exist(model):
    assert not hasattr(model, "to_idle")
    with pytest.raises(MachineError):
        model.spun_up()  # not declared from booting


def test_a_burst_goes_through_spinup_ejecting_and_cooldown(model):
    model.booted(why="self-test passed")
    model.start_burst(why="press 1")
    model.spun_up()
    model.burst_done()
    model.cooled()
    assert model.state == "idle"
    assert model.box.calls == [
        "begin_spinup", "begin_feed", "outputs_off", "begin_cooldown",
    ]  # fmt: skip
    assert [c[1] for c in model.box.changes] == ["idle", "spinup", "ejecting", "cooldown", "idle"]
    assert model.box.changes[0][2] == "self-test passed"
    assert model.box.changes[2][2] == "spun_up"  # default why: the trigger name


def test_the_host_lock_routes_cooldown_clear_and_reset_to_locked(model):
    model.booted()
    model.box.host_locked = True
    model.start_burst()
    model.spun_up()
    model.burst_done()
    model.cooled()
    assert model.state == "locked"
    model.trip(why="x")
    model.reset()
    assert model.state == "locked"
    model.box.host_locked = False
    model.unlock()
    model.start_burst()
    model.jam()
    model.clear()
    assert model.state == "idle"


def test_latched_states_only_leave_by_clear_reset_or_shutdown(model):
    model.booted()
    model.start_burst()
    model.jam()
    for trigger in ("start_burst", "booted", "cooled", "unlock", "reset"):
        with pytest.raises(MachineError):
            model.trigger(trigger)
    model.trip()
    with pytest.raises(MachineError):
        model.clear()
    model.shutdown()
    assert model.state == "stopping"
    assert model.box.calls.count("outputs_off") == 3  # jam, trip, shutdown


def test_empty_clears_by_hand_or_refills_only_as_its_guards_allow(model):
    model.booted()
    model.box.hopper.count = 0
    model.run_empty()
    assert not model.may_trigger("refill")  # counted_empty
    model.box.hopper.switch = True
    assert not model.may_trigger("clear")  # switch_empty
    model.box.hopper.switch = False
    model.clear()  # by hand: the count of 0 becomes unknown (forget_count)
    assert (model.state, model.box.hopper.count) == ("idle", None)
    model.run_empty()
    model.box.hopper.count = 5
    model.refill()
    assert (model.state, model.box.hopper.count) == ("idle", 5)


def test_late_triggers_are_ignored_only_once_stopping(model):
    # Why stopping: outputs are off and devices closing, so a timer or switch event queued
    # before shutdown has nothing left to move (machine.HARMLESS_INVALID_IN).
    model.booted()
    with pytest.raises(MachineError):
        model.cooled()  # idle: a bug, not a late timer
    model.shutdown()
    changes = len(model.box.changes)
    for trigger in ("cooled", "spun_up", "run_empty", "trip", "shutdown", "refill"):
        model.trigger(trigger)  # no MachineError
    assert model.state == "stopping"
    assert len(model.box.changes) == changes  # nothing moved


def test_may_answers_as_may_trigger_in_every_state_and_guard_combination():
    triggers = sorted({t["trigger"] for t in machine.TRANSITIONS} | {"no_such_trigger"})
    for state in machine.STATES:
        for locked, count, switch in itertools.product((False, True), (None, 0, 4), (False, True)):
            box = FakeBox()
            box.host_locked, box.hopper.count, box.hopper.switch = locked, count, switch
            model = machine.LauncherModel(box)
            built = machine.build_machine(model)
            built.set_state(state)
            for trigger in triggers:
                expected = trigger in built.events and model.may_trigger(trigger)
                assert machine.may(built, model, trigger) == expected, (state, trigger)


def test_docs_state_machine_page_is_up_to_date():
    page = (ROOT / "docs" / "state-machine.md").read_text()
    assert page == machine.markdown(), (
        "docs/state-machine.md is stale: run `launcher diagram --markdown > docs/state-machine.md`"
    )


def test_mermaid_has_every_state_and_transition():
    text = machine.mermaid()
    assert text.splitlines()[:3] == ["---", "title: launcher", "---"]
    assert "stateDiagram-v2" in text
    for state in machine.STATES:
        assert f'state "{state}" as {state}' in text
    assert "cooldown --> locked: cooled [host_locked]" in text
    assert "Class " not in text  # no "current state" styling in the docs


def test_launcher_diagram_prints_the_mermaid():
    out = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "diagram"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out == machine.mermaid()


def test_the_triggers_declared_for_the_type_checker_are_the_tables() -> None:
    # LauncherModel declares (for mypy only) the trigger methods the machine binds that the
    # features call by name: each must be a trigger of TRANSITIONS, bound on a real model.
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(machine.LauncherModel))
    declared = {
        node.name
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.FunctionDef)
    }
    triggers = {t["trigger"] for t in machine.TRANSITIONS}
    assert "start_burst" in declared and declared - {"trigger"} <= triggers
    model = machine.LauncherModel()
    machine.build_machine(model)
    assert all(callable(getattr(model, name)) for name in declared)
