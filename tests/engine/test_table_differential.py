"""The simulator's rules and the table referee's are one: every move of seeded bot rounds is fed
to the referee, and after every move the two must agree.

`Round` (engine/game.py) plays with the hands; the referee (engine/table/referee.py, on
engine/blind.py) sees only what the table tells it (engine/follow.py): the card played, a
Discard All's count, what each press or dispense fired, "pass" when what came does not play,
whether a challenged Wild Draw Four was legal. After each move they must agree on the turn, the
direction, the colour, the top card, what is owed (by whom, how much), the hand counts, the UNO
window and calls, the bonus turn, whether the player may play what a take brought, and the end
of the round; after each round on the scores, who is out and who won.

10,000 rounds across the three presets, 2 to 10 players, every rule option on and off, the seven
scoring modes (teams mode with every number of teams the players can make), in chunks that
pytest-xdist spreads over the cores. The last tests change one rule on one side only and check
that this test notices.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from engine.blind import BlindRound
from engine.bots import HeuristicBot, RandomBot
from engine.cards import PRESETS
from engine.errors import RuleError
from engine.follow import Follower
from engine.game import Action, Game, Round
from engine.launchers import VirtualLauncher
from engine.rules import CUSTOM_WILD_EFFECTS, rules_for
from engine.table.referee import Referee

ROUNDS = 10_000
CHUNKS = 40
NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon"]
MAX_ACTIONS = 4000  # per round; a round that runs longer is cut (counted, must stay rare)
BOOL_OPTIONS = (
    "stacking",
    "multi_play",
    "jump_in",
    "last_card_restriction",
    "skip_reverse_play_again",
    "two_player_rules",
    "dealer_plays_first",
    "counter_clockwise",
    "discard_all_choice",
)
MODES = {"target", "lowest", "elimination", "teams", "knockout", "chips", "losing"}


class Disagree(AssertionError):
    """The simulator and the referee disagree (the message says on what, and where)."""


@dataclass
class Tally:
    """What a chunk covered."""

    rounds: int = 0
    moves: int = 0
    cut: int = 0
    presets: Counter[str] = field(default_factory=Counter)
    players: Counter[int] = field(default_factory=Counter)
    modes: Counter[str] = field(default_factory=Counter)
    options_on: Counter[str] = field(default_factory=Counter)
    options_off: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)

    def count_game(self, preset: str, players: int, options: dict[str, object], mode: str) -> None:
        self.presets[preset] += 1
        self.players[players] += 1
        self.modes[mode] += 1
        for name, value in options.items():
            if isinstance(value, bool):
                (self.options_on if value else self.options_off)[name] += 1


def settings(rng: random.Random, game: int) -> tuple[str, int, dict[str, object], str, int]:
    """Game `game` of a chunk: players go round 2 to 10; preset, options, mode and (teams
    mode) the number of teams at random."""
    players = 2 + game % 9
    presets = ["attack", "classic"] if players == 10 else ["attack", "attack-1998", "classic"]
    preset = rng.choice(presets)
    options: dict[str, object] = {name: rng.random() < 0.5 for name in BOOL_OPTIONS}
    if preset != "classic":
        options["play_fired_card"] = rng.random() < 0.5
    else:
        options["draw_until_playable"] = rng.random() < 0.5
    options["custom_wild_effect"] = rng.choice(CUSTOM_WILD_EFFECTS)
    options["uno_penalty"] = rng.choice([0, 1, 2, 2, 2, 3])
    options["hand_size"] = rng.choice([1, 2, 3, 4, 5, 7, 7])
    modes = ["target", "lowest", "elimination", "chips", "losing"]
    teams = [n for n in range(2, players // 2 + 1) if players % n == 0]
    if teams:
        modes.append("teams")
    # A knockout round is played on until one is left, many rounds' moves: one game in twenty
    # (3 to 5 a chunk; the player counts change with the game's number).
    mode = "knockout" if game % 20 == 5 else rng.choice(modes)
    return preset, players, options, mode, rng.choice(teams) if mode == "teams" else 2


def view(rnd: Round) -> tuple[Any, ...]:
    """What both must agree on, from a round (the simulator's, or the referee's BlindRound)."""
    over = rnd.winner is not None and not rnd.pending
    return (
        ("turn", rnd.turn),
        ("direction", rnd.direction),
        ("color", rnd.color),
        ("top", str(rnd.discard[-1])),
        ("pending", [(d.seat, d.kind, d.n) for d in rnd.pending]),
        ("hands", [len(h) for h in rnd.hands]),
        ("winner", rnd.winner),
        ("over", over),
        ("actor", rnd.actor),
        ("bonus", rnd.bonus),
        ("may play what came", rnd.drawn is not None or rnd.fired_play),
        ("window", rnd.window),
        ("uno called", list(rnd.uno_called)),
        ("gone out", list(rnd.finished)),
        ("loser", rnd.loser),
    )


class Pair:
    """A simulated round and the referee following it (engine/follow.py: what the table tells
    it of each move, the same code `unoattack demo --web` feeds its referee with)."""

    def __init__(self, game: Game, ref: Referee, rnd: Round, tally: Tally, where: str) -> None:
        self.game = game
        self.ref = ref
        self.rnd = rnd
        self.tally = tally
        self.where = where
        self.log: list[Action] = []
        self.follower = Follower(rnd, lambda change: change(ref))
        if self.started:
            self.check("the start")

    @property
    def started(self) -> bool:
        return self.follower.started

    # -- moves ---------------------------------------------------------------------------------
    def apply(self, act: Action) -> None:
        facts = self.follower.facts()
        self.rnd.apply(act)
        self.tally.moves += 1
        self.tally.kinds[act.kind] += 1
        self.log.append(act)
        try:
            self.follower.moved(act, facts)
        except RuleError as exc:
            raise self.disagree(f"the referee refused {act}: {exc}") from None
        if self.started:
            self.check(act)

    # -- checks ------------------------------------------------------------------------------
    def disagree(self, what: str) -> Disagree:
        recent = "; ".join(map(str, self.log[-8:]))
        return Disagree(f"{self.where}: {what} (last moves: {recent})")

    def check(self, after: object) -> None:
        """Compare both sides after `after` (a move, or words; written out only on a
        disagreement)."""
        ref = self.ref
        blind = ref.round
        if blind is None:
            # A knockout round is decided by who went out: the referee scores it at once.
            if not (self.rnd.over and ref.mode == "knockout" and ref.phase == "over"):
                raise self.disagree(f"after {after}: the referee has no round ({ref.phase})")
            return
        mine, theirs = view(self.rnd), view(blind)
        if mine != theirs:
            diff = [
                f"{a[0]}: simulator {a[1]!r}, referee {b[1]!r}"
                for a, b in zip(mine, theirs, strict=True)
                if a != b
            ]
            raise self.disagree(f"after {after}: " + "; ".join(diff))
        if ref.hand != [len(h) for h in self.rnd.hands]:
            raise self.disagree(f"after {after}: hand counts {ref.hand}")
        over = self.rnd.over
        if (ref.phase != "play") != over:
            raise self.disagree(f"after {after}: referee phase {ref.phase}, round over {over}")

    def finish(self) -> None:
        """Enter the hands left, score the round on both sides and compare."""
        ref, game = self.ref, self.game
        if not self.started:
            raise self.disagree("a round ended before the referee could start it")
        self.follower.finish()
        game.finish_round()
        if ref.scores != game.scores:
            raise self.disagree(f"scores: simulator {game.scores}, referee {ref.scores}")
        out = sorted(s for s in range(game.players) if not ref.active[s])
        if out != sorted(game.out):
            raise self.disagree(f"out: simulator {sorted(game.out)}, referee {out}")
        if ref.mode == "knockout":
            said = ref.rounds[-1]
            went = (said["finished"], said["loser"])
            if went != (game.history[-1]["finished"], game.history[-1]["loser"]):
                raise self.disagree(f"knockout: simulator {game.history[-1]}, referee {said}")
        if ref.chips != game.chips:
            raise self.disagree(f"chips: simulator {game.chips}, referee {ref.chips}")
        if game.over != (ref.phase == "over") or (list(game.winners), list(game.losers)) != (
            ref.game_winners,
            ref.game_losers,
        ):
            raise self.disagree(
                f"game end: simulator {list(game.winners)} won, {list(game.losers)} lost; "
                f"referee {ref.game_winners} won, {ref.game_losers} lost"
            )


def play_round(pair: Pair, bots: list[Any], rng: random.Random) -> bool:
    """Play the simulator's round to its end through `pair` (like engine.sim.play_round, plus
    now and then a mistake the rules penalise); False if it was cut at MAX_ACTIONS (a knockout
    round: twice that)."""
    rnd = pair.rnd
    # A knockout round goes on until one is left: it may run twice as long.
    cap = MAX_ACTIONS * (2 if pair.ref.mode == "knockout" else 1)
    for _ in range(cap):
        seats = rnd.seats  # a knockout round seats fewer as players go out
        if rnd.over:
            return True
        if rnd.window is not None or rnd.rules.jump_in:
            first = rnd.window if rnd.window is not None else rnd.actor
            start = seats.index(first) if first in seats else 0
            top = rnd.discard[-1]
            for seat in seats[start:] + seats[:start]:
                if rnd.over:
                    break
                if rnd.window is None and top not in rnd.hands[seat]:
                    continue  # no UNO to call or catch, no card to jump in with: skip the bot
                act = bots[seat].react(rnd, seat)
                if act is not None:
                    pair.apply(act)
            if rnd.over:
                return True
        if rng.random() < 0.01:
            mistake(pair, rng)
            if rnd.over:
                return True
        actor = rnd.actor
        assert actor is not None
        pair.apply(bots[actor].choose(rnd, actor))
    return False


def mistake(pair: Pair, rng: random.Random) -> None:
    """A false UNO call, a wrong accusation or a late catch, made by a random seat: both must
    penalise the first two alike and refuse the third alike."""
    rnd = pair.rnd
    seat = rng.choice(rnd.seats)
    others = [s for s in rnd.seats if s != seat]
    act = rng.choice([Action("uno", seat), Action("catch", seat, target=rng.choice(others))])
    try:
        rnd.check(act)
    except RuleError:
        if pair.started:
            before = pair.ref.to_dict()
            with pytest.raises(RuleError):
                if act.kind == "uno":
                    pair.ref.call_uno(seat)
                else:
                    pair.ref.catch(act.target, seat)  # type: ignore[arg-type]
            if pair.ref.to_dict() != before:
                raise pair.disagree(f"the referee changed state refusing {act}") from None
        return
    pair.apply(act)


def run_games(seed: int, rounds: int) -> Tally:
    """Seeded games of random settings until `rounds` rounds were refereed."""
    rng = random.Random(f"differential:{seed}")
    tally = Tally()
    game_index = seed  # chunks start their round of player counts at different places
    while tally.rounds < rounds:
        preset, players, options, mode, teams = settings(rng, game_index)
        game_index += 1
        rules = rules_for(preset, players, **options)
        game_seed = rng.getrandbits(32)
        target = rng.choice([60, 150, 300])
        game = Game(
            PRESETS[preset],
            rules,
            VirtualLauncher.seeded(game_seed),
            players,
            mode=mode,
            target=target,
            teams=teams,
            seed=game_seed,
            record=True,  # the referee follows what the round records of each move
        )
        ref = Referee(
            NAMES[:players], deck=preset, mode=mode, target=target, teams=teams, options=options
        )
        bots: list[Any] = [
            RandomBot(rng.getrandbits(32))
            if rng.random() < 0.3
            else HeuristicBot(rng.getrandbits(32))
            for _ in range(players)
        ]
        tally.count_game(preset, players, options, mode)
        while not game.over and tally.rounds < rounds:
            rnd = game.start_round()
            where = (
                f"seed {seed} game {game_seed} round {game.rounds_played + 1} "
                f"({preset}, {players} players, {options}, {mode}, {teams} teams)"
            )
            pair = Pair(game, ref, rnd, tally, where)
            if not play_round(pair, bots, rng):
                tally.cut += 1
                break  # a runaway round: start another game
            pair.finish()
            tally.rounds += 1
    return tally


# About 1.2 s of CPU a chunk; the timeout only guards a hang on a machine that is very busy.
@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_the_referee_agrees_with_the_simulator_after_every_move(chunk: int) -> None:
    tally = run_games(chunk, ROUNDS // CHUNKS)
    assert tally.rounds == ROUNDS // CHUNKS
    # A round past MAX_ACTIONS (random bots in a slow deck) is checked move by move up to there,
    # then dropped with its game: it must stay rare (about 1 in 600 rounds).
    assert tally.cut <= 5, f"{tally.cut} rounds ran past {MAX_ACTIONS} actions"
    assert tally.moves > 20 * tally.rounds
    # Every chunk (about 70 games) covers every preset, player count, scoring mode, and each
    # rule option both on and off.
    assert set(tally.presets) == {"attack", "attack-1998", "classic"}
    assert set(tally.players) == set(range(2, 11))
    assert set(tally.modes) == MODES
    names = {*BOOL_OPTIONS, "play_fired_card", "draw_until_playable"}
    assert set(tally.options_on) == names and set(tally.options_off) == names
    assert {"play", "hit", "draw", "pass", "uno", "catch", "challenge"} <= set(tally.kinds)


# -- the test notices a rule changed on one side only ----------------------------------------


@contextmanager
def changed(cls: type, name: str, wrap: Callable[[Any], Any]) -> Iterator[None]:
    """Replace `cls.name` with wrap(original) for instances of exactly `cls`'s side."""
    original = getattr(Round, name)
    patched = wrap(original)
    setattr(cls, name, patched)
    try:
        yield
    finally:
        if cls is Round:
            setattr(Round, name, original)
        else:
            delattr(cls, name)


def _skip_one_more(original: Callable[..., None]) -> Callable[..., None]:
    def _do_play(self: Round, action: Action, context: str, *, removed: bool = False) -> None:
        original(self, action, context, removed=removed)
        if type(self) is Round and action.cards[0].face == "S" and self.winner is None:
            self.turn = self._next(self.turn)  # the simulator alone: S skips two

    return _do_play


def _hit_two_is_three(original: Callable[..., None]) -> Callable[..., None]:
    def _do_play(self: Round, action: Action, context: str, *, removed: bool = False) -> None:
        original(self, action, context, removed=removed)
        if isinstance(self, BlindRound) and action.cards[0].face == "H2" and self.pending:
            self.pending[-1].n += 1  # the referee alone: Hit 2 owes three

    return _do_play


@pytest.mark.timeout(1200)
@pytest.mark.parametrize(
    ("side", "wrap"),
    [(Round, _skip_one_more), (BlindRound, _hit_two_is_three)],
    ids=["simulator changes S", "referee changes H2"],
)
def test_a_rule_changed_on_one_side_is_caught(side: type, wrap: Callable[[Any], Any]) -> None:
    with changed(side, "_do_play", wrap), pytest.raises(Disagree):
        run_games(12345, 200)
