"""What every card does: one entry per face, read by `Round` (engine/game.py) and, through it, by
the table referee (engine/table/). The rules are stated in docs/rules.md; a reader looking for
"what does WAA do" reads `EFFECTS["WAA"]` here.

An `Effect` says what the card needs when played (a colour, a target seat), what it does (reverse,
skip, who owes how many hits or draws, a Discard All, a Trade Hands), whether the player plays
again after it, which cards may answer its penalty under `stacking`, whether it may be a last
card, and what it does when it is the first card turned up. The sequencing that applies these
entries (obligations first, where "next" counts from, the UNO window) is `Round`'s; nothing here
has state.

`WC` (Wild Customizable) plays as the face `custom_wild_effect` binds it to (`effect_of`), but is
always a plain wild when turned up first.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from engine.cards import NUMBER_FACES

__all__ = ["EFFECTS", "FIRST_KINDS", "OWES", "Effect", "effect_of", "first_card"]

# Who owes what a card causes: the next player (who also loses the turn), the target the player
# chose, or every other player in turn order starting next to the player.
OWES = ("next", "target", "others")
# What a card turned up first does (see Effect.first).
FIRST_KINDS = ("play", "name", "owe", "all_but_dealer", "skip", "dealer_right", "back")


@dataclass(frozen=True, slots=True)
class Effect:
    """One face's rules (documented field by field; defaults are a plain number card)."""

    face: str
    name: str
    # -- needs ---------------------------------------------------------------------------------
    wild: bool = False  # no colour of its own: the player names the colour to play next
    aims: bool = False  # the player picks another seat (WAA's victim, TH's partner)
    # -- does ----------------------------------------------------------------------------------
    discards_colour: bool = False  # DA: every card of its colour leaves the hand with it
    swaps_hands: bool = False  # TH: the whole hand is swapped with the target's
    reverses: bool = False  # R: direction flips (several at once: an odd number flips)
    skips: int = 0  # players skipped, per card played (S)
    two_player_skips: int = 0  # the same with two seats in play and two_player_rules (R as S)
    owes: str | None = None  # who owes: one of OWES
    take: int = 0  # hits (Attack) or draws (classic) each of them owes
    until_fire: bool = False  # WHF: the victim hits until a press fires (classic: draws one)
    adds_up: bool = False  # multi_play: n cards owe n times `take`; otherwise they count once
    play_again: bool = False  # skip_reverse_play_again: the player may play one more card
    challengeable: bool = False  # WD4: legal only holding no card of the colour in play
    # -- may ----------------------------------------------------------------------------------
    answers: frozenset[str] = frozenset()  # stacking: faces that may answer its penalty
    multi: bool = True  # multi_play: may be played several at once
    last_card: bool = True  # may be a player's last card (TH: never)
    # last_card_restriction forbids going out on it: seed 001 玩法二 names R, S and the plain
    # wild ("不能是'reverse翻轉'，'skip跳過'或者是'wild變色'"); a wild that makes someone take
    # cards may end a round ("若贏家最後一張打出的是...罰抽4張牌", the next player still draws).
    restricted_last: bool = False
    # -- turned up first -----------------------------------------------------------------------
    # play: normal start; name: the first player names the colour (every wild does this too);
    # owe: the first player owes `take` (or hits until fire) and loses the turn;
    # all_but_dealer: every player but the dealer owes `take`, the first player starts;
    # skip: the first player is skipped; dealer_right: the dealer plays first, going right;
    # back: the card goes back into the launcher and another is turned up.
    first: str = "play"
    first_classic: str | None = field(default=None)  # classic rules, if different from `first`

    @property
    def penalty(self) -> bool:
        """True when playing it makes someone owe hits or draws."""
        return self.owes is not None


def _number(face: str) -> Effect:
    return Effect(face, f"number {face}")


