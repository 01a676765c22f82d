"""The page's documents besides its static files: `index.html` in the reader's language, the
web app manifest, the QR code of the address phones can reach, and the rounds as CSV.

- `index_html(code)`: the page, naming its language (`<html lang>`) and asking for `/text.js`
  in it (`?lang=`), so that `http://HOST:8500/?lang=th` is a Thai page from the first request
  on (the app also remembers `?lang=` in the language cookie);
- `manifest(code)`: the web app manifest (installable: a name, icons, `standalone`); no
  service worker, so an installed page never shows a stale game;
- `qr_svg(url)`: the address as a QR code (SVG, made here: nothing is fetched);
- `rounds_csv(view)`: the game's rounds, one line per player per round (English keys, as
  every CSV of the project: docs/i18n.md).
"""

from __future__ import annotations

import csv
import functools
import io
import json
from pathlib import Path
from typing import Any

from i18n import N_, language

__all__ = ["ICONS", "MANIFEST_TYPE", "index_html", "manifest", "qr_svg", "rounds_csv"]

STATIC = Path(__file__).resolve().parent / "static"
MANIFEST_TYPE = "application/manifest+json"
THEME = "#1b1b1f"  # the header's colour (style.css --bar)
# The icons the manifest names: files in static/ (the PNGs are drawn from icon-app.svg).
ICONS = (
    {"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml"},
    {"src": "/static/icon-192.png", "sizes": "192x192", "type": "image/png"},
    {"src": "/static/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
    {"src": "/static/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "maskable"},
)
NAME = N_("UNO Attack table")
SHORT_NAME = N_("UNO Attack")
DESCRIPTION = N_("The UNO Attack table on every phone: the game live, refereeing by tapping.")


@functools.cache
def index_html(code: str) -> str:
    """index.html for a page in language `code` (a known code: engine/web/words.py
    `language_for`)."""
    text = (STATIC / "index.html").read_text(encoding="utf-8")
    tag = code.replace("_", "-")
    text = text.replace('<html lang="en">', f'<html lang="{tag}">', 1)
    return text.replace('src="/text.js"', f'src="/text.js?lang={code}"', 1)


@functools.cache
def manifest(code: str) -> str:
    """The web app manifest (JSON) in language `code`."""
    t = language(code).gettext
    data = {
        "name": t(NAME),
        "short_name": t(SHORT_NAME),
        "description": t(DESCRIPTION),
        "lang": code.replace("_", "-"),
        "id": "/",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "orientation": "portrait",
        "background_color": THEME,
        "theme_color": THEME,
        "icons": list(ICONS),
    }
    return json.dumps(data, ensure_ascii=False, indent=1)


@functools.cache
def qr_svg(url: str) -> str:
    """`url` as a QR code, an SVG document (black on white, a quiet zone of 2 modules)."""
    import segno

    out = io.BytesIO()
    segno.make(url, error="m").save(
        out, kind="svg", scale=6, border=2, dark="#000", light="#fff", xmldecl=False
    )
    return out.getvalue().decode("utf-8")


def rounds_csv(view: dict[str, Any]) -> str:
    """The rounds of the game in `view` (`TableSession.view()`), one line per player per
    round: round, player, won (1/0), gained, fired, presses, score (after that round)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["round", "player", "won", "gained", "fired", "presses", "score"])
    players = list(view.get("players", []))
    totals = [0] * len(players)
    for record in view.get("rounds", []):
        gained = list(record.get("gained", []))
        fired = list(record.get("fired", []))
        presses = list(record.get("presses", []))
        for seat, player in enumerate(players):
            got = gained[seat] if seat < len(gained) else 0
            totals[seat] += got
            writer.writerow(
                [
                    record.get("round"),
                    player,
                    int(record.get("winner") == seat),
                    got,
                    fired[seat] if seat < len(fired) else "",
                    presses[seat] if seat < len(presses) else "",
                    totals[seat],
                ]
            )
    return out.getvalue()
