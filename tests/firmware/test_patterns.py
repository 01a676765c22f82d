"""Motion patterns as data: resolving a pattern for a planned count, the seeded choice, parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.patterns import (
    BUILTIN,
    Pattern,
    PatternChooser,
    Segment,
    Step,
    merge,
    outcome,
    parse_pattern,
    resolve,
)

BY_NAME = {p.name: p for p in BUILTIN}


def test_resolve_splits_the_burst_and_drops_trailing_pauses() -> None:
    split = BY_NAME["split"]
    assert resolve(split, 7) == [
        Step("feed", cards=2),
        Step("pause", ms=600, cue="suspense"),
        Step("feed", cards=5),
    ]
    assert resolve(split, 2) == [Step("feed", cards=2)]  # nothing after the split: no pause
    assert resolve(BY_NAME["stutter"], 1) == [Step("feed", cards=1)]
    assert resolve(BY_NAME["fake_start"], 0) == [
        Step("whir", ms=150, speed=0.6),
        Step("pause", ms=250),
    ]
    assert resolve(BY_NAME["suspense"], 0) == [Step("pause", ms=700, cue="suspense")]
    assert resolve(BY_NAME["plain"], 0) == []


@given(
    planned=st.integers(0, 30),
    cards=st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=0, max_size=6),
)
def test_resolved_feeds_always_add_up_to_the_plan(planned: int, cards: list[int | None]) -> None:
    segments = []
    for n in cards:
        segments += [Segment("feed", cards=n), Segment("pause", ms=100)]
    pattern = Pattern("p", tuple(segments), (("fire", 1.0),))
    steps = resolve(pattern, planned)
    assert sum(s.cards for s in steps if s.action == "feed") == planned
    assert all(s.cards > 0 for s in steps if s.action == "feed")
    if planned > 0:
        assert steps[-1].action == "feed"
    else:
        assert not any(s.action == "feed" for s in steps)


def test_outcomes() -> None:
    assert [outcome(n, 6) for n in (0, 1, 5, 6, 12)] == ["dry", "fire", "fire", "big", "big"]


def test_chooser_is_seeded_weighted_and_knows_the_ejector() -> None:
    a = PatternChooser(BUILTIN, seed=4)
    b = PatternChooser(BUILTIN, seed=4)
    picks = [a.choose("dry").name for _ in range(200)]  # type: ignore[union-attr]
    assert picks == [b.choose("dry").name for _ in range(200)]  # type: ignore[union-attr]
    assert set(picks) == {"plain", "suspense", "fake_start"}  # the patterns weighted for dry
    assert picks.count("plain") > picks.count("suspense")  # weights 8 : 1
    solenoid = PatternChooser(BUILTIN, seed=4, motor=False)
    assert all(solenoid.choose("dry").name != "fake_start" for _ in range(100))  # type: ignore[union-attr]
    assert PatternChooser([BY_NAME["split"]]).choose("dry") is None


def test_a_config_pattern_replaces_a_builtin_of_its_name() -> None:
    own = parse_pattern(
        {"name": "plain", "fire": 1, "segments": [{"feed": "rest", "speed": 0.5}]},
        whir_max_ms=500,
    )
    merged = merge(BUILTIN, [own])
    assert [p for p in merged if p.name == "plain"] == [own]
    assert own.weight("fire") == 1 and own.weight("dry") == 0
    assert own.segments == (Segment("feed", cards=None, speed=0.5),)


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"name": "x y", "segments": [{"pause": 1}]}, "name must be a word of 1 to 16"),
        ({"name": "p", "segments": []}, "segments must be a list of 1 to 16"),
        ({"name": "p", "segments": [{"pause": 0}]}, "segment 1: pause must be"),
        ({"name": "p", "segments": [{"pause": 3001}]}, "from 1 to 3000"),
        (
            {"name": "p", "segments": [{"whir": 600}]},
            "whir must be a whole number of ms from 10 to 500",
        ),
        ({"name": "p", "segments": [{"feed": 0}]}, 'or "rest"'),
        ({"name": "p", "segments": [{"feed": 2, "speed": 1.5}]}, "speed must be"),
        ({"name": "p", "segments": [{"feed": 2, "pause": 3}]}, "each segment is"),
        ({"name": "p", "segments": [{"pause": 3000}] * 3}, "at most 6000"),
        ({"name": "p", "segments": [{"pause": 3}], "fire": -1}, "fire must be a weight"),
        ({"name": "p", "segments": [{"pause": 3}], "often": 1}, "unknown key 'often'"),
    ],
)
def test_bad_patterns_are_named(raw: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_pattern(raw, whir_max_ms=500)


def test_time_scale_shortens_pauses_and_whirs_never_feeds() -> None:
    from firmware.patterns import BUILTIN, FEED, shortened

    short = {p.name: p for p in shortened(BUILTIN, 0.1)}
    for pattern in BUILTIN:
        for seg, cut in zip(pattern.segments, short[pattern.name].segments, strict=True):
            if seg.action == FEED:
                assert cut == seg
            else:
                assert cut.ms == max(1, round(seg.ms * 0.1)) < seg.ms
    assert shortened(BUILTIN, 5.0) == BUILTIN  # a scale above 1 is no scale: never longer
