"""Rapid-press attenuation: the curve, the rapid-run count, and that it only takes cards away."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.checks import BadValue
from common.jam import JamParams, describe
from firmware.attenuation import KEYS, AttenuationConfig, Attenuator, cut, factor

_MS = 1_000_000


def test_curve_applies_per_rapid_press_and_the_last_factor_holds() -> None:
    curve = (0.5, 0.25, 0.0)
    assert [factor(curve, r) for r in range(6)] == [1.0, 0.5, 0.25, 0.0, 0.0, 0.0]
    assert [cut(8, curve, r) for r in range(5)] == [8, 4, 2, 0, 0]
    assert [cut(3, curve, r) for r in range(3)] == [3, 1, 0]  # rounded down


def test_rapid_runs_count_and_reset_after_the_window() -> None:
    att = Attenuator(AttenuationConfig(window_ms=500, curve=(0.5, 0.0)))
    gaps_ms = [0, 100, 100, 499, 500, 200, 2000, 10]
    t, runs = 0, []
    for gap in gaps_ms:
        t += gap * _MS
        runs.append(att.note(t))
    assert runs == [0, 1, 2, 3, 0, 1, 0, 1]
    assert [att.apply(6, r) for r in runs] == [6, 3, 0, 0, 6, 3, 6, 3]


def test_window_zero_is_off() -> None:
    att = Attenuator(AttenuationConfig(window_ms=0, curve=(0.0,)))
    assert [att.note(t * _MS) for t in (0, 1, 2)] == [0, 0, 0]
    assert att.apply(7, 5) == 7
    assert att.explain() == ["rapid-press attenuation: off ([attenuation] window_ms = 0)"]


@given(
    curve=st.lists(st.floats(0, 1), min_size=1, max_size=16),
    planned=st.integers(0, 40),
    rapid=st.integers(0, 50),
)
def test_attenuation_never_adds_a_card(curve: list[float], planned: int, rapid: int) -> None:
    out = cut(planned, curve, rapid)
    assert 0 <= out <= planned
    assert cut(planned, curve, 0) == planned


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("window_ms", -1, "whole number from 0 to 10000"),
        ("window_ms", 10_001, "whole number from 0 to 10000"),
        ("window_ms", True, "whole number from 0 to 10000"),
        ("curve", [], "must list 1 to 16 factors from 0 to 1"),
        ("curve", [0.5] * 17, "must list 1 to 16 factors from 0 to 1"),
        ("curve", [1.5], "must list 1 to 16 factors from 0 to 1"),
        ("curve", [float("nan")], "must list 1 to 16 factors from 0 to 1"),
        ("curve", [False], "must list 1 to 16 factors from 0 to 1"),
        ("curve", "0.5", "must list 1 to 16 factors from 0 to 1"),
        ("spam_sound", 1, "must be true or false"),
    ],
)
def test_each_key_has_one_check_that_says_what_it_takes(
    key: str, value: object, needle: str
) -> None:
    with pytest.raises(BadValue, match=needle):
        KEYS[key](value)


def test_the_checks_normalise_what_they_take() -> None:
    assert KEYS["curve"]([1, 0.5]) == (1.0, 0.5)
    assert KEYS["window_ms"](0) == 0 and KEYS["spam_sound"](False) is False
    default = AttenuationConfig()
    assert {k: check(getattr(default, k)) for k, check in KEYS.items()} == vars(default)


def test_explain_gives_the_mean_cards_of_a_hammered_button() -> None:
    att = Attenuator(AttenuationConfig(window_ms=800, curve=(0.5, 0.0)))
    pmf = describe(JamParams())["cards_per_press"]
    lines = att.explain(pmf)
    text = "\n".join(lines)
    assert "within 800 ms" in text and "rapid #2+" in text
    normal = sum(p * k for k, p in enumerate(pmf))
    assert f"{normal:.2f} (100%)" in text
    halved = sum(p * (k // 2) for k, p in enumerate(pmf))
    assert f"{halved:.2f} ({100 * halved / normal:.0f}%)" in text
    assert "0.00 (0%)" in text


# --------------------------------------------------------------------------- on the daemon


def test_hammering_the_button_cuts_the_bursts_and_cues_spam(make_box) -> None:
    box = make_box(
        {"jam.count": 4, "attenuation.window_ms": 5000, "attenuation.curve": [0.5, 0.0],
         "timing.cooldown_ms": 0, "limits.press_queue": 8}
    )  # fmt: skip
    for _ in range(3):
        box.daemon.press()  # within the window of each other: rapid #1 and #2
    fires = box.wait_fires(3)
    assert [(f["planned"], f["cut"]) for f in fires] == [(4, 0), (2, 2), (0, 4)]
    assert [f["reason"] for f in fires] == ["fired", "fired", "dry"]
    sink = box.daemon.sound.sink
    box.daemon.call(lambda: None)
    assert sink.events().count("spam") == 2
    box.command("press")  # a host press is never cut
    assert box.wait_fires(4)[3]["cut"] == 0
