"""The HTTP and WebSocket API: bad input of every kind gets an error and changes nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

import i18n
from engine.scoring import SCORING_MODES
from engine.table.referee import PHASES
from engine.web.app import MAX_BODY, MAX_FRAME, STATIC, create_app
from engine.web.auth import COOKIE, Auth
from engine.web.box_panel import SWITCHES
from engine.web.hub import Hub
from engine.web.table_service import ANSWER_GROUPS, TERMINAL_ONLY
from engine.web.words import PAGE_WORDS
from engine.web.words import script as page_text
from i18n import language
from tests.engine.web.conftest import table_service

CODE = "424242"
ORIGIN = {"origin": "http://testserver"}
EVIL = {"origin": "http://evil.example"}


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Any]:
    service = table_service(tmp_path / "table.json")
    hub = Hub()
    service.publish = hub.publish
    service.announce([], {"start": True})
    clock = Clock()
    auth = Auth(CODE, clock=clock)
    app = create_app(service, hub, auth, allowed_hosts=("testserver",))
    with TestClient(app) as client:
        client.service, client.hub, client.joins, client.clock = service, hub, auth, clock
        yield client


def join(client: TestClient) -> None:
    reply = client.post("/api/join", json={"code": CODE}, headers=ORIGIN)
    assert reply.status_code == 200, reply.text
    assert COOKIE in reply.cookies


def snapshot(client: Any) -> tuple[int, dict, bytes]:
    """What an action could change: the updates, the table's state and its state file."""
    saved = client.service.session.state_path.read_bytes()
    return client.hub.seq, client.service.view(), saved


def test_the_page_and_its_files_are_served_with_a_strict_policy(table: Any) -> None:
    page = table.get("/")
    assert page.status_code == 200 and '<script src="/static/app.js"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    for name in ("app.js", "style.css", "icon.svg"):
        assert table.get(f"/static/{name}").status_code == 200
    words = table.get("/text.js")  # the page's words, in the browser's language
    assert words.status_code == 200 and "window.UNOATTACK_TEXT" in words.text
    for text in [
        *((STATIC / n).read_text() for n in ("index.html", "app.js", "style.css")),
        words.text,
    ]:
        assert not re.search(r"https?://|//cdn|@import", text)  # nothing from elsewhere


@pytest.mark.parametrize(
    "path",
    [
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/%2e%2e%2f%2e%2e%2ftable.py",
        "/static/....//app.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/nothere.js",
    ],
)
def test_static_files_cannot_escape_their_folder(table: Any, path: str) -> None:
    reply = table.get(path)
    assert reply.status_code == 404
    assert "import" not in reply.text and "root:" not in reply.text


def test_the_pages_words_are_all_in_text_js() -> None:
    """One place for the page's words (for translators): every key index.html and app.js use
    is in text.js (made from engine/web/words.py), every key there is used, and no English
    sentence is left in the others."""
    text = page_text(language("en"))
    defined = set(re.findall(r"^  (\w+):", text, re.M))

    html = (STATIC / "index.html").read_text()
    script = (STATIC / "app.js").read_text()
    used = set(re.findall(r'data-(?:text|title|label)="(\w+)"', html))
    used |= set(re.findall(r"\bT\.(\w+)", script))
    # Keys the page makes from a value (T[`phase_${v.phase}`]): one for each value it can meet.
    families = {
        "group": set(ANSWER_GROUPS.values()),
        "phase": set(PHASES),
        "mode": set(SCORING_MODES),
        "theme": {"auto", "dark", "light"},
        "link": {"connected", "reconnecting", "lost"},
        "switch": {key.split(".")[0] for key in SWITCHES},
    }
    assert set(re.findall(r"T\[`(\w+)_\$\{", script)) == set(families)
    used |= {f"{family}_{value}" for family, values in families.items() for value in values}
    assert used - defined == set(), "used but not in text.js"
    assert defined - used == set(), "in text.js but never used"
    # Outside text.js, the page's elements hold no words of their own.
    assert not re.search(r">[^<>{}]*[A-Za-z]{3,}[^<>{}]*</(?!script|style|title)", html)


