"""The catalogs' upkeep, with Babel (a development dependency; the running programs only need
the standard library's gettext and the compiled `.mo` files).

    python -m i18n.messages update     # extract the messages from the code into every .po
    python -m i18n.messages compile    # .po -> .mo (what `make` runs; i18n/msgfmt.py, no Babel)
    python -m i18n.messages check      # what tests/i18n checks, as a report

`problems` is the check: every message in the code is in every catalog, no catalog holds one the
code no longer has, every translation is there (not empty, not fuzzy) and keeps the message's
placeholders (`{name}`) in every plural form.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from i18n import DOMAIN, LANGUAGES, LOCALE_DIR, msgfmt

ROOT = LOCALE_DIR.parent.parent
# The code whose messages people read (the web page's templates join here when it has some).
SOURCES: tuple[str, ...] = ("common", "engine", "firmware", "i18n", "wire")
# The functions a message is written in: `ngettext` and `Nn_` take a singular and a plural.
KEYWORDS: dict[str, Any] = {
    "_": None,
    "N_": None,
    "ngettext": (1, 2),
    "Nn_": (1, 2),
    "Text": None,  # i18n.Text(template, **args): the template is the message
}
COMMENT_TAG = "i18n:"  # `# i18n: ...` above a message is a note for the translators
# gettext plural rules, as CLDR counts them (Welsh: zero, one, two, few, many, other).
PLURAL_FORMS: dict[str, str] = {
    "en": "nplurals=2; plural=(n != 1);",
    "th": "nplurals=1; plural=0;",
    "zh_Hant": "nplurals=1; plural=0;",
    "ro": "nplurals=3; plural=(n==1 ? 0 : (n==0 || (n%100 > 0 && n%100 < 20)) ? 1 : 2);",
    "cy": "nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n==3 ? 3 : n==6 ? 4 : 5);",
}
_FIELD = re.compile(r"\{([^{}]*)\}")


def po_path(code: str) -> Path:
    """The catalog source of language `code`."""
    return LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"


def extract(root: Path = ROOT) -> Any:
    """A Babel `Catalog` of every message in `SOURCES` (the template)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir

    template = Catalog(domain=DOMAIN, project="unoattack-launcher", fuzzy=False)
    for source in SOURCES:
        found = extract_from_dir(
            root / source,
            [("**.py", "python")],
            keywords=KEYWORDS,
            comment_tags=(COMMENT_TAG,),
            strip_comment_tags=True,
        )
        for filename, lineno, message, comments, context in found:
            template.add(
                message,
                None,
                [(f"{source}/{filename}", lineno)],
                auto_comments=comments,
                context=context,
                flags=_flags(message),
            )
    return template


def _flags(message: str | tuple[str, ...]) -> tuple[str, ...]:
    first = message[0] if isinstance(message, tuple) else message
    return ("python-brace-format",) if _FIELD.search(first) else ()


def read(code: str) -> Any:
    """Language `code`'s catalog as Babel reads it."""
    return _read_po(po_path(code), code)


def read_from(root: Path, code: str) -> Any:
    """Language `code`'s catalog in the checkout at `root`."""
    return _read_po(root / "i18n" / "locale" / code / "LC_MESSAGES" / f"{DOMAIN}.po", code)


def _read_po(path: Path, code: str) -> Any:
    from babel.messages.pofile import read_po

    with path.open("rb") as fh:
        return read_po(fh, locale=code, domain=DOMAIN)


