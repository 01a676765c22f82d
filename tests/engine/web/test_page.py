"""The page's documents (engine/web/page.py) and the phone's requests: `?lang=` from the first
request on, the web app manifest and its icons, the QR code of an address a phone can reach
(and the terminal's, only for such an address), the rounds as CSV, and "I am Bo" claims."""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import engine.web.server as server_module
from engine.web.app import create_app
from engine.web.auth import COOKIE, Auth
from engine.web.hub import Hub
from engine.web.page import ICONS, qr_svg, rounds_csv
from engine.web.words import COOKIE as LANG_COOKIE
from tests.engine.web.conftest import table_service
from tests.engine.web.test_app import CODE, ORIGIN, join

LAN = "http://192.168.1.5:8500/"


@pytest.fixture
def lan(tmp_path: Path) -> Iterator[Any]:
    """The app of a server phones can reach at LAN."""
    service = table_service(tmp_path / "table.json")
    hub = Hub()
    service.publish = hub.publish
    service.announce([], {"start": True})
    app = create_app(
        service, hub, Auth(CODE), allowed_hosts=("testserver", "127.0.0.1"), lan_url=LAN
    )
    with TestClient(app) as client:
        client.service, client.hub = service, hub
        yield client


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_the_manifest_is_served_and_valid(lan: Any) -> None:
    page = lan.get("/")
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page.text
    reply = lan.get("/manifest.webmanifest", headers={"accept-language": "cy"})
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("application/manifest+json")
    manifest = json.loads(reply.text)
    assert manifest["name"] == "Bwrdd UNO Attack" and manifest["lang"] == "cy"
    assert manifest["start_url"] == "/" and manifest["scope"] == "/"
    assert manifest["display"] == "standalone"
    assert manifest["icons"] == list(ICONS)
    sizes = set()
    for icon in manifest["icons"]:
        got = lan.get(icon["src"])
        assert got.status_code == 200, icon
        if icon["type"] == "image/png":
            width, height = png_size(got.content)
            assert f"{width}x{height}" == icon["sizes"]
            sizes.add(width)
        else:
            assert got.text.startswith("<svg")
    assert {192, 512} <= sizes  # what an installable page needs
    assert any(icon.get("purpose") == "maskable" for icon in manifest["icons"])


def test_lang_in_the_query_makes_the_page_that_language_and_is_remembered(lan: Any) -> None:
    page = lan.get("/?lang=th", headers={"accept-language": "en"})
    assert '<html lang="th">' in page.text and 'src="/text.js?lang=th"' in page.text
    assert page.cookies.get(LANG_COOKIE) == "th"
    again = lan.get("/", headers={"accept-language": "en"})  # the cookie, sent back
    assert '<html lang="th">' in again.text
    zh = lan.get("/?lang=zh-TW")  # a locale spelling of a language we have
    assert '<html lang="zh-Hant">' in zh.text and zh.cookies.get(LANG_COOKIE) == "zh_Hant"
    lan.cookies.clear()
    unknown = lan.get("/?lang=de", headers={"accept-language": "ro"})  # none of ours
    assert '<html lang="ro">' in unknown.text and LANG_COOKIE not in unknown.cookies


def test_the_qr_code_is_of_an_address_a_phone_can_reach(lan: Any, tmp_path: Path) -> None:
    # opened by a LAN name: that name; opened on this machine: the server's LAN address
    by_name = lan.get("/api/qr.svg")
    assert by_name.status_code == 200 and by_name.headers["content-type"] == "image/svg+xml"
    assert by_name.text == qr_svg("http://testserver/")
    local = lan.get("/api/qr.svg", headers={"host": "127.0.0.1:8500"})
    assert local.text == qr_svg(LAN)
    with lan.websocket_connect("/ws", headers=ORIGIN) as ws:
        assert ws.receive_json()["share"] == {"url": "http://testserver/"}
    # a server on 127.0.0.1 only: no QR code, and the page says how to let phones in
    service = table_service(tmp_path / "other.json")
    app = create_app(service, Hub(), Auth(CODE), allowed_hosts=("testserver",))
    with TestClient(app) as local_only:
        reply = local_only.get("/api/qr.svg")
        assert reply.status_code == 404 and "--http 0.0.0.0:8500" in reply.json()["error"]


