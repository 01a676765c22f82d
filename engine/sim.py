"""`unoattack sim`: many whole games between bots, seeded, with statistics.

Each game gets its own seed derived from `--seed` and the game's index, so game 7 of a run is the
same game whatever `--games` says. Every bot and the virtual launcher are seeded from it too.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from engine.bots import BOTS, Bot, make_bot
from engine.cards import PRESETS, Deck, load_deck
from engine.errors import InputError, RuleError, UnoError
from engine.game import SCORING_MODES, Game, Round
from engine.launchers import VirtualLauncher
from engine.rules import MAX_PLAYERS, MIN_PLAYERS, parse_option, rules_for

# Bug guards: no sane round needs this many actions, no sane game this many rounds.
MAX_ACTIONS_PER_ROUND = 20_000
MAX_ROUNDS_PER_GAME = 5_000
# Most games one run may ask for: days of work already; Ctrl-C still reports a run cut short.
MAX_GAMES = 10_000_000


class RunawayError(UnoError):
    """A round or game that does not end: an engine or bot bug, reported with its seed."""

    exit_code = 1


@dataclass
class SimStats:
    """Totals over a run (everything but `elapsed_s` depends only on the arguments)."""

    players: int
    games: int = 0
    rounds: int = 0
    turns: int = 0
    actions: int = 0
    wins: list[int] = field(default_factory=list)
    round_wins: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)
    hits: int = 0
    dry_hits: int = 0
    cards_fired: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False  # Ctrl-C ended the run early; the totals cover whole games only

    def __post_init__(self) -> None:
        for name in ("wins", "round_wins", "points"):
            if not getattr(self, name):
                setattr(self, name, [0] * self.players)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `unoattack sim --json` (without the run's settings)."""
        rounds = max(self.rounds, 1)
        return {
            "games": self.games,
            "rounds": self.rounds,
            "wins": list(self.wins),
            "round_wins": list(self.round_wins),
            "mean_rounds_per_game": self.rounds / max(self.games, 1),
            "mean_turns_per_round": self.turns / rounds,
            "mean_actions_per_round": self.actions / rounds,
            "points_scored": list(self.points),
            "hits": self.hits,
            "dry_hits": self.dry_hits,
            "cards_fired": self.cards_fired,
            "elapsed_s": round(self.elapsed_s, 3),
            "rounds_per_s": round(self.rounds / self.elapsed_s, 1) if self.elapsed_s else None,
            "interrupted": self.interrupted,
        }


def game_seed(seed: int, index: int) -> int:
    """The seed of game `index` in a run seeded `seed` (stable across Python versions)."""
    return random.Random(f"unoattack-sim:{seed}:{index}").getrandbits(63)


def play_round(
    rnd: Round,
    bots: Sequence[Bot],
    *,
    max_actions: int = MAX_ACTIONS_PER_ROUND,
    where: str = "round",
) -> int:
    """Play `rnd` to its end with `bots` (one per seat); return the number of actions applied.

    Before each move the seats get a chance to act out of turn whenever that can matter (a
    player just went down to one card, or jump-in is on), the player who made the last play first.
    """
    actions = 0
    jump_in = rnd.rules.jump_in
    seats = rnd.seats
    while not rnd.over:
        if rnd.window is not None or jump_in:
            first = rnd.window if rnd.window is not None else rnd.actor
            start = seats.index(first) if first in seats else 0
            for seat in seats[start:] + seats[:start]:
                if rnd.over:
                    break
                act = bots[seat].react(rnd, seat)
                if act is not None:
                    _apply(rnd, act, where)
                    actions += 1
            if rnd.over:
                break
        actor = rnd.actor
        if actor is None:  # pragma: no cover - over is checked above
            break
        _apply(rnd, bots[actor].choose(rnd, actor), where)
        actions += 1
        if actions >= max_actions:
            raise RunawayError(
                f"{where} ran past {max_actions} actions without ending "
                f"(turn {rnd.turn}, {len(rnd.pile)} cards in the launcher): engine or bot bug"
            )
    return actions


def _apply(rnd: Round, act: Any, where: str) -> None:
    try:
        rnd.apply(act)
    except RuleError as exc:
        # Bots only pick legal actions, so this is a bug; say where to replay it.
        raise RunawayError(f"{where}: a bot chose an illegal action ({act}): {exc}") from exc


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
    max_actions: int = MAX_ACTIONS_PER_ROUND
    max_rounds: int = MAX_ROUNDS_PER_GAME


