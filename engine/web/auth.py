"""Who may change the game: the join code, session cookies, and requests from other sites.

- Anyone who can reach the page may watch. Changing the game (and the box panel's controls)
  needs a session: `POST /api/join` with the join code printed by `unoattack serve` sets an
  HttpOnly, SameSite=Strict cookie holding a random token the server remembers.
- A session ends `SESSION_AGE_S` after joining (the cookie's age too), or sooner when it was not
  used (no request, no WebSocket opened with it) for `SESSION_IDLE_S`: a phone left behind at
  the end of the evening does not play on.
- Wrong codes are slowed down: after a wrong code a client must wait before its next try, the
  wait doubling with every wrong code in a row (1 s, 2 s, 4 s, ... up to a minute); and when
  `GLOBAL_LIMIT` wrong codes arrive from anywhere within a minute, every client waits. So an
  attacker tries at most 30 codes a minute, 7,200 in a 4-hour evening, and a join code has at
  least `MIN_CODE` characters: even six digits leave them a 0.72 % chance in that evening
  (four digits: 72 %).
- Cross-site requests cannot act: a state-changing request (every POST, and every WebSocket)
  whose `Origin` is not this server's own is refused, and so is a `Host` the server does not
  answer to (DNS rebinding: a foreign name pointed at this address).
"""

from __future__ import annotations

import collections
import hmac
import math
import secrets
import time
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from i18n import _, number, percent

__all__ = [
    "COOKIE",
    "MIN_CODE",
    "SESSION_AGE_S",
    "SESSION_IDLE_S",
    "Auth",
    "Throttle",
    "check_code",
    "cross_site",
    "host_allowed",
    "new_code",
]

COOKIE = "unoattack_session"
MAX_SESSIONS = 512  # phones at one table, with room for many re-joins
SESSION_AGE_S = 12 * 3600  # a session lasts an evening at most
SESSION_IDLE_S = 2 * 3600  # and ends when not used for this long
FIRST_WAIT_S = 1.0
MAX_WAIT_S = 60.0
# Wrong codes from all clients together in WINDOW_S seconds before everyone waits.
GLOBAL_LIMIT = 30
WINDOW_S = 60.0
# The join code's floor: an attacker trying GLOBAL_LIMIT codes a WINDOW_S all through a game
# night of EVENING_S finds a code of digits with a chance below RISK.
EVENING_S = 4 * 3600
RISK = 0.01
GUESSES_PER_EVENING = GLOBAL_LIMIT * EVENING_S / WINDOW_S  # 7,200
MIN_CODE = math.ceil(math.log10(GUESSES_PER_EVENING / RISK))  # 6 digits: a 0.72 % chance
MAX_CODE = 32


def new_code(digits: int = MIN_CODE) -> str:
    """A random join code of `digits` digits (easy to type on a phone)."""
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def guess_chance(code: str) -> float:
    """The chance that an attacker finds `code` in an evening at the server's guess limit,
    counting it as a code of digits (letters only make it harder)."""
    return min(1.0, GUESSES_PER_EVENING / 10 ** len(code))


def check_code(code: str) -> str | None:
    """Why `code` cannot be a join code given on the command line (or $UNOATTACK_CODE), or
    None: `MIN_CODE` to `MAX_CODE` letters or digits."""
    if not code.isascii() or not code.isalnum() or len(code) > MAX_CODE:
        return _("join code `{code}`: {least} to {most} letters or digits").format(
            code=code, least=MIN_CODE, most=MAX_CODE
        )
    if len(code) < MIN_CODE:
        return _(
            "join code `{code}` is too short: at {guesses} guesses in a 4-hour evening (the "
            "server's limit) a code of {length} digits is found with a {chance} chance; use "
            "{least} to {most} letters or digits (docs/web.md)"
        ).format(
            code=code,
            guesses=number(GUESSES_PER_EVENING, 0),
            length=len(code),
            chance=percent(guess_chance(code), 0),
            least=MIN_CODE,
            most=MAX_CODE,
        )
    return None


