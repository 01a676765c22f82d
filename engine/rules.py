"""Rule options and the defaults each preset takes from its source (see ../shared/RULES.md).

A `Rules` value is immutable; build one with `rules_for(preset, players, **options)`, which checks
every option name and value and fills the preset's defaults for the rest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from common.commandline import integer
from engine.errors import InputError
from i18n import _

PRESET_NAMES: tuple[str, ...] = ("attack", "attack-1998", "classic")
# Effects a WC (Wild Customizable) may be bound to by `custom_wild_effect`: the sheets leave the
# card to the players ("Players can create any action they choose"); these are the actions of the
# other Attack cards, each a house rule a group can write on the card.
CUSTOM_WILD_EFFECTS: tuple[str, ...] = ("W", "WH4", "WAA", "WHF", "WAH", "S", "R", "H2", "TH")
MIN_PLAYERS = 2
MAX_PLAYERS = 10


@dataclass(frozen=True)
class Rules:
    """Every rule option of a round. `preset` picks the rule family: `classic` draws cards from
    a draw pile (the launcher dispenses exactly), the two Attack presets hit the launcher.

    Options (all documented in docs/rules.md):
      skip_reverse_play_again  after R or S the same player may play one more card (3+ players;
                               with two players R/S already give the turn back)
      play_fired_card          Attack: after a hit they had to make (nothing played), the player
                               may play a card the launcher fired, or pass
      custom_wild_effect       what WC does: W, WH4, WAA, WHF or WAH
      stacking                 answer H2/D2/WH4/WD4 with another; penalties add up
      multi_play               play several cards of one face at once
      jump_in                  play an identical number card out of turn
      last_card_restriction    no going out on R, S or a plain wild (seed 001 玩法二)
      draw_until_playable      classic: a draw goes on until a playable card comes
      dealer_plays_first       the dealer plays first on the card turned up (seed 001 classic)
      counter_clockwise        play starts to the dealer's right and goes right (seed 001 classic)
      discard_all_choice       a Discard All takes with it the cards of its colour the player
                               picks, not every one
      two_player_rules         with two players R acts as S (seed 001)
      uno_penalty              hits (attack) or cards (classic) for a missed UNO, a false call or a
                               wrong accusation
      hand_size                cards dealt to each player
    """

    preset: str = "attack"
    skip_reverse_play_again: bool = True
    play_fired_card: bool = False
    custom_wild_effect: str = "W"
    stacking: bool = False
    multi_play: bool = False
    jump_in: bool = False
    last_card_restriction: bool = False
    draw_until_playable: bool = False
    dealer_plays_first: bool = False
    counter_clockwise: bool = False
    discard_all_choice: bool = False
    two_player_rules: bool = True
    uno_penalty: int = 2
    hand_size: int = 7

    @property
    def attack(self) -> bool:
        """True when penalties are launcher hits (the Attack presets), False for classic draws."""
        return self.preset != "classic"

    def to_dict(self) -> dict[str, object]:
        """The options as plain JSON-able data."""
        return asdict(self)


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules) if f.name != "preset")

# What each preset's source states; everything else keeps the dataclass default.
PRESET_DEFAULTS: dict[str, dict[str, object]] = {
    # Seeds 000/003/004: after R or S "the player may play an additional card immediately";
    # "take whatever the launcher gives and end your turn".
    "attack": {"skip_reverse_play_again": True, "play_fired_card": False},
    # Seed 001 (擊卡樂): "若仍不能出牌便可跳過" (if still unable to play, pass): a fired card
    # that plays may be played.
    "attack-1998": {"skip_reverse_play_again": False, "play_fired_card": True},
    # Seed 001 (classic): "莊家根據此牌出牌，遊戲開始" and (特殊情況) "其餘情況由莊家根據抽到的牌
    # 先下牌": the dealer plays first on the card turned up (docs/rules.md, decisions).
    "classic": {"skip_reverse_play_again": False, "dealer_plays_first": True},
}
# Seats each preset's sheet allows: seed 001 says 2-9 for UNO Attack (擊卡樂), the current sheet
# 2-10; classic UNO seats 2-10 here.
PLAYERS: dict[str, tuple[int, int]] = {
    "attack": (MIN_PLAYERS, MAX_PLAYERS),
    "attack-1998": (MIN_PLAYERS, 9),
    "classic": (MIN_PLAYERS, MAX_PLAYERS),
}


def player_range(preset: str) -> tuple[int, int]:
    """(fewest, most) seats the preset's rule sheet allows."""
    return PLAYERS.get(preset, (MIN_PLAYERS, MAX_PLAYERS))