def test_the_terminal_shows_a_qr_code_only_for_an_address_a_phone_can_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server_module, "_interface_addresses", lambda: ["10.0.0.7", "127.0.0.1"])
    for http, reachable in (("0.0.0.0:0", True), ("127.0.0.1:0", False)):
        web = server_module.WebServer(http=http, code="471142")
        try:
            out = io.StringIO()
            web.banner(out)
            text = out.getvalue()
            assert ("▀" in text) is reachable, text
            assert ("--http 0.0.0.0:" in text) is not reachable
            assert "join code: 471142" in text
            watch_only = io.StringIO()
            web.banner(watch_only, "unoattack demo --web", joinable=False)
            assert "join code" not in watch_only.getvalue()  # nobody can join a bots' game
            if reachable:
                assert web.lan_url == f"http://10.0.0.7:{web.port}/"
        finally:
            web.close()


def test_the_rounds_as_csv(lan: Any) -> None:
    view = {
        "players": ["Ann", "Bob"],
        "rounds": [
            {"round": 1, "winner": 1, "gained": [0, 40], "fired": [3, 0], "presses": [2, 1]},
            {"round": 2, "winner": 0, "gained": [25, 0], "fired": [0, 5], "presses": [0, 4]},
        ],
    }
    assert rounds_csv(view).splitlines() == [
        "round,player,won,gained,fired,presses,score",
        "1,Ann,0,0,3,2,0",
        "1,Bob,1,40,0,1,40",
        "2,Ann,1,25,0,0,25",
        "2,Bob,0,0,5,4,40",
    ]
    reply = lan.get("/api/rounds.csv")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/csv")
    assert "attachment" in reply.headers["content-disposition"]
    assert reply.text == "round,player,won,gained,fired,presses,score\r\n"  # no round yet


def test_a_phone_claims_a_seat_and_leaving_releases_it(lan: Any) -> None:
    assert lan.post("/api/claim", json={"seat": 1}, headers=ORIGIN).status_code == 401
    join(lan)
    claimed = lan.post("/api/claim", json={"seat": 1}, headers=ORIGIN)
    assert claimed.json() == {"ok": True, "seat": 1}
    assert lan.hub.latest() and json.loads(lan.hub.latest())["claims"] == [1]
    with TestClient(lan.app) as other:  # a second phone, its own session
        join(other)
        taken = other.post("/api/claim", json={"seat": 1}, headers=ORIGIN)
        assert taken.status_code == 409 and taken.json()["error"] == (
            "Bob is already claimed by another phone"
        )
        assert other.post("/api/claim", json={"seat": 2}, headers=ORIGIN).json()["seat"] == 2
        with other.websocket_connect("/ws", headers=ORIGIN) as ws:
            assert ws.receive_json()["seat"] == 2  # the page learns its own seat
    assert json.loads(lan.hub.latest())["claims"] == [1, 2]
    for bad, why in (
        ({"seat": 9}, "no seat 9: the seats are 0 to 2"),
        ({"seat": True}, "`seat` must be a number or null, not a boolean"),
        ({"seat": "1"}, "`seat` must be a number or null, not a string"),
        ({}, "`claim` needs `seat`"),
    ):
        reply = lan.post("/api/claim", json=bad, headers=ORIGIN)
        assert reply.status_code in (400, 409) and reply.json()["error"] == why, reply.text
    assert lan.post("/api/leave", json={}, headers=ORIGIN).status_code == 200
    assert COOKIE not in lan.cookies
    assert json.loads(lan.hub.latest())["claims"] == [2]


def test_new_game_for_a_joined_phone_keeps_the_last_in_the_history(
    lan: Any, tmp_path: Path
) -> None:
    refused = lan.post("/api/new", json={}, headers=ORIGIN)
    assert refused.status_code == 401  # a watcher starts no new game
    assert lan.post("/api/new", json={"players": "Zed"}, headers=ORIGIN).json()["error"] == (
        "unknown field `players` in `new`: allowed are type, id"
    )
    join(lan)
    # Bob goes out; Ann's and Cat's hands are scored
    for line in ("R5", "hand Bob 1", "R7", "R9 B9 G9 Y9 RS BS GS", "R1 R2 R3 R4 R6 R8 B1"):
        assert lan.post("/api/act", json={"line": line}, headers=ORIGIN).json()["ok"], line
    assert len(json.loads(lan.hub.latest())["view"]["rounds"]) == 1
    with lan.websocket_connect("/ws", headers=ORIGIN) as ws:
        ws.receive_json()  # hello
        ws.send_json({"type": "new", "id": 7})
        while (reply := ws.receive_json())["type"] != "reply":
            pass
    assert reply["ok"] and reply["id"] == 7 and reply["for"] == "new"
    assert reply["messages"][-1] == "new game: Ann, Bob, Cat"
    latest = json.loads(lan.hub.latest())
    assert latest["view"]["rounds"] == [] and latest["view"]["phase"] == "deal"
    (kept,) = (tmp_path / "table.games.jsonl").read_text().splitlines()
    assert json.loads(kept)["players"] == ["Ann", "Bob", "Cat"]
