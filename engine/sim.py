"""`unoattack sim`: many whole games between bots, seeded, with statistics.

Each game gets its own seed derived from `--seed` and the game's index, so game 7 of a run is the
same game whatever `--games` says, and whichever worker plays it. Every bot and the virtual
launcher are seeded from it too. Games are played in blocks by an executor (engine/executors.py:
this process, a pool of worker processes, or a Dask cluster); the totals are sums and the rows are
kept by game index, so the results are the same for every `--workers` and `--executor`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from common.commandline import CtrlC, whole_number
from common.jam import JamModel, JamParams
from engine.bots import BOTS, Bot, make_bot
from engine.cards import PRESETS, Deck
from engine.cards_cli import add_deck_argument, open_deck
from engine.errors import InputError, RuleError, UnoError
from engine.executors import (
    Executor,
    InlineExecutor,
    check_executor,
    check_workers,
    executor_for,
)
from engine.game import SCORING_MODES, Action, Game, Round
from engine.launchers import VirtualLauncher
from engine.rules import MAX_PLAYERS, MIN_PLAYERS, parse_option, rules_for
from engine.scoring import modes_help, target_help, teams_help, teams_problem
from engine.words import plural
from i18n import _, number
from i18n.layout import columns

# Bug guards: no sane round needs this many actions, no sane game this many rounds.
MAX_ACTIONS_PER_ROUND = 20_000
MAX_ROUNDS_PER_GAME = 5_000
# Most games one run may ask for: days of work already; Ctrl-C still reports a run cut short.
MAX_GAMES = 10_000_000
# Games per block handed to a worker: enough to make a block worth sending, few enough that the
# progress bar moves and Ctrl-C is answered within about a second.
MAX_BLOCK = 25


class RunawayError(UnoError):
    """A round or game that does not end: an engine or bot bug, reported with its seed."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class GameRow:
    """One game's figures, kept when the distributions are wanted (`unoattack sweep`)."""

    index: int
    rounds: int
    turns: int
    presses: int  # hits: presses of the button
    fires: int  # presses and dispenses that fired at least one card
    cards: int  # cards fired, by hits and dispenses
    winners: tuple[int, ...]
    decided: int  # rounds the launcher decided (see SimStats.launcher_decided)
    losers: tuple[int, ...] = ()  # as the mode names them (LOSER_MODES)


@dataclass
class SimStats:
    """Totals over a run (everything but `elapsed_s` depends only on the arguments).

    `launcher_decided` counts the rounds the launcher decided: a hit fired cards at a player
    holding one card, and that player did not win the round (knockout: was its loser).
    `cards_per_hit[k]` is how many hits fired k cards. `losses` are the games each seat lost,
    in the modes that name a loser; `chips` the chips each seat won (or, below 0, lost) over
    the games, in chips mode. `rows` (one per game, by index) only when asked for.
    """

    players: int
    games: int = 0
    rounds: int = 0
    turns: int = 0
    actions: int = 0
    wins: list[int] = field(default_factory=list)
    losses: list[int] = field(default_factory=list)
    chips: list[int] = field(default_factory=list)
    round_wins: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)
    hits: int = 0
    dry_hits: int = 0
    hit_cards: int = 0
    dispenses: int = 0
    dispensed_cards: int = 0
    launcher_decided: int = 0
    cards_per_hit: list[int] = field(default_factory=list)
    rows: list[GameRow] | None = None
    elapsed_s: float = 0.0
    interrupted: bool = False  # Ctrl-C ended the run early; the totals cover whole games only

    def __post_init__(self) -> None:
        for name in _PER_SEAT:
            if not getattr(self, name):
                setattr(self, name, [0] * self.players)

    @property
    def cards_fired(self) -> int:
        """Every card the launcher fired, by hit or by dispense."""
        return self.hit_cards + self.dispensed_cards

    def merge(self, other: SimStats) -> None:
        """Add another block's totals to these (rows are put in game order by `sort_rows`)."""
        for name in _SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in _PER_SEAT:
            mine, theirs = getattr(self, name), getattr(other, name)
            for seat, value in enumerate(theirs):
                mine[seat] += value
        mine = self.cards_per_hit
        if len(mine) < len(other.cards_per_hit):
            mine.extend([0] * (len(other.cards_per_hit) - len(mine)))
        for k, value in enumerate(other.cards_per_hit):
            mine[k] += value
        if other.rows is not None:
            if self.rows is None:
                self.rows = []
            self.rows.extend(other.rows)

    def sort_rows(self) -> None:
        """Rows in game order (blocks may finish in any order)."""
        if self.rows is not None:
            self.rows.sort(key=lambda row: row.index)

    def to_dict(self, mode: str = "target") -> dict[str, Any]:
        """The JSON shape of `unoattack sim --json` (without the run's settings): `losses` in
        the modes that name a loser, `chips` in chips mode."""
        rounds = max(self.rounds, 1)
        by_mode: dict[str, Any] = {}
        if mode in LOSER_MODES:
            by_mode["losses"] = list(self.losses)
        if mode == "chips":
            by_mode["chips"] = list(self.chips)
        return {
            "games": self.games,
            "rounds": self.rounds,
            "wins": list(self.wins),
            **by_mode,
            "round_wins": list(self.round_wins),
            "mean_rounds_per_game": self.rounds / max(self.games, 1),
            "mean_turns_per_round": self.turns / rounds,
            "mean_actions_per_round": self.actions / rounds,
            "points_scored": list(self.points),
            "hits": self.hits,
            "dry_hits": self.dry_hits,
            "cards_per_hit": list(self.cards_per_hit),
            "cards_fired": self.cards_fired,
            "launcher_decided": self.launcher_decided,
            "elapsed_s": round(self.elapsed_s, 3),
            "rounds_per_s": round(self.rounds / self.elapsed_s, 1) if self.elapsed_s else None,
            "interrupted": self.interrupted,
        }


