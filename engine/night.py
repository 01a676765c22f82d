"""`unoattack schedule`: a game night's seat rotation (seed 001 玩家位置變化), printed, and with
`--sim` played by bots to its standings.

The rotation and the standings are engine/schedule.py's; each table's rounds are the rules
core's (`Round`, played by `sim.play_round`), each round scored per seat by the scoring mode
(engine/scoring.py) and recorded per player: the sheet's prerequisite is a points system
("前提：必須採用計分制"). The default mode is `teams`, each opposite pair a team
("同隊的隊友要相隔坐": partners sit apart), so a player's round score is their pair's cards;
`target` scores the round winner the others' cards, `lowest` each player their own.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.commandline import goes_with, whole_number
from common.jam import JamModel, JamParams
from engine.bots import make_bot
from engine.cards import PRESETS
from engine.cards_cli import add_deck_argument, open_deck
from engine.errors import InputError
from engine.game import Action, Round, choose_dealer
from engine.launchers import VirtualLauncher
from engine.night_book import NightBook
from engine.night_words import standings_lines, tables_lines
from engine.rules import parse_option, rules_for
from engine.schedule import (
    MAX_NIGHT_PLAYERS,
    NIGHT_MODES,
    ROUNDS_EACH,
    Schedule,
    Standings,
    check_night_mode,
    rotation,
)
from engine.scoring import round_gains, team_of
from engine.sim import add_option_argument, bots_help, check_bots, play_round
from i18n import _, ngettext, number
from i18n.layout import columns

__all__ = ["NIGHT_MODES", "Night", "play_night", "register"]

MAX_CYCLES = 100
# Told of each round of a simulated night (table, round number, the round) before it is played;
# returns what applies each move to it.
Watch = Callable[[int, int, Round], Callable[[Action], None]]


@dataclass
class Night:
    """A simulated night: the standings, and how much was played."""

    schedule: Schedule
    standings: Standings
    cycles: int
    rounds: int = 0  # rounds played, over every table
    turns: int = 0
    presses: int = 0
    bots: dict[str, str] = field(default_factory=dict)  # player name -> bot


def play_night(
    schedule: Schedule,
    *,
    cycles: int = 1,
    seed: int = 0,
    deck: str = "attack",
    mode: str = "teams",
    bots: Sequence[str] = ("heuristic",),
    options: Mapping[str, object] | None = None,
    jam: JamParams | None = None,
    watch: Watch | None = None,
) -> Night:
    """Play `cycles` cycles of `schedule` with bots (one for every player, or one per player,
    who keeps it from table to table) and the virtual launcher; seeded by `seed`. `watch(table,
    round_no, rnd)`, when given, is told of each round before it is played and returns what
    applies each move to it (the round then records its outcomes: a table referee can follow
    it, as tests/engine/test_night_table.py does). At each table
    the dealer of a stage's first round is drawn, then the round winner deals."""
    check_night_mode(mode)
    if not 1 <= cycles <= MAX_CYCLES:
        raise InputError(
            _("--cycles {cycles}: from 1 to {high}").format(cycles=cycles, high=MAX_CYCLES)
        )
    names = check_bots(bots, schedule.players)
    the_deck = open_deck(deck)
    preset = deck if deck in PRESETS else "attack"
    seats = schedule.seats
    rules = rules_for(preset, seats, **dict(options or {}))
    rng = random.Random(f"unoattack-night:{seed}")
    launcher = VirtualLauncher(JamModel(jam or JamParams(), rng=random.Random(rng.getrandbits(63))))
    players = [make_bot(b, rng.getrandbits(63)) for b in names]
    night = Night(
        schedule,
        Standings(schedule.names, mode),
        cycles,
        bots=dict(zip(schedule.names, names, strict=True)),
    )
    pairs = seats // 2  # teams at a table: each opposite pair, seats s and s + pairs
    for cycle in range(cycles):
        for stage in schedule.stages:
            for t, at in enumerate(stage.tables):
                bots_here = [players[p] for p in at]
                dealer = choose_dealer(the_deck, range(seats), rng)
                for round_no in schedule.rounds_of(stage, cycle):
                    rnd = Round(
                        the_deck,
                        rules,
                        launcher,
                        players=seats,
                        dealer=dealer,
                        seed=rng.getrandbits(63),
                        record=watch is not None,
                        teams=pairs if mode == "teams" else 0,
                    )
                    play_round(
                        rnd,
                        bots_here,
                        where=f"night round {round_no} table {t + 1}",
                        apply=watch(t, round_no, rnd) if watch is not None else None,
                    )
                    winner = rnd.winner
                    assert winner is not None
                    gained = round_gains(mode, winner, rnd.points(), lambda s: team_of(s, pairs))
                    night.standings.record(
                        round_no, t, {schedule.names[p]: gained[s] for s, p in enumerate(at)}
                    )
                    dealer = winner
                    night.rounds += 1
                    night.turns += rnd.turns
                    night.presses += rnd.presses
    return night


