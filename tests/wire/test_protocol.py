"""Wire format: frame syntax, CRC, validation errors, stream resync (wire/protocol.py)."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest
import serial
from hypothesis import given, settings
from hypothesis import strategies as st

from wire import protocol as p

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def test_crc_is_crc32_ieee_check_value():
    # the standard check value of CRC-32/ISO-HDLC pins the algorithm for other languages
    assert p.crc_hex(b"123456789") == "CBF43926"
    assert p.crc_hex(b"") == "00000000"


def test_status_command_frame_is_pinned_byte_for_byte():
    line = p.encode(p.cmd("a1", "status"))
    assert line == b'{"v":1,"type":"cmd","id":"a1","op":"status"}*98DC85F0\n'
    body = line[: line.index(b"*")]
    assert f"{zlib.crc32(body):08X}" == "98DC85F0"


def test_encode_is_compact_printable_ascii_even_for_unicode_and_del():
    line = p.encode(p.reply_ok("x", name="Kärtchen \x7f\t\u2603"))
    assert line.endswith(b"\n")
    assert all(0x20 <= c <= 0x7E for c in line[:-1])
    assert b" " not in line.split(b'"name"')[0]
    assert p.decode(line)["name"] == "Kärtchen \x7f\t\u2603"


def test_encode_refuses_a_line_over_512_bytes():
    with pytest.raises(ValueError, match="at most 512"):
        p.encode(p.reply_ok("x", pad="a" * 500))
    # the longest allowed line is exactly 512 bytes including the newline
    base = len(p.encode(p.reply_ok("x", pad="")))
    assert len(p.encode(p.reply_ok("x", pad="a" * (512 - base)))) == 512


def test_encode_refuses_a_non_object():
    with pytest.raises(ValueError, match="JSON object"):
        p.encode([1, 2])  # type: ignore[arg-type]


def test_crlf_and_lower_case_crc_are_accepted():
    line = p.encode(p.ack(4))
    body, crc = line[:-1].split(b"*")
    assert p.decode(body + b"*" + crc.lower() + b"\r\n") == p.ack(4)


def _code(line: bytes) -> tuple[str, str | None]:
    with pytest.raises(p.ProtocolError) as info:
        p.decode(line)
    return info.value.code, info.value.id


def _frame(obj: object) -> bytes:
    body = json.dumps(obj, separators=(",", ":")).encode()
    return body + b"*" + p.crc_hex(body).encode() + b"\n"


@pytest.mark.parametrize(
    ("line", "code", "cmd_id"),
    [
        (b'{"v":1,"type":"ack","seq":1}*00000000\n', p.BAD_CRC, None),
        (b'{"v":1,"type":"ack","seq":1}\n', p.BAD_FRAME, None),
        (b'{"v":1,"type":"ack","seq":1}*XYZ12345\n', p.BAD_FRAME, None),
        (b"x" * 600 + b"\n", p.LINE_TOO_LONG, None),
        (_frame([1, 2]), p.BAD_FRAME, None),
        (b"{nope*" + p.crc_hex(b"{nope").encode() + b"\n", p.BAD_FRAME, None),
        (_frame({"type": "ack", "seq": 1}), p.BAD_FRAME, None),
        (_frame({"v": 2, "type": "cmd", "id": "k", "op": "status"}), p.VERSION_ERROR, "k"),
        (_frame({"v": True, "type": "ack", "seq": 1}), p.VERSION_ERROR, None),
        (_frame({"v": 1, "type": "bogus"}), p.BAD_FRAME, None),
        (_frame({"v": 1, "type": "cmd", "op": "status"}), p.BAD_FRAME, None),
        (_frame({"v": 1, "type": "cmd", "id": 7, "op": "status"}), p.BAD_FRAME, None),
        (_frame({"v": 1, "type": "cmd", "id": "a", "op": "fly"}), p.UNKNOWN_OP, "a"),
        (_frame({"v": 1, "type": "cmd", "id": "a", "op": 3}), p.BAD_FRAME, "a"),
        (_frame({"v": 1, "type": "cmd", "id": "a", "op": "dispense"}), p.BAD_ARG, "a"),
        (
            _frame({"v": 1, "type": "cmd", "id": "a", "op": "dispense", "count": 1.5}),
            p.BAD_ARG,
            "a",
        ),
        (
            _frame({"v": 1, "type": "cmd", "id": "a", "op": "dispense", "count": "3"}),
            p.BAD_ARG,
            "a",
        ),
        (
            _frame({"v": 1, "type": "cmd", "id": "a", "op": "dispense", "count": True}),
            p.BAD_ARG,
            "a",
        ),
        (_frame({"v": 1, "type": "cmd", "id": "a", "op": "status", "x": 1}), p.BAD_ARG, "a"),
        (_frame({"v": 1, "type": "cmd", "id": "a", "op": "aim", "seat": "1"}), p.BAD_ARG, "a"),
        (_frame({"v": 1, "type": "cmd", "id": "a", "op": "load"}), p.BAD_ARG, "a"),
        (
            _frame({"v": 1, "type": "cmd", "id": "a", "op": "load", "count": 1, "total": 5}),
            p.BAD_ARG,
            "a",
        ),
        (_frame({"v": 1, "type": "cmd", "id": "a", "op": "hello", "seq": -1}), p.BAD_ARG, "a"),
        (
            _frame({"v": 1, "type": "cmd", "id": "a", "op": "model.set", "params": {}}),
            p.BAD_ARG,
            "a",
        ),
        (_frame({"v": 1, "type": "ack", "seq": -1}), p.BAD_FRAME, None),
        (_frame({"v": 1, "type": "nak", "seq": 1.5}), p.BAD_FRAME, None),
        (_frame({"v": 1, "type": "ack", "seq": 1, "extra": 1}), p.BAD_FRAME, None),
        (_frame({"v": 1, "type": "reply", "id": "a", "ok": False}), p.BAD_FRAME, None),
        (
            _frame({"v": 1, "type": "reply", "id": "a", "ok": False, "error": {"code": "NOPE"}}),
            p.BAD_FRAME,
            None,
        ),
        (_frame({"v": 1, "type": "event", "seq": 0}), p.BAD_FRAME, None),
        (
            _frame(
                {
                    "v": 1,
                    "type": "event",
                    "seq": 1,
                    "boot": "b",
                    "stream": "s",
                    "t_ms": 0,
                    "kind": "x",
                }
            ),
            p.BAD_FRAME,
            None,
        ),
        (
            _frame(
                {
                    "v": 1,
                    "type": "event",
                    "seq": 1,
                    "boot": "b",
                    "stream": "s",
                    "t_ms": 0,
                    "kind": "fire",
                    "press_id": 1,
                    "planned": 2,
                    "ejected": 2,
                    "reason": "maybe",
                }
            ),
            p.BAD_FRAME,
            None,
        ),
    ],
)
def test_bad_lines_get_the_precise_error_code(line: bytes, code: str, cmd_id: str | None):
    assert _code(line) == (code, cmd_id)


@pytest.mark.parametrize(
    "body",
    [
        rb'{"v":1,"type":"cmd","id":"\ud800","op":"status"}',  # the id: the journal's key
        rb'{"v":1,"type":"cmd","id":"a","op":"hello","stream":"x\udfff"}',
        rb'{"v":1,"type":"cmd","id":"a","op":"model.set","params":{"\ud83d":1}}',
        rb'{"v":1,"type":"ack","seq":1,"stream":"\udc00\ud800"}',  # a pair the wrong way round
    ],
)
def test_half_a_surrogate_pair_is_no_text_and_a_bad_frame(body: bytes):
    """`\\ud800` alone is a valid JSON escape but no character: the box journaled the id of
    such a command in SQLite, which refused it, and answered INTERNAL with a traceback."""
    line = body + b"*" + p.crc_hex(body).encode() + b"\n"
    code, cmd_id = _code(line)
    assert (code, cmd_id) == (p.BAD_FRAME, None)


def test_a_surrogate_pair_is_text():
    body = rb'{"v":1,"type":"cmd","id":"\ud83d\ude00","op":"status"}'  # one emoji
    assert p.decode(body + b"*" + p.crc_hex(body).encode())["id"] == "\U0001f600"


def test_model_set_cannot_name_a_safety_limit():
    line = p.encode(p.cmd("m", "model.set", params={"max_burst": 4, "ejector_max_on_ms": 99999}))
    with pytest.raises(p.ProtocolError, match="cannot set 'ejector_max_on_ms'") as info:
        p.decode(line)
    assert info.value.code == p.BAD_ARG


def test_bad_arg_message_names_the_op_the_field_and_what_is_allowed():
    with pytest.raises(p.ProtocolError) as info:
        p.decode(p.encode(p.cmd("a", "dispense", count="2")))
    assert info.value.message == "dispense: count must be a whole number, got '2'"


@pytest.mark.parametrize(("op", "args"), [("dispense", {"count": 99}), ("aim", {"seat": 100})])
def test_ranges_that_come_from_a_config_are_left_to_the_box(op: str, args: dict):
    # A wire-level range ("1 to 1000") contradicted the box's own ("1 to 12"): only one remains.
    assert p.decode(p.encode(p.cmd("a", op, **args)))["op"] == op


@pytest.mark.parametrize(
    ("op", "args", "message"),
    [
        ("dispense", {"count": -2}, "dispense: count must be at least 1, got -2"),
        ("aim", {"seat": -1}, "aim: seat must be at least 0, got -1"),
        ("load", {"total": 10_001}, "load: total must be from 0 to 10000, got 10001"),
        ("hello", {"seq": -1}, "hello: seq must be at least 0, got -1"),
        ("hello", {"stream": ""}, "hello: stream must be a non-empty string or null, got ''"),
        ("model.set", {"params": {}}, "model.set: params must be a non-empty object, got {}"),
        ("dispense", {}, "dispense: missing argument 'count'"),
        ("load", {}, "load: give exactly one of count, total"),
        ("load", {"count": 1, "total": 5}, "load: give exactly one of count, total"),
    ],
)
def test_what_no_box_takes_is_refused_on_the_wire_from_the_op_table(
    op: str, args: dict, message: str
):
    """The op table's declarations (wire/ops.py `Arg.shape`) are the one check: the box's wire
    refuses with it, `launcher send` refuses with it before opening a port."""
    with pytest.raises(p.ProtocolError) as info:
        p.decode(p.encode(p.cmd("a", op, **args)))
    assert (info.value.code, info.value.message) == (p.BAD_ARG, message)


@pytest.mark.parametrize(
    "message",
    [
        p.cmd("a", "hello", stream="abc", seq=12),
        p.cmd("a", "hello", stream=None, seq=0),
        p.cmd("a", "dispense", count=3),
        p.cmd("a", "aim", seat=2),
        p.cmd("a", "load", count=20),
        p.cmd("a", "load", total=0),
        p.cmd("a", "model.set", params={"base": 0.5, "mode": "fixed"}),
        p.reply_ok("a", state="idle"),
        p.reply_error(None, p.BAD_CRC, "x"),
        p.ack(0),
        p.nak(5, stream="s"),
        {
            "v": 1,
            "type": "event",
            "seq": 9,
            "boot": "b",
            "stream": "s",
            "t_ms": 10,
            "kind": "fire",
            "press_id": 3,
            "source": "button",
            "planned": 3,
            "ejected": 2,
            "reason": "jammed",
            "dry_streak": 0,
            "spinup_ms": 40,
            "first_card_ms": 100,
            "total_ms": 300,
            "card_ms": [100, 160],
            "hopper": 50,
        },
    ]
    + [
        p.cmd("a", op)
        for op in p.OPS
        if op not in {"dispense", "aim", "load", "model.set", "settings.set"}
    ],
)
def test_valid_messages_round_trip(message: dict):
    assert p.decode(p.encode(message)) == message


def test_reply_error_refuses_an_unknown_code():
    with pytest.raises(ValueError, match="unknown error code"):
        p.reply_error("a", "OOPS", "x")


# -- stream decoding -------------------------------------------------------------------------


def test_decoder_reassembles_frames_fed_one_byte_at_a_time():
    lines = [p.encode(p.ack(n)) for n in range(5)]
    decoder = p.FrameDecoder()
    out = []
    for byte in b"".join(lines):
        out += decoder.feed(bytes([byte]))
    assert [item.message for item in out] == [p.ack(n) for n in range(5)]
    assert decoder.frames == 5
    assert decoder.errors == 0


def test_decoder_resyncs_after_garbage_at_the_next_newline():
    data = b"\x00\xffnoise*12\n" + p.encode(p.ack(1)) + b"half a fr" + b"\n" + p.encode(p.ack(2))
    out = p.FrameDecoder().feed(data)
    assert [type(i).__name__ for i in out] == ["FrameErrorInfo", "Frame", "FrameErrorInfo", "Frame"]
    assert out[1].message == p.ack(1)
    assert out[3].message == p.ack(2)


def test_over_long_line_is_reported_once_and_dropped_up_to_its_newline():
    decoder = p.FrameDecoder()
    out = decoder.feed(b"A" * 300)
    out += decoder.feed(b"B" * 300)  # crosses 512: reported now
    out += decoder.feed(b"C" * 2000)  # still the same line: silently skipped
    out += decoder.feed(b"D\n" + p.encode(p.ack(7)))
    assert [getattr(i, "code", None) for i in out] == [p.LINE_TOO_LONG, None]
    assert out[1].message == p.ack(7)
    assert decoder.errors == 1


def test_line_of_exactly_512_bytes_is_accepted():
    base = len(p.encode(p.reply_ok("x", pad="")))
    line = p.encode(p.reply_ok("x", pad="a" * (512 - base)))
    (item,) = p.FrameDecoder().feed(line)
    assert isinstance(item, p.Frame)
    (item,) = p.FrameDecoder().feed(line[:-1] + b"a\n")
    assert item.code == p.LINE_TOO_LONG


def test_blank_lines_are_ignored():
    assert p.FrameDecoder().feed(b"\n\r\n  \n") == []


def test_decoder_reports_the_command_id_of_a_bad_command():
    (item,) = p.FrameDecoder().feed(p.encode(p.cmd("id-9", "dispense", count="0")))
    assert (item.code, item.id) == (p.BAD_ARG, "id-9")


def test_frames_round_trip_over_pyserial_loop_url():
    port = serial.serial_for_url("loop://", timeout=0.5)
    messages = [p.cmd(f"c{n}", "dispense", count=n + 1) for n in range(20)] + [p.ack(20)]
    try:
        for message in messages:
            port.write(p.encode(message))
        decoder = p.FrameDecoder()
        out: list = []
        while len(out) < len(messages):
            chunk = port.read(max(1, port.in_waiting))
            assert chunk, "loop:// returned nothing before all frames arrived"
            out += decoder.feed(chunk)
    finally:
        port.close()
    assert [i.message for i in out] == messages


_json_scalars = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=20)
_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=10), _json, max_size=6))
def test_any_json_object_that_fits_round_trips_unvalidated(obj: dict):
    try:
        line = p.encode(obj)
    except ValueError:
        return  # too long for one line
    assert line.count(b"\n") == 1
    assert all(0x20 <= c <= 0x7E for c in line[:-1])
    assert p.decode(line, check=False) == obj


# -- the worked examples in docs/protocol.md -------------------------------------------------

_FRAME_RE = re.compile(rb"^(\{.*\}\*[0-9A-F]{8})$", re.MULTILINE)


def test_every_frame_in_the_protocol_doc_decodes_with_a_correct_crc():
    text = DOC.read_bytes()
    frames = _FRAME_RE.findall(text)
    assert len(frames) >= 40, "docs/protocol.md should show worked examples"
    shown = []
    for n, frame in enumerate(frames):
        p.split_line(frame + b"\n")  # raises on a wrong CRC or a malformed frame
        message = p.decode(frame + b"\n", check=False)
        assert p.encode(message) == frame + b"\n", f"not in canonical form: {frame!r}"
        shown.append(message)
        try:
            p.validate(message)
        except p.ProtocolError as exc:
            # an example of a bad command: the doc must show the box's answer right after it
            answer = p.decode(frames[n + 1] + b"\n")
            assert answer["type"] == "reply" and answer["ok"] is False, frame
            assert (answer["error"]["code"], answer["id"]) == (exc.code, exc.id)
            assert answer["error"]["message"] == exc.message
    # every op and every event kind is shown at least once
    assert {m["op"] for m in shown if m.get("type") == "cmd"} >= set(p.OPS)
    assert {m["kind"] for m in shown if m.get("type") == "event"} == set(p.EVENT_KINDS)
    assert {m["error"]["code"] for m in shown if m.get("ok") is False} >= {
        p.BAD_CRC,
        p.LINE_TOO_LONG,
        p.BAD_FRAME,
        p.BAD_ARG,
        p.UNKNOWN_OP,
        p.VERSION_ERROR,
    }
