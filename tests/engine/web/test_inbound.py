"""What a page may send, read in one place (engine/web/inbound.py): whatever arrives is a
checked value or a one-line BadInput, never another exception."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.web.inbound import (
    MAX_BODY,
    MAX_DEPTH,
    BadInput,
    Query,
    check_request,
    read_message,
    read_query,
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@given(st.binary(max_size=300))
def test_any_query_is_read_or_refused_in_one_line(raw: bytes) -> None:
    try:
        query = read_query(raw)
    except BadInput as exc:
        assert exc.status == 400 and "\n" not in exc.text
    else:
        assert isinstance(query, Query)
        assert query.since is None or query.since >= 0


@given(
    st.sampled_from(["en", "th", "zh_Hant", "ro", "cy", "de-DE"]),
    st.integers(0, 10**12),
    st.text("0123456789abcdef", min_size=12, max_size=12),
)
def test_the_pages_own_query_reads_back(lang: str, since: int, epoch: str) -> None:
    raw = urlencode({"lang": lang, "since": since, "epoch": epoch}).encode()
    assert read_query(raw) == Query(lang=lang, since=since, epoch=epoch)


@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_any_message_is_an_object_or_refused_in_one_line(raw: str | bytes) -> None:
    try:
        data = read_message(raw)
    except BadInput as exc:
        assert exc.status in (400, 413) and "\n" not in exc.text
    else:
        assert isinstance(data, dict)


@given(
    st.one_of(st.sampled_from(["act", "box", "ping"]), st.text(max_size=10), JSON),
    st.dictionaries(st.sampled_from(["line", "op", "params", "id", "type"]) | st.text(), JSON),
)
def test_any_request_is_checked_in_one_line(kind: object, data: dict) -> None:
    problem = check_request(kind, data)
    assert problem is None or ("\n" not in problem and "\r" not in problem), problem


@given(st.dictionaries(st.text(max_size=8), JSON, max_size=5))
def test_objects_of_every_shape_read_back(data: dict) -> None:
    text = json.dumps(data)
    if len(text.encode()) <= MAX_BODY:
        assert read_message(text) == data
        assert read_message(text.encode()) == data


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 2000])
def test_nesting_deeper_than_the_limit_is_refused_before_parsing(depth: int) -> None:
    with pytest.raises(BadInput, match=f"nested {depth} deep: at most {MAX_DEPTH}"):
        read_message("[" * depth + "]" * depth)
    with pytest.raises(BadInput, match="at most 4096"):
        read_message("[" * 100_000)
    assert read_message('{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}")
    assert read_message('{"s": "' + "[" * 100 + '"}') == {"s": "[" * 100}  # inside a string


@pytest.mark.parametrize(
    "raw", ['{"line": "R5", "line": "R6"}', '{"op": "ping", "params": {"a": 1, "a": 2}}']
)
def test_a_name_given_twice_is_refused_not_guessed(raw: str) -> None:
    """(`{"line": "R5", "line": "R6"}` played R6, where the box's wire refuses such a frame:
    one rule for both, `wire.protocol.no_repeats`.)"""
    with pytest.raises(BadInput, match="appears twice in one object") as info:
        read_message(raw)
    assert info.value.status == 400
