"""A .po catalog compiled into the .mo file gettext reads: GNU msgfmt's job, with the standard
library only, so a package build needs neither Babel nor gettext's tools.

It is the project's one compiler: the package build runs it (`setup.py`, for `python -m
build`, `pip install .` and `pip install -e .`), and so do `make` and `python -m i18n.messages
compile`. It imports nothing of the project, so the build can load it from the source tree by
its path before anything is installed.

What goes into the .mo, as with msgfmt: the header (the entry whose msgid is empty, fuzzy or
not) and every message that is translated and not marked fuzzy; a message in a context under
``CONTEXT\\x04MSGID``, a plural one under ``MSGID\\0MSGID_PLURAL`` with its forms joined by NUL.
A message left out (untranslated, fuzzy, or a plural with any form empty) is shown in English
by gettext. Obsolete entries (``#~``) and comments are skipped. Strings stay in the bytes and
the charset the .po declares (gettext decodes them by the header's ``Content-Type``).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path

MAGIC = 0x950412DE  # little-endian GNU .mo, revision 0
_CONTEXT_GLUE = b"\x04"
_KEYWORD = re.compile(rb"^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(\".*)$")
_QUOTED = re.compile(rb'^"((?:[^"\\]|\\.)*)"$')
_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))")
_SIMPLE_ESCAPES = {
    b"n": b"\n",
    b"t": b"\t",
    b"r": b"\r",
    b"a": b"\a",
    b"b": b"\b",
    b"f": b"\f",
    b"v": b"\v",
    b"\\": b"\\",
    b'"': b'"',
    b"'": b"'",
    b"?": b"?",
}
_CHARSET = re.compile(rb"^content-type:.*charset=\s*([A-Za-z0-9._-]+)", re.I | re.M)


class PoError(ValueError):
    """A .po file that cannot be compiled; the message names the file, the line and why."""


class _Entry:
    """One message as the .po spells it, while it is being read."""

    def __init__(self) -> None:
        self.line = 0  # where its first keyword is
        self.fuzzy = False
        self.context: bytes | None = None
        self.msgid: bytes | None = None
        self.plural: bytes | None = None
        self.forms: dict[int, bytes] = {}
        self.last: tuple[str, int] | None = None  # the field a continuation line extends

    def key(self) -> bytes:
        assert self.msgid is not None
        key = self.msgid if self.plural is None else self.msgid + b"\0" + self.plural
        return key if self.context is None else self.context + _CONTEXT_GLUE + key

    def value(self) -> bytes | None:
        """What the .mo holds for it, or None when it is left out."""
        if self.msgid == b"" and self.context is None:
            return self.forms.get(0, b"")  # the header
        if self.fuzzy:
            return None
        forms = [self.forms.get(i, b"") for i in range(max(self.forms, default=0) + 1)]
        if not forms or not all(forms):
            return None
        return b"\0".join(forms)


def parse(data: bytes, name: str = "<po>") -> dict[bytes, bytes]:
    """The messages of a .po file, as the .mo will hold them (key -> translation, in bytes)."""
    messages: dict[bytes, bytes] = {}
    for entry in _entries(data, name):
        if entry.msgid is None:
            raise PoError(f"{name}:{entry.line}: an entry without msgid")
        if entry.plural is None and set(entry.forms) - {0}:
            raise PoError(f"{name}:{entry.line}: msgstr[N] without msgid_plural")
        if entry.plural is not None and entry.forms and (0 not in entry.forms):
            raise PoError(f"{name}:{entry.line}: a plural message without msgstr[0]")
        key = entry.key()
        if key in messages:
            raise PoError(f"{name}:{entry.line}: message {_show(entry.msgid)} appears twice")
        value = entry.value()
        if value is not None:
            messages[key] = value
    _check_charset(messages, name)
    return messages


def _entries(data: bytes, name: str) -> Iterator[_Entry]:
    entry = _Entry()
    for number, raw in enumerate(data.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            if entry.forms:  # a blank line or a comment ends an entry once it has its msgstr
                yield entry
                entry = _Entry()
            if line.startswith(b"#,") and b"fuzzy" in line[2:].replace(b",", b" ").split():
                entry.fuzzy = True
            continue
        keyword = _KEYWORD.match(line)
        if keyword is None:
            if entry.last is None or not line.startswith(b'"'):
                raise PoError(f"{name}:{number}: cannot read {_show(line)}")
            _extend(entry, entry.last, _unquote(line, name, number))
            continue
        word, index, rest = keyword.groups()
        text = _unquote(rest, name, number)
        if word in (b"msgctxt", b"msgid") and (entry.forms or entry.msgid is not None):
            if not entry.forms:
                raise PoError(f"{name}:{number}: {word.decode()} before a msgstr")
            yield entry
            entry = _Entry()
        entry.line = entry.line or number
        if word == b"msgctxt":
            entry.context, entry.last = text, ("msgctxt", 0)
        elif word == b"msgid":
            entry.msgid, entry.last = text, ("msgid", 0)
        elif word == b"msgid_plural":
            if entry.msgid is None:
                raise PoError(f"{name}:{number}: msgid_plural without msgid")
            entry.plural, entry.last = text, ("msgid_plural", 0)
        else:
            if entry.msgid is None:
                raise PoError(f"{name}:{number}: msgstr without msgid")
            form = 0 if index is None else int(index)
            if (index is None) != (entry.plural is None):
                raise PoError(f"{name}:{number}: msgstr and msgid_plural do not match")
            if form in entry.forms:
                raise PoError(f"{name}:{number}: a second msgstr[{form}]")
            entry.forms[form], entry.last = text, ("msgstr", form)
    if entry.msgid is not None or entry.context is not None:
        if not entry.forms:
            raise PoError(f"{name}:{entry.line}: the last message has no msgstr")
        yield entry


def _extend(entry: _Entry, field: tuple[str, int], text: bytes) -> None:
    what, form = field
    if what == "msgctxt":
        entry.context = (entry.context or b"") + text
    elif what == "msgid":
        entry.msgid = (entry.msgid or b"") + text
    elif what == "msgid_plural":
        entry.plural = (entry.plural or b"") + text
    else:
        entry.forms[form] += text


def _unquote(text: bytes, name: str, number: int) -> bytes:
    quoted = _QUOTED.match(text.strip())
    if quoted is None:
        raise PoError(f"{name}:{number}: not a quoted string: {_show(text)}")
    return _ESCAPE.sub(_unescape, quoted.group(1))


def _unescape(match: re.Match[bytes]) -> bytes:
    octal, hexa, char = match.groups()
    if octal is not None:
        return bytes([int(octal, 8) & 0xFF])
    if hexa is not None:
        return bytes([int(hexa, 16)])
    return _SIMPLE_ESCAPES.get(char, b"\\" + char)


def _check_charset(messages: Mapping[bytes, bytes], name: str) -> None:
    """Every string decodes in the charset the header names (gettext will decode them so)."""
    found = _CHARSET.search(messages.get(b"", b""))
    charset = found.group(1).decode("ascii") if found else "ascii"
    try:
        "".encode(charset)
    except LookupError:
        raise PoError(f"{name}: unknown charset {charset!r} in the header") from None
    for key, value in messages.items():
        try:
            key.decode(charset)
            value.decode(charset)
        except UnicodeDecodeError:
            raise PoError(f"{name}: message {_show(key)} is not {charset}") from None


def mo_bytes(messages: Mapping[bytes, bytes]) -> bytes:
    """The GNU .mo file holding `messages` (sorted, no hash table: gettext searches it)."""
    keys = sorted(messages)
    count = len(keys)
    header = struct.calcsize("<7I")
    ids_at = header
    strs_at = ids_at + 8 * count
    data_at = strs_at + 8 * count
    data = bytearray()
    ids: list[tuple[int, int]] = []  # (length, offset) of each message id, then each text
    strs: list[tuple[int, int]] = []
    for table, texts in ((ids, keys), (strs, [messages[k] for k in keys])):
        for text in texts:
            table.append((len(text), data_at + len(data)))
            data += text + b"\0"
    out = bytearray(struct.pack("<7I", MAGIC, 0, count, ids_at, strs_at, 0, data_at))
    for length, offset in ids + strs:
        out += struct.pack("<2I", length, offset)
    return bytes(out + data)


def compile_po(po: Path, mo: Path | None = None) -> Path:
    """Compile `po` into `mo` (beside it by default, same name with .mo); returns the .mo path.
    PoError (file and line) when the .po cannot be read."""
    target = po.with_suffix(".mo") if mo is None else mo
    catalog = parse(po.read_bytes(), str(po))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(mo_bytes(catalog))
    partial.replace(target)  # a reader never sees half a catalog
    return target


def _show(text: bytes) -> str:
    shown = text.decode("utf-8", "replace")
    return repr(shown if len(shown) <= 60 else shown[:57] + "...")
