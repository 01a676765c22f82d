"""`i18n.msgfmt`, the one .po -> .mo compiler (the package build, `make`): what gettext reads
back is what the .po says, for any text Babel writes; a .po it cannot read is one error naming
the file and the line."""

from __future__ import annotations

import gettext
import io

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po
from hypothesis import given
from hypothesis import strategies as st

from i18n import msgfmt

# Any text a message may hold: quotes, backslashes, tabs, newlines, Thai marks, Han, emoji.
TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\x04"),
    min_size=1,
    max_size=30,
)
PLURAL_FORMS = "nplurals=3; plural=(n==1 ? 0 : (n==0 || (n%100 > 0 && n%100 < 20)) ? 1 : 2);"


def _compiled(po: bytes) -> gettext.GNUTranslations:
    return gettext.GNUTranslations(io.BytesIO(msgfmt.mo_bytes(msgfmt.parse(po, "t.po"))))


def _po(catalog: Catalog) -> bytes:
    catalog.mime_headers = [("Plural-Forms", PLURAL_FORMS)]
    buf = io.BytesIO()
    write_po(buf, catalog, width=40)  # short lines: long strings are split over several lines
    return buf.getvalue()


@given(
    singles=st.dictionaries(TEXT, st.tuples(TEXT, st.booleans()), max_size=8),
    plurals=st.dictionaries(TEXT, st.tuples(TEXT, st.lists(TEXT, min_size=3, max_size=3))),
    contexts=st.dictionaries(st.tuples(TEXT, TEXT), TEXT, max_size=4),
)
def test_gettext_reads_back_what_the_po_says(singles, plurals, contexts):
    catalog = Catalog(locale="ro", domain="t")
    for msgid, (string, fuzzy) in singles.items():
        catalog.add(msgid, string, flags=("fuzzy",) if fuzzy else ())
    for singular, (plural, forms) in plurals.items():
        if singular not in singles and singular != plural:
            catalog.add((singular, plural), tuple(forms))
    for (context, msgid), string in contexts.items():
        catalog.add(msgid, string, context=context)
    compiled = _compiled(_po(catalog))

    assert compiled.info()["plural-forms"] == PLURAL_FORMS
    for message in catalog:
        if not message.id:
            continue
        if message.context:
            assert compiled.pgettext(message.context, message.id) == message.string
        elif message.pluralizable:
            for n in (0, 1, 2, 25):
                form = message.string[compiled.plural(n)]
                assert compiled.ngettext(*message.id, n) == form
        else:  # a fuzzy translation is not used: gettext says the English
            wanted = message.id if message.fuzzy else message.string
            assert compiled.gettext(message.id) == wanted


def test_untranslated_and_half_translated_messages_stay_english():
    po = (
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n"Plural-Forms: '
        f'{PLURAL_FORMS}\\n"\n\n'
        'msgid "card"\nmsgstr ""\n\n'
        'msgid "{n} card"\nmsgid_plural "{n} cards"\nmsgstr[0] "{n} carte"\nmsgstr[1] ""\n'
        'msgstr[2] "{n} de cărți"\n\n'
        '#~ msgid "old"\n#~ msgstr "vechi"\n'
    ).encode()
    compiled = _compiled(po)
    assert compiled.gettext("card") == "card"
    assert compiled.ngettext("{n} card", "{n} cards", 1) == "{n} card"
    assert compiled.gettext("old") == "old"
    assert list(msgfmt.parse(po)) == [b""]  # only the header


def test_escapes_are_read_as_c_writes_them():
    po = (
        b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        b'msgid "a\\tb\\n"\nmsgstr "\\"x\\" \\\\ \\101\\x42"\n'
    )
    assert _compiled(po).gettext("a\tb\n") == '"x" \\ AB'


@pytest.mark.parametrize(
    ("po", "error"),
    [
        (b'msgid "a"\nmsgstr "b"\nmsgid "a"\nmsgstr "c"\n', "t.po:3: message 'a' appears twice"),
        (b'msgid "a"\nmsgid "b"\nmsgstr ""\n', "t.po:2: msgid before a msgstr"),
        (b'msgid "a"\nmsgstr "b\n', "t.po:2: not a quoted string"),
        (b'msgid "a"\nmsgtxt "b"\n', "t.po:2: cannot read 'msgtxt \"b\"'"),
        (b'msgstr "b"\n', "t.po:1: msgstr without msgid"),
        (b'msgid "a"\nmsgid_plural "as"\nmsgstr "b"\n', "t.po:3: msgstr and msgid_plural"),
        (b'msgid "a"\n', "t.po:1: the last message has no msgstr"),
        (
            b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
            b'msgid "a"\nmsgstr "\xff"\n',
            "t.po: message 'a' is not UTF-8",
        ),
    ],
)
def test_a_po_it_cannot_read_is_one_error_with_file_and_line(po, error):
    with pytest.raises(msgfmt.PoError) as caught:
        msgfmt.parse(po, "t.po")
    assert str(caught.value).startswith(error)


def test_compile_po_writes_beside_the_po_or_where_asked(tmp_path):
    po = tmp_path / "x.po"
    po.write_bytes(b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n')
    assert msgfmt.compile_po(po) == tmp_path / "x.mo"
    elsewhere = msgfmt.compile_po(po, tmp_path / "build" / "y.mo")
    assert elsewhere.read_bytes() == (tmp_path / "x.mo").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "x.mo", "x.po"]
