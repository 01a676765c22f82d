"""The jam model: parameters, the three modes, state, and describe()'s exact distributions."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.jam import (
    JamModel,
    JamParams,
    chi_square_sf,
    describe,
    from_mapping,
    hazard,
    sample,
    streak_stats,
)

# ----------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"mode": "chaos"}, "jam.mode must be one of hazard, pattern, fixed, got 'chaos'"),
        ({"base": 1.5}, "jam.base must be between 0 and 1, got 1.5"),
        ({"base": -0.1}, "jam.base must be between 0 and 1, got -0.1"),
        ({"base": "x"}, "jam.base must be a number between 0 and 1, got 'x'"),
        ({"base": float("nan")}, "jam.base must be a number between 0 and 1, got nan"),
        ({"step": 2}, "jam.step must be between 0 and 1, got 2"),
        ({"max_dry": -1}, "jam.max_dry must be between 0 and 100, got -1"),
        ({"max_dry": 2.5}, "jam.max_dry must be a whole number between 0 and 100, got 2.5"),
        ({"max_dry": True}, "jam.max_dry must be a whole number between 0 and 100, got True"),
        ({"max_burst": 0}, "jam.max_burst must be between 1 and 50, got 0"),
        ({"pressure_bonus": -1.0}, "jam.pressure_bonus must be between 0 and 10, got -1.0"),
        ({"burst_weights": ()}, "jam.burst_weights must be a non-empty list of weights, got ()"),
        ({"burst_weights": (0, 0)}, "jam.burst_weights must have at least one weight above 0"),
        ({"burst_weights": (1, -2)}, "jam.burst_weights must be at least 0 each, got -2"),
        ({"burst_weights": (1, "a")}, "jam.burst_weights must hold numbers, got 'a'"),
        ({"pattern": (0, 13)}, "jam.pattern must hold whole numbers between 0 and max_burst"),
        ({"mode": "pattern", "pattern": ()}, "jam.pattern must hold at least one count above 0"),
        ({"mode": "pattern", "pattern": (0, 0)}, "jam.pattern must hold at least one count"),
        ({"count": 0}, "jam.count must be between 1 and 12, got 0"),
        ({"count": 13}, "jam.count must be between 1 and 12, got 13"),
        ({"seed": -3}, "jam.seed must be between 0 and"),
    ],
)
def test_validate_names_the_key_in_one_line(changes: dict, message: str) -> None:
    params = JamParams(**changes)
    with pytest.raises(ValueError) as info:
        params.validate()
    text = str(info.value)
    assert text.startswith(message)
    assert "\n" not in text


def test_defaults_are_valid_and_imitate_the_real_box() -> None:
    JamParams().validate()
    d = describe(JamParams())
    # DESIGN.md: fires on roughly a third of presses, at least once every four presses in most
    # cases, up to ~10 dry presses possible, bursts usually 3-8 cards, up to 12.
    assert 0.3 <= d["fire_rate"] <= 0.37
    assert d["dry_streak_cdf"][3] >= 0.75
    assert d["dry_streak_max"] == 10
    assert sum(d["burst"][3:9]) >= 0.75
    assert len(d["burst"]) - 1 == 12


def test_from_mapping_converts_toml_values() -> None:
    params = from_mapping(
        {"mode": "pattern", "base": 0, "burst_weights": [1, 2], "pattern": [0, 2], "seed": 4}
    )
    assert params.mode == "pattern"
    assert params.base == 0.0 and isinstance(params.base, float)
    assert params.burst_weights == (1, 2)
    assert params.pattern == (0, 2)
    assert params.seed == 4
    assert params.step == JamParams().step


def test_from_mapping_partial_update_keeps_current_values() -> None:
    current = JamParams(base=0.4, step=0.2, max_dry=3)
    updated = from_mapping({"step": 0.1}, defaults=current)
    assert (updated.base, updated.step, updated.max_dry) == (0.4, 0.1, 3)


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"bsae": 0.2}, "jam.bsae is not a known key; allowed: mode, base"),
        ({"pattern": "0,1"}, "jam.pattern must be a list, got '0,1'"),
        ({"burst_weights": 3}, "jam.burst_weights must be a list, got 3"),
        ({"mode": 3}, "jam.mode must be one of hazard, pattern, fixed, got 3"),
        ({"base": 7}, "jam.base must be between 0 and 1, got 7.0"),
    ],
)
def test_from_mapping_rejects_bad_tables(mapping: dict, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        from_mapping(mapping)


# ----------------------------------------------------------------------------- the modes


def test_hazard_model_is_seeded() -> None:
    params = JamParams(seed=7)
    a = JamModel(params)
    b = JamModel(params)
    assert [a.plan() for _ in range(300)] == [b.plan() for _ in range(300)]
    c = JamModel(JamParams(seed=8))
    a = JamModel(params)
    assert [a.plan() for _ in range(300)] != [c.plan() for _ in range(300)]


def test_seed_zero_gives_a_fresh_run_each_start() -> None:
    runs = {tuple(JamModel(JamParams(seed=0)).plan() for _ in range(200)) for _ in range(3)}
    assert len(runs) == 3


def test_dry_streak_counts_dry_presses_and_never_passes_max_dry() -> None:
    model = JamModel(JamParams(base=0.0, step=0.05, max_dry=4), rng=random.Random(3))
    longest = 0
    expected = 0
    for _ in range(2000):
        before = model.dry_streak
        assert before == expected
        cards = model.plan()
        expected = 0 if cards else before + 1
        longest = max(longest, model.dry_streak)
        if before >= 4:
            assert cards > 0
    assert longest == 4


def test_hopper_caps_the_burst_and_an_empty_hopper_makes_a_dry_press() -> None:
    model = JamModel(JamParams(mode="fixed", count=5))
    assert model.plan(hopper=3) == 3
    assert model.dry_streak == 0
    assert model.plan(hopper=0) == 0
    assert model.dry_streak == 1
    assert model.plan() == 5
    assert model.dry_streak == 0


def test_pattern_mode_repeats_the_pattern() -> None:
    model = JamModel(JamParams(mode="pattern", pattern=(0, 2, 0, 0, 4)))
    assert [model.plan() for _ in range(12)] == [0, 2, 0, 0, 4, 0, 2, 0, 0, 4, 0, 2]
    assert model.dry_streak == 0


def test_pressure_bonus_shifts_bursts_and_max_burst_caps_them() -> None:
    params = JamParams(base=0.0, step=0.0, max_dry=5, burst_weights=(1,), pressure_bonus=1.5)
    params = JamParams(**{**params.__dict__, "max_burst": 7})
    model = JamModel(params, rng=random.Random(1))
    counts = [model.plan() for _ in range(12)]
    # 5 dry presses, then a forced fire of 1 + floor(1.5 * 5) = 8 cards, capped at 7.
    assert counts == [0, 0, 0, 0, 0, 7] * 2


def test_state_restore_continues_the_same_run() -> None:
    model = JamModel(JamParams(), rng=random.Random(5))
    for _ in range(17):
        model.plan()
    saved = json.loads(json.dumps(model.state()))
    ahead = [model.plan() for _ in range(50)]
    again = JamModel(JamParams(), rng=random.Random(99))
    again.restore(saved)
    assert again.dry_streak == saved["dry_streak"]
    assert [again.plan() for _ in range(50)] == ahead


def test_restore_rejects_a_bad_state() -> None:
    model = JamModel(JamParams())
    with pytest.raises(ValueError, match="dry_streak must be a whole number"):
        model.restore({"dry_streak": -1})


def test_set_params_keeps_the_streak_and_a_new_seed_replays() -> None:
    model = JamModel(JamParams(base=0.0, step=0.0, max_dry=9), rng=random.Random(1))
    for _ in range(3):
        model.plan()
    model.set_params(JamParams(base=0.0, step=0.0, max_dry=4))
    assert model.dry_streak == 3
    assert model.plan() == 0
    assert model.plan() > 0  # n = 4 reached the new cap
    model.set_params(JamParams(seed=42))
    assert model.dry_streak == 0
    assert [model.plan() for _ in range(40)] == sample(JamParams(seed=42), 40, seed=42)


def test_set_params_rejects_bad_params() -> None:
    model = JamModel(JamParams())
    with pytest.raises(ValueError, match=r"jam\.base"):
        model.set_params(JamParams(base=3.0))
    assert model.params == JamParams()


# ----------------------------------------------------------------------------- describe()


def test_describe_hazard_by_hand() -> None:
    params = JamParams(base=0.5, step=0.25, max_dry=5, burst_weights=(1, 1))
    d = describe(params)
    assert d["fire_chance"] == [0.5, 0.75, 1.0]
    assert d["dry_streak"] == pytest.approx([0.5, 0.375, 0.125])
    assert d["dry_streak_mean"] == pytest.approx(0.625)
    assert d["fire_rate"] == pytest.approx(1 / 1.625)
    assert d["burst"] == pytest.approx([0, 0.5, 0.5] + [0] * 10)
    assert d["cards_per_press_mean"] == pytest.approx(1.5 / 1.625)
    # Stationary chain: shares proportional to the chance of reaching each streak.
    assert d["streak_share"] == pytest.approx([1 / 1.625, 0.5 / 1.625, 0.125 / 1.625])
    json.dumps(d)


def test_describe_pattern_by_hand() -> None:
    d = describe(JamParams(mode="pattern", pattern=(0, 0, 3, 0, 5, 0, 0, 0, 2)))
    assert d["dry_streak"] == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3])
    assert d["fire_chance"] == pytest.approx([0, 1 / 3, 1 / 2, 1])
    assert d["fire_rate"] == pytest.approx(1 / 3)
    assert d["cards_per_press_mean"] == pytest.approx(10 / 9)
    assert d["burst"][2] == d["burst"][3] == d["burst"][5] == pytest.approx(1 / 3)


def test_describe_fixed() -> None:
    d = describe(JamParams(mode="fixed", count=4))
    assert d["fire_rate"] == 1.0
    assert d["dry_streak"] == [1.0]
    assert d["cards_per_press"][4] == 1.0
    assert d["cards_per_press_mean"] == 4.0


def test_describe_truncates_at_max_n_and_reports_the_tail() -> None:
    params = JamParams(base=0.1, step=0.0, max_dry=60)
    d = describe(params, max_n=10)
    assert len(d["dry_streak"]) == 11
    assert d["dry_streak_max"] == 60
    assert d["dry_streak_tail"] == pytest.approx(0.9**11)
    assert sum(d["dry_streak"]) + d["dry_streak_tail"] == pytest.approx(1.0)


def _empirical(counts: list[int]) -> dict:
    """Sample versions of describe()'s figures."""
    streaks = []
    at_risk: Counter[int] = Counter()
    fired: Counter[int] = Counter()
    share: Counter[int] = Counter()
    n = 0
    for c in counts:
        at_risk[n] += 1
        share[n] += 1
        if c:
            fired[n] += 1
            streaks.append(n)
            n = 0
        else:
            n += 1
    bursts = Counter(c for c in counts if c)
    return {
        "streaks": Counter(streaks),
        "nstreaks": len(streaks),
        "hazard": {k: fired[k] / at_risk[k] for k in at_risk},
        "at_risk": at_risk,
        "share": share,
        "bursts": bursts,
        "fires": sum(bursts.values()),
    }


