"""`unoattack deck` and `unoattack score`."""

from __future__ import annotations

import json

import pytest

from engine.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_deck_json_attack_is_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "deck")
    assert set(data) == {"deck", "total", "cards", "points"}
    assert data["deck"] == "attack"
    assert data["total"] == 112
    assert sum(data["cards"].values()) == 112
    assert data["cards"]["R1"] == 2
    assert data["points"]["R1"] == 1
    assert data["cards"]["BDA"] == 2
    assert data["points"]["BDA"] == 30
    assert data["cards"]["YR"] == 1
    assert data["points"]["GH2"] == 20
    assert (data["cards"]["WH4"], data["points"]["WH4"]) == (1, 40)
    assert (data["cards"]["WAA"], data["points"]["WAA"]) == (4, 50)
    assert (data["cards"]["WC"], data["points"]["WC"]) == (3, 50)
    assert "R0" not in data["cards"]  # Attack decks have no zeros
    assert set(data["points"]) == set(data["cards"])


def test_deck_json_attack_1998(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "deck", "--deck", "attack-1998")
    assert data["deck"] == "attack-1998"
    assert data["total"] == 112 == sum(data["cards"].values())
    assert (data["cards"]["RTH"], data["points"]["RTH"]) == (1, 30)
    assert (data["cards"]["WAH"], data["points"]["WAH"]) == (2, 50)
    assert (data["cards"]["WHF"], data["points"]["WHF"]) == (2, 50)
    assert data["cards"]["GR"] == 2
    assert data["cards"]["GDA"] == 1
    assert "WAA" not in data["cards"]


def test_deck_json_classic(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "deck", "--deck", "classic")
    assert data["total"] == 108 == sum(data["cards"].values())
    assert (data["cards"]["R0"], data["points"]["R0"]) == (1, 0)
    assert (data["cards"]["B9"], data["points"]["B9"]) == (2, 9)
    assert (data["cards"]["YD2"], data["points"]["YD2"]) == (2, 20)
    assert (data["cards"]["WD4"], data["points"]["WD4"]) == (4, 50)
    assert "WH4" not in data["cards"]


def test_deck_table_lists_every_face_and_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "deck", "--deck", "classic")
    assert code == 0
    assert "108" in out.splitlines()[0]
    faces = {line.split()[0] for line in out.splitlines()[2:] if line.strip()}
    for face in ["0", "9", "S", "R", "D2", "W", "WD4"]:
        assert face in faces
    # A number row shows the count in each colour and the points.
    row = next(line.split() for line in out.splitlines() if line.startswith("7 "))
    assert row == ["7", "2", "2", "2", "2", "7"]


def test_unknown_preset_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "deck", "--deck", "poker")
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "poker" in err


def test_missing_deck_file_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    code, _, err = run(capsys, "deck", "--deck", str(tmp_path / "nope.toml"))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "nope.toml" in err


def test_score_adds_up_a_hand(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "score", "r5", "WAA", "bh2", "YDA", "WH4")
    assert data == {"points": 5 + 50 + 20 + 30 + 40, "cards": ["R5", "WAA", "BH2", "YDA", "WH4"]}


def test_score_uses_the_chosen_deck(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "score", "--deck", "classic", "R0", "WD4", "GD2")
    assert data["points"] == 0 + 50 + 20


def test_score_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "score", "R9", "G1")
    assert code == 0
    assert out.startswith("10 points")


@pytest.mark.parametrize(
    ("deck", "card", "needle"),
    [
        ("attack", "X9", "X9"),
        ("attack", "WD4", "WD4"),  # a classic card, not in the Attack deck
        ("classic", "WAA", "WAA"),
        ("attack", "R0", "R0"),  # Attack decks have no zeros
    ],
)
def test_score_rejects_unknown_or_foreign_cards(
    capsys: pytest.CaptureFixture[str], deck: str, card: str, needle: str
) -> None:
    code, out, err = run(capsys, "score", "--deck", deck, "R5", card)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert needle in err.upper()


def test_score_rejects_more_copies_than_the_deck_holds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "score", "WH4", "WH4")
    assert code == 2
    assert "WH4" in err
    assert len(err.strip().splitlines()) == 1


def test_score_needs_at_least_one_card(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["score"])
    assert exc.value.code == 2


HOME_DECK = """
name = "home box"
[cards]
R1 = 4
B7 = 4
RS = 2
WAA = 6
[points]
WAA = 40
"""


def test_deck_file_json_and_score(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    path = tmp_path / "home.toml"
    path.write_text(HOME_DECK, encoding="utf-8")
    data = run_json(capsys, "deck", "--deck", str(path))
    assert data == {
        "deck": "home box",
        "total": 16,
        "cards": {"R1": 4, "B7": 4, "RS": 2, "WAA": 6},
        "points": {"R1": 1, "B7": 7, "RS": 20, "WAA": 40},
    }
    assert run_json(capsys, "score", "--deck", str(path), "WAA", "b7") == {
        "points": 47,
        "cards": ["WAA", "B7"],
    }
    # R5 exists as a card but not in this deck.
    code, _, err = run(capsys, "score", "--deck", str(path), "R5")
    assert code == 2
    assert "home box" in err


def test_bad_deck_file_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[cards]\nR1 = 0\n", encoding="utf-8")
    code, out, err = run(capsys, "deck", "--deck", str(path))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "R1" in err


def test_binary_deck_file_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    path = tmp_path / "blob.toml"
    path.write_bytes(b"\xff\xfe\x00\x81")
    code, _, err = run(capsys, "score", "--deck", str(path), "R1")
    assert code == 2
    assert "blob.toml" in err
    assert len(err.strip().splitlines()) == 1
