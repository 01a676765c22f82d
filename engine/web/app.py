"""The Starlette application: the page, its API and its WebSocket (docs/web.md).

Routes:

- `GET /` the page; `GET /static/...` its script, style and icon (package data; nothing from
  outside the folder is served);
- `GET /api/state` the newest update (the whole state, with its number);
- `POST /api/join` ``{"code"}`` sets the session cookie; `POST /api/leave` drops it;
- `POST /api/act` ``{"command"}`` one of the table's typed commands as data (or ``{"line"}``,
  a command line as typed at `unoattack table`);
- `POST /api/box` ``{"op", "params"}`` a box-panel control (`reset`, `status`, `model`,
  `model.set`, `fire`, `settings`, `settings.set`);
- `POST /api/claim` ``{"seat"}`` this phone's seat ("I am Bo"; null releases it);
- `POST /api/new` ``{}`` a new game of the same players, the last one kept in the history file;
- `GET /api/rounds.csv` the game's rounds; `GET /api/qr.svg` the page's LAN address as a QR
  code; `GET /manifest.webmanifest` the web app manifest;
- `WS /ws?since=N` the live updates (after update N when given) and the same `act`, `box`,
  `claim`, `new` and `ping` requests as JSON messages.

Every request is checked before it reaches the table: a JSON object of known fields and types,
at most `MAX_BODY` bytes; a session for anything that changes the game; this server's own
origin for anything that changes state. Each refusal is one line, and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from anyio import to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from common.commandline import digits
from engine.web.auth import COOKIE, SESSION_AGE_S, Auth, cross_site, host_allowed
from engine.web.connections import BODY_TIMEOUT_S
from engine.web.headers import raw_headers
from engine.web.hub import Hub, Subscriber, encode
from engine.web.inbound import (
    MAX_BODY,
    SCOPE_KEY,
    BadInput,
    check_request,
    query_of,
    read_message,
    read_query,
    shown,
    valid_id,
)
from engine.web.page import MANIFEST_TYPE, index_html, manifest, qr_svg, rounds_csv
from engine.web.seats import Claims
from engine.web.table_service import MAX_LINE, TableService
from engine.web.words import COOKIE as LANG_COOKIE
from engine.web.words import language_for, script
from i18n import _, language, normalize, say_in

__all__ = ["MAX_BODY", "MAX_FRAME", "STATIC", "check_request", "create_app"]


def reader_language(conn: HTTPConnection) -> str:
    """The language of the page behind a request or a WebSocket: `?lang=`, else the picker's
    cookie, else its Accept-Language, else English (engine/web/words.py `language_for`). The
    page's own words and the referee's come out in it. (Worked out again for each request:
    a cache keyed by the request would keep every request alive.)"""
    return language_for(
        query_of(conn).lang,
        conn.cookies.get(LANG_COOKIE),
        conn.headers.get("accept-language"),
    )


def _text_script(code: str) -> str:
    return script(language(code))


STATIC = Path(__file__).resolve().parent / "static"
MAX_FRAME = MAX_BODY
PROTOCOL = 1
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LANG_AGE_S = 365 * 24 * 3600  # the language cookie: a year
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class Guard:
    """ASGI middleware: the Host must be one this server answers to; the URL's query is read
    and checked (engine/web/inbound.py); anything that changes state (WebSocket, every method
    but GET/HEAD/OPTIONS) must come from this server's own origin; every HTTP response, its
    own refusals included, gets the security headers."""

    def __init__(self, app: Any, *, allowed_hosts: tuple[str, ...]) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        status, problem = 0, None
        if not host_allowed(host, self.allowed_hosts):
            status = 400
            problem = say_in(
                language(language_for(None, None, headers.get("accept-language"))),
                _(
                    "this server does not answer to host {host}: open the address "
                    "`unoattack serve` printed (or start it with --allow-host)"
                ).format(host=repr(host)),
            )
        else:
            try:
                scope[SCOPE_KEY] = read_query(scope.get("query_string", b""))
            except BadInput as exc:
                status, problem = exc.status, exc.text
        if problem is None and (kind == "websocket" or scope["method"] not in SAFE_METHODS):
            status, problem = 403, cross_site(headers, scope.get("scheme", "http"))

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                extra = raw_headers()
                if scope["path"].startswith("/api/"):
                    extra.append((b"cache-control", b"no-store"))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        if problem is not None:
            if kind == "websocket":
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 1008, "reason": problem[:120]})
            else:
                refusal = JSONResponse({"ok": False, "error": problem}, status)
                await refusal(scope, receive, send_with_headers)
            return
        if kind == "websocket":
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, send_with_headers)


async def read_json(request: Request) -> dict[str, Any]:
    """The request's JSON object body (engine/web/inbound.py `read_message`: at most
    MAX_BODY bytes, nested at most MAX_DEPTH deep), read within BODY_TIMEOUT_S; HTTPException
    otherwise."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise HTTPException(415, "send a JSON object (Content-Type: application/json)")
    length = request.headers.get("content-length")
    size = None if length is None else digits(length)
    if length is not None and (size is None or size > MAX_BODY):
        raise HTTPException(413, f"request body of {length[:20]} bytes: at most {MAX_BODY}")
    body = b""
    try:
        async with asyncio.timeout(BODY_TIMEOUT_S):
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY:
                    raise HTTPException(413, f"request body over {MAX_BODY} bytes")
    except TimeoutError:
        raise HTTPException(408, f"request body not sent within {BODY_TIMEOUT_S:g} s") from None
    try:
        return read_message(body)
    except BadInput as exc:
        raise HTTPException(exc.status, exc.text) from None


