"""What every answer of the web server carries, whoever makes it: the app's pages and
refusals (the Guard, engine/web/app.py), and the answers uvicorn and the WebSocket layer give
before the app sees a request (a request they cannot read, a refused WebSocket handshake:
engine/web/connections.py)."""

from __future__ import annotations

__all__ = ["CSP", "HEADERS", "raw_headers"]

CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def raw_headers() -> list[tuple[bytes, bytes]]:
    """`HEADERS` as ASGI and h11 take them."""
    return [(name.encode(), value.encode()) for name, value in HEADERS.items()]
