"""Numbers and column widths in every language, standard library only.

`format_number` writes a number as CLDR (and Babel's `format_decimal`) does for our languages;
tests/i18n checks the two agree. `width`, `ljust` and `rjust` line up table columns by what a
terminal shows: a Chinese character takes two cells, a Thai vowel or tone mark none.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

__all__ = ["columns", "format_number", "format_percent", "ljust", "rjust", "width"]

# (group separator, decimal separator) of each language's numbers (CLDR, latn digits).
_SEPARATORS: dict[str, tuple[str, str]] = {
    "en": (",", "."),
    "th": (",", "."),
    "zh_Hant": (",", "."),
    "ro": (".", ","),
    "cy": (",", "."),
}


def format_number(value: float, code: str = "en", decimals: int | None = None) -> str:
    """`value` with the grouping and decimal mark of language `code`: `1,234.5` in English,
    `1.234,5` in Romanian. `decimals` fixes the digits after the mark (default: as many as an
    int has, none; a float keeps up to three, as Babel's default pattern)."""
    group, point = _SEPARATORS.get(code, _SEPARATORS["en"])
    if decimals is None:
        text = f"{value:,}" if isinstance(value, int) else f"{value:,.3f}".rstrip("0").rstrip(".")
    else:
        text = f"{value:,.{decimals}f}"
    return text.translate({ord(","): group, ord("."): point})


# What follows the number in a percentage (CLDR's percent pattern): Romanian spaces it off.
_PERCENT_SIGN: dict[str, str] = {"ro": "\u00a0%"}


def format_percent(share: float, code: str = "en", decimals: int = 1) -> str:
    """`share` (0.46) as a percentage written the way language `code` does: `46.0%`, Romanian
    `46,0 %` (a no-break space before the sign, as CLDR and Babel's `format_percent`)."""
    return format_number(100 * share, code, decimals) + _PERCENT_SIGN.get(code, "%")


def width(text: str) -> int:
    """Terminal cells `text` takes: wide (East Asian) characters two, combining marks none."""
    cells = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        cells += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return cells


def ljust(text: str, cells: int) -> str:
    """`text` padded on the right to `cells` terminal cells."""
    return text + " " * max(0, cells - width(text))


def rjust(text: str, cells: int) -> str:
    """`text` padded on the left to `cells` terminal cells."""
    return " " * max(0, cells - width(text)) + text


def columns(
    rows: Sequence[Sequence[str]],
    right: frozenset[int] | set[int] = frozenset(),
    gap: int = 2,
    sep: str | None = None,
) -> list[str]:
    """`rows` (the first is the heading) as lines of aligned columns, each as wide as its widest
    cell in terminal cells; columns in `right` (numbers) align right, the last column of text
    is not padded. Columns are `gap` spaces apart, or joined by `sep` (`" | "`) if given."""
    widths = [max(width(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            rjust(cell, widths[i]) if i in right else ljust(cell, widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append((" " * gap if sep is None else sep).join(cells).rstrip())
    return lines
