"""`i18n.Text`: a message kept as template and arguments, English as a string, any language
where it is read, and the same after a trip over the wire as JSON."""

from __future__ import annotations

import json

import i18n
from i18n import Text

RULE = "must be between {lo} and {hi}"


def test_str_is_english_whatever_language_is_in_use():
    text = Text("jam.{key} {rule}, got {value}", key="base", rule=Text(RULE, lo=0, hi=1), value=2)
    i18n.use("th")
    assert str(text) == "jam.base must be between 0 and 1, got 2"
    assert text.render() != str(text)
    assert i18n.language("th").gettext(RULE).format(lo=0, hi=1) in text.render()


def test_a_trip_over_the_wire_keeps_it_whole():
    text = Text("jam.{key} {rule}", key="base", rule=Text(RULE, lo=0, hi=1))
    back = Text.from_wire(json.loads(json.dumps(text.to_wire())))
    assert back == text
    assert back.render(i18n.language("cy")) == text.render(i18n.language("cy"))


def test_what_is_not_a_text_is_none_and_a_stranger_template_stays_as_sent():
    assert Text.from_wire("oops") is None
    assert Text.from_wire({"template": 3}) is None
    assert Text.from_wire({"template": "x", "args": {"no way": 1}}) is None
    newer = Text.from_wire({"template": "{n} new words", "args": {"n": 2}})
    assert newer is not None and newer.render(i18n.language("ro")) == "2 new words"
    assert Text("{missing}").render() == "{missing}"


def test_a_box_error_carries_its_english_and_its_text_and_can_drop_the_text():
    from wire import protocol

    result = protocol.result_error("BUSY", Text("the box is {state}", state="stopping"))
    assert result["error"] == {
        "code": "BUSY",
        "message": "the box is stopping",
        "text": {"template": "the box is {state}", "args": {"state": "stopping"}},
    }
    reply = protocol.reply("c1", result)
    assert protocol.without_text(reply)["error"] == {
        "code": "BUSY",
        "message": "the box is stopping",
    }
    assert protocol.without_text(protocol.reply_ok("c2")) == protocol.reply_ok("c2")


def test_a_phrase_is_said_again_in_another_language_however_it_was_built() -> None:
    import threading

    from i18n import Phrase, _, current, language, lines_of, reworded, say_in, speaking, use, worded

    use("en")
    cy, th = language("cy"), language("th")
    passes = _("{player} passes").format(player="Ann")
    built = "! " + _(" or ").join([passes, "R5"]) + " ."
    assert isinstance(built, Phrase) and built == "! Ann passes or R5 ."
    assert (
        built.render(cy)
        == "! "
        + cy.gettext(" or ").join([cy.gettext("{player} passes").format(player="Ann"), "R5"])
        + " ."
    )
    assert (
        reworded(passes, str.upper).render(th)
        == th.gettext("{player} passes").format(player="Ann").upper()
    )
    assert [line.render(cy) for line in lines_of(_("red") + "\n" + _("blue"))] == [
        cy.gettext("red"),
        cy.gettext("blue"),
    ]
    code = worded(lambda: current().code)()  # text that is no catalog's, made again
    assert say_in(th, {"a": [code, 3], "b": (passes,)}) == {
        "a": ["th", 3],
        "b": [th.gettext("{player} passes").format(player="Ann")],
    }
    # `speaking` is this thread's only: another thread still speaks the language in use
    seen: list[str] = []
    with speaking(th):
        worker = threading.Thread(target=lambda: seen.append(_("red")))
        worker.start()
        worker.join(10)
        assert _("red") == th.gettext("red")
    assert seen == ["red"] and _("red") == "red"
    assert type(str(passes)) is str and type(passes.render(cy)) is str
