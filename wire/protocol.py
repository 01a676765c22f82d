"""Wire format of the serial link between the box and the host (pure, standard library only).

One frame per line: ``BODY*CCCCCCCC\\n``. BODY is a compact JSON object in printable ASCII and
CCCCCCCC is ``zlib.crc32(BODY)`` as 8 upper-case hex digits. A line holds at most
`MAX_LINE` bytes including the newline. Every message carries ``"v": 1`` and a ``"type"``:
``event`` (box to host), ``cmd`` (host to box), ``reply`` (box to host), ``ack`` and ``nak``
(host to box). docs/protocol.md is the reference for people writing a client; this module is
the reference for the code. The host (engine/) imports this module, so it must stay free of
GPIO and serial libraries.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from i18n import Text
from wire import ops

VERSION = 1
MAX_LINE = 512  # bytes per line, newline included
CRC_LEN = 8
MAX_ID_LEN = 64  # command ids are short strings (a uuid4 hex is 32)

# Error codes carried in ``reply.error.code``.
BAD_CRC = "BAD_CRC"
LINE_TOO_LONG = "LINE_TOO_LONG"
BAD_FRAME = "BAD_FRAME"
UNKNOWN_OP = "UNKNOWN_OP"
BAD_ARG = "BAD_ARG"
LOCKED = "LOCKED"
JAMMED = "JAMMED"
EMPTY = "EMPTY"
FAULT = "FAULT"
BUSY = "BUSY"
VERSION_ERROR = "VERSION"
INTERNAL = "INTERNAL"
ERROR_CODES: tuple[str, ...] = (
    BAD_CRC,
    LINE_TOO_LONG,
    BAD_FRAME,
    UNKNOWN_OP,
    BAD_ARG,
    LOCKED,
    JAMMED,
    EMPTY,
    FAULT,
    BUSY,
    VERSION_ERROR,
    INTERNAL,
)

TYPES: tuple[str, ...] = ("event", "cmd", "reply", "ack", "nak")
CMD_KEYS = frozenset({"v", "type", "id", "op"})

EVENT_KINDS: tuple[str, ...] = (
    "hello",
    "state",
    "press",
    "fire",
    "jam",
    "empty",
    "fault",
    "refill",
    "stray",
)
FIRE_REASONS: tuple[str, ...] = (
    "fired",
    "dry",
    "jammed",
    "empty",
    "locked",
    "fault",
    "queue_full",
    "stopping",
    "interrupted",
)
OPS: tuple[str, ...] = tuple(ops.OPS)  # the op table (wire/ops.py) names them
# Keys `model.set` may change: the jam-model parameters and nothing else, so no message from
# the host can reach a safety limit ([limits] comes from the config file only).
JAM_PARAM_KEYS: tuple[str, ...] = (
    "mode",
    "base",
    "step",
    "max_dry",
    "burst_weights",
    "pressure_bonus",
    "max_burst",
    "pattern",
    "count",
    "seed",
)
# Ops that only ask: their replies are not stored, so a repeated id is answered afresh (a
# stored `status` would be stale, a stored `hello` would not rewind the replay).
QUERY_OPS: frozenset[str] = ops.QUERY_OPS


class ProtocolError(ValueError):
    """A line or message that breaks the protocol. `code` is one of `ERROR_CODES`; `id` is the
    command id when it could be read (so the error reply can name it), else None."""

    def __init__(self, code: str, message: str, id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id


@dataclass(frozen=True)
class Frame:
    """A valid, checked message read from the wire."""

    message: dict[str, Any]
    raw: bytes = b""


@dataclass(frozen=True)
class FrameErrorInfo:
    """A line that was dropped: why (`code`, `message`), the command id if readable, the
    message `type` if the body was a JSON object with a string type, and the first bytes of the
    line for logs."""

    code: str
    message: str
    id: str | None = None
    raw: bytes = b""
    type: str | None = None


# ---------------------------------------------------------------------------------------------
# Encoding


def crc_hex(body: bytes) -> str:
    """CRC-32 (zlib / IEEE 802.3, the one in PNG and Ethernet) of BODY as 8 upper-case hex."""
    return f"{zlib.crc32(body) & 0xFFFFFFFF:08X}"


def encode_body(message: Mapping[str, Any]) -> bytes:
    """Compact, printable-ASCII JSON of `message` (no spaces, non-ASCII and DEL escaped)."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    # json escapes control characters and non-ASCII but not DEL; it can only occur in a string
    text = text.replace("\x7f", "\\u007f")
    return text.encode("ascii")