def test_the_box_state_has_a_word_for_every_state_of_the_box() -> None:
    from firmware.machine import STATES

    states = {k.removeprefix("state_") for k in PAGE_WORDS["box_state"].messages}
    assert states == set(STATES)


def test_state_is_the_newest_update(table: Any) -> None:
    table.service.request({"line": "R5"})
    data = table.get("/api/state").json()
    assert data["seq"] == table.hub.seq and data["view"]["top"] == "R5"
    assert table.get("/api/state").headers["cache-control"] == "no-store"


def test_join_then_act_and_leave(table: Any) -> None:
    assert table.post("/api/act", json={"line": "R5"}, headers=ORIGIN).status_code == 401
    join(table)
    reply = table.post("/api/act", json={"line": "R5"}, headers=ORIGIN)
    assert reply.status_code == 200 and reply.json()["messages"] == [
        "round 1: Ann dealt, R5 turned up"
    ]
    refused = table.post("/api/act", json={"line": "B7"}, headers=ORIGIN)
    assert refused.status_code == 422
    assert refused.json()["error"].startswith("B7 does not go on R5")
    ask = table.post("/api/act", json={"line": "W"}, headers=ORIGIN).json()
    assert ask["ask"] == "colour for W (R Y G B)" and ask["choices"]["colour"] == list("RYGB")
    assert table.post("/api/leave", json={}, headers=ORIGIN).status_code == 200
    assert table.post("/api/act", json={"line": "R7"}, headers=ORIGIN).status_code == 401


def test_wrong_codes_are_refused_and_slowed(table: Any) -> None:
    before = snapshot(table)
    wrong = table.post("/api/join", json={"code": "000000"}, headers=ORIGIN)
    assert wrong.status_code == 403 and "wrong join code" in wrong.json()["error"]
    again = table.post("/api/join", json={"code": CODE}, headers=ORIGIN)
    assert again.status_code == 429 and again.headers["retry-after"] == "1"
    assert COOKIE not in again.cookies
    table.clock.now += 1
    join(table)
    assert snapshot(table) == before


BAD_HTTP = [
    ("/api/act", {"line": 5}, 400, "`line` must be a string, not a number"),
    ("/api/act", {"line": ["R5"]}, 400, "`line` must be a string, not a list"),
    ("/api/act", {}, 400, "`act` needs a `command`"),
    ("/api/act", {"line": "R5", "as": "root"}, 400, "unknown field `as`"),
    ("/api/act", {"line": "fly"}, 422, "`fly` is neither a card"),
    ("/api/act", {"line": "quit"}, 422, "`quit` is for the terminal"),
    ("/api/act", {"command": {"word": "quit"}}, 422, "`quit` is for the terminal"),
    ("/api/act", {"command": {"word": "fly"}}, 422, "unknown command 'fly'"),
    ("/api/act", {"command": "hit"}, 400, "`command` must be an object, not a string"),
    ("/api/act", {"line": "R5", "command": {"word": "hit"}}, 400, "one of them"),
    ("/api/act", {"line": "R5\nR7"}, 422, "the control character U+000A"),
    ("/api/act", {"line": "R" * 500}, 422, "at most 200"),
    ("/api/box", {"op": "fly"}, 400, "unknown box control `fly`"),
    ("/api/box", {"op": "reset", "params": {"a": 1}}, 400, "`reset` takes no `params`"),
    ("/api/box", {"op": "model.set"}, 400, "needs `params`"),
    ("/api/box", {"op": "reset"}, 422, "no box connected"),
    ("/api/box", {"op": 3}, 400, "`op` must be a string"),
    ("/api/join", {"code": 424242}, 400, "code must be the join code"),
    ("/api/join", {"code": CODE, "admin": True}, 400, "unknown field `admin`"),
]


@pytest.mark.parametrize(("path", "body", "status", "error"), BAD_HTTP)
def test_bad_requests_get_an_error_and_change_nothing(
    table: Any, path: str, body: Any, status: int, error: str
) -> None:
    join(table)
    before = snapshot(table)
    reply = table.post(path, json=body, headers=ORIGIN)
    assert reply.status_code == status, reply.text
    assert error in reply.json()["error"]
    assert snapshot(table) == before


