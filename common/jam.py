"""The jam model: how many cards one press of the box fires.

The real UNO Attack box fires at random: most presses fire nothing, some fire a burst. This module
is a pure function of (parameters, state, random source), importing nothing outside the standard
library so the host engine can use it without GPIO libraries.

Modes (DESIGN.md "The jam model"):

- ``hazard``: after ``n`` dry presses in a row the chance to fire is
  ``p(n) = min(1, base + step * n)``, and 1 once ``n >= max_dry``. A burst draws ``k`` cards with
  weight ``burst_weights[k - 1]``, shifted up by ``floor(pressure_bonus * n)`` cards, capped by
  ``max_burst`` and by the cards left in the hopper.
- ``pattern``: a fixed repeating list of per-press counts (replays a recorded box).
- ``fixed``: every press fires exactly ``count`` cards.

A press is *dry* when it fires 0 cards; ``dry_streak`` is the number of dry presses in a row so far
(the model's ``n``). ``describe()`` gives the exact distributions and ``fit()`` estimates a hazard
model from recorded presses by maximum likelihood (method in docs/jam-model.md).
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from i18n import Text

MODES = ("hazard", "pattern", "fixed")
# Generous bounds that still keep describe() and fit() small and exact. MAX_BURST_LIMIT is
# also the most `[limits] max_burst` may say: no box fires more cards per press.
MAX_DRY_LIMIT = 100
MAX_BURST_LIMIT = 50
MAX_SEED = 2**63 - 1  # the largest TOML integer: every seed can be written into a config
MAX_BONUS = 10.0
_NO_VALUE = object()


class JamError(ValueError):
    """Parameters or a recording the jam model cannot take, as one line. ``text`` is the message
    (``str`` is its English, for the wire and the log; ``text.render()`` any reader's language).
    For a ``[jam]`` key, ``key`` names it and ``rule`` says what it must be, without the key or
    the value, for a caller that names both its own way (``launcher config check``)."""

    def __init__(self, text: Text, key: str | None = None, rule: Text | None = None) -> None:
        super().__init__(str(text))
        self.text = text
        self.key = key
        self.rule = rule


def _bad(key: str, rule: Text, value: object = _NO_VALUE) -> JamError:
    """The JamError for ``jam.KEY`` breaking ``rule`` (with the value it got, when there is one)."""
    if value is _NO_VALUE:
        return JamError(Text("jam.{key} {rule}", key=key, rule=rule), key, rule)
    got = Text("jam.{key} {rule}, got {value}", key=key, rule=rule, value=repr(value))
    return JamError(got, key, rule)


@dataclass(frozen=True)
class JamParams:
    """Parameters of the jam model (the ``[jam]`` section of the config)."""

    mode: str = "hazard"
    base: float = 0.22
    step: float = 0.08
    max_dry: int = 10
    burst_weights: tuple[float, ...] = (0, 1, 3, 4, 4, 3, 2, 2, 1, 1, 0.5, 0.5)
    pressure_bonus: float = 0.0
    max_burst: int = 12
    pattern: tuple[int, ...] = ()
    count: int = 1
    seed: int = 0

    def validate(self) -> None:
        """Raise ``ValueError`` with a one-line message naming ``jam.KEY`` if a value is wrong."""
        if self.mode not in MODES:
            raise _bad("mode", _one_of(MODES), self.mode)
        _check_number("base", self.base, 0.0, 1.0)
        _check_number("step", self.step, 0.0, 1.0)
        _check_int("max_dry", self.max_dry, 0, MAX_DRY_LIMIT)
        _check_int("max_burst", self.max_burst, 1, MAX_BURST_LIMIT)
        _check_number("pressure_bonus", self.pressure_bonus, 0.0, MAX_BONUS)
        if not isinstance(self.burst_weights, tuple) or not self.burst_weights:
            rule = Text("must be a non-empty list of weights")
            raise _bad("burst_weights", rule, self.burst_weights)
        if len(self.burst_weights) > MAX_BURST_LIMIT:
            rule = Text("must have at most {most} entries", most=MAX_BURST_LIMIT)
            raise _bad("burst_weights", rule, len(self.burst_weights))
        for w in self.burst_weights:
            if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w):
                raise _bad("burst_weights", Text("must hold numbers"), w)
            if w < 0:
                raise _bad("burst_weights", Text("must be at least 0 each"), w)
        if sum(self.burst_weights) <= 0:
            rule = Text("must have at least one weight above 0")
            raise _bad("burst_weights", rule, self.burst_weights)
        if not isinstance(self.pattern, tuple):
            raise _bad("pattern", Text("must be a list of card counts"), self.pattern)
        for c in self.pattern:
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= self.max_burst:
                rule = Text(
                    "must hold whole numbers between 0 and max_burst ({most})", most=self.max_burst
                )
                raise _bad("pattern", rule, c)
        if self.mode == "pattern" and not any(self.pattern):
            rule = Text("must hold at least one count above 0 in pattern mode")
            raise _bad("pattern", rule, list(self.pattern))
        _check_int("count", self.count, 1, self.max_burst)
        _check_int("seed", self.seed, 0, MAX_SEED)

    def to_dict(self) -> dict[str, Any]:
        """The parameters as a JSON-able mapping (lists for the tuples)."""
        out = dataclasses.asdict(self)
        out["burst_weights"] = list(self.burst_weights)
        out["pattern"] = list(self.pattern)
        return out


def _one_of(choices: Sequence[str]) -> Text:
    return Text("must be one of {choices}", choices=", ".join(choices))


def _check_number(key: str, value: object, lo: float, hi: float) -> None:
    bounds = {"lo": f"{lo:g}", "hi": f"{hi:g}"}
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(key, Text("must be a number between {lo} and {hi}", **bounds), value)
    if not lo <= value <= hi:
        raise _bad(key, Text("must be between {lo} and {hi}", **bounds), value)


def _check_int(key: str, value: object, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(key, Text("must be a whole number between {lo} and {hi}", lo=lo, hi=hi), value)
    if not lo <= value <= hi:
        raise _bad(key, Text("must be between {lo} and {hi}", lo=lo, hi=hi), value)


_FIELDS = {f.name: f for f in dataclasses.fields(JamParams)}


def check_limit(params: JamParams, max_burst: int) -> None:
    """Raise ``ValueError`` naming ``jam.KEY`` when ``params`` describe bursts beyond the box's
    ``[limits] max_burst``: the one rule for a config file, ``model.set`` and ``model fit``.
    (Weights past the limit would only pile onto ``max_burst`` cards without a word.)"""
    if params.max_burst > max_burst:
        rule = Text("must be at most [limits] max_burst = {most}", most=max_burst)
        raise _bad("max_burst", rule)
    if len(params.burst_weights) > max_burst:
        rule = Text(
            "has {n} weights (bursts of 1 to {n} cards) but [limits] max_burst = {most}: give at "
            "most {most}",
            n=len(params.burst_weights),
            most=max_burst,
        )
        raise _bad("burst_weights", rule)


def fold_weights(weights: Sequence[float], max_burst: int) -> tuple[float, ...]:
    """``weights`` with every burst size above ``max_burst`` added onto ``max_burst`` itself:
    the same distribution the model's cap gives, in at most ``max_burst`` weights."""
    weights = tuple(weights)
    if len(weights) <= max_burst:
        return weights
    return (*weights[: max_burst - 1], sum(weights[max_burst - 1 :]))


def from_mapping(mapping: Mapping[str, object], *, defaults: JamParams | None = None) -> JamParams:
    """Build checked ``JamParams`` from a mapping such as the ``[jam]`` TOML table.

    Keys missing from ``mapping`` keep their value in ``defaults`` (the dataclass defaults if not
    given), so ``from_mapping(partial, defaults=current)`` applies a partial update
    (``model.set``). Lists become tuples; integers are accepted where a float is expected. Raises
    ``ValueError`` with one line naming ``jam.KEY`` on an unknown key or a bad value.
    """
    if not isinstance(mapping, Mapping):
        text = Text("jam must be a table of model parameters, got {value}", value=repr(mapping))
        raise JamError(text)
    values: dict[str, Any] = {}
    for key, value in mapping.items():
        if key not in _FIELDS:
            rule = Text("is not a known key; allowed: {allowed}", allowed=", ".join(_FIELDS))
            raise _bad(key, rule)
        if key in ("burst_weights", "pattern"):
            if isinstance(value, str) or not isinstance(value, Sequence):
                raise _bad(key, Text("must be a list"), value)
            value = tuple(value)
        elif key in ("base", "step", "pressure_bonus"):
            if isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
        elif key == "mode" and not isinstance(value, str):
            raise _bad("mode", _one_of(MODES), value)
        values[key] = value
    params = dataclasses.replace(defaults or JamParams(), **values)
    params.validate()
    return params


# --------------------------------------------------------------------------- the model


class JamModel:
    """The jam model with its state: the dry streak, the pattern position and the random source.

    ``rng`` defaults to ``random.Random(params.seed)``, or a freshly seeded one when ``seed`` is 0.
    """

    def __init__(self, params: JamParams, *, rng: random.Random | None = None) -> None:
        params.validate()
        self.params = params
        self.rng = rng if rng is not None else _new_rng(params.seed)
        self.dry_streak = 0
        self.pattern_index = 0
        self._cumulative = _cumulative(params.burst_weights)

    def plan(self, hopper: int | None = None) -> int:
        """Cards this press fires (0 for a dry press), capped by ``hopper`` if given.

        Updates ``dry_streak``: a press that plans 0 cards (even because the hopper is empty)
        counts as dry; any other resets it to 0.
        """
        p = self.params
        n = self.dry_streak
        if p.mode == "fixed":
            cards = p.count
        elif p.mode == "pattern":
            cards = p.pattern[self.pattern_index % len(p.pattern)]
            self.pattern_index = (self.pattern_index + 1) % len(p.pattern)
        else:
            # One draw for the decision even when p(n) is 1, so runs stay aligned when replayed.
            fires = self.rng.random() < hazard(p, n)
            cards = self._burst(n) if fires else 0
        if hopper is not None:
            cards = max(0, min(cards, hopper))
        self.dry_streak = 0 if cards > 0 else n + 1
        return cards

    def _burst(self, n: int) -> int:
        p = self.params
        u = self.rng.random() * self._cumulative[-1]
        k = bisect.bisect_right(self._cumulative, u) + 1
        k = min(k, len(self._cumulative))  # u just below the total after rounding
        return min(p.max_burst, k + math.floor(p.pressure_bonus * n))

    def set_params(self, params: JamParams) -> None:
        """Switch to new parameters, keeping the dry streak.

        A change to a non-zero ``seed`` reseeds the random source and restarts the streak and the
        pattern, so the run that follows is the one that seed replays.
        """
        params.validate()
        old = self.params
        self.params = params
        self._cumulative = _cumulative(params.burst_weights)
        if params.seed != old.seed and params.seed != 0:
            self.rng.seed(params.seed)
            self.dry_streak = 0
            self.pattern_index = 0
        elif params.pattern:
            self.pattern_index %= len(params.pattern)
        else:
            self.pattern_index = 0

    def state(self) -> dict[str, Any]:
        """JSON-able state: dry streak, pattern position and random-source state."""
        version, internal, gauss = self.rng.getstate()
        return {
            "dry_streak": self.dry_streak,
            "pattern_index": self.pattern_index,
            "rng": [version, list(internal), gauss],
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Restore a ``state()`` (``rng`` is optional: without it the source is left alone)."""
        streak = state.get("dry_streak", 0)
        index = state.get("pattern_index", 0)
        if isinstance(streak, bool) or not isinstance(streak, int) or streak < 0:
            raise ValueError(f"jam state dry_streak must be a whole number >= 0, got {streak!r}")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"jam state pattern_index must be a whole number >= 0, got {index!r}")
        if "rng" in state:
            version, internal, gauss = state["rng"]
            self.rng.setstate((version, tuple(internal), gauss))
        self.dry_streak = streak
        self.pattern_index = index % len(self.params.pattern) if self.params.pattern else 0

    def describe(self, max_n: int = 30) -> dict[str, Any]:
        """Exact distributions of this model's parameters (see the module function)."""
        return describe(self.params, max_n=max_n)


def _new_rng(seed: int) -> random.Random:
    # seed 0 means "a new run each start": seed from the OS entropy source.
    return random.Random(seed) if seed else random.Random()


def _cumulative(weights: Sequence[float]) -> list[float]:
    out: list[float] = []
    total = 0.0
    for w in weights:
        total += float(w)
        out.append(total)
    return out


def hazard(params: JamParams, n: int) -> float:
    """Chance that a hazard-mode press fires after ``n`` dry presses in a row."""
    if n >= params.max_dry:
        return 1.0
    return min(1.0, params.base + params.step * n)


def sample(params: JamParams, presses: int, *, seed: int) -> list[int]:
    """Per-press counts of ``presses`` presses of a fresh model driven by ``Random(seed)``."""
    model = JamModel(params, rng=random.Random(seed))
    return [model.plan() for _ in range(presses)]


# --------------------------------------------------------------------------- exact distributions


def _burst_given_streak(params: JamParams, n: int) -> list[float]:
    """P(burst size = k | fire after n dry presses), indexed by k (0..max_burst)."""
    total = float(sum(params.burst_weights))
    shift = math.floor(params.pressure_bonus * n)
    out = [0.0] * (params.max_burst + 1)
    for i, w in enumerate(params.burst_weights):
        if w:
            out[min(params.max_burst, i + 1 + shift)] += w / total
    return out


def _hazard_chain(params: JamParams) -> tuple[list[float], list[float]]:
    """Hazards p(0..N) and dry-streak-length probabilities P(L = 0..N), N the longest streak."""
    hazards: list[float] = []
    lengths: list[float] = []
    survive = 1.0
    n = 0
    while True:
        h = hazard(params, n)
        hazards.append(h)
        lengths.append(survive * h)
        survive *= 1.0 - h
        if h >= 1.0:
            return hazards, lengths
        n += 1


def _cycle_streaks(pattern: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """For a repeating pattern: the dry streak before each fire, the burst of each fire, and the
    dry streak seen at each press, all in steady state (after one full cycle)."""
    size = len(pattern)
    start = max(i for i, c in enumerate(pattern) if c > 0) + 1  # right after a fire
    streaks: list[int] = []
    bursts: list[int] = []
    seen: list[int] = []
    n = 0
    for j in range(size):
        c = pattern[(start + j) % size]
        seen.append(n)
        if c > 0:
            streaks.append(n)
            bursts.append(c)
            n = 0
        else:
            n += 1
    return streaks, bursts, seen


def describe(params: JamParams, max_n: int = 30) -> dict[str, Any]:
    """Exact distributions of the model, with an unlimited hopper, as a JSON-able dict.

    Lists are indexed by the value they describe (``burst[k]`` is the chance a fire has ``k``
    cards, so ``burst[0]`` is 0):

    - ``fire_chance[n]``: chance to fire after ``n`` dry presses in a row (``None`` where a
      pattern never reaches that streak);
    - ``dry_streak[k]``: chance that a run of dry presses between two fires has length ``k``
      (``dry_streak_cdf[k]``: the box fires within ``k + 1`` presses), ``dry_streak_mean``,
      ``dry_streak_max`` (longest possible), ``dry_streak_tail`` (mass beyond ``max_n``);
    - ``burst[k]``, ``burst_mean``: cards per fire, with the pressure bonus and max_burst cap;
    - ``streak_share[n]``: share of presses made with ``n`` dry presses behind them (the chain's
      stationary distribution); ``fire_rate``: share of presses that fire;
    - ``cards_per_press[k]``, ``cards_per_press_mean``: cards per press, dry presses included.
    """
    params.validate()
    if max_n < 0:
        raise ValueError(f"max_n must be at least 0, got {max_n}")
    mb = params.max_burst
    if params.mode == "fixed":
        hazards = [1.0]
        lengths = [1.0]
        share = [1.0]
        burst = [0.0] * (mb + 1)
        burst[params.count] = 1.0
    elif params.mode == "pattern":
        streaks, bursts, seen = _cycle_streaks(params.pattern)
        longest = max(streaks)
        fires = len(streaks)
        lengths = [streaks.count(k) / fires for k in range(longest + 1)]
        hazards_opt: list[float | None] = []
        for n in range(longest + 1):
            at_risk = sum(1 for s in streaks if s >= n)
            hazards_opt.append(streaks.count(n) / at_risk if at_risk else None)
        share = [seen.count(n) / len(seen) for n in range(longest + 1)]
        burst = [bursts.count(k) / fires for k in range(mb + 1)]
    else:
        hazards, lengths = _hazard_chain(params)
        norm = sum(_survival(lengths))
        share = [s / norm for s in _survival(lengths)]
        burst = [0.0] * (mb + 1)
        for n, pl in enumerate(lengths):
            if pl:
                for k, pk in enumerate(_burst_given_streak(params, n)):
                    burst[k] += pl * pk
    if params.mode != "pattern":
        hazards_opt = list(hazards)
    mean_length = sum(k * pl for k, pl in enumerate(lengths))
    fire_rate = 1.0 / (1.0 + mean_length)  # renewal: one fire per (streak + 1) presses
    burst_mean = sum(k * pk for k, pk in enumerate(burst))
    cards = [fire_rate * pk for pk in burst]
    cards[0] = 1.0 - fire_rate
    cdf: list[float] = []
    acc = 0.0
    for pl in lengths[: max_n + 1]:
        acc += pl
        cdf.append(min(1.0, acc))
    return {
        "mode": params.mode,
        "params": params.to_dict(),
        "fire_chance": hazards_opt[: max_n + 1],
        "dry_streak": lengths[: max_n + 1],
        "dry_streak_cdf": cdf,
        "dry_streak_tail": max(0.0, 1.0 - acc),
        "dry_streak_mean": mean_length,
        "dry_streak_max": len(lengths) - 1,
        "burst": burst,
        "burst_mean": burst_mean,
        "streak_share": share[: max_n + 1],
        "fire_rate": fire_rate,
        "cards_per_press": cards,
        "cards_per_press_mean": fire_rate * burst_mean,
    }


def _survival(lengths: Sequence[float]) -> list[float]:
    """S(n) = P(L >= n) for n = 0..len-1."""
    out = []
    left = 1.0
    for pl in lengths:
        out.append(max(0.0, left))
        left -= pl
    return out


# --------------------------------------------------------------------------- statistics of counts


def streak_stats(counts: Sequence[int]) -> dict[str, Any]:
    """Dry-streak statistics of recorded per-press counts (JSON-able).

    A streak is the run of dry presses before a fire; the run after the last fire is incomplete
    and reported apart (``open_streak``), not counted in the histogram.
    """
    streaks = _streaks(counts)
    hist = [0] * ((max(streaks) + 1) if streaks else 0)
    for s in streaks:
        hist[s] += 1
    trailing = 0
    for c in reversed(counts):
        if c:
            break
        trailing += 1
    fires = sum(1 for c in counts if c > 0)
    return {
        "presses": len(counts),
        "fires": fires,
        "fire_rate": fires / len(counts) if counts else 0.0,
        "cards": sum(counts),
        "streaks": len(streaks),
        "dry_streak_hist": hist,
        "dry_streak_mean": sum(streaks) / len(streaks) if streaks else 0.0,
        "dry_streak_max": max(streaks) if streaks else 0,
        "open_streak": trailing,
    }


def _streaks(counts: Sequence[int]) -> list[int]:
    out = []
    n = 0
    for c in counts:
        if c > 0:
            out.append(n)
            n = 0
        else:
            n += 1
    return out


# --------------------------------------------------------------------------- fitting


@dataclass(frozen=True)
class FitResult:
    """A hazard model fitted to recorded presses, with how well it fits them."""

    params: JamParams
    presses: int
    fires: int
    log_likelihood: float  # of the presses' fire/dry outcomes and of the burst sizes
    aic: float
    candidates: tuple[tuple[int, float], ...]  # (max_dry, best log-likelihood) tried
    observed_streaks: tuple[int, ...]  # histogram of complete dry-streak lengths
    expected_streaks: tuple[float, ...]  # the fitted model's expectation for the same streaks
    chi_square: float
    dof: int
    p_value: float | None  # None when too few streaks to pool into 2+ bins
    ks: float  # largest gap between the observed and fitted dry-streak CDFs
    burst_hist: tuple[int, ...] = field(default=())  # index k: fires of k cards

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``params`` as a mapping)."""
        out = dataclasses.asdict(self)
        out["params"] = self.params.to_dict()
        for key in ("candidates", "observed_streaks", "expected_streaks", "burst_hist"):
            out[key] = [list(x) if isinstance(x, tuple) else x for x in out[key]]
        return out


def fit(counts: Sequence[int], *, max_burst: int = 12) -> FitResult:
    """Fit a ``hazard`` model to per-press card counts by maximum likelihood.

    The recording is taken to start with no dry presses behind it, and ``pressure_bonus`` is
    taken as 0. Method (docs/jam-model.md):

    - ``burst_weights``: the likelihood of the burst sizes is multinomial, so its maximum is the
      empirical histogram of the cards per fire (normalised to sum 1).
    - ``max_dry``: every value from the longest observed dry streak up to the longest streak any
      press was made at is tried; for each, ``base`` and ``step`` maximise the Bernoulli
      likelihood of fire/dry at each press's streak ``n`` (concave in ``base, step``, solved by
      nested golden-section search). The best log-likelihood wins (AIC ranks them the same, as
      each candidate has the same number of parameters); it is always the longest observed
      streak, since a larger cap only adds chances to fire that the data did not need.
    - Goodness of fit: Pearson's chi-square of the observed dry-streak lengths against the
      fitted model, bins pooled to an expectation of at least 5, with ``bins - 1 - k`` degrees of
      freedom (``k``: how many of ``base``, ``step`` are inside their range, not on a bound),
      and the Kolmogorov-Smirnov distance between the two CDFs.
    """
    if max_burst < 1:
        raise JamError(Text("max_burst must be at least 1, got {n}", n=max_burst))
    for i, c in enumerate(counts):
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise JamError(
                Text(
                    "press {press}: count must be a whole number >= 0, got {value}",
                    press=i + 1,
                    value=repr(c),
                )
            )
        if c > max_burst:
            raise JamError(
                Text(
                    "press {press}: {count} cards is more than max_burst ({most})",
                    press=i + 1,
                    count=c,
                    most=max_burst,
                )
            )
    fires_total = sum(1 for c in counts if c > 0)
    if fires_total == 0:
        raise JamError(Text("no press fired a card: a jam model needs at least one fire to fit"))

    # At-risk tables: presses made after n dry presses, and how many of them fired.
    fired: list[int] = []
    dried: list[int] = []
    n = 0
    for c in counts:
        while len(fired) <= n:
            fired.append(0)
            dried.append(0)
        if c > 0:
            fired[n] += 1
            n = 0
        else:
            dried[n] += 1
            n += 1
    longest_dry = max((k + 1 for k, d in enumerate(dried) if d), default=0)
    if longest_dry > MAX_DRY_LIMIT:
        raise JamError(
            Text(
                "the recording has {n} dry presses in a row; the model allows at most {most}",
                n=longest_dry,
                most=MAX_DRY_LIMIT,
            )
        )

    burst_hist = [0] * (max_burst + 1)
    for c in counts:
        if c:
            burst_hist[c] += 1
    last = max(k for k, h in enumerate(burst_hist) if h)
    weights = tuple(round(h / fires_total, 4) for h in burst_hist[1 : last + 1])
    burst_ll = sum(h * math.log(h / fires_total) for h in burst_hist if h)

    candidates: list[tuple[int, float, float, float]] = []
    for max_dry in range(longest_dry, min(len(fired), MAX_DRY_LIMIT) + 1):
        base, step, ll = _fit_hazard(fired, dried, max_dry)
        candidates.append((max_dry, base, step, ll))
    max_dry, base, step, hazard_ll = max(candidates, key=lambda t: (t[3], -t[0]))
    params = JamParams(
        mode="hazard",
        base=round(base, 6),
        step=round(step, 6),
        max_dry=max_dry,
        burst_weights=weights,
        max_burst=max_burst,
    )
    params.validate()
    log_likelihood = hazard_ll + burst_ll
    free = 3 + sum(1 for w in weights if w) - 1  # base, step, max_dry, free burst shares
    chi, dof, p_value, ks, observed, expected = _streak_fit(counts, params)
    return FitResult(
        params=params,
        presses=len(counts),
        fires=fires_total,
        log_likelihood=log_likelihood,
        aic=2 * free - 2 * log_likelihood,
        candidates=tuple((m, ll + burst_ll) for m, _, _, ll in candidates),
        observed_streaks=tuple(observed),
        expected_streaks=tuple(expected),
        chi_square=chi,
        dof=dof,
        p_value=p_value,
        ks=ks,
        burst_hist=tuple(burst_hist),
    )


def _hazard_ll(
    fired: Sequence[int], dried: Sequence[int], max_dry: int, b: float, s: float
) -> float:
    ll = 0.0
    for n in range(min(max_dry, len(fired))):
        p = min(1.0, b + s * n)
        if fired[n]:
            ll += fired[n] * math.log(max(p, 1e-300))
        if dried[n]:
            ll += dried[n] * math.log(max(1.0 - p, 1e-300))
    return ll  # presses at n >= max_dry fire for sure: log 1 = 0


def _golden_max(f: Any, lo: float, hi: float, tol: float = 1e-10) -> tuple[float, float]:
    """Maximise a unimodal ``f`` on [lo, hi]; returns (x, f(x))."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c = b - ratio * (b - a)
    d = a + ratio * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol:
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    best = [(fc, c), (fd, d), (f(lo), lo), (f(hi), hi)]
    fx, x = max(best)
    return x, fx


def _fit_hazard(
    fired: Sequence[int], dried: Sequence[int], max_dry: int
) -> tuple[float, float, float]:
    """Best (base, step, log-likelihood) for a given max_dry."""
    # Largest streak at which a dry press must stay possible: p there must stay below 1.
    top = max((n for n in range(min(max_dry, len(dried))) if dried[n]), default=-1)
    if top < 0:  # every press below the cap fired (max_dry 0, or all fires at n=0)
        return 1.0, 0.0, _hazard_ll(fired, dried, max_dry, 1.0, 0.0)
    margin = 1e-9

    def best_base(s: float) -> tuple[float, float]:
        hi = min(1.0, 1.0 - s * top) - margin
        return _golden_max(lambda b: _hazard_ll(fired, dried, max_dry, b, s), 0.0, max(0.0, hi))

    if top == 0 and not any(fired[1:max_dry]):
        # Only presses at n = 0 inform the fit: the step cannot be told apart, keep it 0.
        b, ll = best_base(0.0)
        return b, 0.0, ll
    s_hi = min(1.0, (1.0 - margin) / top) if top else 1.0
    s, ll = _golden_max(lambda s: best_base(s)[1], 0.0, s_hi, tol=1e-9)
    b, ll = best_base(s)
    return b, s, ll


def _streak_fit(
    counts: Sequence[int], params: JamParams
) -> tuple[float, int, float | None, float, list[int], list[float]]:
    """Chi-square and KS of the observed complete dry streaks against the fitted model."""
    streaks = _streaks(counts)
    _, lengths = _hazard_chain(params)
    size = max(len(lengths), (max(streaks) + 1) if streaks else 0)
    observed = [0] * size
    for s in streaks:
        observed[s] += 1
    total = len(streaks)
    expected = [total * (lengths[k] if k < len(lengths) else 0.0) for k in range(size)]
    # KS distance between the two CDFs.
    ks = 0.0
    co = ce = 0.0
    for o, e in zip(observed, expected, strict=True):
        co += o / total if total else 0.0
        ce += e / total if total else 0.0
        ks = max(ks, abs(co - ce))
    # Pool neighbouring bins (from the short end) until each expects at least 5.
    bins: list[tuple[float, float]] = []
    acc_o = acc_e = 0.0
    for o, e in zip(observed, expected, strict=True):
        acc_o += o
        acc_e += e
        if acc_e >= 5:
            bins.append((acc_o, acc_e))
            acc_o = acc_e = 0.0
    if acc_o or acc_e:
        if bins:
            last_o, last_e = bins.pop()
            bins.append((last_o + acc_o, last_e + acc_e))
        else:
            bins.append((acc_o, acc_e))
    chi = sum((o - e) ** 2 / e for o, e in bins if e > 0)
    if any(e == 0 and o > 0 for o, e in bins):
        chi = math.inf  # a streak the model cannot produce was seen
    # base and step are fitted to these streaks (max_dry only sets the support); one at its
    # bound (base 0, or a step that never acts) is not a free parameter.
    fitted = (0.0 < params.base < 1.0) + (params.step > 0.0 and params.max_dry >= 2)
    dof = len(bins) - 1 - fitted
    if dof < 1:
        return chi, max(dof, 0), None, ks, observed, expected
    return chi, dof, chi_square_sf(chi, dof), ks, observed, expected


def chi_square_sf(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable with ``dof`` degrees of freedom (stdlib only)."""
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    return _gamma_q(dof / 2.0, x / 2.0)


def _gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) (series / continued fraction, as in
    Numerical Recipes' gammq)."""
    if x < a + 1.0:
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        p = total * math.exp(-x + a * math.log(x) - math.lgamma(a))
        return max(0.0, 1.0 - p)
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return min(1.0, math.exp(-x + a * math.log(x) - math.lgamma(a)) * h)
