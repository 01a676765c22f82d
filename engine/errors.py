"""Errors of the host engine."""

from __future__ import annotations

from wire.errors import UnoError  # the base is shared with the wire client's BoxError

__all__ = ["BoxConfigError", "CardError", "InputError", "RuleError", "UnoError"]


class RuleError(UnoError, ValueError):
    """An action the rules do not allow. The message is for a player to read:
    "seat 2 must hit 2 more times before playing". State is unchanged."""


class NoMatch(RuleError):
    """A card played that matches the top card by neither colour, number nor symbol; `card` is
    the card, so the table referee can say what would go."""

    def __init__(self, message: str, card: object = None) -> None:
        super().__init__(message)
        self.card = card


class CardError(UnoError, ValueError):
    """A card name that cannot be parsed or is not in the active deck."""

    exit_code = 2


class InputError(UnoError, ValueError):
    """Malformed user input (scenario or deck file, command-line value): exit code 2."""

    exit_code = 2


class BoxConfigError(UnoError):
    """A box config file (launcher.toml) the host reads is wrong or unreadable: exit code 78,
    as `launcher` gives for the same file. The message is the config checker's one line."""

    exit_code = 78
