"""The host client now lives in the shared wire package (``wire/client.py``); this name is kept
for host modules written against it before the move."""

from wire.client import BoxClient, BoxError, ClientStats, Position

__all__ = ["BoxClient", "BoxError", "ClientStats", "Position"]