_PER_SEAT = ("wins", "losses", "chips", "round_wins", "points")
# Modes that name the game's loser(s) (engine/scoring.py).
LOSER_MODES = frozenset({"teams", "knockout", "chips", "losing"})

_SUMS = (
    "games",
    "rounds",
    "turns",
    "actions",
    "hits",
    "dry_hits",
    "hit_cards",
    "dispenses",
    "dispensed_cards",
    "launcher_decided",
)


def game_seed(seed: int, index: int) -> int:
    """The seed of game `index` in a run seeded `seed` (stable across Python versions)."""
    return random.Random(f"unoattack-sim:{seed}:{index}").getrandbits(63)


def play_round(
    rnd: Round,
    bots: Sequence[Bot],
    *,
    max_actions: int = MAX_ACTIONS_PER_ROUND,
    where: str = "round",
    apply: Callable[[Action], None] | None = None,
) -> int:
    """Play `rnd` to its end with `bots` (one per seat); return the number of actions applied.

    Before each move the seats get a chance to act out of turn whenever that can matter (a
    player just went down to one card, or jump-in is on), the player who made the last play first.
    `apply` applies each move (default `rnd.apply`; the demo's shows and presses as it goes).
    """
    actions = 0
    jump_in = rnd.rules.jump_in
    seats = rnd.seats
    apply = rnd.apply if apply is None else apply
    choose = [bot.choose for bot in bots]  # bound once: this loop runs for every move
    act: Any = None
    try:
        # `actor` is None exactly when the round is over.
        while (actor := rnd.actor) is not None:
            if rnd.window is not None or jump_in:
                first = rnd.window if rnd.window is not None else actor
                start = seats.index(first) if first in seats else 0
                for seat in seats[start:] + seats[:start]:
                    act = bots[seat].react(rnd, seat)
                    if act is not None:
                        apply(act)
                        actions += 1
                        if rnd.over:
                            break
                actor = rnd.actor
                if actor is None:
                    break
            act = choose[actor](rnd, actor)
            apply(act)
            actions += 1
            if actions >= max_actions:
                raise RunawayError(
                    f"{where} ran past {max_actions} actions without ending "
                    f"(turn {rnd.turn}, {len(rnd.pile)} cards in the launcher): engine or bot bug"
                )
    except RuleError as exc:
        # Bots only pick legal actions, so this is a bug; say where to replay it.
        raise RunawayError(f"{where}: a bot chose an illegal action ({act!r}): {exc}") from exc
    return actions


@dataclass(frozen=True)
class SimSettings:
    """What to simulate (already validated)."""

    players: int
    games: int
    seed: int
    deck: Deck
    preset: str
    mode: str
    target: int
    bots: tuple[str, ...]
    options: tuple[tuple[str, object], ...] = ()
    teams: int = 2  # teams mode: how many teams (seat s on team s % teams)
    jam: JamParams = field(default_factory=JamParams)
    max_actions: int = MAX_ACTIONS_PER_ROUND
    max_rounds: int = MAX_ROUNDS_PER_GAME


