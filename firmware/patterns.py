"""Suspense and motion patterns: the jam model's verdict dressed as theatre, as plain data.

A pattern is a list of segments with a weight per outcome (``dry``: the press fires nothing;
``fire``: a burst; ``big``: a burst of at least ``[patterns] big_burst`` cards)::

    { pause = 700, cue = "suspense" }   # nothing moves for 700 ms (cue: a sound at its start)
    { whir = 150, speed = 0.6 }         # the feed roller turns backwards for 150 ms: it whirs
                                        # and pulls the stack in, so it can never fire a card
    { feed = 2, speed = 0.8 }           # feed until 2 more cards crossed the beam
    { feed = "rest" }                   # feed the rest of the planned cards

:func:`resolve` turns a pattern and a planned count into the :class:`Step` list the daemon runs:
feed segments take at most the cards still due (a ``dry`` press has none, so only its pauses
and whirs stay), cards no feed segment took are fed at the end, and pauses after the last card
are dropped (the fire result is not kept waiting). The daemon runs each step with its loop
timers, and every output a step turns on goes through the same guard as any burst: its
``max_on_ms`` deadline is armed when it turns on, a feed step keeps the card timeout and the
jam retries, and a whir is one more timed output, shorter than ``[limits] ejector_max_on_ms``.

Built-in patterns (``BUILTIN``) can be re-weighted or joined by a config's own
(``[[patterns.pattern]]``). Standard library only (and the key checks, common/checks.py).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from common.checks import Check, boolean

OUTCOMES = ("dry", "fire", "big")
MAX_SEGMENTS = 16
MAX_PAUSE_MS = 3000
MAX_WHIR_MS = 1000
MAX_LEAD_MS = 6000  # pauses and whirs of one pattern, in all
MIN_SPEED = 0.2


@dataclass(frozen=True)
class Segment:
    """One piece of a pattern: ``action`` is ``pause``, ``whir`` or ``feed``.

    ``ms`` for pause and whir; ``cards`` for feed (None: the rest); ``speed`` 0.2-1 for whir and
    feed (a feed without PWM speed control runs at full speed); ``cue``: a sound at its start.
    """

    action: str
    ms: int = 0
    cards: int | None = None
    speed: float = 1.0
    cue: str | None = None


@dataclass(frozen=True)
class Pattern:
    """A named list of segments and its weight for each outcome."""

    name: str
    segments: tuple[Segment, ...]
    weights: tuple[tuple[str, float], ...]  # (outcome, weight) for the outcomes it dresses

    def weight(self, outcome: str) -> float:
        """This pattern's weight for ``outcome`` (0: never)."""
        return dict(self.weights).get(outcome, 0.0)

    @property
    def whirs(self) -> bool:
        """True when it turns the feed backwards (a motor ejector only)."""
        return any(s.action == "whir" for s in self.segments)


@dataclass(frozen=True)
class Step:
    """A resolved segment for one press: what the daemon does next."""

    action: str  # "pause" | "whir" | "feed"
    ms: int = 0
    cards: int = 0
    speed: float = 1.0
    cue: str | None = None


def _p(name: str, segments: Iterable[Segment], **weights: float) -> Pattern:
    return Pattern(name, tuple(segments), tuple(weights.items()))


PAUSE, WHIR, FEED = "pause", "whir", "feed"

BUILTIN: tuple[Pattern, ...] = (
    _p("plain", [Segment(FEED)], dry=8, fire=6, big=3),
    _p("suspense", [Segment(PAUSE, ms=700, cue="suspense"), Segment(FEED)], dry=1, fire=2, big=3),
    _p("fake_start", [Segment(WHIR, ms=150, speed=0.6), Segment(PAUSE, ms=250)], dry=2),
    _p(
        "stutter",
        [
            Segment(FEED, cards=1),
            Segment(PAUSE, ms=200),
            Segment(FEED, cards=1),
            Segment(PAUSE, ms=200),
            Segment(FEED),
        ],
        fire=1,
        big=1,
    ),
    _p(
        "split",
        [Segment(FEED, cards=2), Segment(PAUSE, ms=600, cue="suspense"), Segment(FEED)],
        big=2,
    ),
)


@dataclass(frozen=True)
class PatternsConfig:
    """``[patterns]``: on or off, the chooser's seed (0: fresh each start) and the patterns in
    force (the built-ins, joined or replaced by the config's own; only its own with
    ``builtin = false``)."""

    enabled: bool = True
    seed: int = 0
    builtin: bool = True
    time_scale: float = 1.0
    patterns: tuple[Pattern, ...] = BUILTIN


# The check of each [patterns] key the host may change too (``settings.set``: ``patterns.KEY``),
# run by the config file's reader and the settings alike.
KEYS: dict[str, Check[Any]] = {"enabled": boolean}


def shortened(patterns: Iterable[Pattern], scale: float) -> tuple[Pattern, ...]:
    """``patterns`` with every pause and whir lasting ``scale`` (0 to 1) of its length, at
    least 1 ms: ``[patterns] time_scale``, which the demo's ``--speed`` sets. Never longer, so a
    whir stays inside the ejector's max-on limit it was checked against."""
    scale = min(1.0, scale)
    if scale == 1.0:
        return tuple(patterns)
    return tuple(
        Pattern(
            p.name,
            tuple(
                Segment(s.action, max(1, round(s.ms * scale)), s.cards, s.speed, s.cue)
                if s.action != FEED
                else s
                for s in p.segments
            ),
            p.weights,
        )
        for p in patterns
    )


