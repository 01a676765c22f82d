"""The op table: every command the box serves, in one place (pure, standard library only).

Each :class:`Op` names its arguments (with their shape), the fields of its reply when it
succeeds, the error codes it may answer besides the general ones, and one line of help. The wire
format's checks (``wire/protocol.py``: known op, argument names and shapes, which replies are
stored), the box (a feature may only ``serve`` an op declared here, and every one is served; a
whole number's bounds come from here), ``launcher send`` (its list of operations and their
arguments, checked by the same `Arg.problem` before any port is opened) and docs/protocol.md
(checked against this table by ``tests/wire/test_ops.py``) all read it. Ranges that depend on a
box's config (``[limits] max_burst``, seats) are the box's to check and name; a shape says only
what no box can take.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from i18n import N_, Text

# `int`, `int>=N`, `int N..M`: a whole number (never a bool), at least N, at most M.
_WHOLE = re.compile(r"int(?:>=(-?\d+)|\s+(-?\d+)\.\.(-?\d+))?")


@dataclass(frozen=True)
class Arg:
    """An argument of an op: its name, shape and whether it must be given. Shapes: ``int``
    (a whole number), ``int>=N`` (at least N), ``int N..M`` (from N to M), ``string|null`` (a
    non-empty string or null), ``object`` (a non-empty JSON object)."""

    name: str
    shape: str
    required: bool = False

    def __post_init__(self) -> None:
        if self.shape not in ("string|null", "object") and not _WHOLE.fullmatch(self.shape):
            raise ValueError(f"{self.name}: unknown shape {self.shape!r}")

    @property
    def bounds(self) -> tuple[int | None, int | None]:
        """The least and the most a whole-number argument may be (None: no such bound)."""
        found = _WHOLE.fullmatch(self.shape)
        if found is None:
            return None, None
        least, low, high = found.groups()
        if low is not None:
            return int(low), int(high)
        return (None if least is None else int(least)), None

    def problem(self, value: object, *, called: str | None = None) -> Text | None:
        """What makes `value` impossible for this argument, or None: the one check of the wire
        (the box refuses the command, BAD_ARG) and of `launcher send` (before it opens a port).
        `called`: the argument's name as the reader knows it (`COUNT` on a command line)."""
        name, shown = called or self.name, f"{value!r:.40}"
        if self.shape == "string|null":
            if value is None or (isinstance(value, str) and value):
                return None
            return Text(
                "{name} must be a non-empty string or null, got {value}", name=name, value=shown
            )
        if self.shape == "object":
            if isinstance(value, dict) and value:
                return None
            return Text("{name} must be a non-empty object, got {value}", name=name, value=shown)
        if isinstance(value, bool) or not isinstance(value, int):
            return Text("{name} must be a whole number, got {value}", name=name, value=shown)
        least, most = self.bounds
        if least is not None and most is not None and not least <= value <= most:
            return Text(
                "{name} must be from {lo} to {hi}, got {value}",
                name=name,
                lo=least,
                hi=most,
                value=value,
            )
        if least is not None and value < least:
            return Text(
                "{name} must be at least {least}, got {value}", name=name, least=least, value=value
            )
        return None


@dataclass(frozen=True)
class Op:
    """One command of the protocol."""

    name: str
    help: str  # one line, for `launcher send --help` (marked for the catalogs, shown with _)
    args: tuple[Arg, ...] = ()
    reply: tuple[str, ...] = ()  # result fields of an ok reply
    errors: tuple[str, ...] = ()  # codes besides the general ones (BAD_ARG, INTERNAL, ...)
    query: bool = False  # only asks: the reply is not stored, a repeated id is answered afresh
    by_link: bool = False  # answered by the link itself, not the daemon's features
    send_args: tuple[str, ...] = ()  # positional arguments of `launcher send OP`
    one_of: tuple[str, ...] = ()  # exactly one of these arguments is given (`load`)

    @property
    def arg_names(self) -> tuple[str, ...]:
        """The names of its arguments, in order."""
        return tuple(a.name for a in self.args)

    def problem(self, args: Mapping[str, object]) -> Text | None:
        """What the arguments break together (no one argument's shape says it: `one_of`), or
        None: the wire's check (`protocol.validate_args`) and the box's (the feature's op)."""
        if self.one_of and sum(name in args for name in self.one_of) != 1:
            return Text("give exactly one of {names}", names=", ".join(self.one_of))
        return None

    def arg(self, name: str) -> Arg:
        """Its argument called `name` (KeyError if it has none)."""
        for declared in self.args:
            if declared.name == name:
                return declared
        raise KeyError(f"{self.name} has no argument {name!r}")


