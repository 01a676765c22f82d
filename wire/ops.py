"""The op table: every command the box serves, in one place (pure, standard library only).

Each :class:`Op` names its arguments (with their shape), the fields of its reply when it
succeeds, the error codes it may answer besides the general ones, and one line of help. The wire
format's checks (``wire/protocol.py``: known op, argument names and shapes, which replies are
stored), the box (a feature may only ``serve`` an op declared here, and every one is served),
``launcher send`` (its list of operations and their arguments) and docs/protocol.md (checked
against this table by ``tests/wire/test_ops.py``) all read it. Ranges that depend on a box's
config (``[limits] max_burst``, seats) are the box's to check and name.
"""

from __future__ import annotations

from dataclasses import dataclass

from i18n import N_


@dataclass(frozen=True)
class Arg:
    """An argument of an op: its name, shape (``int``, ``int>=0``, ``string|null``, ``object``)
    and whether it must be given."""

    name: str
    shape: str
    required: bool = False


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

    @property
    def arg_names(self) -> tuple[str, ...]:
        """The names of its arguments, in order."""
        return tuple(a.name for a in self.args)


_COUNT = Arg("count", "int", required=True)

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
        args=(Arg("seat", "int", required=True),),
        reply=("seat", "angle"),
        errors=("BAD_ARG",),
        send_args=("seat",),
    ),
    Op(
        "load",
        N_("COUNT cards were put in the hopper (with --total: it now holds COUNT)"),
        args=(Arg("count", "int"), Arg("total", "int")),  # exactly one of them
        reply=("hopper",),
        send_args=("count",),
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
BOX_OPS: tuple[str, ...] = tuple(op.name for op in TABLE if not op.by_link)
QUERY_OPS: frozenset[str] = frozenset(op.name for op in TABLE if op.query)
