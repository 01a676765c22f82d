"""The launcher state machine: module-level STATES and TRANSITIONS tables and the launcher model.

The machine is data. ``transitions.Machine(queued=True, auto_transitions=False)`` builds it from the
tables below, so only the moves declared here exist and ``launcher diagram`` (and the generated
``docs/state-machine.md``) draw exactly what runs. State names are part of the wire protocol.

The model only decides *which* state comes next; what the box does on the way (outputs on and off,
events) is the features' business, reached through the named ``before``/``after`` callbacks that
the model forwards to its :class:`Box` (the daemon). Where a trigger applies is the table's to say:
a feature pulls a trigger that may not apply through ``Daemon.move`` (``may_trigger``), never
after testing the state name itself; pulled directly where the table has no move, it raises
(except in `HARMLESS_INVALID_IN`). Guards are named predicates on the model (``conditions`` /
``unless``), so the diagram shows them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from transitions import EventData, Machine, State

import i18n

STATES: list[str] = [
    "booting",  # config read, devices built, self-test running
    "idle",  # ready for a press
    "locked",  # the host forbids presses (dispense still works)
    "spinup",  # flywheel spinning up / feed motor soft start
    "ejecting",  # feed running, cards being counted at the exit sensor
    "cooldown",  # pause after a burst before the next press is served
    "jammed",  # mechanical jam, latched until cleared
    "empty",  # hopper empty, latched until loaded or cleared
    "fault",  # safety trip, latched until reset
    "stopping",  # shutting down: outputs off, devices closing
]

RESTING_STATES = ("idle", "locked")  # where a queued press is served
BUSY_STATES = ("spinup", "ejecting", "cooldown")
LATCHED_STATES = ("jammed", "empty", "fault")
_RUNNING = ["booting", "idle", "locked", "spinup", "ejecting", "cooldown", "jammed", "empty"]

# Order matters: for the same trigger and source the first entry whose conditions hold wins.
TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "booted", "source": "booting", "dest": "locked", "conditions": "host_locked"},
    {"trigger": "booted", "source": "booting", "dest": "idle"},
    {"trigger": "lock", "source": "idle", "dest": "locked"},
    {"trigger": "unlock", "source": "locked", "dest": "idle"},
    {
        "trigger": "start_burst",
        "source": ["idle", "locked"],
        "dest": "spinup",
        "after": "begin_spinup",
    },
    {"trigger": "spun_up", "source": "spinup", "dest": "ejecting", "after": "begin_feed"},
    {
        "trigger": "burst_done",
        "source": ["spinup", "ejecting"],
        "dest": "cooldown",
        "before": "outputs_off",
        "after": "begin_cooldown",
    },
    {"trigger": "cooled", "source": "cooldown", "dest": "locked", "conditions": "host_locked"},
    {"trigger": "cooled", "source": "cooldown", "dest": "idle"},
    {
        "trigger": "jam",
        "source": ["spinup", "ejecting"],
        "dest": "jammed",
        "before": "outputs_off",
    },
    {
        "trigger": "run_empty",
        "source": ["idle", "locked", "spinup", "ejecting", "cooldown"],
        "dest": "empty",
        "before": "outputs_off",
    },
    {"trigger": "clear", "source": "jammed", "dest": "locked", "conditions": "host_locked"},
    {"trigger": "clear", "source": "jammed", "dest": "idle"},
    # A person refilled the hopper by hand: the count is unknown until `load` (forget_count).
    {
        "trigger": "clear",
        "source": "empty",
        "dest": "locked",
        "conditions": "host_locked",
        "unless": "switch_empty",
        "before": "forget_count",
    },
    {
        "trigger": "clear",
        "source": "empty",
        "dest": "idle",
        "unless": "switch_empty",
        "before": "forget_count",
    },
    # The hopper itself says it has cards again (`load`, the switch released): no person needed.
    {
        "trigger": "refill",
        "source": "empty",
        "dest": "locked",
        "conditions": "host_locked",
        "unless": ["counted_empty", "switch_empty"],
    },
    {
        "trigger": "refill",
        "source": "empty",
        "dest": "idle",
        "unless": ["counted_empty", "switch_empty"],
    },
    {"trigger": "reset", "source": "fault", "dest": "locked", "conditions": "host_locked"},
    {"trigger": "reset", "source": "fault", "dest": "idle"},
    {"trigger": "trip", "source": _RUNNING, "dest": "fault", "before": "outputs_off"},
    {
        "trigger": "shutdown",
        "source": [*_RUNNING, "fault"],
        "dest": "stopping",
        "before": "outputs_off",
    },
]


# Where a trigger that does not apply is harmless rather than a bug (``ignore_invalid_triggers``):
# once ``stopping``, outputs are off and devices are closing, so a timer or switch event that was
# already queued (``cooled``, ``spun_up``, ``run_empty``...) has nothing left to move. Everywhere
# else a trigger the table does not allow raises ``MachineError``: features that pull a trigger
# which may not apply ask the table first (``Daemon.move`` / ``Daemon.may``).
HARMLESS_INVALID_IN = ("stopping",)


class Hopper(Protocol):
    """What the model's hopper guards read (firmware/hopper.py)."""

    count: int | None

    def switch_empty(self) -> bool: ...


