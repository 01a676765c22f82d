"""Games with rigged rounds for the scoring tests (test_rules_scoring, test_rules_systems)."""

from __future__ import annotations

from typing import Any

from engine.cards import PRESETS, parse_card
from engine.game import Action, Game, Round
from engine.launchers import ScriptedLauncher
from engine.rules import rules_for


def game(mode: str, players: int = 3, target: int = 500, **kw: Any) -> Game:
    """An attack game in `mode` (seeded), with a launcher that never fires."""
    return Game(
        PRESETS["attack"],
        rules_for("attack", players),
        ScriptedLauncher([]),
        players=players,
        mode=mode,
        target=target,
        seed=5,
        **kw,
    )


def finish(g: Game, winner: int, hands: list[list[str]]) -> dict[str, Any]:
    """Rig the current round (dealt if none is): `winner` holds R1 and plays it on R5; the
    others hold `hands`. Returns what `finish_round` scored."""
    if g.round is None:
        g.start_round()
    rigged = [
        [parse_card("R1")] if s == winner else [parse_card(t) for t in h]
        for s, h in enumerate(hands)
    ]
    g.round = Round.from_position(
        g.deck,
        g.rules,
        g.launcher,
        hands=rigged,
        top=parse_card("R5"),
        turn=winner,
        dealer=g.dealer,
        out=g.out,
    )
    g.round.apply(Action("play", winner, (parse_card("R1"),)))
    assert g.round.over
    return g.finish_round()
