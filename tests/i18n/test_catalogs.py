"""The catalogs and the code agree: every message in both, every translation there, every
placeholder kept; the compiled catalogs are what the .po files say; numbers as CLDR writes them."""

from __future__ import annotations

import ast
import gettext
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.numbers import format_percent as babel_percent

import i18n
from i18n import messages
from i18n.layout import format_number, format_percent, width

ROOT = Path(__file__).resolve().parents[2]


def test_every_message_is_in_every_catalog_translated_with_its_placeholders():
    assert list(messages.problems()) == []


def test_the_check_sees_a_missing_message_a_stale_one_and_a_broken_placeholder(
    tmp_path, monkeypatch
):
    # A copy of the code with one message added, and catalogs with one message broken.
    src = tmp_path / "engine"
    src.mkdir()
    (src / "m.py").write_text('from i18n import _\n_("{seat} is new here")\n', encoding="utf-8")
    monkeypatch.setattr(messages, "SOURCES", ("engine",))
    monkeypatch.setattr(messages, "LOCALE_DIR", tmp_path / "locale")
    for code in i18n.LANGUAGES:
        catalog = messages.read_from(ROOT, code)
        catalog.add("gone from the code", "x")
        messages.write(code, catalog)
    found = list(messages.problems(tmp_path))
    for code in i18n.LANGUAGES:
        assert f"{code}: missing '{{seat}} is new here' (engine/m.py:2)" in found
        assert f"{code}: 'gone from the code' is in the catalog but not in the code" in found
    # A translation that loses or misspells a placeholder.
    catalog = messages.read("th")
    catalog.add("{seat} is new here", "{sit} อยู่ที่นี่")
    messages.write("th", catalog)
    assert "th: '{seat} is new here': placeholders ['sit'], not ['seat']" in list(
        messages.problems(tmp_path)
    )


def test_compiled_catalogs_say_what_the_po_files_say():
    # Read back by gettext, every .mo `make` compiled (i18n/msgfmt.py) against Babel's reading of
    # its .po; tests/packaging checks that the built package carries them.
    for code in i18n.LANGUAGES:
        po = messages.po_path(code)
        mo = po.with_suffix(".mo")
        assert mo.is_file(), f"{mo} missing: `make` compiles it"
        with po.open("rb") as fh:
            source = read_po(fh)
        with mo.open("rb") as fh:
            compiled = gettext.GNUTranslations(fh)
        for message in source:
            if not message.id or not all(message.string if message.pluralizable else [1]):
                continue
            if message.pluralizable:
                for n in (0, 1, 2, 3, 6, 11, 20, 101):
                    form = message.string[compiled.plural(n)]
                    assert compiled.ngettext(*message.id, n) == form, (code, message.id, n)
            elif message.string:
                assert compiled.gettext(message.id) == message.string, (code, message.id)


@pytest.mark.parametrize(
    ("code", "forms"),
    [
        ("en", {0: "0 cards", 1: "1 card", 2: "2 cards"}),
        ("th", {0: "0 ใบ", 1: "1 ใบ", 7: "7 ใบ"}),
        ("zh_Hant", {1: "1 張牌", 2: "2 張牌"}),
        ("ro", {1: "1 carte", 2: "2 cărți", 19: "19 cărți", 20: "20 de cărți", 101: "101 cărți"}),
        (
            "cy",
            {0: "0 cardiau", 1: "1 cerdyn", 2: "2 gerdyn", 3: "3 cherdyn", 6: "6 cherdyn"},
        ),
    ],
)
def test_plural_forms_follow_each_language(code, forms):
    lang = i18n.language(code)
    for n, text in forms.items():
        assert lang.ngettext("{n} card", "{n} cards", n).format(n=n) == text


@pytest.mark.parametrize("code", i18n.LANGUAGES)
@pytest.mark.parametrize("value", [0, 7, 999, 1000, 1234567, -4321, 0.5, 12.25, 1234.5])
def test_numbers_are_written_as_cldr_writes_them(code, value):
    assert format_number(value, code) == format_decimal(value, locale=code)
    assert format_number(value, code, 2) == format_decimal(value, "#,##0.00", locale=code)


@pytest.mark.parametrize("code", i18n.LANGUAGES)
@pytest.mark.parametrize("share", [0, 0.005, 0.46, 1, 12.3456])
def test_percentages_are_written_as_cldr_writes_them(code, share):
    pattern = Locale.parse(code).percent_formats[None].pattern  # '#,##0%', Romanian '#,##0\xa0%'
    assert format_percent(share, code, 0) == babel_percent(share, pattern, locale=code)
    one = pattern.replace("0%", "0.0%").replace("0\xa0%", "0.0\xa0%")
    assert format_percent(share, code) == babel_percent(share, one, locale=code)


def test_columns_line_up_by_terminal_cells():
    assert width("萬用牌") == 6  # wide characters
    assert width("ไพ่ทิ้ง") == 4  # Thai vowels above and tone marks take no cell
    assert width("Gwyllt") == 6