class Box(Protocol):
    """What the model needs from the daemon: a lock flag, the hopper its guards read, and the
    work done on transitions."""

    @property
    def host_locked(self) -> bool: ...
    @property
    def hopper(self) -> Hopper: ...

    def begin_spinup(self) -> None: ...
    def begin_feed(self) -> None: ...
    def begin_cooldown(self) -> None: ...
    def outputs_off(self) -> None: ...
    def state_changed(self, source: str, dest: str, why: str) -> None: ...


class LauncherModel:
    """The model the machine drives; conditions and callbacks are forwarded to its box.

    Triggers are called with an optional ``why="..."`` keyword that ends up in the ``state`` event.
    """

    state: str

    if TYPE_CHECKING:
        # The machine binds one method per trigger in TRANSITIONS, and ``trigger(name)``: the
        # ones the features pull by name, declared for the type checker (each is a trigger of
        # the table: tests/firmware/test_machine.py).
        def trigger(self, name: str, /, *, why: str) -> bool: ...
        def booted(self, *, why: str) -> bool: ...
        def start_burst(self, *, why: str) -> bool: ...
        def spun_up(self, *, why: str) -> bool: ...
        def run_empty(self, *, why: str) -> bool: ...
        def shutdown(self, *, why: str) -> bool: ...

    def __init__(self, box: Box | None = None) -> None:
        self.box = box

    # conditions
    def host_locked(self, event: EventData) -> bool:
        """The host asked for the button to be locked."""
        return bool(self.box is not None and self.box.host_locked)

    def switch_empty(self, event: EventData) -> bool:
        """The hopper-empty switch (if fitted) reads empty."""
        return bool(self.box is not None and self.box.hopper.switch_empty())

    def counted_empty(self, event: EventData) -> bool:
        """The hopper count is known to be 0."""
        return bool(self.box is not None and self.box.hopper.count == 0)

    # callbacks
    def begin_spinup(self, event: EventData) -> None:
        """Spin up the flywheel / start the feed motor's soft start."""
        if self.box is not None:
            self.box.begin_spinup()

    def begin_feed(self, event: EventData) -> None:
        """Feed at full speed and count cards."""
        if self.box is not None:
            self.box.begin_feed()

    def begin_cooldown(self, event: EventData) -> None:
        """Arm the cooldown timer."""
        if self.box is not None:
            self.box.begin_cooldown()

    def outputs_off(self, event: EventData) -> None:
        """Every output off before entering a resting or latched state."""
        if self.box is not None:
            self.box.outputs_off()

    def forget_count(self, event: EventData) -> None:
        """Cleared by hand from ``empty``: a count of 0 becomes unknown until ``load``."""
        if self.box is not None and self.box.hopper.count == 0:
            self.box.hopper.count = None

    def announce(self, event: EventData) -> None:
        """After every state change: tell the box (it emits the ``state`` event)."""
        transition = event.transition
        if self.box is not None and transition is not None:
            why = str(event.kwargs.get("why", event.event.name))
            self.box.state_changed(transition.source, str(transition.dest), why)