class Throttle:
    """Slows repeated wrong join codes, per client and in total. `clock` is injectable."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._fails: dict[str, int] = {}
        self._until: dict[str, float] = {}
        self._recent: collections.deque[float] = collections.deque()

    def wait(self, client: str) -> float:
        """Seconds `client` must still wait before its next try (0: it may try now)."""
        now = self.clock()
        while self._recent and self._recent[0] <= now - WINDOW_S:
            self._recent.popleft()
        mine = self._until.get(client, 0.0) - now
        overall = 0.0
        if len(self._recent) >= GLOBAL_LIMIT:
            overall = self._recent[0] + WINDOW_S - now
        return max(0.0, mine, overall)

    def failed(self, client: str) -> float:
        """A wrong code from `client`: returns how long it must wait now."""
        now = self.clock()
        fails = self._fails.get(client, 0) + 1
        if len(self._fails) > 10_000:  # bounded memory against a flood of addresses
            for gone in [c for c, until in self._until.items() if until + MAX_WAIT_S <= now]:
                self._fails.pop(gone, None)
                self._until.pop(gone, None)
            if len(self._fails) > 10_000:
                self._fails.clear()
                self._until.clear()
        self._fails[client] = fails
        wait = min(MAX_WAIT_S, FIRST_WAIT_S * 2 ** (fails - 1))
        self._until[client] = now + wait
        self._recent.append(now)
        return wait

    def succeeded(self, client: str) -> None:
        """The right code: `client` starts afresh."""
        self._fails.pop(client, None)
        self._until.pop(client, None)


class Auth:
    """The join code and the sessions it opened (each ends `SESSION_AGE_S` after joining, or
    after `SESSION_IDLE_S` unused). `clock` is injectable."""

    def __init__(self, code: str | None = None, *, clock: Callable[[], float] = time.monotonic):
        self.code = code or new_code()
        self.clock = clock
        self.throttle = Throttle(clock)
        # token -> (joined, last used), oldest join first
        self._sessions: collections.OrderedDict[str, tuple[float, float]] = (
            collections.OrderedDict()
        )

    def join(self, client: str, code: object) -> tuple[str | None, str | None, float]:
        """Try `code` for `client`: (token, None, 0) on success, else (None, reason, wait)."""
        wait = self.throttle.wait(client)
        if wait > 0:
            problem = _("too many wrong join codes: try again in {n} s").format(n=round(wait))
            return None, problem, wait
        if not isinstance(code, str) or not code:
            return None, _("code must be the join code printed by `unoattack serve` (a string)"), 0
        if not hmac.compare_digest(code.strip().encode(), self.code.encode()):
            wait = self.throttle.failed(client)
            return None, _("wrong join code: try again in {n} s").format(n=round(wait)), wait
        self.throttle.succeeded(client)
        token = secrets.token_urlsafe(24)
        now = self.clock()
        self._sessions[token] = (now, now)
        self._expire(now)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return token, None, 0

    def valid(self, token: object) -> bool:
        """True for the token of a session this server opened that has not ended; asking
        counts as using it."""
        if not isinstance(token, str):
            return False
        now = self.clock()
        held = self._sessions.get(token)
        if held is None or self._ended(held, now):
            self._sessions.pop(token, None)
            return False
        self._sessions[token] = (held[0], now)
        return True

    def leave(self, token: object) -> None:
        """Close a session."""
        if isinstance(token, str):
            self._sessions.pop(token, None)

    @staticmethod
    def _ended(held: tuple[float, float], now: float) -> bool:
        joined, used = held
        return now - joined >= SESSION_AGE_S or now - used >= SESSION_IDLE_S

    def _expire(self, now: float) -> None:
        for token in [t for t, held in self._sessions.items() if self._ended(held, now)]:
            del self._sessions[token]


def cross_site(headers: dict[str, str], scheme: str) -> str | None:
    """Why a state-changing request is refused as coming from another site, or None.

    `headers` are lower-case; `scheme` is the request's (`http`, `ws`, ...). A browser always
    says where a request comes from (`Origin`, or at least `Sec-Fetch-Site`); a request without
    either is no browser's and cannot carry a victim's cookie."""
    origin = headers.get("origin")
    host = headers.get("host", "")
    if origin is None:
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return f"cross-site request refused (Sec-Fetch-Site: {site})"
        return None
    own = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    parts = urlsplit(origin)
    if origin == "null" or (parts.scheme, parts.netloc.lower()) != (own, host.lower()):
        return f"cross-site request refused: origin {origin} is not this server ({own}://{host})"
    return None


def host_allowed(host_header: str, allowed: Iterable[str]) -> bool:
    """True when the `Host` header names one of the `allowed` host names (any port), or when
    `allowed` holds `*`."""
    names = set(allowed)
    if "*" in names:
        return True
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8500
        name = host[: host.find("]") + 1] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name in names
