"""A state file edited by hand: whatever one or two of its fields are set to (another type, a
float for a seat, a list for a face, a field removed), `load_state` returns the game or refuses
it with one InputError line naming the field; never a TypeError, KeyError or IndexError.

Before: a seat written `1.0` passed `in seats` (1.0 == 1) and then indexed a list (TypeError),
and a face written `[]` was looked up in a dict (unhashable: TypeError), each a traceback on
`unoattack table` and `serve` instead of the loader's one line."""

from __future__ import annotations

import io
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.table.referee import Referee
from engine.table.session import TableSession
from engine.table.state_file import load_state

VALUES = [None, True, 0, -1, 1, 1.0, 2.5, 2**70, "", "²", "R5", [], {}, [1.0], [[]], {"a": 1}]
LINES = ["R5", "RH2", "fired 2", "fired 0", "R7", "B7", "hit", "fired 1", "uno Cat"]


@cache
def _saved() -> str:
    """A game a few moves in (a round in play, history, an attack owed), as saved."""
    import tempfile

    folder = Path(tempfile.mkdtemp())
    session = TableSession(Referee(["Ann", "Bob", "Cat"]), state_path=folder / "s.json")
    session.out = io.StringIO()
    for line in LINES:
        session.handle_line(line)
    return (folder / "s.json").read_text(encoding="utf-8")


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    for key, inner in items:
        found += _paths(inner, (*path, key))
    return found


def _edit(data: dict[str, Any], path: tuple[Any, ...], value: object, remove: bool) -> None:
    where: Any = data
    for key in path[:-1]:
        where = where[key]
    if remove and isinstance(where, dict):
        del where[path[-1]]
    else:
        where[path[-1]] = value


# Any field of the saved game (found once it is saved), and what to write there.
_EDIT = st.tuples(
    st.deferred(lambda: st.sampled_from(_paths(json.loads(_saved())))),
    st.sampled_from(VALUES),
    st.booleans(),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(_EDIT, min_size=1, max_size=2))
def test_a_state_edited_anyhow_is_loaded_or_one_line(edits, tmp_path_factory) -> None:
    data = json.loads(_saved())
    for path, value, remove in edits:
        try:
            _edit(data, path, value, remove)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit took that path away
    path = tmp_path_factory.mktemp("s") / "state.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        load_state(path)
    except InputError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("referee", "play", "winner"), 1.0, "play.winner"),
        (("referee", "taking"), 1.0, "taking"),
        (("referee", "play", "direction"), 1.0, "play.direction"),
    ],
)
def test_a_float_where_a_seat_goes_is_named(tmp_path, path, value, field) -> None:
    data = json.loads(_saved())
    _edit(data, path, value, remove=False)
    (tmp_path / "s.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=f"`{field}` must be"):
        load_state(tmp_path / "s.json")