def build_machine(model: LauncherModel, *, graph: bool = False) -> Machine:
    """The launcher machine over ``model``; ``graph=True`` gives a mermaid GraphMachine."""
    states = [State(name, ignore_invalid_triggers=name in HARMLESS_INVALID_IN) for name in STATES]
    kwargs: dict[str, Any] = {
        "model": model,
        "states": states,
        "transitions": TRANSITIONS,
        "initial": "booting",
        "auto_transitions": False,
        "queued": True,
        "send_event": True,
        "after_state_change": "announce",
    }
    if graph:
        from transitions.extensions import GraphMachine

        return GraphMachine(
            **kwargs, graph_engine="mermaid", show_conditions=True, title="launcher"
        )
    return Machine(**kwargs)


def may(machine: Machine, model: LauncherModel, trigger: str) -> bool:
    """``model.may_trigger(trigger)`` read off ``machine``'s own transitions without building
    an event (the guards here never read theirs): the press path asks twice per press, and
    ``may_trigger`` costs some 10 us each."""
    event = machine.events.get(trigger)
    if event is None:
        return False
    return any(
        all(bool(_guard(model, c.func)(None)) == c.target for c in transition.conditions)
        for transition in event.transitions.get(model.state, ())
    )


def _guard(model: LauncherModel, func: str | Callable[..., Any]) -> Callable[..., Any]:
    """A condition as the table names it: a predicate of the model (always, in TRANSITIONS)."""
    return getattr(model, func) if isinstance(func, str) else func


def mermaid() -> str:
    """The state diagram as mermaid text, generated from STATES and TRANSITIONS."""
    model = LauncherModel()
    build_machine(model, graph=True)
    text = model.get_graph().draw(None)  # type: ignore[attr-defined]
    # Drop the "current state" styling: the docs show the machine, not one run of it.
    lines = [line.rstrip() for line in text.splitlines() if not line.strip().startswith("Class ")]
    if len(lines) > 2 and lines[0] == lines[2] == "---" and ":" not in lines[1]:
        lines[1] = f"title: {lines[1]}"  # mermaid front matter is YAML: a mapping
    return "\n".join(lines).strip() + "\n"


def markdown() -> str:
    """The whole of docs/state-machine.md (regenerate with ``launcher diagram --markdown``)."""
    rows = "\n".join(
        f"| `{t['trigger']}` | {_names(t['source'])} | `{t['dest']}` | "
        f"{_names(t.get('conditions', ''))} | {_names(t.get('unless', ''))} | "
        f"{_names(t.get('before', ''))} | "
        f"{_names(t.get('after', ''))} |"
        for t in TRANSITIONS
    )
    return (
        "# Launcher state machine\n\n"
        "Generated from `STATES` and `TRANSITIONS` in `firmware/machine.py` by\n"
        "`launcher diagram --markdown > docs/state-machine.md`; `tests/firmware/test_machine.py`\n"
        "fails when this page is stale. State names are part of the wire protocol.\n\n"
        "```mermaid\n" + mermaid() + "```\n\n"
        "For the same trigger and source the first row whose conditions hold (and none of its\n"
        "`unless` guards) wins. A trigger the table does not allow from a state raises, except\n"
        f"in {_names(list(HARMLESS_INVALID_IN))}, where it is ignored.\n\n"
        "| trigger | from | to | condition | unless | before | after |\n"
        "|---|---|---|---|---|---|---|\n" + rows + "\n"
    )


def _names(value: str | list[str]) -> str:
    items = [value] if isinstance(value, str) else list(value)
    return ", ".join(f"`{item}`" for item in items if item)


def _cmd_diagram(args: argparse.Namespace) -> int:
    print(markdown() if args.markdown else mermaid(), end="")
    return 0


def register(subparsers: Any) -> None:
    """Add ``launcher diagram``."""
    parser = subparsers.add_parser(
        "diagram",
        help=i18n._("print the state diagram (mermaid) generated from the state tables"),
        description=i18n._(
            "Print the launcher state diagram as mermaid, generated from the tables in "
            "firmware/machine.py."
        ),
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help=i18n._("print the whole docs/state-machine.md page instead of the bare diagram"),
    )
    parser.set_defaults(func=_cmd_diagram)
