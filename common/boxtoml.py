"""Editing a box's `launcher.toml` in place: the values asked for set, everything else (comments,
blank lines, the order of keys, keys nobody named) kept as the person wrote it.

The one editor of a box's file: `launcher model fit --write-config` writes the fitted `[jam]`
values with it (firmware/jam_cli.py), the demo writes the config its mock box runs with
(engine/mockbox.py `demo_config`: timings divided by the speed, seeds, one angle per seat).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

__all__ = ["assignments", "set_values", "toml_value"]

# `[name]` or `[[name]]` on its own line (a comment may follow).
_HEADER = re.compile(r"^\s*\[(\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^(\s*)([A-Za-z0-9_-]+)(\s*=\s*)(.*)$")


def toml_value(value: object) -> str:
    """A value as TOML text: `true`, `3`, `0.25`, `"text"`, `[1, 2]`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML text for {value!r}")


def _code(text: str) -> str:
    """`text` (a line, or what follows a key's `=`) with its comment cut off: a `#` outside a
    string (`"#e53935"` is a colour, not a comment)."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return text[:i]
    return text


def _split_value(rest: str) -> tuple[str, str]:
    """Split `value  # comment` into the value and the tail (the spaces and the comment)."""
    value = _code(rest).rstrip()
    return value, rest[len(value) :].rstrip() if _code(rest) != rest else ""


def _depth(text: str) -> int:
    """How many brackets `text` (a value's line) leaves open; strings and comments aside."""
    code, quote, depth = _code(text), "", 0
    for ch in code:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        else:
            depth += (ch == "[") - (ch == "]")
    return depth


def assignments(text: str) -> Iterator[tuple[str, str, str]]:
    """Every `key = value` of `text` as (section, key, value as written, comment cut off); the
    section of a `[[name]]` table is `name`. A multi-line array is given as its first line."""
    section = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        header = _HEADER.match(line)
        key = _KEY.match(line)
        if header:
            section = header.group(2)
        elif key:
            rest = key.group(4)
            depth = _depth(rest)
            while depth > 0 and i + 1 < len(lines):
                i += 1
                depth += _depth(lines[i])
            yield section, key.group(2), _split_value(rest)[0]
        i += 1


def set_values(text: str, changes: Mapping[str, Mapping[str, str]], *, add: bool = True) -> str:
    """`text` with `changes` ({section: {key: TOML text}}) set and nothing else touched.

    A comment after a replaced value is kept (moved to stay aligned where there is room). With
    `add`, a key missing from its section is added at the section's end and a missing section
    at the end of the file; without it, only keys already written are changed. Only plain
    `[section]` tables are edited (a key of a `[[name]]` table is left alone).
    """
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    editing: str | None = None  # the section being read, when `changes` has keys for it
    done: dict[str, set[str]] = {name: set() for name in changes}
    ends: dict[str, int] = {}  # index in `out` after the last line of a section with content
    i = 0
    while i < len(lines):
        line = lines[i]
        header = _HEADER.match(line)
        if header:
            name = header.group(2)
            # A `[[name]]` table is not edited.
            editing = name if not header.group(1) and name in changes else None
            out.append(line)
            if editing is not None:
                ends[editing] = len(out)
            i += 1
            continue
        key = _KEY.match(line.rstrip("\r\n"))
        if editing is not None and key and key.group(2) in changes[editing]:
            indent, name, eq, rest = key.groups()
            depth = _depth(rest)  # a multi-line array: its lines go with it
            while depth > 0 and i + 1 < len(lines):
                i += 1
                depth += _depth(lines[i])
                rest = ""
            value, comment = _split_value(rest)
            new = changes[editing][name]
            if comment:
                pad = max(1, len(value) + (len(comment) - len(comment.lstrip())) - len(new))
                comment = " " * pad + comment.lstrip()
            ending = "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""
            out.append(f"{indent}{name}{eq}{new}{comment}{ending}")
            done[editing].add(name)
            ends[editing] = len(out)
        else:
            out.append(line)
            if editing is not None and line.strip() and not line.lstrip().startswith("#"):
                ends[editing] = len(out)
        i += 1
    if not add:
        return "".join(out)
    for name, values in changes.items():
        missing = [k for k in values if k not in done[name]]
        if name not in ends:
            if not missing:
                continue
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n"
            out.append(f"\n[{name}]\n")
            ends[name] = len(out)
        end = ends[name]
        if missing:
            if end and not out[end - 1].endswith("\n"):
                out[end - 1] += "\n"
            out[end:end] = [f"{k} = {values[k]}\n" for k in missing]
            for other, at in ends.items():  # the sections after it moved down
                if at > end:
                    ends[other] = at + len(missing)
    return "".join(out)
