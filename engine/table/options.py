"""Which game a table referees: `GameOptions`, shared by `unoattack table`, `unoattack serve`
and the web demo, with its checks.

The players, the deck, the scoring mode and target and the rule options make a new game; the
state file holds a game under way (resumed unless `new`, and only as it was saved: what shapes
the game may be given again only with the saved game's value). `check()` refuses what cannot
be played before any box is opened (InputError, one line, exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.cards import PRESETS, load_deck
from engine.errors import InputError
from engine.table.night_table import NightTable
from engine.table.referee import Referee
from engine.table.state_file import StateFile, check_state_folder, load_state
from i18n import _

__all__ = ["DEFAULT_STATE", "SHAPING", "GameOptions"]

DEFAULT_STATE = Path("unoattack-table.json")
# What shapes a game (a resumed one keeps its own).
SHAPING = ("deck", "mode", "target", "teams")


@dataclass(frozen=True)
class GameOptions:
    """A refereed game: `players` (names, clockwise), `deck` (a preset or a deck file), the
    scoring `mode`, `target` and `teams` (teams mode; None: not given; a new game takes the
    referee's defaults, a resumed one keeps its own), `rules` (rule options of a new game:
    name -> value), the `state` file and `new` (start a new game even if the file holds one)."""

    players: Sequence[str]
    deck: str | None = None
    mode: str | None = None
    target: int | None = None
    teams: int | None = None
    rules: Mapping[str, object] = field(default_factory=dict)
    state: Path = DEFAULT_STATE
    new: bool = False
    night: NightTable | None = None  # a table of a game night: the night seats the players

    def referee(self) -> Referee:
        """A new game's referee; InputError naming what cannot be (names, deck, mode, target,
        teams, rule options, a deck too small for the hands). A table of a night plays the
        game of the night's next round there."""
        if self.night is not None:
            return self.night.referee()
        if self.teams is not None and self.mode != "teams":
            raise InputError(
                _("{flag} {teams}: the number of teams is for {mode} teams").format(
                    flag="--teams", teams=self.teams, mode="--mode"
                )
            )
        shape = {name: getattr(self, name) for name in SHAPING}
        return Referee(
            [p.strip() for p in self.players],
            **{name: value for name, value in shape.items() if value is not None},
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
            self.same_night(saved)
            if self.night is not None:
                self.night.check_game(saved.referee, state)
            else:
                self.same_game(saved.referee)
            return saved
        self.referee()
        return None

    def same_night(self, saved: StateFile) -> None:
        """A game of a night's table resumes as that table of that night, and only so
        (InputError, one line, exit 2)."""
        was = saved.night
        if was is None and self.night is None:
            return
        if was is None:
            assert self.night is not None
            raise InputError(
                _(
                    "{path} holds a game that is not table {table} of the night {night}: give "
                    "another --state FILE, or --new to seat the night's next round"
                ).format(path=self.state, table=self.night.table + 1, night=self.night.book.path)
            )
        same = self.night is not None and (
            self.night.table + 1 == was["table"]
            and Path(was["file"]).resolve() == self.night.book.path.resolve()
        )
        if not same:
            raise InputError(
                _(
                    "{path} holds table {table} of the night {night}: add --night {night} "
                    "--table {table}, or --new"
                ).format(path=self.state, table=was["table"], night=was["file"])
            )

    def same_game(self, ref: Referee) -> None:
        """A saved game resumes as it was saved: what shapes the game (`deck`, `mode`,
        `target`, `teams`) may be given only with the saved game's value, rule options not at all
        (InputError, one line, exit 2). A deck that does not exist is refused as such first."""
        state = self.state
        if self.rules:
            raise InputError(
                _(
                    "--option sets the rules of a new game; {path} holds a game under way (--new "
                    "to start one)"
                ).format(path=state)
            )
        if self.deck is not None:
            load_deck(self.deck)  # `unknown deck`, a bad deck file: whatever the saved game
        for name in SHAPING:
            given = getattr(self, name)
            saved = getattr(ref, "deck_name" if name == "deck" else name)
            if given is None or given == saved or (name == "deck" and _same_file(given, saved)):
                continue
            raise InputError(
                _(
                    "--{flag} {given}: {path} holds a game with --{flag} {saved} (--new to start "
                    "one)"
                ).format(flag=name, given=given, path=state, saved=saved)
            )


def _same_file(given: str, saved: str) -> bool:
    """Two deck files named differently (`home.toml`, `./home.toml`) are the same deck."""
    if given in PRESETS or saved in PRESETS:
        return False
    return Path(given).resolve() == Path(saved).resolve()
