"""How a feature of the box plugs into the daemon, in the manner of a Klipper extra.

A feature owns one concept's state (the press queue, the burst in flight, the hopper, safety,
feedback, ...) and is built by the daemon (``firmware/daemon.py``, the composition root) with the
daemon as ``box``. In its ``__init__`` it registers what it owns, and nothing else reaches in:

- ``box.on_event(kind, fn)``: ``fn(event)`` runs on the loop thread for loop events and timer
  expiries of that ``kind`` (one owner per kind). Timers are the loop's:
  ``box.loop.set_timer(name, delay_ms, kind)``, with a kind the feature registered.
- ``box.serve(op, fn)``: the serial op ``op`` (a name in ``wire.ops.OPS``): ``fn(args) -> dict``
  of reply fields, or raise ``CommandError(code, message)``. The daemon builds the reply.
- ``box.on_state(fn)``: ``fn(source, dest, why)`` after every state change, once its ``state``
  event is journaled (feedback, latches).
- ``box.move(trigger, why)`` / ``box.may(trigger)``: pull a trigger where the transitions table
  (``firmware/machine.py``) has a move for it from here, or ask whether it has; the table's
  sources and guards, not a test of the state name, say where a trigger applies.
- ``box.subscribe(fn)``: ``fn(event)`` for every journaled event (feedback reacts to a dry
  ``fire``; the link and the bench subscribe the same way).

``status()`` gives the feature's fields of the ``status`` reply. Features reach one another
through the box's attributes (``box.presses``, ``box.inflight``, ``box.driver``, ``box.safety``,
``box.hopper``, ``box.feedback``, ``box.selftest``, ``box.aiming``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from i18n import Text

if TYPE_CHECKING:
    from firmware.daemon import Daemon


class Feature:
    """A part of the box that owns its state; see the module docstring for the interface."""

    def __init__(self, box: Daemon) -> None:
        self.box = box

    def status(self) -> dict[str, Any]:
        """This feature's fields of the ``status`` reply (none by default)."""
        return {}


def int_arg(args: dict, name: str, lo: int | None, hi: int | None) -> int:
    """The whole-number argument ``name`` of an op, within ``lo..hi`` (the op table's least,
    `wire.ops.bounds`, to the box's own most, from its config); ``CommandError("BAD_ARG")``
    naming the range otherwise."""
    assert lo is not None and hi is not None, "a range the table or the config bounds"
    from common.errors import CommandError

    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        text = Text(
            "{name} must be a whole number from {lo} to {hi}, got {value}",
            name=name,
            lo=lo,
            hi=hi,
            value=repr(value),
        )
        raise CommandError("BAD_ARG", text)
    if not lo <= value <= hi:
        text = Text(
            "{name} must be from {lo} to {hi}, got {value}", name=name, lo=lo, hi=hi, value=value
        )
        raise CommandError("BAD_ARG", text)
    return value
