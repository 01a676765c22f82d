"""`--help` of both commands in every language: every text argparse shows (a command's
description, each subcommand's help line, each option's help, down to `launcher sound check`
and `launcher model fit`) is said in the language asked for, not left in English."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator

import pytest

import i18n

TRANSLATED = [code for code in i18n.LANGUAGES if code != "en"]


def _programs() -> dict[str, Callable[[], argparse.ArgumentParser]]:
    from engine.cli import build_parser as unoattack
    from firmware.cli import build_parser as launcher

    return {"launcher": launcher, "unoattack": unoattack}


def help_texts(parser: argparse.ArgumentParser, where: str) -> Iterator[tuple[str, str]]:
    """(where, text) of every text ``parser`` and its subcommands show in ``--help``."""
    for name in ("description", "epilog"):
        yield f"{where}: {name}", getattr(parser, name)
    for n, group in enumerate(parser._action_groups):
        yield f"{where}: group {n} title", group.title
        yield f"{where}: group {n} description", group.description
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield f"{where} {choice.dest}: help line", choice.help
            for name, sub in action.choices.items():
                yield from help_texts(sub, f"{where} {name}")
        else:
            option = "/".join(action.option_strings) or action.dest
            yield f"{where} {option}: help", action.help


def untranslated(build: Callable[[], argparse.ArgumentParser], codes: list[str]) -> list[str]:
    """The texts of ``build()``'s ``--help`` that read the same in a language of ``codes`` as
    in English (each built while that language is in use, as ``--lang`` does)."""

    def texts(code: str) -> dict[str, str]:
        i18n.use(code)
        parser = build()
        return {
            where: str(text)
            for where, text in help_texts(parser, parser.prog)
            if text and any(ch.isalpha() for ch in str(text))
        }

    english = texts("en")
    found = []
    for code in codes:
        said = texts(code)
        assert said.keys() == english.keys(), code
        found += [f"{code}: {w}: {t!r}" for w, t in english.items() if said[w] == t]
    return found


@pytest.mark.parametrize("prog", ["launcher", "unoattack"])
def test_every_help_text_of_every_subcommand_is_translated(prog: str) -> None:
    assert untranslated(_programs()[prog], TRANSLATED) == []


def test_the_walk_reaches_every_subcommand_and_sees_an_english_line() -> None:
    i18n.use("en")
    seen = dict(help_texts(_programs()["launcher"](), "launcher"))
    assert "launcher sound check: help line" in seen  # a subcommand of a subcommand
    assert "launcher sound check --config: help" in seen
    seen = dict(help_texts(_programs()["unoattack"](), "unoattack"))
    assert seen["unoattack watch: help line"] == "print the box's events live"

    def half_done() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog="x", description=i18n._("check a sound pack and list its sounds")
        )
        sub = parser.add_subparsers()
        sub.add_parser("play", help="play one cue")  # not wrapped: English in every language
        return parser

    assert untranslated(half_done, ["th"]) == ["th: x play: help line: 'play one cue'"]