MAX_LOAD = 10_000  # the most cards one `load` may name (no hopper holds that many)
_COUNT = Arg("count", "int>=1", required=True)  # the most is the box's [limits] max_burst

TABLE: tuple[Op, ...] = (
    Op(
        "hello",
        N_("handshake: the host's last acked position; the box replays after it"),
        args=(Arg("stream", "string|null"), Arg("seq", "int>=0")),
        reply=("stream", "boot", "seq", "acked", "oldest", "state"),
        query=True,
        by_link=True,
    ),
    Op(
        "status",
        N_("state, hopper, dry streak, queue, aim, fault"),
        reply=(
            "state",
            "hopper",
            "dry_streak",
            "queue",
            "aim",
            "fault",
            "jam",
            "uptime_ms",
            "locked",
            "ejector",
            "door",
            "version",
        ),
        query=True,
    ),
    Op("press", N_("press the button; prints the fire result"), reply=("press_id",)),
    Op(
        "dispense",
        N_("fire exactly COUNT cards; prints the fire result"),
        args=(_COUNT,),
        reply=("press_id",),
        errors=("JAMMED", "EMPTY", "FAULT", "BUSY"),
        send_args=("count",),
    ),
    Op("lock", N_("forbid presses"), reply=("state",)),
    Op("unlock", N_("allow presses"), reply=("state",)),
    Op(
        "aim",
        N_("turn the aiming servo to SEAT (0 first)"),
        args=(Arg("seat", "int>=0", required=True),),  # the most: the box's seats - 1
        reply=("seat", "angle"),
        errors=("BAD_ARG",),
        send_args=("seat",),
    ),
    Op(
        "load",
        N_("COUNT cards were put in the hopper (with --total: it now holds COUNT)"),
        args=(Arg("count", f"int 1..{MAX_LOAD}"), Arg("total", f"int 0..{MAX_LOAD}")),
        reply=("hopper",),
        send_args=("count",),
        one_of=("count", "total"),  # cards added, or the hopper's new total
    ),
    Op("clear", N_("leave jammed / empty"), reply=("state",), errors=("FAULT", "EMPTY")),
    Op("reset", N_("leave fault"), reply=("state",), errors=("EMPTY",)),
    Op(
        "model.get",
        N_("show the jam-model parameters"),
        reply=("params", "dry_streak"),
        query=True,
    ),
    Op(
        "model.set",
        N_("change jam-model parameters (not the limits)"),
        args=(Arg("params", "object", required=True),),
        reply=("params",),
        errors=("BAD_ARG",),
    ),
    Op(
        "selftest",
        N_("run the self-test"),
        reply=("passed", "checks"),
        errors=("BUSY", "FAULT"),
        query=True,
    ),
    # The box's personality settings (docs/personality.md); kept beside the journal.
    Op(
        "settings.get",
        N_("show the personality settings in force and what is stored"),
        reply=("settings", "stored", "jam_stored", "persistent"),
        query=True,
    ),
    Op(
        "settings.set",
        N_("change personality settings (never a limit); kept for the next start"),
        args=(Arg("settings", "object", required=True),),
        reply=("settings", "stored", "jam_stored", "persistent"),
        errors=("BAD_ARG",),
    ),
    Op(
        "settings.reset",
        N_("factory reset: forget stored settings and jam parameters"),
        reply=("settings", "stored", "jam_stored", "persistent"),
    ),
)

OPS: dict[str, Op] = {op.name: op for op in TABLE}


def bounds(op: str, arg: str) -> tuple[int | None, int | None]:
    """The least and the most the table lets `arg` of `op` be (a feature's range starts there)."""
    return OPS[op].arg(arg).bounds


BOX_OPS: tuple[str, ...] = tuple(op.name for op in TABLE if not op.by_link)
QUERY_OPS: frozenset[str] = frozenset(op.name for op in TABLE if op.query)
