"""Which box a host command talks to: `--port PORT|mock|none`, checked and opened in one place.

`unoattack table` and `unoattack serve` take their `--port` from here (`add_box_arguments`;
`serve` also takes `mock`, with `--speed` and `--seed`); `unoattack demo` starts the same mock
box:

- a serial device or a pyserial URL: refused before anything starts when it can never be a
  box's port (wire/ports.py `check_port`, one line, exit 2), then connected; a resumed
  game asks the box to replay every event after the last one it applied (`connect_box`);
- `mock`: `launcher run --mock --port pty` started as a child exactly as `unoattack demo`
  starts it (engine/mockbox.py `MockBox`, on its config: `mock_config`), so that it works
  on any laptop; stopped on every way out;
- `none`: no box; the referee is told what each press fired (`fired N`).

`BoxPort` is what the host's table needs of a connected box (`wire.client.BoxClient` is one).
"""

from __future__ import annotations

import argparse
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from common.commandline import decimal, whole_number
from engine.errors import InputError
from engine.mockbox import DEFAULT_SPEED, MockBox, check_speed, mock_config
from i18n import _, number
from wire.ports import PortError, check_port

if TYPE_CHECKING:
    # Imported where a box is connected: pyserial and the client's journal (sqlite3) are a
    # sixth of what `unoattack --help` would import otherwise.
    from wire.client import BoxClient

__all__ = [
    "PORT_WORDS",
    "BoxPort",
    "OpenBox",
    "add_box_arguments",
    "check_box_arguments",
    "connect_box",
    "mock_box",
    "open_box",
]


class BoxPort(Protocol):
    """A connected box, as the host's table uses it (`wire.client.BoxClient`)."""

    port: str
    box: dict[str, Any]  # the box's last hello reply: its event `stream` and newest `seq`

    def events(self, timeout: float | None = None) -> Iterator[dict[str, Any]]: ...
    def press(self) -> int: ...
    def dispense(self, n: int) -> int: ...
    def lock(self) -> dict[str, Any]: ...
    def unlock(self) -> dict[str, Any]: ...
    def aim(self, seat: int) -> dict[str, Any]: ...
    def load(self, count: int | None = None, total: int | None = None) -> dict[str, Any]: ...
    def clear(self) -> dict[str, Any]: ...
    def status(self) -> dict[str, Any]: ...
    def command(self, op: str, /, **args: Any) -> dict[str, Any]: ...  # the page's box panel
    def raise_if_gone(self) -> None: ...  # BoxError once the box can never come back


# What `--port` may take besides a port (`--help` says what each means).
PORT_WORDS = ("mock", "none")
MOCK_TIMEOUT_S = 10.0  # the mock box's replies, on a loaded machine


def add_box_arguments(p: argparse.ArgumentParser, *, mock: bool) -> None:
    """`--port PORT|none`; with `mock`, `--port mock` too and `--speed` and `--seed` for the
    mock box. What the command takes is kept in the parsed arguments (`box_words`)."""
    p.set_defaults(box_words=tuple(w for w in PORT_WORDS if mock or w != "mock"))
    if mock:
        port_help = _(
            "the box's serial port (or a pyserial URL), `mock` (a box on mock pins, started as "
            "`unoattack demo` starts it) or `none` (no box)"
        )
    else:
        port_help = _("the box's serial port (or a pyserial URL), `none` (no box)")
    p.add_argument("--port", required=True, help=port_help)
    if not mock:
        return
    p.add_argument(
        "--speed",
        type=decimal,
        default=DEFAULT_SPEED,
        help=_("--port mock: divide the mock box's timings by this (default {speed})").format(
            speed=number(DEFAULT_SPEED)
        ),
    )
    p.add_argument(
        "--seed", type=whole_number, default=1, help=_("--port mock: the mock box's seed (1)")
    )


def check_box_arguments(args: argparse.Namespace) -> str:
    """`--port` (and `--speed`) checked before anything starts: ``mock``, ``none`` (as the
    command takes them, in any case) or the port. A name that can never be a serial port is a
    one-line usage error (exit 2) in the very words `launcher send` and `watch` use."""
    if hasattr(args, "speed"):
        check_speed(args.speed)
    if args.port.lower() in args.box_words:
        return str(args.port.lower())
    try:
        return check_port(args.port)
    except PortError as exc:  # `BAD_PORT: ...`, exit 2, as every command that takes a port
        from wire.client import BoxError

        raise BoxError(exc.code, str(exc)) from None


def connect_box(
    port: str,
    resume: dict[str, Any] | None = None,
    *,
    timeout: float = 5.0,
    halt: threading.Event | None = None,
) -> BoxClient:
    """A connected `BoxClient` on `port`. For a saved game, `resume` is the last box event it
    applied (``{"stream", "seq"}``): the box replays every event after it, so a press made
    while the host was down still counts, and none counts twice. A name that cannot be a
    serial port is a usage error. `halt`: the command's stop (the client's waits stop at a
    safe point once it is set: wire/client.py)."""
    from wire.client import BoxClient, BoxError

    try:
        client = BoxClient(port, timeout=timeout, halt=halt)
    except BoxError as exc:  # BAD_PORT: a name that can never be a port, the user's mistake
        raise InputError(str(exc)) from None
    resume = resume or {}
    if resume.get("stream"):
        client.position.stream = resume["stream"]
        client.position.seq = int(resume.get("seq") or 0)
    try:
        client.connect()
    except BoxError as exc:
        client.close()
        if exc.code == "BAD_PORT":  # not a port name pyserial knows: the user's mistake
            raise InputError(str(exc)) from None
        raise
    except KeyboardInterrupt:  # stopped (`halt`) while connecting
        client.close()
        raise
    return client


@contextlib.contextmanager
def mock_box(
    config_text: str, *, halt: threading.Event | None = None
) -> Iterator[tuple[MockBox, BoxClient]]:
    """The mock box (`engine.mockbox.MockBox`) started with `config_text` and a `BoxClient`
    connected to it (`halt`: as for `connect_box`); both are stopped on the way out, whatever
    happens (the box's exit code stays in `box.proc`)."""
    box = MockBox(config_text)
    client: BoxClient | None = None
    try:
        client = connect_box(box.start(), timeout=MOCK_TIMEOUT_S, halt=halt)
        yield box, client
    finally:
        if client is not None:
            client.close()
        box.cleanup()


@dataclass
class OpenBox:
    """The box a command talks to: `client` (a connected `BoxClient`, None for `none`), its
    `port` (the mock box's pty for `mock`) and the `mock` box child, if one was started."""

    client: BoxClient | None
    port: str | None
    mock: MockBox | None = None


@contextlib.contextmanager
def open_box(
    args: argparse.Namespace,
    resume: dict[str, Any] | None = None,
    *,
    halt: threading.Event | None = None,
) -> Iterator[OpenBox]:
    """The box `--port` names (`check_box_arguments` first), for a game whose last box event
    applied is `resume` (None: a new game); closed, and a mock box stopped, on the way out. A
    new mock box has nothing to replay. `halt`: as for `connect_box`."""
    port = check_box_arguments(args)
    if port == "none":
        yield OpenBox(None, None)
        return
    if port == "mock":
        players = len(args.players.split(","))
        config = mock_config(speed=args.speed, players=players, seed=args.seed)
        with mock_box(config, halt=halt) as (box, client):
            yield OpenBox(client, client.port, box)
        return
    client = connect_box(port, resume, halt=halt)
    try:
        yield OpenBox(client, port)
    finally:
        client.close()
