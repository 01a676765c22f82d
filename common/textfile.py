"""How a text file a person gives us is decoded: the one rule for every config, recording,
scenario and deck file, on the box and on the host. Standard library and `i18n` only.

UTF-8, with or without the byte-order mark Windows editors (Notepad) put first; UTF-16 or UTF-32
when the file starts with their byte-order mark (PowerShell's `>` writes UTF-16). Anything else
that is not UTF-8 raises UnicodeDecodeError, which each reader turns into its own one line
("not a text file: ...").

`read_bytes` and `read_text` read at most `MOST_BYTES`: a bigger file (or `/dev/zero` given by
mistake) is an OSError like a file that cannot be read, never a read that fills the memory
(MemoryError, or the kernel killing the daemon).

A file that cannot be read at all (missing, a folder, not this user's, too big) is one line, the
same for every reader: `cannot_read(path, exc)`, ``PATH: cannot read this file: REASON`` (the
reason as the operating system words it, or the limit).

`parse_toml` and `parse_json` read the text: a document nested too deep for the parser (which
recurses once per level: `a = [[[[...`), or a number of more digits than `int` reads (4,300), is
a mistake in the file like any other (the parser's own error, so every reader's one line covers
it), never a RecursionError or a ValueError.
"""

from __future__ import annotations

import codecs
import errno
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import i18n
from i18n import Text

__all__ = [
    "MOST_BYTES",
    "cannot_read",
    "decode",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_text",
]

# Far above any config, deck, scenario, sweep, state file or bench recording of a real box
# (a million presses is 30 MB of CSV), and well inside a Pi Zero's memory once decoded.
MOST_BYTES = 64 * 1024 * 1024

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


def read_bytes(path: str | os.PathLike[str], most: int | None = None) -> bytes:
    """The bytes of a person's file; OSError if it cannot be read or holds more than `most`
    (default `MOST_BYTES`; `strerror` says the limit)."""
    most = MOST_BYTES if most is None else most
    with Path(path).open("rb") as handle:
        data = handle.read(most + 1)
    if len(data) > most:
        reason = i18n._("larger than {size}, the most a file given here may hold").format(
            size=_size(most)
        )
        raise OSError(errno.EFBIG, str(reason), os.fspath(path))
    return data


def read_text(path: str | os.PathLike[str], most: int | None = None) -> str:
    """Read a person's text file (`read_bytes`, `decode`); OSError if it cannot be read or is
    too big, UnicodeDecodeError if it is not text in an encoding `decode` knows."""
    return decode(read_bytes(path, most))


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return i18n._("{n} MB").format(n=i18n.number(count // (1024 * 1024)))
    return i18n.ngettext("{n} byte", "{n} bytes", count).format(n=i18n.number(count))


def _too_many_digits() -> str:
    return f"a number of more than {sys.get_int_max_str_digits()} digits"


def cannot_read(path: str | os.PathLike[str], exc: OSError) -> Text:
    """The one line for a person's file that cannot be read: a `Text`, so ``render()`` says it
    in the reader's language and ``str()`` in English (a log line)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return Text("{path}: cannot read this file: {reason}", path=str(path), reason=reason)


def parse_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads`; tomllib.TOMLDecodeError also for a document nested too deep or a number
    too long to read."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deep") from None
    except ValueError:  # int(): more digits than sys.get_int_max_str_digits()
        raise tomllib.TOMLDecodeError(_too_many_digits()) from None


def parse_json(text: str) -> Any:
    """`json.loads`; json.JSONDecodeError also for a document nested too deep or a number too
    long to read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deep", text, 0) from None
    except ValueError:  # int(): more digits than sys.get_int_max_str_digits()
        raise json.JSONDecodeError(_too_many_digits(), text, 0) from None