@pytest.mark.parametrize(
    "params",
    [
        JamParams(),
        JamParams(base=0.1, step=0.2, max_dry=3, burst_weights=(1, 2, 3), pressure_bonus=0.7),
        JamParams(base=0.3, step=0.05, max_dry=8, pressure_bonus=1.0, max_burst=9),
        JamParams(mode="pattern", pattern=(0, 0, 3, 0, 5, 0, 0, 0, 2)),
        JamParams(mode="fixed", count=2),
    ],
    ids=["default", "bonus", "bonus-capped", "pattern", "fixed"],
)
def test_describe_matches_a_large_seeded_sample(params: JamParams) -> None:
    presses = 200_000
    counts = sample(params, presses, seed=2024)
    d = describe(params)
    emp = _empirical(counts)

    def close(p: float, observed: int, total: int) -> None:
        # 5 standard errors of a proportion (plus a floor for p near 0 or 1).
        tol = 5 * math.sqrt(max(p * (1 - p), 1e-4) / total) + 1e-9
        assert abs(observed / total - p) <= tol, (p, observed, total)

    fires = emp["fires"]
    close(d["fire_rate"], fires, presses)
    for k, p in enumerate(d["dry_streak"]):
        close(p, emp["streaks"][k], emp["nstreaks"])
    assert sum(emp["streaks"][k] for k in emp["streaks"] if k > d["dry_streak_max"]) == 0
    for k, p in enumerate(d["burst"]):
        close(p, emp["bursts"][k], fires)
    for n, p in enumerate(d["streak_share"]):
        close(p, emp["share"][n], presses)
    for n, p in enumerate(d["fire_chance"]):
        if p is not None and emp["at_risk"][n] >= 200:
            close(p, round(emp["hazard"][n] * emp["at_risk"][n]), emp["at_risk"][n])
    mean = sum(counts) / presses
    spread = math.sqrt(sum((c - mean) ** 2 for c in counts) / presses)
    assert abs(mean - d["cards_per_press_mean"]) <= 5 * spread / math.sqrt(presses)
    assert sum(d["cards_per_press"]) == pytest.approx(1.0)
    assert sum(d["burst"]) == pytest.approx(1.0)


