"""Fuzzing the frame decoder and the link's command handler with random and mutated frames.

Every example is a batch of lines: random bytes, valid frames, and valid frames mutated at the
byte level (flips, insertions, truncation, bad CRC, padding past 512 bytes, a newline in the
middle) or at the message level (a field dropped, replaced or added, with a correct CRC so the
validator sees it). A reference classifier (`expected`) built on `protocol.decode` says what
each complete line must produce; the decoder and the link must agree with it line for line.
The test checks that the two saw at least 10,000 frames.
"""

from __future__ import annotations

import json
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.firmware.linkhelp import Box
from wire import protocol as p

pytestmark = pytest.mark.slow  # run first: see tests/conftest.py
FRAMES_PER_EXAMPLE = 50
MIN_FRAMES = 10_000

_ids = st.text(alphabet="abcdef0123", min_size=1, max_size=4)


@st.composite
def valid_message(draw: st.DrawFn) -> dict:
    cmd_id = draw(_ids)
    choice = draw(st.integers(0, 12))
    if choice == 0:
        return p.ack(draw(st.integers(0, 40)))
    if choice == 1:
        return p.nak(draw(st.integers(0, 40)))
    if choice == 2:
        return p.cmd(cmd_id, "dispense", count=draw(st.integers(1, 12)))
    if choice == 3:
        return p.cmd(cmd_id, "aim", seat=draw(st.integers(0, 9)))
    if choice == 4:
        return p.cmd(cmd_id, "load", count=draw(st.integers(1, 50)))
    if choice == 5:
        return p.cmd(cmd_id, "model.set", params={"base": draw(st.floats(0, 1)), "max_dry": 4})
    if choice == 6:
        return p.cmd(cmd_id, "hello", stream=draw(st.none() | _ids), seq=draw(st.integers(0, 9)))
    if choice == 7:
        return p.reply_ok(cmd_id, state="idle")
    if choice == 8:
        return {
            "v": 1,
            "type": "event",
            "seq": draw(st.integers(1, 99)),
            "boot": "b",
            "stream": "s",
            "t_ms": 5,
            "kind": "fire",
            "press_id": 1,
            "planned": 2,
            "ejected": 2,
            "reason": "fired",
        }
    op = draw(
        st.sampled_from(
            ["status", "press", "lock", "unlock", "clear", "reset", "model.get", "selftest"]
        )
    )
    return p.cmd(cmd_id, op)


_values = (
    st.none()
    | st.booleans()
    | st.integers(-5, 2000)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.lists(st.integers(-3, 3), max_size=3)
    | st.dictionaries(
        st.sampled_from(["base", "max_burst", "ejector_max_on_ms", "x"]),
        st.integers(-3, 99),
        max_size=2,
    )
)


def _framed(body: bytes) -> bytes:
    return body + b"*" + f"{zlib.crc32(body):08X}".encode() + b"\n"


@st.composite
def message_mutation(draw: st.DrawFn) -> bytes:
    """A valid message with one field dropped, replaced or added, framed with a correct CRC."""
    message = draw(valid_message())
    key = draw(st.sampled_from([*message.keys(), "count", "seq", "op", "params", "extra"]))
    action = draw(st.sampled_from(["drop", "replace", "replace"]))
    if action == "drop":
        message.pop(key, None)
    else:
        message[key] = draw(_values)
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode()
    return _framed(body)


@st.composite
def byte_mutation(draw: st.DrawFn) -> bytes:
    body = p.encode(draw(valid_message()))[:-1]
    kind = draw(st.sampled_from(["flip", "delete", "insert", "truncate", "crc", "pad", "newline"]))
    i = draw(st.integers(0, len(body) - 1))
    if kind == "flip":
        body = body[:i] + bytes([body[i] ^ draw(st.integers(1, 255))]) + body[i + 1 :]
    elif kind == "delete":
        body = body[:i] + body[i + 1 :]
    elif kind == "insert":
        body = body[:i] + bytes([draw(st.integers(0, 255))]) + body[i:]
    elif kind == "truncate":
        body = body[:i]
    elif kind == "crc":
        body = (
            body[:-8]
            + draw(st.text(alphabet="0123456789ABCDEFabcdefXZ*", min_size=8, max_size=8)).encode()
        )
    elif kind == "pad":
        inner = body[:-9]
        body = _framed(inner[:-1] + b',"pad":"' + b"x" * draw(st.integers(300, 1200)) + b'"}')[:-1]
    else:
        body = body[:i] + b"\n" + body[i:]
    return body + b"\n"


piece = st.one_of(
    valid_message().map(p.encode),
    message_mutation(),
    byte_mutation(),
    byte_mutation(),
    st.binary(max_size=700),
)
batch = st.lists(piece, min_size=FRAMES_PER_EXAMPLE, max_size=FRAMES_PER_EXAMPLE).map(
    lambda pieces: b"".join(x if x.endswith(b"\n") else x + b"\n" for x in pieces)
)