@pytest.mark.parametrize(
    ("content", "headers", "status", "error"),
    [
        (b"R5", {"content-type": "text/plain"}, 415, "Content-Type: application/json"),
        (b"{not json", {"content-type": "application/json"}, 400, "not JSON"),
        (b"[1, 2]", {"content-type": "application/json"}, 400, "must be a JSON object"),
        (b"\xff\xfe", {"content-type": "application/json"}, 400, "not JSON"),
        (
            json.dumps({"line": "x" * MAX_BODY}).encode(),
            {"content-type": "application/json"},
            413,
            f"at most {MAX_BODY}",
        ),
    ],
)
def test_bodies_that_are_not_small_json_objects(
    table: Any, content: bytes, headers: dict, status: int, error: str
) -> None:
    join(table)
    before = snapshot(table)
    reply = table.post("/api/act", content=content, headers={**ORIGIN, **headers})
    assert reply.status_code == status and error in reply.json()["error"]
    assert snapshot(table) == before


def test_cross_site_requests_cannot_act(table: Any) -> None:
    join(table)
    before = snapshot(table)
    for path, body in (("/api/act", {"line": "R5"}), ("/api/join", {"code": CODE})):
        reply = table.post(path, json=body, headers=EVIL)
        assert reply.status_code == 403 and "cross-site" in reply.json()["error"]
    reply = table.post("/api/act", json={"line": "R5"}, headers={"sec-fetch-site": "cross-site"})
    assert reply.status_code == 403
    with pytest.raises(WebSocketDisconnect) as closed, table.websocket_connect("/ws", headers=EVIL):
        pass
    assert closed.value.code == 1008
    assert snapshot(table) == before


def test_a_host_the_server_does_not_answer_to_is_refused(table: Any) -> None:
    reply = table.get("/api/state", headers={"host": "evil.example"})
    assert reply.status_code == 400 and "does not answer to host" in reply.json()["error"]


def receive_until(ws: Any, kind: str) -> list[dict]:
    got = []
    while True:
        msg = ws.receive_json()
        got.append(msg)
        if msg["type"] == kind:
            return got


def test_the_websocket_sends_the_state_then_every_update_then_the_reply(table: Any) -> None:
    join(table)
    with table.websocket_connect("/ws", headers=ORIGIN) as ws:
        hello = ws.receive_json()
        assert hello["type"] == "hello" and hello["role"] == "player"
        assert [c["card"] for c in hello["table"]["cards"]][:3] == ["R1", "R2", "R3"]
        first = ws.receive_json()
        assert first["type"] == "update" and first["seq"] == table.hub.seq
        ws.send_json({"type": "act", "id": 1, "line": "R5"})
        got = receive_until(ws, "reply")
        assert [m["type"] for m in got] == ["update", "reply"]
        assert got[0]["seq"] == first["seq"] + 1 and got[0]["view"]["top"] == "R5"
        assert got[1] == {
            "type": "reply",
            "id": 1,
            "for": "act",
            "ok": True,
            "messages": ["round 1: Ann dealt, R5 turned up"],
        }
        ws.send_json({"type": "ping", "id": "p"})
        assert ws.receive_json()["ok"] is True
    epoch = hello["epoch"]
    with table.websocket_connect(f"/ws?since={first['seq']}&epoch={epoch}", headers=ORIGIN) as ws:
        ws.receive_json()  # hello
        caught = ws.receive_json()  # the update missed while away, not a fresh snapshot
        assert caught["seq"] == first["seq"] + 1


BAD_WS: list[tuple[Any, str]] = [
    ({"type": "fly"}, "unknown request `fly`"),
    ({"type": 5}, "unknown request `a number`"),
    ({"line": "R5"}, "unknown request `null`"),
    ({"type": "act"}, "`act` needs a `command`"),
    ({"type": "act", "line": 5}, "`line` must be a string"),
    ({"type": "act", "line": "R5", "seat": 0}, "unknown field `seat`"),
    ({"type": "act", "line": "R5", "id": [1]}, "`id` must be a number"),
    ({"type": "box", "op": "selftest"}, "unknown box control"),
    ({"type": "box", "op": "model.set", "params": "base=1"}, "`params` must be an object"),
    ([1, 2], "must be a JSON object"),
    ("R5", "must be a JSON object"),
]