def encode(message: Mapping[str, Any]) -> bytes:
    """One complete line ``BODY*CRC\\n`` for `message`. Raises ValueError when the message is not
    a JSON object or the line would exceed `MAX_LINE` bytes."""
    if not isinstance(message, Mapping):
        raise ValueError(f"a frame body must be a JSON object, got {type(message).__name__}")
    body = encode_body(message)
    line = body + b"*" + crc_hex(body).encode("ascii") + b"\n"
    if len(line) > MAX_LINE:
        raise ValueError(f"frame is {len(line)} bytes, at most {MAX_LINE} allowed")
    return line


def cmd(cmd_id: str, op: str, /, **args: Any) -> dict[str, Any]:
    """A command message (host to box); `args` become top-level fields."""
    return {"v": VERSION, "type": "cmd", "id": cmd_id, "op": op, **args}


def result_ok(**fields: Any) -> dict[str, Any]:
    """What a command handler's success comes to: ``{"ok": true, **fields}`` (no id yet)."""
    return {"ok": True, **fields}


def result_error(
    code: str, message: str | Text, *, text: Text | None = None, **extra: Any
) -> dict[str, Any]:
    """What a failed command comes to (``extra``: reply fields sent with the error); `code`
    must be one of `ERROR_CODES`. A `Text` message (or `text`) also travels as the error's
    ``text`` (template and arguments), so the host can show it in its reader's language; the
    ``message`` is always its English."""
    if code not in ERROR_CODES:
        raise ValueError(f"unknown error code {code!r}; allowed: {', '.join(ERROR_CODES)}")
    if isinstance(message, Text):
        text = text or message
    error: dict[str, Any] = {"code": code, "message": str(message)}
    if text is not None:
        error["text"] = text.to_wire()
    return {"ok": False, "error": error, **extra}


def without_text(message: dict[str, Any]) -> dict[str, Any]:
    """A reply without its error's ``text`` (the English ``message`` alone): what is sent when
    the template and arguments would not fit in one frame."""
    error = message.get("error")
    if not isinstance(error, dict) or "text" not in error:
        return message
    return {**message, "error": {k: v for k, v in error.items() if k != "text"}}


def reply(cmd_id: str | None, result: Mapping[str, Any]) -> dict[str, Any]:
    """The wire reply to `cmd_id` carrying `result` (from `result_ok` / `result_error`). The one
    builder of replies: the reply the box stores with a command's effect and the one it sends
    are both made here, so they cannot differ."""
    message = {"v": VERSION, "type": "reply", "id": cmd_id, **result}
    message["type"], message["id"] = "reply", cmd_id  # a result cannot rename its reply
    return message


def reply_ok(cmd_id: str | None, **fields: Any) -> dict[str, Any]:
    """A successful reply carrying `fields`."""
    return reply(cmd_id, result_ok(**fields))


def reply_error(cmd_id: str | None, code: str, message: str) -> dict[str, Any]:
    """A failed reply; `code` must be one of `ERROR_CODES`."""
    return reply(cmd_id, result_error(code, message))


def command_key(op: str, args: Mapping[str, Any]) -> str:
    """What a command asks for (`op` and its arguments) as one canonical string: the box keeps it
    with a stored reply so that an id reused for another command is refused, not answered with
    the first command's reply."""
    return json.dumps({"op": op, **args}, sort_keys=True, separators=(",", ":"))


