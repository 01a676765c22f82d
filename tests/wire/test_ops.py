"""The op table (wire/ops.py) is the one list of ops: the box serves exactly its ops, the wire
checks use its argument names, `launcher send` lists from it, and docs/protocol.md agrees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wire import ops, protocol

ROOT = Path(__file__).resolve().parents[2]


def _doc_rows() -> dict[str, list[str]]:
    """op -> [args, reply fields, errors] cells of the command table in docs/protocol.md."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    start = text.index("| op | args | reply fields (when ok) | errors besides the general ones |")
    rows: dict[str, list[str]] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_the_docs_list_every_op_of_the_table_and_no_other():
    assert list(_doc_rows()) == list(ops.OPS)


@pytest.mark.parametrize("op", list(ops.OPS))
def test_the_docs_name_each_ops_arguments_reply_fields_and_errors(op):
    args, reply, errors = _doc_rows()[op]
    entry = ops.OPS[op]
    named = lambda cell: set(re.findall(r"`([A-Za-z_.]+)`", cell))  # noqa: E731
    assert set(entry.arg_names) <= named(args), args
    assert set(entry.reply) <= named(reply), reply
    assert set(entry.errors) <= named(errors), errors


def test_the_wire_checks_and_the_query_ops_come_from_the_table():
    assert tuple(ops.OPS) == protocol.OPS
    assert {op.name for op in ops.TABLE if op.query} == protocol.QUERY_OPS
    with pytest.raises(protocol.ProtocolError, match="takes only count"):
        protocol.validate_args("a", "dispense", {"count": 1, "seat": 2})


def test_the_box_serves_exactly_the_table_and_refuses_an_op_outside_it():
    from common.errors import LauncherError
    from firmware import config
    from firmware.daemon import Daemon

    daemon = Daemon(config.load(config.default_path()), factory=None)
    assert set(daemon.ops) == set(ops.BOX_OPS)
    assert [op for op in ops.OPS if op not in ops.BOX_OPS] == ["hello"]  # the link's
    with pytest.raises(LauncherError, match="not in the op table"):
        daemon.serve("fly", lambda args: {})


def test_launcher_send_lists_the_ops_a_command_line_can_give():
    from firmware.send import OPS

    objects = {op.name for op in ops.TABLE if any(a.shape == "object" for a in op.args)}
    assert objects == {"model.set", "settings.set"}  # an object is no command-line argument
    assert set(OPS) == {*ops.BOX_OPS, "watch"} - objects
    assert OPS["dispense"] == (("count",), ops.OPS["dispense"].help)


def test_a_fire_result_names_its_pattern_and_cut():
    from wire.text import fire_result

    event = {"press_id": 4, "reason": "fired", "ejected": 2, "planned": 2, "dry_streak": 0,
             "pattern": "split", "cut": 2}  # fmt: skip
    assert fire_result(event) == (
        "press 4: fired 2 of 2 cards (dry streak 0, pattern split, 2 cut for rapid presses)"
    )
    assert "pattern" not in fire_result({**event, "pattern": None, "cut": 0})