@dataclass(frozen=True)
class Block:
    """Games `start` to `stop - 1` of a run: one task for an executor."""

    settings: SimSettings
    start: int
    stop: int
    keep_rows: bool = False
    tag: int = 0  # which run the block belongs to (a sweep runs many settings at once)


def blocks(
    settings: SimSettings, workers: int, *, keep_rows: bool = False, tag: int = 0
) -> list[Block]:
    """The run cut into blocks for `workers` workers: single games in this process (so Ctrl-C
    keeps every game finished), else about eight blocks per worker, at most MAX_BLOCK games."""
    games = settings.games
    size = 1 if workers <= 1 else max(1, min(MAX_BLOCK, -(-games // (workers * 8))))
    return [
        Block(settings, start, min(start + size, games), keep_rows, tag)
        for start in range(0, games, size)
    ]


def play_block(block: Block) -> SimStats:
    """Play one block of games (runs in a worker: module level, picklable argument)."""
    settings = block.settings
    rules = rules_for(settings.preset, settings.players, **dict(settings.options))
    stats = SimStats(players=settings.players, rows=[] if block.keep_rows else None)
    for index in range(block.start, block.stop):
        stats.merge(_play_game(settings, rules, index, keep_row=block.keep_rows))
    return stats


def run_sim(
    settings: SimSettings,
    *,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    keep_rows: bool = False,
) -> SimStats:
    """Play `settings.games` whole games and gather the statistics (in this process unless an
    executor is given). Ctrl-C ends the run early, keeping the games finished."""
    stats = SimStats(players=settings.players, rows=[] if keep_rows else None)
    started = time.perf_counter()
    if executor is None:
        executor = InlineExecutor()
    tasks = blocks(settings, executor.workers, keep_rows=keep_rows)
    results = executor.run(play_block, tasks)
    try:
        for _block, block_stats in results:
            stats.merge(block_stats)
            if progress is not None:
                progress(stats.games, settings.games)
    except KeyboardInterrupt:
        # Ctrl-C stops the run, not its report: the games finished so far are kept.
        stats.interrupted = True
    finally:
        close = getattr(results, "close", None)  # a generator's: cancels blocks not started
        if close is not None:
            close()
    stats.sort_rows()
    stats.elapsed_s = time.perf_counter() - started
    return stats


class _Tally(VirtualLauncher):
    """The virtual launcher, also counting cards per hit and the hits that fired at a player
    holding one card (`buried`: their seats, this round)."""

    def __init__(self, model: JamModel) -> None:
        super().__init__(model)
        self.cards_per_hit = [0] * (model.params.max_burst + 1)
        self.round: Round | None = None
        self.buried: set[int] = set()

    def hit(self, seat: int, loaded: int) -> int:
        """One press, through the jam model; counted before the cards reach the hand."""
        fired = VirtualLauncher.hit(self, seat, loaded)
        counts = self.cards_per_hit
        if fired >= len(counts):
            counts.extend([0] * (fired + 1 - len(counts)))
        counts[fired] += 1
        if fired and self.round is not None and len(self.round.hands[seat]) == 1:
            self.buried.add(seat)
        return fired


def _play_game(settings: SimSettings, rules: Any, index: int, *, keep_row: bool) -> SimStats:
    """Game `index` of the run, its totals in a SimStats of its own (merged once it is over)."""
    stats = SimStats(players=settings.players, games=1)
    seed = game_seed(settings.seed, index)
    seeds = random.Random(seed)
    launcher = _Tally(JamModel(settings.jam, rng=random.Random(seeds.getrandbits(63))))
    bots = [make_bot(name, seeds.getrandbits(63)) for name in settings.bots]
    game = Game(
        settings.deck,
        rules,
        launcher,
        settings.players,
        mode=settings.mode,
        target=settings.target,
        teams=settings.teams,
        seed=seeds.getrandbits(63),
        record=False,
    )
    while not game.over:
        if game.rounds_played >= settings.max_rounds:
            raise RunawayError(
                f"game {index} (seed {settings.seed}) ran past {settings.max_rounds} rounds "
                "without a winner: engine bug"
            )
        rnd = game.start_round()
        launcher.round = rnd
        where = f"game {index} round {game.rounds_played + 1} (seed {settings.seed})"
        stats.actions += play_round(rnd, bots, max_actions=settings.max_actions, where=where)
        stats.turns += rnd.turns
        stats.rounds += 1
        result = game.finish_round()
        winner = result["winner"]
        stats.round_wins[winner] += 1
        for s, gained in enumerate(result["gained"]):
            stats.points[s] += gained
        if launcher.buried:
            # A player at UNO was fired at and someone else won the round (in a knockout round,
            # whose result is its loser: that player was left holding cards).
            if rnd.loser is not None:
                stats.launcher_decided += rnd.loser in launcher.buried
            else:
                stats.launcher_decided += bool(launcher.buried - {winner})
            launcher.buried.clear()
    for s in game.winners:
        stats.wins[s] += 1
    for s in game.losers:
        stats.losses[s] += 1
    if settings.mode == "chips":
        stats.chips = list(game.scores)
    stats.hits = launcher.hits
    stats.dry_hits = launcher.dry_hits
    stats.hit_cards = launcher.hit_cards
    stats.dispenses = launcher.dispenses
    stats.dispensed_cards = launcher.dispensed_cards
    stats.cards_per_hit = launcher.cards_per_hit
    if keep_row:
        stats.rows = [
            GameRow(
                index=index,
                rounds=stats.rounds,
                turns=stats.turns,
                presses=launcher.hits,
                # A dispense fires (the virtual launcher always delivers what is asked).
                fires=launcher.hits - launcher.dry_hits + launcher.dispenses,
                cards=stats.cards_fired,
                winners=tuple(game.winners),
                decided=stats.launcher_decided,
                losers=tuple(game.losers),
            )
        ]
    return stats


# -- settings -------------------------------------------------------------------------------


def _flag(key: str) -> str:
    return f"--{key}"


def build_settings(
    *,
    players: int,
    games: int,
    seed: int,
    deck: str,
    rules: str | None,
    mode: str,
    target: int,
    bots: Sequence[str],
    options: Mapping[str, object],
    jam: JamParams | None = None,
    flag: Callable[[str], str] = _flag,
    teams: int | None = None,
) -> SimSettings:
    """Check the values of one run; InputError (exit 2) naming the value and what is allowed.

    `flag(key)` is how the caller's user names a setting (`--players` on the command line,
    `players` in a sweep file), so both say the same thing about the same mistake.
    """
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InputError(
            _("{flag} {players}: from {low} to {high}").format(
                flag=flag("players"), players=players, low=MIN_PLAYERS, high=MAX_PLAYERS
            )
        )
    if not 1 <= games <= MAX_GAMES:
        raise InputError(
            _("{flag} {games}: from 1 to {high}").format(
                flag=flag("games"), games=games, high=MAX_GAMES
            )
        )
    if target < 1:
        raise InputError(
            _("{flag} {target}: at least 1 point").format(flag=flag("target"), target=target)
        )
    if mode not in SCORING_MODES:
        raise InputError(
            _("unknown {flag} `{mode}`: use {modes}").format(
                flag=flag("mode"), mode=mode, modes=", ".join(SCORING_MODES)
            )
        )
    names = check_bots(bots, players, flag("bots"))
    the_deck = open_deck(deck)
    preset = rules or (deck if deck in PRESETS else "attack")
    # Build the rules once so any bad combination fails before the run starts.
    rules_for(preset, players, **dict(options))
    if teams is not None and mode != "teams":
        raise InputError(
            _("{flag} {teams}: the number of teams is for {mode} teams").format(
                flag=flag("teams"), teams=teams, mode=flag("mode")
            )
        )
    if teams is None:
        teams = 2
    if mode == "teams" and teams_problem(players, teams):
        # Seed 001 組隊比賽: "兩人或多人組成一隊" (teams of two or more), partners sit apart.
        raise InputError(
            _(
                "{flag} teams: {players} players cannot sit as {teams} teams of two or more "
                "partners ({flag_teams} N: N divides the players, at least 2 each)"
            ).format(flag=flag("mode"), players=players, teams=teams, flag_teams=flag("teams"))
        )

    return SimSettings(
        players=players,
        games=games,
        seed=seed,
        deck=the_deck,
        preset=preset,
        mode=mode,
        target=target,
        bots=names,
        options=tuple(options.items()),
        teams=teams,
        jam=jam if jam is not None else JamParams(),
        # Read at call time so a test can lower the guards.
        max_actions=MAX_ACTIONS_PER_ROUND,
        max_rounds=MAX_ROUNDS_PER_GAME,
    )


def bots_help() -> str:
    """The bots a player may seat, each in a few words (for --help)."""
    return _(
        "heuristic (plays like a decent player, for its team in --mode teams), solo (the "
        "heuristic bot playing as if it had no partners: compare team play), random (a random "
        "legal move)"
    )


def check_bots(bots: Sequence[str], players: int, flag: str = "--bots") -> tuple[str, ...]:
    """One bot for every player, or one per player (`flag` names the list in a message)."""
    names = [n.strip().lower() for n in bots]
    for name in names:
        if name not in BOTS:
            raise InputError(
                _("unknown bot `{name}`: use {bots}").format(name=name, bots=", ".join(BOTS))
            )
    if len(names) == 1:
        names *= players
    elif len(names) != players:
        raise InputError(
            _("{flag} lists {count} bots for {players} players: give one or {players}").format(
                flag=flag, count=len(names), players=players
            )
        )
    return tuple(names)


# -- command line ---------------------------------------------------------------------------


def add_option_argument(p: Any) -> None:
    """`--option NAME=VALUE`, repeatable (a parser or an argument group)."""
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=_("rule option, e.g. stacking=true (repeatable)"),
    )


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """`--workers` and `--executor`, shared by `sim` and `sweep`."""
    p.add_argument(
        "--workers",
        type=whole_number,
        default=None,
        metavar="N",
        help=_("worker processes (default: every core); results are the same for any N"),
    )
    p.add_argument(
        "--executor",
        default="local",
        metavar="SPEC",
        help=_(
            "local (default: processes on this machine) or dask://HOST:PORT (a Dask "
            "scheduler; needs the dask extra)"
        ),
    )


def register(subparsers: Any) -> None:
    """Add the `sim` subcommand."""
    p = subparsers.add_parser(
        "sim",
        help=_("simulate many games between bots"),
        description=_(
            "Play whole games between bots with the virtual launcher; print statistics. "
            "Ctrl-C stops the run and still reports the games finished (exit 130)."
        ),
    )
    p.add_argument("--players", type=whole_number, default=4, help=_("seats, 2..10 (default 4)"))
    p.add_argument("--games", type=whole_number, default=100, help=_("games to play (default 100)"))
    p.add_argument(
        "--seed", type=whole_number, default=0, help=_("seed of the whole run (default 0)")
    )
    add_deck_argument(p)
    p.add_argument(
        "--rules",
        default=None,
        metavar="PRESET",
        help=_("rule preset for a deck file (default: the deck preset, or attack)"),
    )
    p.add_argument("--mode", default="target", help=modes_help())

    p.add_argument(
        "--target",
        type=whole_number,
        default=500,
        help=target_help(),
    )
    p.add_argument(
        "--teams",
        type=whole_number,
        default=None,
        metavar="N",
        help=teams_help(),
    )
    p.add_argument(
        "--bots",
        default="heuristic",
        help=_("one bot for every seat or a comma list, one per seat: {bots}").format(
            bots=bots_help()
        ),
    )
    add_option_argument(p)
    add_run_arguments(p)
    p.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    p.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace) -> SimSettings:
    """Check the command-line values; InputError (exit 2) naming the value and what is allowed."""
    return build_settings(
        players=args.players,
        games=args.games,
        seed=args.seed,
        deck=args.deck,
        rules=args.rules,
        mode=args.mode,
        target=args.target,
        bots=args.bots.split(","),
        options=dict(parse_option(text) for text in args.option),
        teams=args.teams,
    )


class ProgressBar:
    """A one-line progress bar on a terminal (stderr); silent when stderr is not a terminal.

    `bar(done, total, note)` redraws when the bar moves (or `note` changes); one bar for a whole
    run, however many workers play it."""

    WIDTH = 30

    def __init__(self, stream: TextIO, label: str = "sim", unit: str = "games") -> None:
        self.stream = stream
        self.label = label
        self.unit = unit
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())
        self.last: tuple[int, str] | None = None
        self.ended = False

    def __call__(self, done: int, total: int, note: str = "") -> None:
        if not self.enabled:
            return
        width = self.WIDTH
        filled = done * width // max(total, 1)
        if (filled, note) == self.last and done != total:
            return
        self.last = (filled, note)
        bar = "#" * filled + "." * (width - filled)
        tail = f", {note}" if note else ""
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {self.unit}{tail}")
        if done == total:
            self.stream.write("\n")
            self.ended = True
        self.stream.flush()

    def close(self) -> None:
        """End a bar left mid-line (a run cut short), so the report starts on its own line."""
        if self.enabled and self.last is not None and not self.ended:
            self.stream.write("\n")
            self.stream.flush()
            self.ended = True