def rules_for(preset: str, players: int = 4, **options: object) -> Rules:
    """The rules of `preset` for `players` seats, with `options` overriding its defaults.

    Raises InputError (one line, naming the option and what is allowed) for an unknown preset,
    an unknown option, a value of the wrong type or out of range, or `draw_until_playable` with an
    Attack preset.
    """
    if preset not in PRESET_NAMES:
        raise InputError(
            _("unknown preset `{preset}`: use {presets}").format(
                preset=preset, presets=", ".join(PRESET_NAMES)
            )
        )
    if isinstance(players, bool) or not isinstance(players, int):
        raise InputError(
            _("players must be a whole number from {low} to {high}").format(
                low=MIN_PLAYERS, high=MAX_PLAYERS
            )
        )
    low, high = player_range(preset)
    if not low <= players <= high:
        raise InputError(
            _("players = {players}: from {low} to {high} for {preset}").format(
                players=players, low=low, high=high, preset=preset
            )
        )
    values: dict[str, object] = dict(PRESET_DEFAULTS[preset])
    for name, value in options.items():
        _check_option(name, value)
        values[name] = str(value).upper() if name == "custom_wild_effect" else value
    if values.get("draw_until_playable") and preset != "classic":
        raise InputError(_("draw_until_playable is a classic rule: use it with preset classic"))
    if values.get("play_fired_card") and preset == "classic":
        raise InputError(
            _("play_fired_card is an Attack rule (classic plays the drawn card anyway)")
        )
    return Rules(preset=preset, **values)  # type: ignore[arg-type]


def parse_option(text: str, flag: str = "--option") -> tuple[str, object]:
    """`NAME=VALUE` from a command line (`--option stacking=true`): true/false, a whole number,
    or text; the name and value are checked by rules_for."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise InputError(
            _("{flag} {text!r}: write NAME=VALUE, e.g. stacking=true").format(flag=flag, text=text)
        )
    return name, parse_value(raw)


def parse_value(raw: str) -> object:
    """A command-line value as a file would give it: true/false, a whole number (ASCII digits:
    `integer`; "²" passed `isdigit` and then failed `int` with a traceback), or text."""
    raw = raw.strip()
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    number = integer(raw)
    return raw if number is None else number


def _check_option(name: str, value: object) -> None:
    if name not in OPTION_NAMES:
        raise InputError(
            _("unknown rule option `{name}`: allowed are {names}").format(
                name=name, names=", ".join(OPTION_NAMES)
            )
        )
    if name == "custom_wild_effect":
        if not isinstance(value, str) or value.upper() not in CUSTOM_WILD_EFFECTS:
            raise InputError(
                _("{name} = {value!r}: one of {allowed}").format(
                    name=name, value=value, allowed=", ".join(CUSTOM_WILD_EFFECTS)
                )
            )
    elif name in ("uno_penalty", "hand_size"):
        most = 10 if name == "uno_penalty" else 20
        least = 0 if name == "uno_penalty" else 1
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise InputError(
                _("{name} = {value!r}: a whole number from {low} to {high}").format(
                    name=name, value=value, low=least, high=most
                )
            )
    elif not isinstance(value, bool):
        raise InputError(_("{name} = {value!r}: true or false").format(name=name, value=value))
