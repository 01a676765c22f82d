"""How a text file a person gives us is decoded: the one rule for every config, recording,
scenario and deck file, on the box and on the host. Standard library (and i18n's `Text`) only.

UTF-8, with or without the byte-order mark Windows editors (Notepad) put first; UTF-16 or UTF-32
when the file starts with their byte-order mark (PowerShell's `>` writes UTF-16). Anything else
that is not UTF-8 raises UnicodeDecodeError, which each reader turns into its own one line
("not a text file: ...").

A file that cannot be read at all (missing, a folder, not this user's) is one line, the same for
every reader: `cannot_read(path, exc)`, ``PATH: cannot read this file: REASON`` (the reason as
the operating system words it).

`parse_toml` and `parse_json` read the text: a document nested too deep for the parser (which
recurses once per level: `a = [[[[...`) is a mistake in the file like any other (the parser's
own error, so every reader's one line covers it), never a RecursionError.
"""

from __future__ import annotations

import codecs
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from i18n import Text

__all__ = ["cannot_read", "decode", "parse_json", "parse_toml", "read_text"]

# Longest first: the UTF-32 LE mark begins with the UTF-16 LE one.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(data: bytes) -> str:
    """The text of a file's bytes (see the module docstring); raises UnicodeDecodeError."""
    for mark, codec in _MARKS:
        if data.startswith(mark):
            return data.decode(codec)
    return data.decode("utf-8")


def read_text(path: str | os.PathLike[str]) -> str:
    """Read a person's text file; OSError if it cannot be read, UnicodeDecodeError if it is
    not text in an encoding `decode` knows."""
    return decode(Path(path).read_bytes())


def cannot_read(path: str | os.PathLike[str], exc: OSError) -> Text:
    """The one line for a person's file that cannot be read: a `Text`, so ``render()`` says it
    in the reader's language and ``str()`` in English (a log line)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return Text("{path}: cannot read this file: {reason}", path=str(path), reason=reason)


def parse_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads`; tomllib.TOMLDecodeError also for a document nested too deep."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deep") from None


def parse_json(text: str) -> Any:
    """`json.loads`; json.JSONDecodeError also for a document nested too deep."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deep", text, 0) from None
