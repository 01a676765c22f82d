"""The join code, slowing wrong codes, and refusing other sites."""

from __future__ import annotations

import pytest

from engine.web.auth import (
    GLOBAL_LIMIT,
    MAX_WAIT_S,
    Auth,
    check_code,
    cross_site,
    host_allowed,
    new_code,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_right_code_opens_a_session_and_leave_closes_it() -> None:
    auth = Auth("424242", clock=Clock())
    token, problem, _ = auth.join("10.0.0.5", "424242")
    assert problem is None and auth.valid(token)
    assert not auth.valid("forged") and not auth.valid(None)
    auth.leave(token)
    assert not auth.valid(token)


def test_wrong_codes_are_slowed_doubling_per_client() -> None:
    clock = Clock()
    auth = Auth("424242", clock=clock)
    waits = []
    for _ in range(8):
        token, problem, wait = auth.join("phone", "000000")
        assert token is None and problem and problem.startswith("wrong join code")
        waits.append(wait)
        # trying again at once is refused without even looking at the code
        token, problem, left = auth.join("phone", "424242")
        assert token is None and problem.startswith("too many wrong join codes") and left == wait
        clock.now += wait
    assert waits == [1, 2, 4, 8, 16, 32, MAX_WAIT_S, MAX_WAIT_S]
    assert auth.join("other", "424242")[0] is not None  # another client is not held up
    token, _, _ = auth.join("phone", "424242")
    assert token is not None
    assert auth.join("phone", "000000")[2] == 1  # a right code starts the count afresh


def test_many_wrong_codes_from_everywhere_slow_everyone() -> None:
    clock = Clock()
    auth = Auth("424242", clock=clock)
    for n in range(GLOBAL_LIMIT):
        auth.join(f"10.0.{n}.1", "111111")
    token, problem, wait = auth.join("newcomer", "424242")
    assert token is None and problem.startswith("too many") and wait > 0
    clock.now += 61
    assert auth.join("newcomer", "424242")[0] is not None


def test_codes() -> None:
    code = new_code()
    assert len(code) == 6 and code.isdigit()
    assert check_code("1234") is None
    assert check_code("12") and check_code("12 34") and check_code("ü" * 6)
    assert Auth("424242").join("x", 424242)[1].startswith("code must be")


@pytest.mark.parametrize(
    ("headers", "scheme", "refused"),
    [
        ({"host": "127.0.0.1:8500", "origin": "http://127.0.0.1:8500"}, "http", False),
        ({"host": "127.0.0.1:8500", "origin": "http://127.0.0.1:8500"}, "ws", False),
        ({"host": "127.0.0.1:8500", "origin": "http://evil.example"}, "http", True),
        ({"host": "127.0.0.1:8500", "origin": "http://127.0.0.1:9999"}, "ws", True),
        ({"host": "127.0.0.1:8500", "origin": "https://127.0.0.1:8500"}, "http", True),
        ({"host": "127.0.0.1:8500", "origin": "null"}, "http", True),
        ({"host": "127.0.0.1:8500", "sec-fetch-site": "cross-site"}, "http", True),
        ({"host": "127.0.0.1:8500", "sec-fetch-site": "same-site"}, "http", True),
        ({"host": "127.0.0.1:8500", "sec-fetch-site": "same-origin"}, "http", False),
        ({"host": "127.0.0.1:8500"}, "http", False),  # curl: no browser, no victim's cookie
    ],
)
def test_cross_site(headers: dict[str, str], scheme: str, refused: bool) -> None:
    assert (cross_site(headers, scheme) is not None) is refused


def test_host_names() -> None:
    allowed = ("localhost", "127.0.0.1", "[::1]", "pi.local")
    assert host_allowed("127.0.0.1:8500", allowed)
    assert host_allowed("LOCALHOST:8500", allowed)
    assert host_allowed("[::1]:8500", allowed)
    assert host_allowed("pi.local", allowed)
    assert not host_allowed("evil.example:8500", allowed)  # DNS rebinding
    assert not host_allowed("", allowed)
    assert host_allowed("anything", ("*",))