@pytest.mark.parametrize(("message", "error"), BAD_WS)
def test_bad_websocket_messages_get_an_error_and_change_nothing(
    table: Any, message: Any, error: str
) -> None:
    join(table)
    before = snapshot(table)
    with table.websocket_connect("/ws", headers=ORIGIN) as ws:
        ws.receive_json()
        ws.receive_json()
        ws.send_text(json.dumps(message))
        reply = ws.receive_json()
        assert reply["type"] == "error" and error in reply["error"], reply
        ws.send_json({"type": "ping", "id": 2})  # the connection is still fine
        assert ws.receive_json()["type"] == "reply"
    assert snapshot(table) == before


def test_frames_that_are_not_small_json_text(table: Any) -> None:
    join(table)
    before = snapshot(table)
    with table.websocket_connect("/ws", headers=ORIGIN) as ws:
        ws.receive_json()
        ws.receive_json()
        ws.send_text(json.dumps({"type": "act", "line": "R5" + " " * MAX_FRAME}))
        assert ws.receive_json()["error"].endswith(f"at most {MAX_FRAME}")
        ws.send_text("{oops")
        assert ws.receive_json()["error"] == "message is not JSON"
        ws.send_bytes(b'{"type": "act", "line": "R5"}')
        assert "not binary" in ws.receive_json()["error"]
    assert snapshot(table) == before


@pytest.mark.parametrize("cookie", [None, "forged"])
def test_without_a_session_cookie_http_cannot_act(table: Any, cookie: str | None) -> None:
    before = snapshot(table)
    if cookie is not None:
        table.cookies.set(COOKIE, cookie)
    for path, body in (("/api/act", {"line": "R5"}), ("/api/box", {"op": "reset"})):
        reply = table.post(path, json=body, headers=ORIGIN)
        assert reply.status_code == 401 and "join code" in reply.json()["error"], reply.text
    assert snapshot(table) == before


def test_a_watcher_can_watch_but_not_act(table: Any) -> None:
    before = snapshot(table)
    with table.websocket_connect("/ws", headers=ORIGIN) as ws:
        assert ws.receive_json()["role"] == "watcher"
        ws.receive_json()
        for message in ({"type": "act", "line": "R5"}, {"type": "box", "op": "reset"}):
            ws.send_json(message)
            reply = ws.receive_json()
            assert reply["ok"] is False and reply["error"].startswith("watching only")
    table.cookies.set(COOKIE, "forged")
    with table.websocket_connect("/ws", headers=ORIGIN) as ws:
        assert ws.receive_json()["role"] == "watcher"
    assert snapshot(table) == before


@pytest.mark.parametrize("code", [c for c in i18n.LANGUAGES if c != "en"])
def test_a_page_reads_the_web_tables_own_refusals_in_its_language(table: Any, code: str) -> None:
    # Not only the referee's lines: the web layer's own refusals (the join code, lines the web
    # table cannot take, the box controls) follow the page's language too.
    lang = i18n.language(code)

    def start(msgid: str) -> str:
        said = lang.gettext(msgid)
        assert said != msgid, f"{code}: {msgid!r} is not translated"
        return said.split("{")[0]

    wrong = table.post(f"/api/join?lang={code}", json={"code": "000000"}, headers=ORIGIN)
    assert wrong.json()["error"].startswith(start("wrong join code: try again in {n} s"))
    watch = table.post(f"/api/act?lang={code}", json={"line": "R5"}, headers=ORIGIN)
    assert watch.json()["error"] == lang.gettext(
        "watching only: enter the join code to change the game"
    )
    table.clock.now += 1
    join(table)
    for line, msgid in [
        ("quit", TERMINAL_ONLY["quit"]),
        ("", "empty line: type a card or a command (`help` lists them)"),
    ]:
        reply = table.post(f"/api/act?lang={code}", json={"line": line}, headers=ORIGIN)
        assert reply.json()["error"] == lang.gettext(msgid), line
    box = table.post(f"/api/box?lang={code}", json={"op": "reset"}, headers=ORIGIN)
    assert box.json()["error"] == lang.gettext("no box connected (started with --port none)")
