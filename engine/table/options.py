"""Which game a table referees: `GameOptions`, shared by `unoattack table`, `unoattack serve`
and the web demo, with its checks.

The players, the deck, the scoring mode and target and the rule options make a new game; the
state file holds a game under way (resumed unless `new`). `check()` refuses what cannot be
played before any box is opened (InputError, one line, exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import InputError
from engine.table.referee import Referee
from engine.table.state_file import StateFile, check_state_folder, load_state
from i18n import _

__all__ = ["DEFAULT_STATE", "GameOptions"]

DEFAULT_STATE = Path("unoattack-table.json")


@dataclass(frozen=True)
class GameOptions:
    """A refereed game: `players` (names, clockwise), `deck` (a preset or a deck file), the
    scoring `mode` and `target`, `rules` (rule options of a new game: name -> value), the
    `state` file and `new` (start a new game even if the file holds one)."""

    players: Sequence[str]
    deck: str = "attack"
    mode: str = "target"
    target: int = 500
    rules: Mapping[str, object] = field(default_factory=dict)
    state: Path = DEFAULT_STATE
    new: bool = False

    def referee(self) -> Referee:
        """A new game's referee; InputError naming what cannot be (names, deck, mode, target,
        rule options, a deck too small for the hands)."""
        return Referee(
            [p.strip() for p in self.players],
            deck=self.deck,
            mode=self.mode,
            target=self.target,
            options=dict(self.rules),
        )

    def check(self) -> StateFile | None:
        """The options checked before any box is opened (InputError, exit 2): the state file's
        folder, a saved game that can be read (and no rule options for it), or the game a new
        one would be. Returns the saved game to resume, or None for a new one."""
        state = self.state
        check_state_folder(state)
        if state.exists() and not self.new:
            saved = load_state(state)
            if self.rules:
                raise InputError(
                    _(
                        "--option sets the rules of a new game; {path} holds a game under way "
                        "(--new to start one)"
                    ).format(path=state)
                )
            return saved
        self.referee()
        return None
