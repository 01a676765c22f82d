"""`unoattack demo`: a whole game with bots, every hit a real press of a (mock) box.

The demo starts the mock box (engine/mockbox.py: `launcher run --mock --port pty` as a child
process, mock pins plus the plant, the simulated mechanism), connects to it with `BoxClient`, and
plays a `Game` to the target with a mix of `HeuristicBot` and `RandomBot`, each round through
`sim.play_round` as a simulation plays it. Every hit is a press over the serial link and takes
as many cards off the engine's virtual launcher pile as the box's fire event says it ejected; a
forced Hit 2 is two presses, Hit-Fire is presses until the box fires. With `--deck classic` the
launcher is the draw pile: every draw is a `dispense` of exactly the cards drawn. After every
round the engine's pile is checked against the plant's hopper (cards are conserved).

What each move did is said by the narrator (engine/narrate.py), as the table says it; the
demo's own lines are the box's (each press and what it fired) and the tallies.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO

from engine.bots import Bot, HeuristicBot, RandomBot
from engine.cards import load_deck
from engine.errors import UnoError
from engine.game import Action, Game, Round
from engine.mockbox import MockBox
from engine.narrate import Narrator
from engine.outcomes import RoundStarted
from engine.rules import PRESET_NAMES, rules_for
from engine.sim import play_round
from engine.words import plural
from i18n import _, number
from wire.text import news

if TYPE_CHECKING:
    # the box's client (pyserial, sqlite3) is imported once a demo plays, not for --help
    from wire.client import BoxClient

__all__ = ["NAMES", "Demo", "Screen", "Spectator", "color_wanted", "show_summary"]

NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon")


# ---------------------------------------------------------------------------------------------
# Rendering

_ANSI = {"R": "31", "Y": "33", "G": "32", "B": "34", None: "35"}


def color_wanted(out: TextIO) -> bool:
    """Colour only on a terminal that shows it: not when piped, not with NO_COLOR set
    (no-color.org), not on a terminal that declares itself `dumb` (Emacs shell, serial
    consoles), which prints escape codes as garbage."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM", "") == "dumb":
        return False
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Screen:
    """Readable live output; colours on a terminal (unless NO_COLOR, or TERM=dumb)."""

    def __init__(self, out: TextIO, names: list[str]) -> None:
        self.out = out
        self.names = names
        self.color = color_wanted(out)

    def line(self, text: str = "") -> None:
        """Print one line now."""
        print(text, file=self.out, flush=True)

    def card(self, card: Any, text: str | None = None) -> str:
        """A card in notation (or `text` about it), coloured on a terminal."""
        text = str(card) if text is None else text

        if not self.color:
            return text
        return f"\x1b[{_ANSI.get(card.color, '0')}m{text}\x1b[0m"

    def bold(self, text: str) -> str:
        """Bold on a terminal."""
        return f"\x1b[1m{text}\x1b[0m" if self.color else text


# ---------------------------------------------------------------------------------------------
# The game


class Spectator:
    """Whoever follows the demo's game besides the screen: told of every round, move and box
    event as it happens. `demo --web` has one (the table referee and the web page,
    engine/web/demo_web.py); this one does nothing. A method may raise to end the game."""

    def round_started(self, rnd: Any) -> None:
        """A round was dealt and its first card turned up."""

    def before(self, rnd: Any, act: Any) -> None:
        """`act` is about to be applied to `rnd` (a hit: the box is about to be pressed)."""

    def after(self, rnd: Any, act: Any) -> None:
        """`act` was applied to `rnd`."""

    def round_over(self, rnd: Any) -> None:
        """`rnd` is over, before it is scored."""

    def box_event(self, event: dict[str, Any]) -> None:
        """An event of the box that is not a fire result (state, refill, jam, ...)."""

    def fired(self, seat: int, event: dict[str, Any]) -> None:
        """The fire result of a press for `seat` (-1: a dispense)."""