def run_sim(
    settings: SimSettings, *, progress: Callable[[int, int], None] | None = None
) -> SimStats:
    """Play `settings.games` whole games and gather the statistics."""
    rules = rules_for(settings.preset, settings.players, **dict(settings.options))
    stats = SimStats(players=settings.players)
    started = time.perf_counter()
    try:
        for index in range(settings.games):
            _merge(stats, _play_game(settings, rules, index))
            if progress is not None:
                progress(index + 1, settings.games)
    except KeyboardInterrupt:
        # Ctrl-C stops the run, not its report: the games finished so far are kept.
        stats.interrupted = True
    stats.elapsed_s = time.perf_counter() - started
    return stats


def _play_game(settings: SimSettings, rules: Any, index: int) -> SimStats:
    """Game `index` of the run, its totals in a SimStats of its own (merged once it is over)."""
    stats = SimStats(players=settings.players, games=1)
    seed = game_seed(settings.seed, index)
    seeds = random.Random(seed)
    launcher = VirtualLauncher.seeded(seeds.getrandbits(63))
    bots = [make_bot(name, seeds.getrandbits(63)) for name in settings.bots]
    game = Game(
        settings.deck,
        rules,
        launcher,
        settings.players,
        mode=settings.mode,
        target=settings.target,
        seed=seeds.getrandbits(63),
        log=False,
    )
    while not game.over:
        if game.rounds_played >= settings.max_rounds:
            raise RunawayError(
                f"game {index} (seed {settings.seed}) ran past {settings.max_rounds} rounds "
                "without a winner: engine bug"
            )
        rnd = game.start_round()
        where = f"game {index} round {game.rounds_played + 1} (seed {settings.seed})"
        stats.actions += play_round(rnd, bots, max_actions=settings.max_actions, where=where)
        stats.turns += rnd.turns
        stats.rounds += 1
        result = game.finish_round()
        stats.round_wins[result["winner"]] += 1
        for s, gained in enumerate(result["gained"]):
            stats.points[s] += gained
    for s in game.winners:
        stats.wins[s] += 1
    stats.hits = launcher.hits
    stats.dry_hits = launcher.dry_hits
    stats.cards_fired = launcher.cards_fired
    return stats


def _merge(total: SimStats, game: SimStats) -> None:
    """Add one finished game's totals to the run's."""
    for name in ("games", "rounds", "turns", "actions", "hits", "dry_hits", "cards_fired"):
        setattr(total, name, getattr(total, name) + getattr(game, name))
    for name in ("wins", "round_wins", "points"):
        mine, theirs = getattr(total, name), getattr(game, name)
        for seat, value in enumerate(theirs):
            mine[seat] += value