def resolve(pattern: Pattern, planned: int) -> list[Step]:
    """The steps of ``pattern`` for a press that fires ``planned`` cards."""
    steps: list[Step] = []
    left = planned
    for seg in pattern.segments:
        if seg.action == FEED:
            take = left if seg.cards is None else min(seg.cards, left)
            if take > 0:
                steps.append(Step(FEED, cards=take, speed=seg.speed, cue=seg.cue))
                left -= take
        else:
            steps.append(Step(seg.action, ms=seg.ms, speed=seg.speed, cue=seg.cue))
    if left > 0:
        steps.append(Step(FEED, cards=left))
    if planned > 0:
        while steps and steps[-1].action != FEED:
            steps.pop()  # nothing to wait for once the last card is out
    return steps


def outcome(planned: int, big_burst: int) -> str:
    """``dry``, ``fire`` or ``big`` for a planned count."""
    if planned <= 0:
        return "dry"
    return "big" if planned >= big_burst else "fire"


class PatternChooser:
    """Seeded weighted choice of a pattern per outcome, among those this ejector can run."""

    def __init__(self, patterns: Sequence[Pattern], *, seed: int = 0, motor: bool = True) -> None:
        self.patterns = tuple(p for p in patterns if motor or not p.whirs)
        self._rng = random.Random(seed or None)

    def choose(self, outcome_name: str) -> Pattern | None:
        """A pattern for ``outcome_name``, or None when none has a weight for it."""
        eligible = [p for p in self.patterns if p.weight(outcome_name) > 0]
        if not eligible:
            return None
        weights = [p.weight(outcome_name) for p in eligible]
        return self._rng.choices(eligible, weights=weights)[0]


# --------------------------------------------------------------------------- reading the config


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_segment(raw: object, *, whir_max_ms: int) -> Segment:
    """One segment from its TOML inline table; ``ValueError`` saying what is allowed."""
    allowed = (
        "each segment is { pause = MS }, { whir = MS, speed = S } or "
        '{ feed = N | "rest", speed = S }, with an optional cue = "EVENT"'
    )
    if not isinstance(raw, Mapping):
        raise ValueError(allowed)
    actions = [k for k in (PAUSE, WHIR, FEED) if k in raw]
    extra = set(raw) - {PAUSE, WHIR, FEED, "speed", "cue"}
    if len(actions) != 1 or extra:
        raise ValueError(allowed)
    action = actions[0]
    value = raw[action]
    speed = raw.get("speed", 1.0)
    cue = raw.get("cue")
    if not _number(speed) or not MIN_SPEED <= float(speed) <= 1.0:
        raise ValueError(f"speed must be a number from {MIN_SPEED} to 1")
    if cue is not None and not isinstance(cue, str):
        raise ValueError("cue must be a sound event name")
    if action == PAUSE:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_PAUSE_MS:
            raise ValueError(f"pause must be a whole number of ms from 1 to {MAX_PAUSE_MS}")
        return Segment(PAUSE, ms=value, cue=cue)
    if action == WHIR:
        top = min(MAX_WHIR_MS, whir_max_ms)
        if not isinstance(value, int) or isinstance(value, bool) or not 10 <= value <= top:
            raise ValueError(
                f"whir must be a whole number of ms from 10 to {top} (below [limits] "
                "ejector_max_on_ms and at most 1000)"
            )
        return Segment(WHIR, ms=value, speed=float(speed), cue=cue)
    if value == "rest":
        return Segment(FEED, cards=None, speed=float(speed), cue=cue)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 64:
        raise ValueError('feed must be a number of cards from 1 to 64, or "rest"')
    return Segment(FEED, cards=value, speed=float(speed), cue=cue)


def parse_pattern(raw: object, *, whir_max_ms: int) -> Pattern:
    """One ``[[patterns.pattern]]`` table; ``ValueError`` naming what is wrong."""
    if not isinstance(raw, Mapping):
        raise ValueError("each [[patterns.pattern]] must be a table")
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii() or len(name) > 16:
        # it travels in every fire event: short, so the event always fits in one frame
        raise ValueError("name must be a word of 1 to 16 letters, digits or _")
    extra = set(raw) - {"name", "segments", *OUTCOMES}
    if extra:
        raise ValueError(
            f"{name}: unknown key {sorted(extra)[0]!r}; known: name, segments, dry, fire, big"
        )
    segments = raw.get("segments")
    if not isinstance(segments, list) or not 1 <= len(segments) <= MAX_SEGMENTS:
        raise ValueError(f"{name}: segments must be a list of 1 to {MAX_SEGMENTS} segments")
    parsed = []
    for i, seg in enumerate(segments):
        try:
            parsed.append(parse_segment(seg, whir_max_ms=whir_max_ms))
        except ValueError as exc:
            raise ValueError(f"{name}: segment {i + 1}: {exc}") from None
    lead = sum(s.ms for s in parsed)
    if lead > MAX_LEAD_MS:
        raise ValueError(f"{name}: pauses and whirs add up to {lead} ms; at most {MAX_LEAD_MS}")
    weights = []
    for key in OUTCOMES:
        w = raw.get(key, 0)
        if not _number(w) or not 0 <= float(w) <= 1000:
            raise ValueError(f"{name}: {key} must be a weight from 0 to 1000")
        if w:
            weights.append((key, float(w)))
    return Pattern(name, tuple(parsed), tuple(weights))


def merge(builtin: Sequence[Pattern], own: Sequence[Pattern]) -> tuple[Pattern, ...]:
    """The built-in patterns with a config's own: one of the same name replaces the built-in."""
    names = {p.name for p in own}
    return tuple(p for p in builtin if p.name not in names) + tuple(own)