def expected(data: bytes) -> list[tuple[str, str | None]]:
    """What each complete line must produce: ("ok", None) or (error code, command id)."""
    out = []
    for line in data.split(b"\n")[:-1]:
        if len(line) + 1 > p.MAX_LINE:
            out.append((p.LINE_TOO_LONG, None))
        elif not line.strip(b"\r \t"):
            continue
        else:
            try:
                p.decode(line)
                out.append(("ok", None))
            except p.ProtocolError as exc:
                out.append((exc.code, exc.id))
    return out


def expected_replies(data: bytes, stored: dict[str, str]) -> list[tuple[str, str | None]]:
    """The error replies the link must send for `data`, in order. Lines of type event or reply
    are never answered however garbled; a command id the box has stored for another command
    is refused (`stored`: id -> command key, kept across examples on the same box)."""
    out = []
    lines = data.split(b"\n")[:-1]
    for line, (code, cmd_id) in zip(
        [x for x in lines if len(x) + 1 > p.MAX_LINE or x.strip(b"\r \t")],
        expected(data),
        strict=True,
    ):
        kind = None
        if code != p.LINE_TOO_LONG:
            try:
                message = p.decode(line, check=False)
                kind = message.get("type")
            except p.ProtocolError:
                message = None
        if code == "ok" and kind == "cmd":
            key = p.command_key(message["op"], p.command_args(message))
            if stored.get(message["id"], key) != key:
                out.append((p.BAD_ARG, message["id"]))
            elif message["op"] not in p.QUERY_OPS:
                stored[message["id"]] = key
        elif code != "ok" and kind not in ("event", "reply"):
            out.append((code, cmd_id))
    return out


def _classify(item: p.Frame | p.FrameErrorInfo) -> tuple[str, str | None]:
    return ("ok", None) if isinstance(item, p.Frame) else (item.code, item.id)


def check_decoder(data: bytes, seed: int) -> int:
    """A fresh decoder fed `data` in random pieces agrees with `expected`; its error count."""
    decoder = p.FrameDecoder()
    chunks = random.Random(seed)
    out: list[p.Frame | p.FrameErrorInfo] = []
    i = 0
    while i < len(data):  # arbitrary split points, like reads from a serial port
        n = chunks.randint(1, 300)
        out += decoder.feed(data[i : i + n])
        i += n
    want = expected(data)
    assert [_classify(item) for item in out] == want
    assert decoder.errors == sum(1 for code, _ in want if code != "ok")
    return decoder.errors


def check_link(box: Box, data: bytes, stored: dict[str, str]) -> None:
    """The link of `box` answers the bad frames of `data` as `expected_replies` says and counts
    them; `stored` carries the command ids the box has kept from earlier batches."""
    before = box.link.counters
    box.host.write(data)
    frames = box.host.sync()
    after = box.link.counters
    bad_lines = sum(1 for code, _ in expected(data) if code != "ok")
    want = expected_replies(data, stored)
    got = [
        (f["error"]["code"], f["id"]) for f in frames if f["type"] == "reply" and f["ok"] is False
    ]
    dropped_replies = after["errors_dropped"] - before["errors_dropped"]
    if dropped_replies == 0:
        assert got == want
    else:  # a storm beyond the reply queue: the rest are counted, none invented
        assert len(got) + dropped_replies == len(want)
    bad = sum(after[k] - before[k] for k in ("bad_crc", "too_long", "bad_frame"))
    assert bad == bad_lines
    assert after["dropped"] - before["dropped"] >= bad_lines
    assert after["internal"] == 0


# One test for both: drawing the batches is most of the time (hypothesis builds every frame
# from many small draws), and every batch is worth checking against the decoder alone and
# against the link on a live box.
def test_decoder_and_link_agree_with_the_reference_on_random_and_mutated_frames():
    box = Box()
    seen = {"frames": 0, "errors": 0}
    stored: dict[str, str] = {}
    try:

        @settings(max_examples=MIN_FRAMES // FRAMES_PER_EXAMPLE + 20)
        @given(data=batch, seed=st.integers(0, 2**32))
        def run(data: bytes, seed: int) -> None:
            seen["errors"] += check_decoder(data, seed)
            check_link(box, data, stored)
            seen["frames"] += FRAMES_PER_EXAMPLE

        run()
        assert seen["frames"] >= MIN_FRAMES
        assert seen["errors"] > seen["frames"] // 4  # the mutations really produce bad frames
        # The link stays responsive after it all.
        reply = box.host.command("status")
        assert reply["ok"] is True and reply["state"] == "idle"
    finally:
        box.close()