def ack(seq: int, stream: str | None = None) -> dict[str, Any]:
    """Cumulative acknowledgement: the host holds every event up to and including `seq`."""
    msg: dict[str, Any] = {"v": VERSION, "type": "ack", "seq": seq}
    if stream is not None:
        msg["stream"] = stream
    return msg


def nak(seq: int, stream: str | None = None) -> dict[str, Any]:
    """Gap report: the host holds every event before `seq` and asks for `seq` onwards again."""
    msg: dict[str, Any] = {"v": VERSION, "type": "nak", "seq": seq}
    if stream is not None:
        msg["stream"] = stream
    return msg


def command_args(message: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a command message: every field except v, type, id and op."""
    return {k: v for k, v in message.items() if k not in CMD_KEYS}


# ---------------------------------------------------------------------------------------------
# Decoding


_HEX = re.compile(rb"[0-9A-Fa-f]*")
_PRINTABLE = re.compile(rb"[\x20-\x7e]*")


def _is_hex(data: bytes) -> bool:
    return _HEX.fullmatch(data) is not None


def _printable(data: bytes) -> bool:
    return _PRINTABLE.fullmatch(data) is not None


def split_line(line: bytes) -> bytes:
    """Check the frame syntax and CRC of one line (newline optional) and return BODY.
    Raises ProtocolError with LINE_TOO_LONG, BAD_FRAME or BAD_CRC."""
    if len(line) > MAX_LINE:
        raise ProtocolError(LINE_TOO_LONG, f"line is {len(line)} bytes, at most {MAX_LINE}")
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):  # tolerate CRLF from terminals
        line = line[:-1]
    if len(line) < CRC_LEN + 3 or line[-CRC_LEN - 1 : -CRC_LEN] != b"*":
        raise ProtocolError(BAD_FRAME, "frame must be BODY*CCCCCCCC (8 hex digits of CRC-32)")
    body, crc_text = line[: -CRC_LEN - 1], line[-CRC_LEN:]
    if not _is_hex(crc_text):
        raise ProtocolError(BAD_FRAME, "CRC must be 8 hex digits")
    if int(crc_text, 16) != zlib.crc32(body):
        raise ProtocolError(
            BAD_CRC, f"CRC mismatch: frame says {crc_text.decode()}, body is {crc_hex(body)}"
        )
    if not _printable(body):
        raise ProtocolError(BAD_FRAME, "body must be printable ASCII (0x20-0x7E)")
    return body


def decode(line: bytes, *, check: bool = True) -> dict[str, Any]:
    """Decode one line into a message dict. With `check` (the default) the message is validated
    with `validate`. Raises ProtocolError naming the first problem found."""
    body = split_line(line)
    try:
        message = json.loads(
            body.decode("ascii"), parse_constant=_reject_constant, object_pairs_hook=no_repeats
        )
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(BAD_FRAME, f"body is not valid JSON: {exc}") from None
    if unpaired_surrogate(message):
        raise ProtocolError(BAD_FRAME, f"body is not text: {UNPAIRED}")
    if not isinstance(message, dict):
        raise ProtocolError(BAD_FRAME, f"body must be a JSON object, got {type(message).__name__}")
    if check:
        validate(message)
    return message


UNPAIRED = "a \\uD800-\\uDFFF escape without its other half"


def unpaired_surrogate(value: Any) -> bool:
    """True when a string of the decoded JSON `value` (an object's names too) holds half of a
    UTF-16 surrogate pair (`"\\ud800"` alone): a valid JSON escape, but no text, which every
    writer after the parser refuses (UTF-8, SQLite, a terminal). A reader of JSON from outside
    (a frame here, a web page's message in engine/web/inbound.py) refuses it with the rest of
    what is not JSON, before anything acts on it."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class RepeatedName(ValueError):
    """A JSON object names one member twice (`no_repeats`)."""


def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for `json.loads` of a message (the wire's frames, the web table's
    requests): a name given twice means two different messages to two readers (RFC 8259 leaves
    it open), so it is refused (RepeatedName) rather than guessed."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedName(f"name {key!r:.40} appears twice in one object")
        out[key] = value
    return out


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _readable_id(message: Mapping[str, Any]) -> str | None:
    value = message.get("id")
    if isinstance(value, str) and 0 < len(value) <= MAX_ID_LEN:
        return value
    return None


# Field types of events: kind -> {field: (checker, description, required)}. Only the fields that
# a host needs to account for presses are required; the rest are checked when present.
_INT = (_is_int, "an integer")
_INT_OR_NULL = (lambda v: v is None or _is_int(v), "an integer or null")
_STR = (lambda v: isinstance(v, str), "a string")
_STR_OR_NULL = (lambda v: v is None or isinstance(v, str), "a string or null")
_INT_LIST = (lambda v: isinstance(v, list) and all(_is_number(x) for x in v), "a list of numbers")
_NUM_OR_NULL = (lambda v: v is None or _is_number(v), "a number or null")

EVENT_FIELDS: dict[str, dict[str, tuple[Any, str, bool]]] = {
    "hello": {
        "name": (*_STR, False),
        "config": (*_STR_OR_NULL, False),
        "ejector": (*_STR, False),
        "hopper": (*_INT_OR_NULL, False),
        "journal_recovered": (*_STR_OR_NULL, False),
        "journal_lost": (*_STR_OR_NULL, False),
    },
    "state": {"from": (*_STR, True), "to": (*_STR, True), "why": (*_STR_OR_NULL, False)},
    "press": {"press_id": (*_INT, True), "source": (*_STR, False)},
    "fire": {
        "press_id": (*_INT, True),
        "source": (*_STR, False),
        "planned": (*_INT, True),
        "ejected": (*_INT, True),
        "reason": (lambda v: v in FIRE_REASONS, "one of " + ", ".join(FIRE_REASONS), True),
        "dry_streak": (*_INT, False),
        "spinup_ms": (*_NUM_OR_NULL, False),
        "first_card_ms": (*_NUM_OR_NULL, False),
        "total_ms": (*_NUM_OR_NULL, False),
        "card_ms": (*_INT_LIST, False),
        "hopper": (*_INT_OR_NULL, False),
        "extra": (*_INT, False),
        "retries": (*_INT, False),
    },
    "jam": {"press_id": (*_INT_OR_NULL, False), "retries": (*_INT, False)},
    "empty": {"press_id": (*_INT_OR_NULL, False), "hopper": (*_INT_OR_NULL, False)},
    "fault": {"output": (*_STR_OR_NULL, False), "why": (*_STR_OR_NULL, False)},
    "refill": {"hopper": (*_INT_OR_NULL, False), "added": (*_INT, False)},
    "stray": {
        "count": (*_INT, True),
        "hopper": (*_INT_OR_NULL, False),
        "after_press_id": (*_INT_OR_NULL, False),
    },
}


def _check_fields(
    message: Mapping[str, Any], spec: Mapping[str, tuple[Any, str, bool]], what: str
) -> None:
    for name, (ok, description, required) in spec.items():
        if name not in message:
            if required:
                raise ProtocolError(BAD_FRAME, f"{what}: missing field {name!r}")
            continue
        if not ok(message[name]):
            raise ProtocolError(
                BAD_FRAME, f"{what}: {name} must be {description}, got {message[name]!r:.40}"
            )


def _validate_event(message: Mapping[str, Any]) -> None:
    seq = message.get("seq")
    if not _is_int(seq) or seq < 1:
        raise ProtocolError(BAD_FRAME, "event: seq must be an integer >= 1")
    for key in ("boot", "stream"):
        if not isinstance(message.get(key), str) or not message[key]:
            raise ProtocolError(BAD_FRAME, f"event: {key} must be a non-empty string")
    t_ms = message.get("t_ms")
    if not _is_number(t_ms) or t_ms < 0:
        raise ProtocolError(BAD_FRAME, "event: t_ms must be a number >= 0")
    kind = message.get("kind")
    if kind not in EVENT_KINDS:
        raise ProtocolError(
            BAD_FRAME, f"event: kind must be one of {', '.join(EVENT_KINDS)}, got {kind!r:.40}"
        )
    _check_fields(message, EVENT_FIELDS[kind], f"{kind} event")


def _bad_arg(cmd_id: str | None, op: str, text: str) -> ProtocolError:
    return ProtocolError(BAD_ARG, f"{op}: {text}", cmd_id)


def validate_args(cmd_id: str | None, op: str, args: Mapping[str, Any]) -> None:
    """Check the arguments of command `op`; raises ProtocolError(BAD_ARG) naming the problem.
    Each argument against its declaration in the op table (`Arg.problem`: the shape, and the
    bounds no box goes past); ranges that come from a box's config (dispense up to [limits]
    max_burst, seats) are the daemon's to check and name."""
    entry = ops.OPS.get(op)
    declared, names = (entry.args, entry.arg_names) if entry is not None else ((), ())
    extra = sorted(set(args) - set(names))
    if extra:
        takes = f"takes only {', '.join(names)}" if names else "takes no arguments"
        raise _bad_arg(cmd_id, op, f"unknown argument {extra[0]!r:.40}; {op} {takes}")
    for arg in declared:
        if arg.name not in args:
            if arg.required:
                raise _bad_arg(cmd_id, op, f"missing argument {arg.name!r}")
            continue
        problem = arg.problem(args[arg.name])
        if problem is not None:
            raise _bad_arg(cmd_id, op, str(problem))
    together = entry.problem(args) if entry is not None else None  # (`load`'s one_of)
    if together is not None:
        raise _bad_arg(cmd_id, op, str(together))
    # What the op table does not say:
    if op == "hello":
        stream = args.get("stream")
        if isinstance(stream, str) and len(stream) > MAX_ID_LEN:
            raise _bad_arg(cmd_id, op, f"stream must be at most {MAX_ID_LEN} characters")
    elif op == "model.set":
        params = args["params"]
        unknown = sorted(set(params) - set(JAM_PARAM_KEYS))
        if unknown:
            raise _bad_arg(
                cmd_id,
                op,
                f"cannot set {unknown[0]!r:.40}; allowed: {', '.join(JAM_PARAM_KEYS)}",
            )


def _validate_cmd(message: Mapping[str, Any]) -> None:
    raw_id = message.get("id")
    if not isinstance(raw_id, str) or not 0 < len(raw_id) <= MAX_ID_LEN:
        raise ProtocolError(BAD_FRAME, f"cmd: id must be a string of 1 to {MAX_ID_LEN} characters")
    op = message.get("op")
    if not isinstance(op, str):
        raise ProtocolError(BAD_FRAME, "cmd: op must be a string", raw_id)
    if op not in OPS:
        raise ProtocolError(UNKNOWN_OP, f"unknown op {op!r:.40}; known: {', '.join(OPS)}", raw_id)
    validate_args(raw_id, op, command_args(message))


def _validate_reply(message: Mapping[str, Any]) -> None:
    raw_id = message.get("id", ...)
    if raw_id is ... or not (raw_id is None or isinstance(raw_id, str)):
        raise ProtocolError(BAD_FRAME, "reply: id must be a string or null")
    ok = message.get("ok")
    if not isinstance(ok, bool):
        raise ProtocolError(BAD_FRAME, "reply: ok must be true or false")
    if not ok:
        error = message.get("error")
        if not isinstance(error, dict):
            raise ProtocolError(BAD_FRAME, "reply: a failed reply needs an error object")
        if error.get("code") not in ERROR_CODES:
            raise ProtocolError(
                BAD_FRAME, "reply: error.code must be one of " + ", ".join(ERROR_CODES)
            )
        if not isinstance(error.get("message"), str):
            raise ProtocolError(BAD_FRAME, "reply: error.message must be a string")


def _validate_ack(message: Mapping[str, Any]) -> None:
    kind = message["type"]
    seq = message.get("seq")
    if not _is_int(seq) or seq < 0:
        raise ProtocolError(BAD_FRAME, f"{kind}: seq must be an integer >= 0")
    stream = message.get("stream")
    if stream is not None and not isinstance(stream, str):
        raise ProtocolError(BAD_FRAME, f"{kind}: stream must be a string")
    extra = sorted(set(message) - {"v", "type", "seq", "stream"})
    if extra:
        raise ProtocolError(BAD_FRAME, f"{kind}: unknown field {extra[0]!r:.40}")


def validate(message: Mapping[str, Any]) -> None:
    """Check a decoded message against the protocol; raises ProtocolError with the error code
    the box answers with (VERSION, BAD_FRAME, UNKNOWN_OP, BAD_ARG) and the command id if any."""
    cmd_id = _readable_id(message) if message.get("type") == "cmd" else None
    if "v" not in message:
        raise ProtocolError(BAD_FRAME, "missing field 'v' (protocol version, must be 1)", cmd_id)
    if not _is_int(message["v"]) or message["v"] != VERSION:  # 1.0 is not 1, nor is true
        raise ProtocolError(
            VERSION_ERROR,
            f"protocol version {message['v']!r:.20} not supported; this box speaks 1",
            cmd_id,
        )
    kind = message.get("type")
    if kind not in TYPES:
        raise ProtocolError(BAD_FRAME, f"type must be one of {', '.join(TYPES)}, got {kind!r:.40}")
    if kind == "event":
        _validate_event(message)
    elif kind == "cmd":
        _validate_cmd(message)
    elif kind == "reply":
        _validate_reply(message)
    else:
        _validate_ack(message)


# ---------------------------------------------------------------------------------------------
# Stream decoding


@dataclass
class FrameDecoder:
    """Split a byte stream into lines and decode each one. Resynchronises at the next newline
    after any bad line; an over-long line is discarded up to its newline and reported once.

    ``feed(data)`` returns the frames and errors completed by `data`, in order. Blank lines
    are ignored (a sender may write a bare newline to flush noise)."""

    check: bool = True
    max_line: int = MAX_LINE
    lines: int = 0
    frames: int = 0
    errors: int = 0
    _buffer: bytearray = field(default_factory=bytearray, repr=False)
    _skipping: bool = field(default=False, repr=False)

    def feed(self, data: bytes) -> list[Frame | FrameErrorInfo]:
        """Add `data` and return what it completed."""
        out: list[Frame | FrameErrorInfo] = []
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline
            chunk = data[start:end]
            if self._skipping:
                if newline >= 0:
                    self._skipping = False
            else:
                self._buffer += chunk
                if len(self._buffer) + 1 > self.max_line:
                    # too long to ever be valid: report it now, drop the rest up to the newline
                    out.append(self._error(LINE_TOO_LONG, f"line exceeds {self.max_line} bytes"))
                    self._buffer.clear()
                    self._skipping = newline < 0
                elif newline >= 0:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    item = self._decode(line)
                    if item is not None:
                        out.append(item)
            if newline < 0:
                break
            start = newline + 1
        return out

    def _error(
        self,
        code: str,
        message: str,
        cmd_id: str | None = None,
        raw: bytes = b"",
        kind: str | None = None,
    ) -> FrameErrorInfo:
        self.lines += 1
        self.errors += 1
        return FrameErrorInfo(code, message, cmd_id, raw[:64], kind)

    def _decode(self, line: bytes) -> Frame | FrameErrorInfo | None:
        if not line.strip(b"\r \t"):
            return None
        try:
            message = decode(line, check=False)
        except ProtocolError as exc:
            return self._error(exc.code, exc.message, exc.id, line)
        if self.check:
            try:
                validate(message)
            except ProtocolError as exc:
                kind = message.get("type")
                kind = kind if isinstance(kind, str) else None
                return self._error(exc.code, exc.message, exc.id, line, kind)
        self.lines += 1
        self.frames += 1
        return Frame(message, line)