def open_executor(args: argparse.Namespace, tasks: int, ctrl_c: CtrlC) -> Executor:
    """The executor `--executor` and `--workers` ask for (checked: exit 2 on a bad value),
    stopping on `ctrl_c`."""
    address = check_executor(args.executor)
    workers = check_workers(args.workers)
    return executor_for(address, workers, tasks, ctrl_c)


def run(args: argparse.Namespace) -> int:
    """`unoattack sim`."""
    settings = settings_from_args(args)
    # However many Ctrl-C come: the run stops once, the report is printed, exit 130.
    with CtrlC(until_exit=True) as ctrl_c:
        executor = open_executor(args, settings.games, ctrl_c)
        bar = ProgressBar(sys.stderr)
        try:
            stats = run_sim(settings, executor=executor, progress=bar)
        finally:
            executor.close()
        bar.close()
        data = {
            "players": settings.players,
            "deck": settings.deck.name,
            "rules": settings.preset,
            "mode": settings.mode,
            "target": settings.target,
            **({"teams": settings.teams} if settings.mode == "teams" else {}),
            "seed": settings.seed,
            "bots": list(settings.bots),
            "options": dict(settings.options),
            **stats.to_dict(settings.mode),
        }
        if args.json:
            print(json.dumps(data))
        else:
            print(format_table(data, asked=settings.games))
    return 130 if stats.interrupted else 0  # 130: the shell's code for Ctrl-C


