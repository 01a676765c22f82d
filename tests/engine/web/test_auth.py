"""The join code, slowing wrong codes, and refusing other sites."""

from __future__ import annotations

import pytest

from engine.web.auth import (
    GLOBAL_LIMIT,
    GUESSES_PER_EVENING,
    MAX_WAIT_S,
    MIN_CODE,
    SESSION_AGE_S,
    SESSION_IDLE_S,
    WINDOW_S,
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


def test_sessions_end_after_an_evening_or_when_left_unused() -> None:
    clock = Clock()
    auth = Auth("424242", clock=clock)
    used = auth.join("phone", "424242")[0]
    left = auth.join("tablet", "424242")[0]
    while clock.now + 3600 < 1000.0 + SESSION_AGE_S:
        clock.now += 3600
        assert auth.valid(used)  # played with all evening: it lasts
    assert not auth.valid(left)  # left on the table: ended after SESSION_IDLE_S unused
    clock.now = 1000.0 + SESSION_AGE_S
    assert not auth.valid(used)  # the evening is over: join again
    assert 3600 < SESSION_IDLE_S < SESSION_AGE_S <= 24 * 3600


def test_the_code_floor_keeps_a_game_night_safe_at_the_guess_limit() -> None:
    """At GLOBAL_LIMIT wrong codes a minute (every client together), a 4-hour evening is 7,200
    guesses: four digits were found with a 72 % chance, six digits with 0.72 %."""
    assert GUESSES_PER_EVENING == GLOBAL_LIMIT * 4 * 3600 / WINDOW_S == 7200
    assert MIN_CODE == 6 and GUESSES_PER_EVENING / 10**MIN_CODE < 0.01
    assert GUESSES_PER_EVENING / 10 ** (MIN_CODE - 1) > 0.01
    assert "72%" in check_code("4711") and "7%" in check_code("47110")


def test_codes() -> None:
    code = new_code()
    assert len(code) == 6 and code.isdigit()
    assert check_code("123456") is None and check_code("unoAttack2025") is None
    assert check_code("12") and check_code("12 34 56") and check_code("ü" * 6)
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
