"""fit(): maximum-likelihood hazard model from recorded per-press counts."""

from __future__ import annotations

import json

import pytest

from common.jam import JamParams, describe, fit, sample, streak_stats

# Tolerances for 20,000 presses. Over 60 seeds the estimates of the model below scatter with a
# standard deviation of 0.004 (base) and 0.002 (step); these bounds are ~5 of them.
BASE_TOL = 0.02
STEP_TOL = 0.01
WEIGHT_TOL = 0.02


def _normalised(weights: tuple[float, ...], size: int) -> list[float]:
    total = sum(weights)
    out = [w / total for w in weights]
    return out + [0.0] * (size - len(out))


def _total_variation(a: list[float], b: list[float]) -> float:
    size = max(len(a), len(b))
    a = a + [0.0] * (size - len(a))
    b = b + [0.0] * (size - len(b))
    return 0.5 * sum(abs(x - y) for x, y in zip(a, b, strict=True))


def _streak_distribution(counts: list[int]) -> list[float]:
    hist = streak_stats(counts)["dry_streak_hist"]
    return [h / sum(hist) for h in hist]


KNOWN = JamParams(base=0.2, step=0.1, max_dry=6, burst_weights=(0, 1, 3, 4, 4, 3, 2, 1, 1))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fit_recovers_known_parameters_from_20000_presses(seed: int) -> None:
    counts = sample(KNOWN, 20_000, seed=seed)
    result = fit(counts)
    got = result.params
    assert got.mode == "hazard"
    assert abs(got.base - KNOWN.base) <= BASE_TOL
    assert abs(got.step - KNOWN.step) <= STEP_TOL
    assert got.max_dry == KNOWN.max_dry
    truth = _normalised(KNOWN.burst_weights, 12)
    fitted = _normalised(got.burst_weights, 12)
    assert max(abs(a - b) for a, b in zip(truth, fitted, strict=True)) <= WEIGHT_TOL
    # The model it came from passes its own goodness-of-fit test.
    assert result.p_value is not None and result.p_value > 0.001
    assert result.ks < 0.02
    assert result.presses == 20_000


def test_fit_of_the_default_model_reproduces_its_streaks() -> None:
    # Streaks of 9 or 10 are too rare to be seen in 20,000 presses, so max_dry is not
    # identifiable there; the distribution it implies still is.
    truth = JamParams()
    result = fit(sample(truth, 20_000, seed=11))
    assert 7 <= result.params.max_dry <= 10
    assert abs(result.params.base - truth.base) <= BASE_TOL
    assert abs(result.params.step - truth.step) <= STEP_TOL
    tv = _total_variation(describe(result.params)["dry_streak"], describe(truth)["dry_streak"])
    assert tv < 0.02


def test_max_dry_is_the_longest_observed_streak_and_wins_the_likelihood() -> None:
    counts = sample(KNOWN, 5_000, seed=4)
    result = fit(counts)
    assert result.params.max_dry == streak_stats(counts)["dry_streak_max"]
    best = max(ll for _, ll in result.candidates)
    assert dict(result.candidates)[result.params.max_dry] == best
    assert result.log_likelihood == best


# Dry streaks 1, 1, 2, 2, 2, 3, 3, 3 per cycle: hazards 0, 1/4, 1/2 then forced at 3, which a
# hazard model holds exactly (base 0, step 1/4).
LINEAR_PATTERN = (0, 3, 0, 0, 5, 0, 0, 0, 4, 0, 0, 6, 0, 0, 0, 2, 0, 7, 0, 0, 3, 0, 0, 0, 8)


def test_pattern_fitted_and_resampled_matches_its_dry_streaks() -> None:
    pattern = JamParams(mode="pattern", pattern=LINEAR_PATTERN)
    recorded = sample(pattern, 20_000, seed=0)
    result = fit(recorded)
    assert result.params.base == pytest.approx(0.0, abs=1e-6)
    assert result.params.step == pytest.approx(0.25, abs=1e-3)
    assert result.params.max_dry == 3
    exact = describe(result.params)
    assert exact["dry_streak"] == pytest.approx(describe(pattern)["dry_streak"], abs=1e-3)
    assert exact["burst"] == pytest.approx(describe(pattern)["burst"], abs=1e-3)
    # Re-sampled presses show the pattern's streaks within sampling error.
    resampled = sample(result.params, 20_000, seed=5)
    tv = _total_variation(_streak_distribution(resampled), describe(pattern)["dry_streak"])
    assert tv < 0.03
    assert result.p_value is not None and result.p_value > 0.5


def test_pattern_outside_the_hazard_family_is_flagged_by_goodness_of_fit() -> None:
    # Streaks 2, 1, 3: hazards 0, 1/3, 1/2, 1 are not on a line, so the best hazard model is
    # close but distinguishable, and the chi-square says so.
    pattern = JamParams(mode="pattern", pattern=(0, 0, 3, 0, 5, 0, 0, 0, 2))
    result = fit(sample(pattern, 20_000, seed=0))
    assert result.params.max_dry == 3
    assert result.params.base == pytest.approx(0.0, abs=1e-6)
    tv = _total_variation(describe(result.params)["dry_streak"], describe(pattern)["dry_streak"])
    assert 0.01 < tv < 0.1
    assert result.p_value is not None and result.p_value < 1e-6
    assert result.ks > 0.03


def test_fit_of_a_box_that_always_fires() -> None:
    result = fit([3, 4, 5, 3])
    assert result.params.max_dry == 0
    assert describe(result.params)["fire_rate"] == 1.0
    assert result.params.burst_weights == (0.0, 0.0, 0.5, 0.25, 0.25)


def test_fit_alternating_dry_and_fire() -> None:
    result = fit([0, 3, 0, 4, 0, 5] * 10)
    assert result.params.max_dry == 1
    assert result.params.base == pytest.approx(0.0, abs=1e-6)
    assert describe(result.params)["dry_streak"] == pytest.approx([0.0, 1.0], abs=1e-6)


def test_fit_result_is_json_able_and_loads_back_as_params() -> None:
    result = fit(sample(KNOWN, 2_000, seed=8))
    data = json.loads(json.dumps(result.to_dict()))
    assert (
        JamParams(
            **{
                **data["params"],
                "burst_weights": tuple(data["params"]["burst_weights"]),
                "pattern": (),
            }
        )
        == result.params
    )
    assert data["observed_streaks"] == list(result.observed_streaks)


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([0, 0, 0], "no press fired a card"),
        ([1, 0, 13], "press 3: 13 cards is more than max_burst (12)"),
        ([1, -1], "press 2: count must be a whole number >= 0, got -1"),
        ([1, 2.5], "press 2: count must be a whole number >= 0, got 2.5"),
        ([], "no press fired a card"),
    ],
)
def test_fit_rejects_data_it_cannot_use(counts: list, message: str) -> None:
    with pytest.raises(ValueError) as info:
        fit(counts)
    assert str(info.value).startswith(message)