def write(code: str, catalog: Any) -> None:
    """Write `catalog` as language `code`'s .po (no line numbers: they churn with every edit)."""
    from babel.messages.pofile import write_po

    catalog.mime_headers = [("Plural-Forms", PLURAL_FORMS[code])]
    catalog.fuzzy = False
    catalog.version = "0.1.0"
    catalog.header_comment = f"# {code} messages of unoattack-launcher (`make messages` updates)."
    catalog.last_translator = catalog.language_team = "unoattack-launcher team"
    catalog.msgid_bugs_address = ""

    buf = io.BytesIO()
    write_po(buf, catalog, width=100, include_lineno=False, sort_output=True, ignore_obsolete=True)
    path = po_path(code)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def update(root: Path = ROOT) -> None:
    """Bring every language's .po in line with the code (new messages empty, gone ones out)."""
    from babel.messages.catalog import Catalog

    template = extract(root)
    for code in LANGUAGES:
        if po_path(code).exists():
            catalog = read(code)
        else:
            catalog = Catalog(locale=code, domain=DOMAIN, project="unoattack-launcher")
        catalog.update(template, no_fuzzy_matching=True, update_creation_date=False)
        write(code, catalog)


def fields(text: str) -> set[str]:
    """The placeholders of a brace-format message: `{seat}` -> {"seat"}."""
    return {m.group(1).split("!")[0].split(":")[0] for m in _FIELD.finditer(text)}


def problems(root: Path = ROOT) -> Iterator[str]:
    """Every way the catalogs and the code disagree, one line each (see the module docstring)."""
    template = extract(root)
    wanted = {m.id: m for m in template if m.id}
    for code in LANGUAGES:
        catalog = read(code)
        have = {m.id: m for m in catalog if m.id}
        if catalog.num_plurals != int(PLURAL_FORMS[code].split(";")[0].split("=")[1]):
            yield f"{code}: Plural-Forms is not {PLURAL_FORMS[code]!r}"
        for msgid, message in wanted.items():
            where = ", ".join(f"{f}:{n}" for f, n in message.locations)
            if msgid not in have:
                yield f"{code}: missing {_show(msgid)} ({where})"
                continue
            yield from _check_translation(code, msgid, have[msgid], catalog.num_plurals)
        for msgid in have.keys() - wanted.keys():
            yield f"{code}: {_show(msgid)} is in the catalog but not in the code"


def _check_translation(code: str, msgid: Any, entry: Any, nplurals: int) -> Iterator[str]:
    plural = isinstance(msgid, tuple)
    if plural != isinstance(entry.id, tuple):
        yield f"{code}: {_show(msgid)}: singular/plural differs from the code"
        return
    if code == "en" and not any(entry.string if plural else [entry.string]):
        return  # the source language: an empty translation is the message itself
    if entry.fuzzy:
        yield f"{code}: {_show(msgid)} is marked fuzzy"
    strings = list(entry.string) if plural else [entry.string]
    if plural and len(strings) != nplurals:
        yield f"{code}: {_show(msgid)} has {len(strings)} plural forms, not {nplurals}"
    wanted = fields(msgid[0] if plural else msgid)
    for form in strings:
        if not form:
            yield f"{code}: {_show(msgid)} is not translated"
            continue
        got = fields(form)
        if got != wanted:
            yield f"{code}: {_show(msgid)}: placeholders {sorted(got)}, not {sorted(wanted)}"
            continue
        try:
            form.format(**{name: 0 for name in wanted})
        except (ValueError, IndexError, KeyError) as exc:
            yield f"{code}: {_show(msgid)}: translation does not format ({exc})"


def _show(msgid: Any) -> str:
    return repr(msgid[0] if isinstance(msgid, tuple) else msgid)


def main(argv: list[str]) -> int:
    """`python -m i18n.messages update|compile [PO...]|check`."""
    if not argv or argv[0] not in ("update", "compile", "check"):
        print("usage: python -m i18n.messages update | compile [PO...] | check", file=sys.stderr)
        return 2
    if argv[0] == "update":
        update()
    elif argv[0] == "compile":
        for po in [Path(p) for p in argv[1:]] or [po_path(c) for c in LANGUAGES]:
            try:
                msgfmt.compile_po(po)
            except (OSError, msgfmt.PoError) as exc:
                print(f"compile: {exc}", file=sys.stderr)
                return 1
    else:
        found = list(problems())
        for line in found:
            print(line)
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