class WebApp:
    """The handlers, around one table service, hub and auth."""

    def __init__(
        self, service: TableService, hub: Hub, auth: Auth, lan_url: str | None = None
    ) -> None:
        self.service = service
        self.hub = hub
        self.auth = auth
        self.lan_url = lan_url  # the server's address on the LAN; None: this machine only
        self.claims = Claims(auth.valid)  # "I am Bo": the seat each joined phone plays
        self.epoch = secrets.token_hex(6)  # this server run: update numbers start again

    # -- requests shared by HTTP and the WebSocket ------------------------------------------
    async def perform(
        self, kind: str, data: dict[str, Any], token: object, lang: str = "en"
    ) -> tuple[int, dict]:
        """Carry out one checked request; (HTTP status, reply in `lang`)."""
        if kind == "ping":
            return 200, {"ok": True, "seq": self.hub.seq}
        if not self.auth.valid(token):
            return 401, {
                "ok": False,
                "error": say_in(
                    language(lang), _("watching only: enter the join code to change the game")
                ),
            }
        if kind == "claim":
            return self.claim(token, data["seat"], lang)
        if kind == "act":
            outcome = await to_thread.run_sync(self.service.request, data)
        elif kind == "new":
            outcome = await to_thread.run_sync(self.service.new_game)
        else:
            outcome = await to_thread.run_sync(self.service.box_op, data["op"], data.get("params"))
        reply = say_in(language(lang), outcome.to_dict())
        return (200 if outcome.ok or outcome.ask else 422), reply

    def claim(self, token: object, seat: int | None, lang: str) -> tuple[int, dict]:
        """ "I am Bo": this phone's session claims `seat` (None: releases its claim)."""
        assert isinstance(token, str)
        problem = self.claims.claim(token, seat, list(self.service.session.ref.players))
        if problem is not None:
            return 409, {"ok": False, "error": say_in(language(lang), problem)}
        self.service.set_claims(self.claims.seats())
        return 200, {"ok": True, "seat": self.claims.of(token)}

    async def _request(self, request: Request, kind: str) -> Response:
        data = await read_json(request)
        problem = check_request(kind, data)
        if problem is not None:
            return JSONResponse({"ok": False, "error": problem}, 400)
        status, reply = await self.perform(
            kind, data, request.cookies.get(COOKIE), reader_language(request)
        )
        return JSONResponse(reply, status)

    # -- HTTP -------------------------------------------------------------------------------
    async def index(self, request: Request) -> Response:
        """The page, in its reader's language from the first request on: `?lang=` (then
        remembered in the language cookie), the cookie, or Accept-Language."""
        code = reader_language(request)
        response = HTMLResponse(index_html(code), headers={"Cache-Control": "no-cache"})
        if normalize(request.query_params.get("lang") or "") == code:
            response.set_cookie(LANG_COOKIE, code, max_age=LANG_AGE_S, samesite="lax", path="/")
        return response

    async def manifest(self, request: Request) -> Response:
        """The web app manifest: the page can be installed (no service worker)."""
        return Response(manifest(reader_language(request)), media_type=MANIFEST_TYPE)

    def share_url(self, request: HTTPConnection) -> str | None:
        """The address other phones can open: the one this page was opened by unless that is
        this machine's own (then the server's LAN address), None when the server listens on
        this machine only."""
        if self.lan_url is None:
            return None
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name.strip("[]").lower() in LOOPBACK:
            return self.lan_url
        return f"http://{host}/"

    async def qr(self, request: Request) -> Response:
        url = self.share_url(request)
        if url is None:
            problem = say_in(
                language(reader_language(request)),
                _("this server listens on this machine only: start it with --http 0.0.0.0:8500"),
            )
            return JSONResponse({"ok": False, "error": problem}, 404)
        svg = qr_svg(url)
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-cache"})

    async def rounds(self, request: Request) -> Response:
        """The game's rounds as CSV (a download)."""
        view = await to_thread.run_sync(self.service.view)
        return Response(
            rounds_csv(view),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="unoattack-rounds.csv"'},
        )

    async def text(self, request: Request) -> Response:
        """The page's words in the browser's language (`?lang=`, the picker's cookie, or
        Accept-Language): engine/web/words.py from the catalogs."""
        code = reader_language(request)
        return Response(
            _text_script(code),
            media_type="text/javascript; charset=utf-8",
            headers={
                "Content-Language": code.replace("_", "-"),
                "Vary": "Accept-Language, Cookie",
                "Cache-Control": "no-cache",
            },
        )

    async def state(self, request: Request) -> Response:
        latest = self.hub.latest(reader_language(request))
        if latest is None:
            problem = say_in(language(reader_language(request)), _("the table is starting"))
            return JSONResponse({"ok": False, "error": problem}, 503)
        return Response(latest, media_type="application/json")

    async def join(self, request: Request) -> Response:
        data = await read_json(request)
        if set(data) - {"code"}:
            extra = sorted(set(data) - {"code"})[0]
            return JSONResponse(
                {"ok": False, "error": f"unknown field `{shown(extra)}`: send code"}, 400
            )
        client = request.client.host if request.client else "?"
        held = self.auth.throttle.wait(client) > 0  # too many wrong codes: 429, not 403
        token, problem, wait = self.auth.join(client, data.get("code"))
        if token is None:
            problem = say_in(language(reader_language(request)), problem)
            status = 429 if held else 403
            if not isinstance(data.get("code"), str) or not data.get("code"):
                status = 400
            headers = {"retry-after": str(max(1, round(wait)))} if wait else None
            return JSONResponse({"ok": False, "error": problem}, status, headers=headers)
        response = JSONResponse({"ok": True, "role": "player"})
        response.set_cookie(
            COOKIE, token, max_age=SESSION_AGE_S, httponly=True, samesite="strict", path="/"
        )
        return response

    async def leave(self, request: Request) -> Response:
        token = request.cookies.get(COOKIE)
        if self.claims.release(token):  # its seat is free again
            self.service.set_claims(self.claims.seats())
        self.auth.leave(token)
        response = JSONResponse({"ok": True, "role": "watcher"})
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def act(self, request: Request) -> Response:
        return await self._request(request, "act")

    async def box(self, request: Request) -> Response:
        return await self._request(request, "box")

    async def claim_seat(self, request: Request) -> Response:
        return await self._request(request, "claim")

    async def new_game(self, request: Request) -> Response:
        return await self._request(request, "new")

    # -- the WebSocket ----------------------------------------------------------------------
    async def websocket(self, ws: WebSocket) -> None:
        token = ws.cookies.get(COOKIE)
        query = query_of(ws)  # checked by the Guard
        since = query.since if query.epoch == self.epoch else None
        lang = reader_language(ws)
        await ws.accept()
        await ws.send_text(
            encode(
                {
                    "type": "hello",
                    "protocol": PROTOCOL,
                    "epoch": self.epoch,
                    "role": "player" if self.auth.valid(token) else "watcher",
                    "seq": self.hub.seq,
                    "lang": lang,
                    "table": say_in(language(lang), self.service.static()),
                    "recent": self.hub.recent(lang),
                    "console": self.hub.recent(lang, console=True),
                    "seat": self.claims.of(token),  # the seat this phone claimed
                    "share": {"url": self.share_url(ws)},
                    "limits": {"frame": MAX_FRAME, "line": MAX_LINE},
                }
            )
        )
        sub = self.hub.subscribe(since, lang)
        sender = asyncio.create_task(self._send(ws, sub))
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                reply = await self._on_message(message, token, lang)
                sub.put(encode(reply))
                await sub.taken()  # the next request once this reply is on its way
        except WebSocketDisconnect:
            pass
        finally:
            self.hub.unsubscribe(sub)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender

    async def _send(self, ws: WebSocket, sub: Subscriber) -> None:
        try:
            while True:
                text = await sub.take()
                if text is None:  # fell too far behind: dropped, it reconnects and catches up
                    await ws.close(code=1013, reason="too far behind: reconnect with since")
                    return
                await ws.send_text(text)
                # A connection that was just lost is only told so by the loop: without a turn
                # of it, every frame still queued went to the dead socket, a log line each.
                await asyncio.sleep(0)
        finally:
            sub.close()

    async def _on_message(
        self, message: MutableMapping[str, Any], token: object, lang: str
    ) -> dict[str, Any]:
        text = message.get("text")
        if text is None:
            return {"type": "error", "error": "send text frames of JSON, not binary"}
        try:
            data = read_message(text)
        except BadInput as exc:
            return {"type": "error", "error": exc.text}
        kind = data.get("type")
        problem = check_request(kind, data)
        ident = data.get("id") if valid_id(data.get("id")) else None
        if problem is not None:
            return {"type": "error", "id": ident, "error": problem}
        _status, reply = await self.perform(str(kind), data, token, lang)
        return {"type": "reply", "id": ident, "for": kind, **reply}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"ok": False, "error": exc.detail}, exc.status_code, headers=exc.headers)