# -- command line ---------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    """Add the `sim` subcommand."""
    p = subparsers.add_parser(
        "sim",
        help="simulate many games between bots",
        description="Play whole games between bots with the virtual launcher; print statistics. "
        "Ctrl-C stops the run and still reports the games finished (exit 130).",
    )
    p.add_argument("--players", type=whole_number, default=4, help="seats, 2..10 (default 4)")
    p.add_argument("--games", type=whole_number, default=100, help="games to play (default 100)")
    p.add_argument("--seed", type=whole_number, default=0, help="seed of the whole run (default 0)")
    p.add_argument(
        "--deck",
        default="attack",
        metavar="PRESET",
        help="attack (default), attack-1998, classic, or a deck TOML file",
    )
    p.add_argument(
        "--rules",
        default=None,
        metavar="PRESET",
        help="rule preset for a deck file (default: the deck preset, or attack)",
    )
    p.add_argument("--mode", default="target", help=f"scoring: {', '.join(SCORING_MODES)}")
    p.add_argument("--target", type=whole_number, default=500, help="points that end a game (500)")
    p.add_argument(
        "--bots",
        default="heuristic",
        help="one bot for every seat or a comma list, one per seat: heuristic, random",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="rule option, e.g. stacking=true (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace) -> SimSettings:
    """Check the command-line values; InputError (exit 2) naming the value and what is allowed."""
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        raise InputError(f"--players {args.players}: from {MIN_PLAYERS} to {MAX_PLAYERS}")
    if not 1 <= args.games <= MAX_GAMES:
        raise InputError(f"--games {args.games}: from 1 to {MAX_GAMES}")
    if args.target < 1:
        raise InputError(f"--target {args.target}: at least 1 point")
    if args.mode not in SCORING_MODES:
        raise InputError(f"unknown --mode `{args.mode}`: use {', '.join(SCORING_MODES)}")
    names = [n.strip().lower() for n in args.bots.split(",")]
    for name in names:
        if name not in BOTS:
            raise InputError(f"unknown bot `{name}`: use {', '.join(BOTS)}")
    if len(names) == 1:
        names *= args.players
    elif len(names) != args.players:
        raise InputError(
            f"--bots lists {len(names)} bots for {args.players} players: give one or {args.players}"
        )
    try:
        deck = load_deck(args.deck)
    except UnicodeDecodeError:
        raise InputError(f"{args.deck}: not a text deck file (UTF-8 TOML)") from None
    preset = args.rules or (args.deck if args.deck in PRESETS else "attack")
    options = tuple(_parse_option(text) for text in args.option)
    # Build the rules and a game once so any bad combination fails before the run starts.
    rules_for(preset, args.players, **dict(options))
    if args.mode == "teams" and (args.players % 2 or args.players < 4):
        raise InputError(
            f"--mode teams needs an even number of players, 4 or more, not {args.players}"
        )
    return SimSettings(
        players=args.players,
        games=args.games,
        seed=args.seed,
        deck=deck,
        preset=preset,
        mode=args.mode,
        target=args.target,
        bots=tuple(names),
        options=options,
        # Read at call time so a test can lower the guards.
        max_actions=MAX_ACTIONS_PER_ROUND,
        max_rounds=MAX_ROUNDS_PER_GAME,
    )


_parse_option = parse_option  # NAME=VALUE, shared with `unoattack table --option`


def whole_number(text: str) -> int:
    """argparse type: an integer, with a message that says so (argparse's says `invalid int`)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


class _ProgressBar:
    """A one-line progress bar on a terminal (stderr); silent when stderr is not a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        width = 30
        filled = done * width // total
        if filled == self.last and done != total:
            return
        self.last = filled
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\rsim [{bar}] {done}/{total} games")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        """End a bar left mid-line (a run cut short), so the report starts on its own line."""
        if self.enabled and self.last >= 0 and self.last < 30:
            self.stream.write("\n")
            self.stream.flush()


def run(args: argparse.Namespace) -> int:
    """`unoattack sim`."""
    settings = settings_from_args(args)
    bar = _ProgressBar(sys.stderr)
    stats = run_sim(settings, progress=bar)
    if stats.interrupted:
        bar.close()
    data = {
        "players": settings.players,
        "deck": settings.deck.name,
        "rules": settings.preset,
        "mode": settings.mode,
        "target": settings.target,
        "seed": settings.seed,
        "bots": list(settings.bots),
        "options": dict(settings.options),
        **stats.to_dict(),
    }
    if args.json:
        print(json.dumps(data))
    else:
        print(format_table(data, asked=settings.games))
    return 130 if stats.interrupted else 0  # 130: the shell's code for Ctrl-C


def format_table(data: dict[str, Any], *, asked: int | None = None) -> str:
    """The human-readable report (`asked`: games requested, named when Ctrl-C cut the run)."""
    lines = [
        f"{data['games']} games, {data['rounds']} rounds: {data['players']} players, "
        f"{data['deck']} deck, {data['mode']} to {data['target']}, seed {data['seed']}",
        "",
        f"{'seat':<6}{'bot':<11}{'games won':>10}{'rounds won':>12}{'points':>10}",
    ]
    for seat, bot in enumerate(data["bots"]):
        lines.append(
            f"{seat:<6}{bot:<11}{data['wins'][seat]:>10}{data['round_wins'][seat]:>12}"
            f"{data['points_scored'][seat]:>10}"
        )
    lines += [
        "",
        f"mean rounds per game  {data['mean_rounds_per_game']:.2f}",
        f"mean turns per round  {data['mean_turns_per_round']:.2f}",
        f"hits                  {data['hits']} ({data['dry_hits']} dry)",
        f"cards fired           {data['cards_fired']}",
        f"elapsed               {data['elapsed_s']:.2f} s",
    ]
    if data.get("interrupted"):
        of = f" of {asked}" if asked is not None else ""
        lines.append(f"interrupted by Ctrl-C after {data['games']}{of} games")
    return "\n".join(lines)
