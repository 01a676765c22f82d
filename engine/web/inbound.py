"""What a page may send, checked in one place before anything reads it.

- the **query** of a URL (`read_query`): only `lang`, `since` and `epoch`, each once and of its
  own shape; the Guard (engine/web/app.py) reads it for every request and WebSocket and keeps
  the result in the scope (`query_of`);
- a **JSON message** (`read_message`): an HTTP request body or a WebSocket text frame, at most
  `MAX_BODY` bytes, nested at most `MAX_DEPTH` deep, a JSON object of text (no half of a
  surrogate pair: wire/protocol.py `unpaired_surrogate`, the box's own rule);
- the **requests** in a message (`check_request`): their fields and the type of each.

Each refusal is one line naming the problem and what is allowed (`BadInput`, with the HTTP
status it comes with). They are for programs (the page never sends such things), so they stay
English (docs/i18n.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any
from urllib.parse import parse_qsl

from common.commandline import MAX_DIGITS, digits
from engine.web.table_service import BOX_CONTROLS
from wire.protocol import UNPAIRED, RepeatedName, no_repeats, unpaired_surrogate

__all__ = [
    "FIELDS",
    "MAX_BODY",
    "MAX_DEPTH",
    "BadInput",
    "Query",
    "check_request",
    "kind_of",
    "query_of",
    "read_message",
    "read_query",
    "shown",
    "valid_id",
]

MAX_BODY = 4096  # bytes of one HTTP request body or WebSocket message the app reads
# Nesting of a message: the deepest real one is 3 (`model.set`'s params, a list in them). A
# deeper one is refused before the JSON parser sees it (it would recurse once per level).
MAX_DEPTH = 8
MAX_QUERY = 256  # bytes of a URL's query: the page's longest is ~60

# Requests a page may send: their fields and the type of each.
FIELDS: dict[str, dict[str, type]] = {
    "act": {"command": dict, "line": str},
    "box": {"op": str, "params": dict},
    "ping": {},
    "claim": {"seat": int},  # "I am Bo": a seat number, or null to release the claim
    "new": {},  # the referee's New game (the last game's results kept in the history file)
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "act": (),  # a `command` or a `line`: one of them (check_request)
    "box": ("op",),
    "ping": (),
    "claim": ("seat",),
    "new": (),
}
NULLABLE = frozenset({("claim", "seat")})  # fields that may be null
MAX_PARAMS = 16
MAX_ID = 40  # characters of a request's `id`

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_LANG = re.compile(r"[A-Za-z0-9_-]{1,35}")
_EPOCH = re.compile(r"[0-9A-Za-z]{1,32}")


class BadInput(ValueError):
    """A request or message refused: `status` (HTTP) and one line saying why."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


@dataclass(frozen=True)
class Query:
    """A URL's query, checked: `lang` (a language code, passed over when unknown), `since`
    (the last update number a page has) and `epoch` (the server run it is from)."""

    lang: str | None = None
    since: int | None = None
    epoch: str | None = None


def read_query(raw: bytes) -> Query:
    """The query string of a request (`lang=th&since=12&epoch=...`), checked; BadInput (400)
    naming the first problem."""
    if not raw:
        return Query()
    if len(raw) > MAX_QUERY:
        raise BadInput(400, f"query of {len(raw)} bytes: at most {MAX_QUERY}")
    allowed = ", ".join(Query.__dataclass_fields__)
    try:
        pairs = parse_qsl(
            raw.decode("ascii"),
            keep_blank_values=True,
            max_num_fields=len(Query.__dataclass_fields__),
            errors="strict",
        )
    except (UnicodeDecodeError, ValueError):
        raise BadInput(400, f"malformed query: allowed are {allowed}, each once") from None
    values: dict[str, Any] = {}
    for key, value in pairs:
        if key not in Query.__dataclass_fields__:
            raise BadInput(400, f"unknown query parameter `{shown(key)}`: allowed are {allowed}")
        if key in values:
            raise BadInput(400, f"query parameter `{key}` given twice")
        if not value:
            continue  # `since=`: not given
        if key == "since":
            number = digits(value)
            if number is None:
                raise BadInput(
                    400, f"since must be an update number (0-9, at most {MAX_DIGITS} digits)"
                )
            values[key] = number
        elif key == "lang" and not _LANG.fullmatch(value):
            raise BadInput(400, "lang must be a language code such as th or zh_Hant")
        elif key == "epoch" and not _EPOCH.fullmatch(value):
            raise BadInput(400, "epoch must be the one `hello` gave (letters and digits)")
        else:
            values[key] = value
    return Query(**values)


