"""The live web app for the table: `unoattack serve` and `unoattack demo --web`.

One page that every phone at the table opens: the referee's state and the box, live over a
WebSocket, and refereeing by tapping for whoever holds the join code. The modules, each one
concept:

- `table_service`: the one door to the table referee (command lines in, state out, box events
  in); nothing else in this package imports `engine.table`.
- `box_panel`: what the page shows of the box (state, hopper, dry streak, jams, last bursts).
- `hub`: numbered updates fanned out to every page, with catch-up after a reconnect.
- `auth`: the join code, session cookies, slowing down wrong codes, same-origin checks.
- `app`: the Starlette application (HTTP routes, the WebSocket, the static page).
- `server`: binding, the URL and its QR code, uvicorn, and the threads beside it.
- `serve`: the `unoattack serve` command line; `demo_web`: `unoattack demo --web` (the
  terminal demo's bots and box, the referee following them through engine/follow.py).

The page itself (`static/`) is plain HTML, CSS and JavaScript shipped in the package: no build
step, no CDN, it works with no internet. Docs: docs/web.md.
"""