class Demo:
    """One demo game: bots, a `Game`, a `BoxLauncher` over the mock box, and the tallies."""

    def __init__(
        self,
        box: MockBox,
        client: BoxClient,
        *,
        players: int,
        seed: int,
        deck: str,
        target: int,
        screen: Screen,
        spectator: Spectator | None = None,
    ) -> None:
        self.box = box
        self.client = client
        self.screen = screen
        self.spectator = spectator or Spectator()
        self.names = list(NAMES[:players])
        self.bots: list[Bot] = [
            (HeuristicBot if s % 2 == 0 else RandomBot)(seed * 100 + s) for s in range(players)
        ]
        self.kinds = ["heuristic" if s % 2 == 0 else "random" for s in range(players)]
        from engine.box import BoxLauncher

        self.launcher = BoxLauncher(client, on_fire=self._on_fire, on_event=self._on_event)
        preset = deck if deck in PRESET_NAMES else "attack"
        self.game = Game(
            load_deck(deck),
            rules_for(preset, players),
            self.launcher,
            players,
            target=target,
            seed=seed,
        )
        # What each move did, said as the table says it; every obligation is said too (the
        # demo has no referee to say who owes first).
        self.narrator = Narrator(self.names, classic=preset == "classic", obligations=True)
        self._told = 0  # how much of the round's record the narrator has said
        self.states: list[str] = []
        self.checks: list[dict[str, Any]] = []
        self.turns = 0
        self.moving: int | None = None  # the seat whose move is being applied

    @classmethod
    def for_args(
        cls,
        args: argparse.Namespace,
        box: MockBox,
        client: BoxClient,
        screen: Screen,
        spectator: Spectator | None = None,
    ) -> Demo:
        """The game `unoattack demo`'s options ask for (`--players`, `--seed`, `--deck`,
        `--target`), on `box`."""
        return cls(
            box,
            client,
            players=args.players,
            seed=args.seed,
            deck=args.deck,
            target=args.target,
            screen=screen,
            spectator=spectator,
        )

    # -- box callbacks ----------------------------------------------------------------------
    def _on_event(self, event: dict[str, Any]) -> None:
        self.spectator.box_event(event)
        kind = event.get("kind")
        if kind == "state":
            if not self.states:
                self.states.append(str(event.get("from")))
            self.states.append(str(event.get("to")))
        elif kind == "jam":  # what the demo does about it (the box event's text is news())
            self.screen.line(
                "    "
                + _("box JAMMED (press {press}): clearing it").format(press=event.get("press_id"))
            )
        elif kind in ("refill", "empty", "fault"):
            self.screen.line("    " + str(news(event)))

    def _on_fire(self, seat: int, event: dict[str, Any]) -> None:
        self.spectator.fired(seat, event)
        ejected = int(event.get("ejected") or 0)
        # A dispense is for whoever is moving (a classic draw, or a draw owed).
        drawing = seat if seat >= 0 else self.moving
        who = self.names[drawing] if drawing is not None else _("dispense")
        got = plural(ejected, "card") if ejected else _("dry")
        # A dispense (a classic draw) asks for exact cards: the jam model's dry streak is moot.
        streak = (
            " " + _("(dry streak {streak})").format(streak=event.get("dry_streak"))
            if seat >= 0
            else ""
        )
        reason = event.get("reason")
        note = "" if reason in ("fired", "dry") else f" [{reason}]"
        if event.get("strays"):
            note += " " + _("+{count} slipped out after the burst").format(count=event["strays"])
        states = ""
        if self.states:
            states = "  " + _("box {states}").format(states=">".join(self.states))
            self.states = []
        press = _("press {press} -> {got}").format(press=event.get("press_id"), got=got)
        self.screen.line(f"    {who}: {press}{note}{streak}{states}")

    # -- play -------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Play the whole game; returns the summary."""
        scr = self.screen
        game = self.game
        started = time.monotonic()
        title = "UNO" if game.rules.preset == "classic" else "UNO Attack"
        scr.line(
            scr.bold(
                _("{title} demo: {players} players to {target} points,").format(
                    title=title, players=len(self.names), target=game.target
                )
            )
            + " "
            + _("{deck} deck, box on {port}").format(deck=game.deck.name, port=self.client.port)
        )
        scr.line(
            "  " + ", ".join(f"{n} ({k})" for n, k in zip(self.names, self.kinds, strict=True))
        )
        while not game.over:
            rnd = game.start_round()
            self._told = 0
            self.launcher.drain()
            number = game.rounds_played + 1
            dealt = RoundStarted(number, rnd.dealer, rnd.top, len(rnd.pile))
            scr.line()
            scr.line(
                scr.bold(_("Round {round}").format(round=number))
                + ": "
                + self.narrator.lines([dealt])[0]
            )
            self._tell(rnd)  # what the card turned up does
            self.spectator.round_started(rnd)
            self.turns += play_round(rnd, self.bots, apply=partial(self._apply, rnd))
            self.launcher.drain()
            self.spectator.round_over(rnd)
            result = game.finish_round()
            self._check_conservation(game.rounds_played, len(rnd.pile))
            self._show_scores(result)
        elapsed = time.monotonic() - started
        return self._summary(elapsed)

    def _apply(self, rnd: Round, act: Action) -> None:
        """One move of a bot's: the spectator told before and after, what it did said."""
        self.spectator.before(rnd, act)
        self.moving = act.seat
        rnd.apply(act)
        self.moving = None
        self._tell(rnd)
        self.spectator.after(rnd, act)

    def _tell(self, rnd: Round) -> None:
        """Say what the round recorded since it was last told (the narrator's words). The
        record is kept whole: the referee of `demo --web` follows the moves from it too."""
        fresh = rnd.outcomes[self._told :]
        self._told = len(rnd.outcomes)
        for line in self.narrator.lines(fresh):
            self.screen.line("  " + line)

    def _check_conservation(self, round_no: int, pile: int) -> None:
        """The engine's virtual pile must equal the plant's hopper (cards are conserved)."""
        hopper = self._plant_hopper(pile)
        ok = hopper == pile
        self.checks.append({"round": round_no, "pile": pile, "hopper": hopper, "ok": ok})
        if not ok:
            raise UnoError(
                f"cards not conserved after round {round_no}: the engine's launcher pile holds "
                f"{pile}, the box's hopper {hopper}"
            )
        self.screen.line(
            "  "
            + _("conservation: launcher pile {pile} = box hopper {hopper}").format(
                pile=pile, hopper=hopper
            )
        )

    def _plant_hopper(self, expect: int) -> int | None:
        # The plant writes its file after every card, before the daemon reports the burst, so
        # this normally matches at once; allow the file system a moment all the same.
        deadline = time.monotonic() + 2.0
        hopper = None
        while True:
            with contextlib.suppress(OSError, ValueError):
                hopper = int(self.box.plant()["hopper"])
            if hopper == expect or time.monotonic() > deadline:
                return hopper
            time.sleep(0.02)

    def _show_scores(self, result: dict[str, Any]) -> None:
        scr = self.screen
        game = self.game
        won = result["winner"]
        scr.line(
            scr.bold(
                _("Round {round} to {player}").format(round=result["round"], player=self.names[won])
            )
            + ": "
            + _("+{points} points").format(points=result["gained"][won])
        )
        order = sorted(range(len(self.names)), key=lambda s: (-game.scores[s], s))
        width = max(len(n) for n in self.names)
        for s in order:
            bar = "#" * min(50, game.scores[s] * 50 // max(1, game.target))
            scr.line(f"    {self.names[s]:<{width}} {game.scores[s]:>4}  {bar}")

    def _summary(self, elapsed: float) -> dict[str, Any]:
        game = self.game
        fires = self.launcher.fires
        fire_ids = [f.get("press_id") for f in fires]
        return {
            "winner": game.winner,
            "winner_name": self.names[game.winner] if game.winner is not None else None,
            "scores": list(game.scores),
            "target": game.target,
            "rounds": game.rounds_played,
            "turns": self.turns,
            "presses": self.launcher.presses_sent,
            "fire_results": len(fires),
            "unique_fire_press_ids": len(set(fire_ids)),
            "hits": self.launcher.hits,
            "cards_fired": self.launcher.cards_fired,
            "dry_presses": self.launcher.dry_hits,
            "jams": self.launcher.jams,
            "strays": self.launcher.strays,
            "reloads": self.launcher.reloads,
            "conservation": self.checks,
            "conserved": all(c["ok"] for c in self.checks),
            "box_pid": self.box.pid,
            "elapsed_s": round(elapsed, 2),
        }


def show_summary(screen: Screen, s: dict[str, Any]) -> None:
    """The game's end: the winner and the box's tallies, whether cards were conserved."""
    screen.line()
    screen.line(
        screen.bold(
            _("{player} wins with {points} points!").format(
                player=s["winner_name"], points=s["scores"][s["winner"]]
            )
        )
    )
    strays = (
        " " + _("({count} slipped out behind a burst)").format(count=s["strays"])
        if s["strays"]
        else ""
    )
    said = (
        _(
            "{rounds}, {presses} presses ({dry} dry), {cards} cards fired{strays}, {jams} jams, "
            "{seconds} s; cards conserved: yes"
        )
        if s["conserved"]
        else _(
            "{rounds}, {presses} presses ({dry} dry), {cards} cards fired{strays}, {jams} jams, "
            "{seconds} s; cards conserved: NO"
        )
    )
    if "box_exit" in s:
        said += _("; box stopped (exit {code})")
    screen.line(
        "  "
        + said.format(
            rounds=plural(s["rounds"], "round"),
            presses=s["presses"],
            dry=s["dry_presses"],
            cards=s["cards_fired"],
            strays=strays,
            jams=s["jams"],
            seconds=f"{s['elapsed_s']:.1f}",
            code=s.get("box_exit"),
        )
    )
    if s.get("sounds"):
        cues = ", ".join(f"{event} {n}" for event, n in s["sounds"].items())
        # the cue names are the sound pack's event keys (docs/personality.md), as in its manifest
        said = _("the box's sounds ({total}): {cues}")
        screen.line("  " + said.format(total=number(sum(s["sounds"].values())), cues=cues))