SCOPE_KEY = "unoattack.query"


def query_of(conn: Any) -> Query:
    """The checked query of a request or WebSocket (`HTTPConnection`): the one the Guard
    read, else read now."""
    scope = conn.scope
    query = scope.get(SCOPE_KEY)
    if query is None:
        query = scope[SCOPE_KEY] = read_query(scope.get("query_string", b""))
    return query


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_message(raw: bytes | str) -> dict[str, Any]:
    """One JSON object message, from an HTTP body (bytes) or a WebSocket text frame (str):
    BadInput (413 too long; 400 not UTF-8, nested too deep, not JSON, not an object)."""
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > MAX_BODY:
        raise BadInput(413, f"message of {size} bytes: at most {MAX_BODY}")
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput(400, "message is not JSON (not UTF-8 text)") from None
    else:
        text = raw
    depth = max(accumulate(_STEP.get(c, 0) for c in _STRING.sub("", text)), default=0)
    if depth > MAX_DEPTH:
        raise BadInput(400, f"message nested {depth} deep: at most {MAX_DEPTH}")
    try:
        data = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=no_repeats)
    except RepeatedName as exc:  # {"line": "R5", "line": "R6"}: R6 was played
        raise BadInput(400, f"message is not JSON: {exc}") from None
    except (ValueError, RecursionError):
        raise BadInput(400, "message is not JSON") from None
    if unpaired_surrogate(data):  # `"\ud800"`: no text (a code, a line, an id echoed back)
        raise BadInput(400, f"message is not text: {UNPAIRED}")
    if not isinstance(data, dict):
        raise BadInput(400, f"message must be a JSON object, not {kind_of(data)}")
    return data


def shown(text: str, most: int = 40) -> str:
    """`text` as a refusal may quote it: at most `most` characters, escaped to printable
    ASCII (a newline in a field's name must not break the one line)."""
    return text[:most].encode("unicode_escape").decode("ascii").replace("`", "\\x60")


def kind_of(value: object) -> str:
    """What a JSON value is, in words (for a refusal)."""
    if value is None:
        return "null"
    simple: dict[type, str] = {bool: "a boolean", int: "a number", float: "a number"}
    simple |= {str: "a string", list: "a list", dict: "an object"}
    return simple.get(type(value), type(value).__name__)


def valid_id(ident: object) -> bool:
    """True for what a request's `id` may be (and its reply may echo): a whole number or a
    string, of at most `MAX_ID` characters."""
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        return False
    return len(ident) <= MAX_ID if isinstance(ident, str) else -(10**MAX_ID) < ident < 10**MAX_ID


def check_request(kind: object, data: dict[str, Any]) -> str | None:
    """Why `data` is not a well-formed request of `kind`, in one line, or None."""
    if not isinstance(kind, str) or kind not in FIELDS:
        what = shown(kind) if isinstance(kind, str) else kind_of(kind)
        return f"unknown request `{what}`: allowed are {', '.join(FIELDS)}"
    allowed = FIELDS[kind]
    for key in data:
        if key not in allowed and key not in ("type", "id"):
            names = ", ".join(["type", "id", *allowed])
            return f"unknown field `{shown(key)}` in `{kind}`: allowed are {names}"
    if "id" in data and not valid_id(data["id"]):
        return f"`id` must be a number or a short string (at most {MAX_ID} characters)"
    for key in REQUIRED[kind]:
        if key not in data:
            return f"`{kind}` needs `{key}`"
    if kind == "act" and ("command" in data) == ("line" in data):
        return "`act` needs a `command` (or a `line` as typed at `unoattack table`), one of them"
    for key, wanted in allowed.items():
        if key not in data or (data[key] is None and (kind, key) in NULLABLE):
            continue
        if not isinstance(data[key], wanted) or isinstance(data[key], bool):
            wants: dict[type, str] = {str: "a string", dict: "an object", int: "a number or null"}
            want = wants[wanted]
            return f"`{key}` must be {want}, not {kind_of(data[key])}"
    if kind == "box":
        op = data["op"]
        if op not in BOX_CONTROLS:
            return f"unknown box control `{shown(op)}`: allowed are {', '.join(BOX_CONTROLS)}"
        params = data.get("params")
        if op in ("model.set", "settings.set"):
            if not params:
                return f"`{op}` needs `params`: the values to change"
            if len(params) > MAX_PARAMS:
                return f"`params` has {len(params)} keys: at most {MAX_PARAMS}"
        elif params is not None:
            return f"`{op}` takes no `params`"
    return None
