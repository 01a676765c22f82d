"""Which box a host command talks to: `--port PORT|mock|none`, checked and opened in one place.

`unoattack table` and `unoattack serve` take their `--port` from here (`add_box_arguments`;
`serve` also takes `mock`, with `--speed` and `--seed`); `unoattack demo` starts the same mock
box:

- a serial device or a pyserial URL: refused before anything starts when it can never be a
  box's port (wire/ports.py `check_port`, one line, exit 2), then connected; a resumed
  game asks the box to replay every event after the last one it applied (`connect_box`);
- `mock`: `launcher run --mock --port pty` started as a child exactly as `unoattack demo`
  starts it (engine/demo.py `MockBox`, on the demo's config: `mock_config`), so that it works
  on any laptop; stopped on every way out;
- `none`: no box; the referee is told what each press fired (`fired N`).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.errors import InputError
from firmware.commandline import decimal, whole_number
from i18n import _, number

__all__ = [
    "PORT_WORDS",
    "OpenBox",
    "add_box_arguments",
    "check_box_arguments",
    "check_speed",
    "connect_box",
    "mock_box",
    "mock_config",
    "open_box",
]

# What `--port` may take besides a port (`--help` says what each means).
PORT_WORDS = ("mock", "none")
MOCK_TIMEOUT_S = 10.0  # the mock box's replies, on a loaded machine


def add_box_arguments(p: argparse.ArgumentParser, *, mock: bool) -> None:
    """`--port PORT|none`; with `mock`, `--port mock` too and `--speed` and `--seed` for the
    mock box. What the command takes is kept in the parsed arguments (`box_words`)."""
    from engine.demo import DEFAULT_SPEED

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


def check_speed(speed: float) -> None:
    """The mock box's `--speed`: InputError (exit 2) unless above 0 and at most 1000."""
    if not 0 < speed <= 1000:
        raise InputError(f"--speed {speed:g}: above 0 and at most 1000")


def check_box_arguments(args: argparse.Namespace) -> str:
    """`--port` (and `--speed`) checked before anything starts: ``mock``, ``none`` (as the
    command takes them, in any case) or the port. A name that can never be a serial port is a
    one-line usage error (exit 2) in the very words `launcher send` and `watch` use."""
    from wire.client import BoxError
    from wire.ports import PortError, check_port

    if hasattr(args, "speed"):
        check_speed(args.speed)
    if args.port.lower() in args.box_words:
        return str(args.port.lower())
    try:
        return check_port(args.port)
    except PortError as exc:  # `BAD_PORT: ...`, exit 2, as every command that takes a port
        raise BoxError(exc.code, str(exc)) from None


def mock_config(*, speed: float, players: int, seed: int) -> str:
    """The config the mock box runs with: the default launcher.toml, its timings divided by
    `speed`, one aiming angle per seat, the jam model and plant seeded from `seed`."""
    from engine.demo import default_config_path, demo_config

    text = default_config_path().read_text(encoding="utf-8")
    return demo_config(text, speed=speed, players=players, seed=seed)


def connect_box(port: str, saved: Any | None = None, *, timeout: float = 5.0) -> Any:
    """A connected `BoxClient` on `port`. For a saved game (`engine.table.StateFile`) it asks
    the box to replay every event after the last one that game applied: a press made while the
    host was down still counts, and none counts twice. A name that cannot be a serial port is a
    usage error."""
    from wire.client import BoxClient, BoxError

    try:
        client = BoxClient(port, timeout=timeout)
    except BoxError as exc:  # BAD_PORT: a name that can never be a port, the user's mistake
        raise InputError(str(exc)) from None
    resume = saved.last_event if saved is not None else {}
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
    return client


@contextlib.contextmanager
def mock_box(config_text: str) -> Iterator[tuple[Any, Any]]:
    """The mock box (`engine.demo.MockBox`) started with `config_text` and a `BoxClient`
    connected to it; both are stopped on the way out, whatever happens (the box's exit code
    stays in `box.proc`)."""
    from engine.demo import MockBox

    box = MockBox(config_text)
    client: Any = None
    try:
        client = connect_box(box.start(), timeout=MOCK_TIMEOUT_S)
        yield box, client
    finally:
        if client is not None:
            client.close()
        box.cleanup()


@dataclass
class OpenBox:
    """The box a command talks to: `client` (a connected `BoxClient`, None for `none`), its
    `port` (the mock box's pty for `mock`) and the `mock` box child, if one was started."""

    client: Any | None
    port: str | None
    mock: Any | None = None


@contextlib.contextmanager
def open_box(args: argparse.Namespace, saved: Any | None = None) -> Iterator[OpenBox]:
    """The box `--port` names (`check_box_arguments` first), for the game in `saved` (None: a
    new one); closed, and a mock box stopped, on the way out. A new mock box has nothing to
    replay."""
    port = check_box_arguments(args)
    if port == "none":
        yield OpenBox(None, None)
        return
    if port == "mock":
        players = len(args.players.split(","))
        config = mock_config(speed=args.speed, players=players, seed=args.seed)
        with mock_box(config) as (box, client):
            yield OpenBox(client, client.port, box)
        return
    client = connect_box(port, saved)
    try:
        yield OpenBox(client, port)
    finally:
        client.close()