def create_app(
    service: TableService,
    hub: Hub,
    auth: Auth,
    *,
    allowed_hosts: tuple[str, ...],
    lan_url: str | None = None,
    on_startup: Callable[[], None] | None = None,
    on_shutdown: Callable[[], None] | None = None,
) -> Any:
    """The ASGI app for one table. The hub delivers on the app's event loop from startup on."""
    web = WebApp(service, hub, auth, lan_url)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.bind(asyncio.get_running_loop())
        if on_startup is not None:
            on_startup()
        try:
            yield
        finally:
            if on_shutdown is not None:
                on_shutdown()
            hub.bind(None)

    routes = [
        Route("/", web.index, methods=["GET", "HEAD"]),
        Route("/text.js", web.text, methods=["GET"]),
        Route("/manifest.webmanifest", web.manifest, methods=["GET"]),
        Route("/api/qr.svg", web.qr, methods=["GET"]),
        Route("/api/rounds.csv", web.rounds, methods=["GET"]),
        Route("/api/state", web.state, methods=["GET"]),
        Route("/api/join", web.join, methods=["POST"]),
        Route("/api/leave", web.leave, methods=["POST"]),
        Route("/api/act", web.act, methods=["POST"]),
        Route("/api/box", web.box, methods=["POST"]),
        Route("/api/claim", web.claim_seat, methods=["POST"]),
        Route("/api/new", web.new_game, methods=["POST"]),
        WebSocketRoute("/ws", web.websocket),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.web = web
    return Guard(app, allowed_hosts=allowed_hosts)