_PENALTY_ANSWERS_2 = {
    # stacking (1998 sheet, rule 3): a Draw Two on a Draw Two (or +4); a +4 only on a +4. The
    # Attack cards stack the same way: Hit 2 on Hit 2 or Wild Hit 4, Wild Hit 4 on either four.
    "H2": frozenset({"H2", "WH4"}),
    "D2": frozenset({"D2", "WD4"}),
    "WH4": frozenset({"WH4", "WD4"}),
    "WD4": frozenset({"WD4", "WH4"}),
}

EFFECTS: dict[str, Effect] = {
    **{face: _number(face) for face in NUMBER_FACES},
    "S": Effect(
        "S",
        "Skip",
        skips=1,
        two_player_skips=1,
        play_again=True,
        restricted_last=True,
        first="skip",
    ),
    "R": Effect(
        "R",
        "Reverse",
        reverses=True,
        two_player_skips=1,
        play_again=True,
        restricted_last=True,
        first="dealer_right",
    ),
    "H2": Effect(
        "H2",
        "Hit 2",
        owes="next",
        take=2,
        adds_up=True,
        answers=_PENALTY_ANSWERS_2["H2"],
        first="owe",
    ),
    "D2": Effect(
        "D2",
        "Draw Two",
        owes="next",
        take=2,
        adds_up=True,
        answers=_PENALTY_ANSWERS_2["D2"],
        first="owe",
    ),
    "DA": Effect("DA", "Discard All", discards_colour=True, multi=False),
    "TH": Effect(
        "TH", "Trade Hands", aims=True, swaps_hands=True, multi=False, last_card=False, first="back"
    ),
    "W": Effect("W", "Wild", wild=True, restricted_last=True, first="name"),
    "WD4": Effect(
        "WD4",
        "Wild Draw Four",
        wild=True,
        owes="next",
        take=4,
        adds_up=True,
        challengeable=True,
        answers=_PENALTY_ANSWERS_2["WD4"],
        first="owe",
        first_classic="back",
    ),
    "WH4": Effect(
        "WH4",
        "Wild Hit 4",
        wild=True,
        owes="next",
        take=4,
        adds_up=True,
        answers=_PENALTY_ANSWERS_2["WH4"],
        first="owe",
    ),
    "WAA": Effect(
        "WAA",
        "Wild Attack-Attack",
        wild=True,
        aims=True,
        owes="target",
        take=2,
        first="owe",
    ),
    # Bound by custom_wild_effect when played (effect_of); turned up first it is a plain wild.
    "WC": Effect("WC", "Wild Customizable", wild=True, restricted_last=True, first="name"),
    "WAH": Effect(
        "WAH",
        "Wild All Hit",
        wild=True,
        owes="others",
        take=1,
        first="all_but_dealer",
    ),
    "WHF": Effect(
        "WHF",
        "Wild Hit-Fire",
        wild=True,
        owes="next",
        take=1,
        until_fire=True,
        first="owe",
    ),
}


def _bound(face: str) -> Effect:
    """WC acting as `face`: that face's effect (and name, so a stacking answer or an obligation
    knows it by that face) on a wild, which names the colour; a plain wild turned up first."""
    base = EFFECTS[face]
    return replace(
        base,
        name=f"Wild Customizable as {base.name}",
        wild=True,
        first="name",
        first_classic=None,
    )


_WC_BOUND: dict[str, Effect] = {"W": EFFECTS["WC"]}


def effect_of(face: str, custom_wild_effect: str = "W") -> Effect:
    """The effect a card of `face` has when played, with WC bound by `custom_wild_effect`."""
    if face != "WC":
        return EFFECTS[face]
    bound = _WC_BOUND.get(custom_wild_effect)
    if bound is None:
        bound = _WC_BOUND[custom_wild_effect] = _bound(custom_wild_effect)
    return bound


def first_card(face: str, *, classic: bool) -> str:
    """What `face` does turned up first (one of FIRST_KINDS), for the classic or Attack rules."""
    effect = EFFECTS[face]
    if classic and effect.first_classic is not None:
        return effect.first_classic
    return effect.first