# -- command line ---------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    """Add the `schedule` subcommand."""
    p = subparsers.add_parser(
        "schedule",
        help=_("a game night's seat rotation: each player opposite each other in turn"),
        description=_(
            "Print the seat rotation of a game night (seed 001 玩家位置變化): each of the other "
            "players sits opposite you in turn, {rounds} rounds each; 4 players play 12 rounds a "
            "cycle at one table, 8 players 28 rounds at two. With --sim, bots play the night and "
            "the standings total each player's rounds over every table."
        ).format(rounds=ROUNDS_EACH),
    )
    p.add_argument(
        "--players",
        type=whole_number,
        required=True,
        metavar="N",
        help=_("players at the night: an even number from 4 to {high}").format(
            high=MAX_NIGHT_PLAYERS
        ),
    )
    p.add_argument(
        "--tables",
        type=whole_number,
        default=None,
        metavar="T",
        help=_("tables (default: tables of four; each table seats an even number, 4 to 10)"),
    )
    p.add_argument(
        "--names",
        default=None,
        metavar="A,B,...",
        help=_("the players' names, in order (default 1, 2, ...)"),
    )
    p.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    sim = p.add_argument_group(_("playing the night with bots"))
    sim.add_argument(
        "--sim", action="store_true", help=_("play the night with bots and print the standings")
    )
    sim.add_argument(
        "--cycles", type=whole_number, default=1, help=_("cycles of the rotation to play (1)")
    )
    sim.add_argument(
        "--seed", type=whole_number, default=0, help=_("seed of the whole night (default 0)")
    )
    add_deck_argument(sim)
    sim.add_argument(
        "--mode",
        default="teams",
        help=_(
            "how a round is scored: teams (default: each opposite pair a team, scoring its own "
            "cards; lowest total first), target (the winner scores the others' cards; highest "
            "first), lowest (each their own cards; lowest first)"
        ),
    )
    sim.add_argument(
        "--bots",
        default="heuristic",
        help=_("one bot for every player or a comma list, one per player: {bots}").format(
            bots=bots_help()
        ),
    )
    add_option_argument(sim)
    tables = p.add_argument_group(_("playing the night at real tables"))
    tables.add_argument(
        "--night",
        type=Path,
        metavar="FILE",
        help=_(
            "write the night to FILE (with --names, and --mode, --deck, --option as the tables "
            "play): at each table `unoattack table --night FILE --table T` or `unoattack serve "
            "--night FILE --table T` seats the players round by round and records every round "
            "in FILE; `unoattack standings FILE` prints the totals"
        ),
    )
    p.set_defaults(func=run)

    s = subparsers.add_parser(
        "standings",
        help=_("a game night's standings: every player's total over every table"),
        description=_(
            "Print the standings of a night the tables play (`unoattack schedule --night FILE`): "
            "each player's total over the rounds recorded at every table, the champion so far, "
            "and the round each table plays next, with who sits there."
        ),
    )
    s.add_argument("night", type=Path, metavar="FILE", help=_("the night file"))
    s.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    s.set_defaults(func=run_standings)


