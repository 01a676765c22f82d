"""The web table probed again from the LAN after the first round of fixes (issue 21's held-out
checks): each probe against `unoattack serve`'s real web server (uvicorn, the app, the hub) on a
free port of this machine, over real HTTP and WebSocket connections. Each got a traceback, a
silent socket or a flooded log; each now gets one line, and the server carries on."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2 as httpx
import pytest

from tests.engine.web.conftest import Live
from tests.engine.web.test_lan_probes import hello, joined, reply_to, ws

HALF_PAIR = '"\\ud800"'  # a valid JSON escape, but no character: UTF-8 cannot encode it


@pytest.mark.parametrize(
    "body",
    [
        '{"code": ' + HALF_PAIR + "}",  # unauthenticated: it was a 500 and a traceback
        '{"code": "1", "x\\udfff": 1}',
    ],
)
def test_half_a_surrogate_pair_to_join_is_one_line(live: Callable[..., Live], body: str) -> None:
    served = live()
    with httpx.Client(base_url=served.url, headers=served.origin, timeout=30) as http:
        reply = http.post("api/join", content=body, headers={"content-type": "application/json"})
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error.startswith("message is not text: ") and "\n" not in error
        assert http.post("api/join", json={"code": served.code}).status_code == 200


def test_half_a_surrogate_pair_over_the_websocket_gets_an_error_and_the_socket_stays(
    live: Callable[..., Live],
) -> None:
    """A ping whose id was `"\\ud800"`: its reply could not be sent, the socket's sender died
    without a word and the page never got another update."""
    served = live()
    with joined(served) as http:
        token = http.cookies["unoattack_session"]
    cookie = {"cookie": f"unoattack_session={token}"}
    with ws(served, additional_headers=cookie) as sock:
        hello(sock)
        for bad in (
            '{"type": "ping", "id": ' + HALF_PAIR + "}",
            '{"type": "act", "id": 2, "line": ' + HALF_PAIR + "}",
            '{"type": "box", "op": "model.set", "params": {' + HALF_PAIR + ": 1}}",
        ):
            error = reply_to(sock, bad)
            assert error["type"] == "error" and error["error"].startswith("message is not text")
        assert reply_to(sock, '{"type": "ping", "id": 3}')["ok"] is True
        served.service.announce(["still live"], {"test": True})
        update = json.loads(sock.recv(timeout=30))
        assert update["type"] == "update" and update["messages"] == ["still live"]