@pytest.mark.parametrize(
    ("tag", "code"),
    [
        ("th_TH.UTF-8", "th"),
        ("zh_TW.UTF-8", "zh_Hant"),
        ("zh-Hant", "zh_Hant"),
        ("zh_HK", "zh_Hant"),
        ("zh_CN.UTF-8", None),  # Simplified Chinese: no catalog
        ("ro_RO", "ro"),
        ("cy_GB.UTF-8@euro", "cy"),
        ("en_US.UTF-8", "en"),
        ("de_DE.UTF-8", None),
        ("C", None),
    ],
)
def test_locale_names_map_to_our_languages(tag, code):
    assert i18n.normalize(tag) == code


def test_the_environment_chooses_as_gettext_does():
    env = i18n.from_environment
    assert env({}) == "en"
    assert env({"LANG": "cy_GB.UTF-8"}) == "cy"
    assert env({"LANG": "cy_GB.UTF-8", "LC_MESSAGES": "ro_RO.UTF-8"}) == "ro"
    assert env({"LANG": "ro_RO.UTF-8", "LC_ALL": "th_TH.UTF-8"}) == "th"
    assert env({"LANGUAGE": "de:zh_TW", "LANG": "en_GB.UTF-8"}) == "zh_Hant"
    assert env({"LANGUAGE": "th", "LC_ALL": "C"}) == "en"  # C ignores LANGUAGE
    assert env({"LANG": "fr_FR.UTF-8"}) == "en"


def test_lang_option_is_taken_off_the_command_line():
    assert i18n.take_lang(["table", "--lang", "th", "--port", "none"]) == (
        "th",
        ["table", "--port", "none"],
    )
    assert i18n.take_lang(["--lang=zh-TW", "sim"]) == ("zh_Hant", ["sim"])
    assert i18n.take_lang(["x", "--", "--lang", "de"]) == (None, ["x", "--", "--lang", "de"])
    with pytest.raises(i18n.LanguageError, match=r"use one of en, th, zh_Hant, ro, cy"):
        i18n.take_lang(["--lang", "de"])
    with pytest.raises(i18n.LanguageError, match=r"--lang needs a language"):
        i18n.take_lang(["--lang"])


def test_no_module_that_translates_rebinds_the_underscore():
    """`for _ in ...` or `a, _ = ...` in a module that imports `_` would turn the next message
    into a TypeError (str is not callable) in that scope."""
    bad = []
    for source in messages.SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            imports = any(
                isinstance(node, ast.ImportFrom)
                and node.module == "i18n"
                and any(a.name == "_" for a in node.names)
                for node in tree.body
            )
            if not imports:
                continue
            # A comprehension's variable stays inside it: harmless.
            inside = {
                id(name)
                for comp in ast.walk(tree)
                if isinstance(comp, ast.comprehension)
                for name in ast.walk(comp.target)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Name)
                    and node.id == "_"
                    and isinstance(node.ctx, ast.Store)
                    and id(node) not in inside
                ):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")

    assert bad == []


@pytest.mark.parametrize(
    ("header", "code"),
    [
        ("th-TH,th;q=0.9,en;q=0.8", "th"),
        ("zh-HK", "zh_Hant"),
        ("zh-CN,zh;q=0.9", "en"),  # Simplified Chinese: no catalog
        ("de,ro;q=0.7,cy;q=0.8", "cy"),
        ("en;q=0.2,ro", "ro"),
        ("cy;q=0,ro;q=0.1", "ro"),
        ("*", "en"),
        ("", "en"),
        (None, "en"),
        ("th;q=bogus,ro", "ro"),
    ],
)
def test_a_browser_gets_the_language_it_prefers(header, code):
    assert i18n.from_accept_language(header) == code


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_launcher_help_and_usage_errors_in_each_language(code, capsys):
    from firmware.cli import main as launcher
    from tests.conftest import run_main

    t = i18n.language(code).gettext
    exit_code, out, _ = run_main(launcher, ["--lang", code, "config", "--help"], capsys)
    assert exit_code == 0 and out.startswith(t("usage: ") + "launcher config")
    assert (
        t("validate a config file (exit 0 if good, 78 with one line naming the problem)")[:12]
        in out
    )
    exit_code, _, err = run_main(launcher, ["--lang", code, "--bogus"], capsys)
    said = t("unknown option {arg!r}; see {prog} --help").format(arg="--bogus", prog="launcher")
    assert exit_code == 2 and err == f"launcher: error: {said}\n"


@pytest.mark.parametrize(
    ("checkout", "advice"),
    [(True, "run `make` in the checkout"), (False, "this installed package lacks its catalogs")],
)
def test_a_missing_catalog_says_what_to_do_in_a_checkout_and_in_an_installed_package(
    tmp_path, monkeypatch, checkout, advice
):
    root = tmp_path / ("checkout" if checkout else "site-packages")
    locale = root / "i18n" / "locale"
    locale.mkdir(parents=True)
    if checkout:
        (root / "Makefile").write_text("all:\n")
    monkeypatch.setattr(i18n, "LOCALE_DIR", locale)
    i18n.language.cache_clear()
    try:
        with pytest.raises(i18n.LanguageError) as caught:
            i18n.choose(["--lang", "th", "--help"])
    finally:
        i18n.language.cache_clear()
    message = str(caught.value)
    missing = locale / "th" / "LC_MESSAGES" / "unoattack.mo"
    assert message.startswith(f"--lang th: its catalog is not compiled ({missing} is missing); ")
    assert advice in message and ("make" in message) == checkout and "\n" not in message