def test_hazard_function() -> None:
    params = JamParams(base=0.3, step=0.3, max_dry=5)
    assert [hazard(params, n) for n in range(7)] == pytest.approx([0.3, 0.6, 0.9, 1, 1, 1, 1])


def test_streak_stats() -> None:
    stats = streak_stats([0, 0, 3, 2, 0, 5, 0, 0])
    assert stats["presses"] == 8
    assert stats["fires"] == 3
    assert stats["dry_streak_hist"] == [1, 1, 1]
    assert stats["dry_streak_mean"] == 1.0
    assert stats["open_streak"] == 2
    assert stats["cards"] == 10


def _sf_even(x: float, dof: int) -> float:
    """Closed form for even degrees of freedom: exp(-x/2) * sum_{i<k} (x/2)^i / i!."""
    return math.exp(-x / 2) * sum((x / 2) ** i / math.factorial(i) for i in range(dof // 2))


def _sf_three(x: float) -> float:
    """Closed form for three degrees of freedom."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)


@pytest.mark.parametrize(
    ("x", "dof", "expected"),
    [
        (3.841458820694124, 1, 0.05),
        (11.070497693516351, 5, 0.05),
        (2.0, 2, _sf_even(2.0, 2)),
        (40.0, 10, _sf_even(40.0, 10)),
        (7.3, 4, _sf_even(7.3, 4)),
        (0.5, 3, _sf_three(0.5)),
        (30.0, 3, _sf_three(30.0)),
        (0.0, 4, 1.0),
    ],
)
def test_chi_square_survival(x: float, dof: int, expected: float) -> None:
    assert chi_square_sf(x, dof) == pytest.approx(expected, rel=1e-6)


@settings(max_examples=60)
@given(
    base=st.floats(0, 1),
    step=st.floats(0, 1),
    max_dry=st.integers(0, 40),
    weights=st.lists(st.floats(0, 10), min_size=1, max_size=15).filter(lambda w: sum(w) > 0),
    bonus=st.floats(0, 3),
    max_burst=st.integers(1, 20),
)
def test_describe_is_a_set_of_distributions(
    base: float, step: float, max_dry: int, weights: list[float], bonus: float, max_burst: int
) -> None:
    params = JamParams(
        base=base,
        step=step,
        max_dry=max_dry,
        burst_weights=tuple(weights),
        pressure_bonus=bonus,
        max_burst=max_burst,
    )
    d = describe(params, max_n=100)
    assert sum(d["dry_streak"]) == pytest.approx(1.0)
    assert sum(d["streak_share"]) == pytest.approx(1.0)
    assert sum(d["burst"]) == pytest.approx(1.0)
    assert sum(d["cards_per_press"]) == pytest.approx(1.0)
    assert d["dry_streak_max"] <= max_dry
    assert len(d["burst"]) == max_burst + 1 and d["burst"][0] == 0
    # Renewal identity: the fire rate is the stationary chance to fire.
    rate = sum(s * p for s, p in zip(d["streak_share"], d["fire_chance"], strict=True))
    assert rate == pytest.approx(d["fire_rate"])
    assert d["cards_per_press_mean"] == pytest.approx(
        sum(k * p for k, p in enumerate(d["cards_per_press"]))
    )
