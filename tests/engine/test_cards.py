"""Cards, notation, presets, points and deck files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engine.cards import PRESETS, Card, load_deck, parse_card
from engine.errors import CardError, InputError


@pytest.mark.parametrize(
    ("text", "color", "face"),
    [
        ("R5", "R", "5"),
        ("r5", "R", "5"),
        ("bs", "B", "S"),
        ("GR", "G", "R"),
        ("yh2", "Y", "H2"),
        ("BDA", "B", "DA"),
        ("rth", "R", "TH"),
        ("waa", None, "WAA"),
        ("WD4", None, "WD4"),
        (" g0 ", "G", "0"),
    ],
)
def test_parse_is_case_insensitive_and_prints_upper(
    text: str, color: str | None, face: str
) -> None:
    card = parse_card(text)
    assert card == Card(color, face)
    assert str(card) == text.strip().upper()


@pytest.mark.parametrize("text", ["", "X5", "R10", "RW", "W4", "R 5", "RWAA", "WR", "5"])
def test_unknown_card_is_an_error(text: str) -> None:
    with pytest.raises(CardError, match="is not a card"):
        parse_card(text)


def test_card_not_in_deck_names_the_deck() -> None:
    with pytest.raises(CardError, match=r"^`WD4` is not in the attack deck$"):
        parse_card("wd4", PRESETS["attack"])
    with pytest.raises(CardError, match="`R0` is not in the attack-1998 deck"):
        parse_card("R0", PRESETS["attack-1998"])
    with pytest.raises(CardError, match="`YH2` is not in the classic deck"):
        parse_card("YH2", PRESETS["classic"])


def test_cards_sort_by_colour_then_face_wilds_last() -> None:
    cards = [parse_card(t) for t in ["WAA", "B1", "R9", "RS", "R1", "W"]]
    assert [str(c) for c in sorted(cards)] == ["R1", "R9", "RS", "B1", "W", "WAA"]


PER_COLOR = {
    "attack": {**{str(n): 2 for n in range(1, 10)}, "R": 1, "H2": 2, "S": 2, "DA": 2},
    "attack-1998": {
        **{str(n): 2 for n in range(1, 10)},
        "H2": 2,
        "R": 2,
        "S": 2,
        "DA": 1,
        "TH": 1,
    },
    "classic": {"0": 1, **{str(n): 2 for n in range(1, 10)}, "S": 2, "R": 2, "D2": 2},
}
WILDS = {
    "attack": {"W": 4, "WAA": 4, "WC": 3, "WH4": 1},
    "attack-1998": {"W": 4, "WAH": 2, "WHF": 2},
    "classic": {"W": 4, "WD4": 4},
}
TOTALS = {"attack": 112, "attack-1998": 112, "classic": 108}


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_composition_is_exact(name: str) -> None:
    deck = PRESETS[name]
    expected: dict[str, int] = {}
    for color in "RYGB":
        for face, n in PER_COLOR[name].items():
            expected[color + face] = n
    expected.update(WILDS[name])
    assert {str(c): n for c, n in deck.counts.items()} == expected
    assert deck.total == TOTALS[name] == len(deck.cards())
    assert Counter(deck.cards()) == Counter(deck.counts)


POINTS = {
    "attack": {
        "R7": 7,
        "GR": 20,
        "BS": 20,
        "YH2": 20,
        "RDA": 30,
        "WH4": 40,
        "W": 50,
        "WAA": 50,
        "WC": 50,
    },
    "attack-1998": {"B9": 9, "RTH": 30, "GDA": 30, "YH2": 20, "W": 50, "WAH": 50, "WHF": 50},
    "classic": {"R0": 0, "Y5": 5, "BD2": 20, "GS": 20, "RR": 20, "W": 50, "WD4": 50},
}


@pytest.mark.parametrize("name", list(PRESETS))
def test_point_tables(name: str) -> None:
    deck = PRESETS[name]
    for text, pts in POINTS[name].items():
        assert deck.points[parse_card(text)] == pts, text
    hand = [parse_card(t) for t in POINTS[name]]
    assert deck.points_of(hand) == sum(POINTS[name].values())


def test_load_deck_by_preset_name() -> None:
    assert load_deck("classic") is PRESETS["classic"]


def test_load_deck_file_counts_and_points(tmp_path: Path) -> None:
    path = tmp_path / "home.toml"
    path.write_text(
        'name = "home box"\n[cards]\nR1 = 10\nb2 = 10\nWAA = 4\n[points]\nwaa = 45\n',
        encoding="utf-8",
    )
    deck = load_deck(str(path))
    assert deck.name == "home box"
    assert deck.total == 24
    assert deck.points[parse_card("WAA")] == 45
    assert deck.points[parse_card("B2")] == 2
    with pytest.raises(CardError, match="`R2` is not in the home box deck"):
        parse_card("R2", deck)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[cards]\nR1 = 20\nX9 = 1\n", r"\[cards\] `X9` is not a card"),
        ("[cards]\nR1 = 0\n", r"\[cards\] R1 = 0: a count from 1 to 100"),
        ("[cards]\nR1 = 'two'\n", r"\[cards\] R1 = 'two'"),
        ("[cards]\nR1 = 20\n[points]\nR2 = 3\n", r"\[points\] `R2` is not in \[cards\]"),
        ("[cards]\nR1 = 20\n[points]\nR1 = -1\n", r"\[points\] R1 = -1"),
        ("colour = 1\n[cards]\nR1 = 20\n", "unknown key `colour`"),
        ("[cards]\nR1 = 3\n", "holds 3 cards"),
        ("[cards]\nRS = 10\nW = 10\n", r"two values to choose the dealer .found none"),
        ("[cards]\nR5 = 10\nB5 = 10\nWAA = 2\n", r"to choose the dealer .found only 5s"),
        ("name = 'x'\n", r"\[cards\] is required"),
        ("[cards\n", "not valid TOML"),
    ],
)
def test_bad_deck_file_is_one_line_error(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        load_deck(str(path))
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)


def test_unknown_deck_name() -> None:
    with pytest.raises(InputError, match="unknown deck `attak`: use attack, attack-1998, classic"):
        load_deck("attak")


def test_binary_deck_file_is_one_line_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "photo.toml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary")
    with pytest.raises(InputError, match="not a deck file") as info:
        load_deck(str(path))
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("command", ["sim", "demo", "table"])
@pytest.mark.parametrize("body", ["[cards]\nRS = 10\nW = 10\n", "[cards]\nR5 = 10\nB5 = 10\n"])
@pytest.mark.timeout(30)
def test_a_deck_that_cannot_choose_a_dealer_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, body: str
) -> None:
    """Such a deck used to be accepted, and sim and demo then hung choosing the dealer."""
    from engine.cli import main

    path = tmp_path / "deck.toml"
    path.write_text(body, encoding="utf-8")
    argv = [command, "--deck", str(path)]
    if command == "table":
        argv += ["--port", "none", "--players", "Ann,Bob", "--state", str(tmp_path / "t.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "to choose the dealer" in err and err.count("\n") == 1