def run(args: argparse.Namespace) -> int:
    """`unoattack schedule`."""
    names = [n.strip() for n in args.names.split(",")] if args.names else []
    schedule = rotation(args.players, args.tables, names)
    if args.sim and args.night is not None:
        raise InputError(
            _("--sim plays the night with bots, --night writes it for real tables: one of the two")
        )
    problem = goes_with(
        "--sim",
        {
            "--cycles": args.cycles != 1,
            "--seed": args.seed != 0,
            "--bots": args.bots != "heuristic",
        },
    )
    if problem and not args.sim:
        raise InputError(problem)
    problem = goes_with(
        "--sim or --night",
        {
            "--deck": args.deck != "attack",
            "--mode": args.mode != "teams",
            "--option": bool(args.option),
        },
    )
    if problem and not args.sim and args.night is None:
        raise InputError(problem)
    options = dict(parse_option(text) for text in args.option)
    if args.night is not None:
        book = NightBook.create(
            args.night, schedule, mode=args.mode, deck=args.deck, options=options
        )
        if args.json:
            print(json.dumps({"schedule": schedule.to_dict(), "night": book.to_dict()}))
            return 0
        print(format_schedule(schedule))
        print()
        print(
            _(
                "night written to {path}: at table T run `unoattack table --night {path} --table "
                "T` (or `unoattack serve`)"
            ).format(path=args.night)
        )
        return 0
    night = None
    if args.sim:
        night = play_night(
            schedule,
            cycles=args.cycles,
            seed=args.seed,
            deck=args.deck,
            mode=args.mode,
            bots=args.bots.split(","),
            options=options,
        )
    if args.json:
        data: dict[str, Any] = {"schedule": schedule.to_dict()}
        if night is not None:
            data["night"] = {
                "cycles": night.cycles,
                "seed": args.seed,
                "deck": args.deck,
                "mode": args.mode,
                "bots": night.bots,
                "rounds": night.rounds,
                "turns": night.turns,
                "presses": night.presses,
                "standings": night.standings.to_dict(),
            }
        print(json.dumps(data, ensure_ascii=False))
        return 0
    print(format_schedule(schedule))
    if night is not None:
        print()
        print(format_standings(night))
    return 0


def format_schedule(schedule: Schedule) -> str:
    """The rotation as a table: a line per stage, a column per table (players clockwise)."""
    lines = [
        ngettext(
            "{players} players at {tables} table of {seats}: each pair sits opposite for "
            "{each} rounds, {rounds} rounds a cycle",
            "{players} players at {tables} tables of {seats}: each pair sits opposite for "
            "{each} rounds, {rounds} rounds a cycle",
            schedule.tables,
        ).format(
            players=schedule.players,
            tables=schedule.tables,
            seats=schedule.seats,
            each=schedule.rounds_each,
            rounds=schedule.cycle_rounds,
        ),
        _(
            "each table lists its players clockwise from seat 1; the players {half} seats apart "
            "sit opposite each other (partners)"
        ).format(half=schedule.seats // 2),
        "",
    ]
    rows: list[list[str]] = [
        [_("rounds"), *(_("table {n}").format(n=t + 1) for t in range(schedule.tables))]
    ]
    for stage in schedule.stages:
        span = schedule.rounds_of(stage)
        rows.append(
            [
                f"{span[0]}-{span[-1]}",
                *(" ".join(schedule.table_names(stage, t)) for t in range(schedule.tables)),
            ]
        )
    lines += columns(rows)
    return "\n".join(lines)


def format_standings(night: Night) -> str:
    """The standings after a simulated night, best first, and the champion(s)."""
    standings = night.standings
    lines = [
        ngettext(
            "{cycles} cycle of the rotation ({rounds} rounds played over every table), "
            "scored {mode}",
            "{cycles} cycles of the rotation ({rounds} rounds played over every table), "
            "scored {mode}",
            night.cycles,
        ).format(cycles=night.cycles, rounds=number(night.rounds), mode=standings.mode),
        "",
        *standings_lines(standings, night.bots),
    ]
    return "\n".join(lines)


def run_standings(args: argparse.Namespace) -> int:
    """`unoattack standings FILE`."""
    book = NightBook.load(args.night)
    if args.json:
        print(json.dumps(book.view(), ensure_ascii=False))
        return 0
    print(
        _("{players} players at {tables} tables, scored {mode}").format(
            players=book.schedule.players, tables=book.schedule.tables, mode=book.mode
        )
    )
    for line in tables_lines(book):
        print(line)
    print()
    print("\n".join(standings_lines(book.standings)))
    return 0