def format_table(data: dict[str, Any], *, asked: int | None = None) -> str:
    """The human-readable report (`asked`: games requested, named when Ctrl-C cut the run)."""
    lines = [
        _(
            "{games}, {rounds}: {players} players, {deck} deck, {mode} to {target}, seed {seed}"
        ).format(
            games=plural(data["games"], "game"),
            rounds=plural(data["rounds"], "round"),
            players=data["players"],
            deck=data["deck"],
            mode=data["mode"],
            target=data["target"],
            seed=data["seed"],
        ),
        "",
    ]
    # The mode's own figures: games lost where it names a loser, chips won in chips mode.
    # (losing mode names only a loser; in chips mode the points scored are the chips won.)
    figures = [] if data["mode"] == "losing" else [("wins", _("games won"))]
    if "losses" in data:
        figures.append(("losses", _("games lost")))
    figures.append(("round_wins", _("rounds won")))
    if "chips" in data:
        figures.append(("chips", _("chips won")))
    else:
        figures.append(("points_scored", _("points")))
    rows = [[_("seat"), _("bot"), *(title for _key, title in figures)]]
    for seat, bot in enumerate(data["bots"]):
        rows.append([str(seat), bot] + [number(data[k][seat]) for k, _title in figures])
    lines += columns(rows, right=set(range(2, 2 + len(figures))))
    stats = [
        [_("mean rounds per game"), number(data["mean_rounds_per_game"], 2)],
        [_("mean turns per round"), number(data["mean_turns_per_round"], 2)],
        [
            _("hits"),
            _("{hits} ({dry} dry)").format(hits=number(data["hits"]), dry=number(data["dry_hits"])),
        ],
        [_("cards fired"), number(data["cards_fired"])],
    ]
    if "launcher_decided" in data:
        stats.append(
            [
                _("launcher decided"),
                _("{rounds} (fired at a player on one card who then lost the round)").format(
                    rounds=plural(data["launcher_decided"], "round")
                ),
            ]
        )
    stats.append([_("elapsed"), _("{seconds} s").format(seconds=number(data["elapsed_s"], 2))])
    lines += ["", *columns(stats)]
    if data.get("interrupted"):
        if asked is not None:
            said = _("interrupted by Ctrl-C after {done} of {games}")
        else:
            said = _("interrupted by Ctrl-C after {games}")
        lines.append(
            said.format(done=number(data["games"]), games=plural(asked or data["games"], "game"))
        )
    return "\n".join(lines)
