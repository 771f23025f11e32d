"""Catalogs are written as GNU msgcat writes them, so saving in a PO editor changes only
what the translator changed, and the next `course l10n update` changes nothing back."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polib
import pytest

from course_tools.l10n import catalogs, po_format

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = sorted(
    [
        *ROOT.glob("locales/*/*.po"),
        *ROOT.glob("locales/templates/*.pot"),
        *ROOT.glob("src/course_helpers/locale/*/LC_MESSAGES/*.po"),
    ]
)
needs_msgcat = pytest.mark.skipif(
    shutil.which("msgcat") is None, reason="GNU gettext is not installed"
)


def msgcat(text: str) -> str:
    return subprocess.run(
        ["msgcat", "-"], input=text.encode(), capture_output=True, check=True
    ).stdout.decode()


@needs_msgcat
@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_catalog_of_the_course_is_formatted_exactly_as_msgcat_formats_it(path):
    ours = po_format.format_catalog(polib.pofile(str(path)))
    assert ours == msgcat(ours)


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_committed_catalogs_are_already_in_that_format(path):
    """Otherwise the next update would rewrite lines nobody changed."""
    assert path.read_text(encoding="utf-8") == po_format.format_catalog(polib.pofile(str(path)))


def test_long_strings_wrap_at_79_columns_after_spaces_and_after_each_newline():
    entry = polib.POEntry(msgctxt="cell", msgid="word " * 40 + "\nnext line", msgstr="")
    catalog = polib.POFile()
    catalog.append(entry)
    lines = po_format.format_catalog(catalog).splitlines()
    assert all(len(line) <= 79 for line in lines)
    start = lines.index('msgctxt "cell"') + 1
    assert lines[start] == 'msgid ""'
    assert lines[start + 1].endswith('word "') and lines[start + 2].startswith('"word')
    assert lines[start + 3].endswith('word \\n"') and lines[start + 4] == '"next line"'


@pytest.mark.parametrize(("end", "breaks"), [("…", True), (".", True), (")", False)])
def test_a_line_breaks_before_an_escaped_quote_only_where_gettext_breaks_it(end, breaks):
    """gettext finds breaks in the escaped text: an escape's backslash is a prefix (PR)."""
    entry = polib.POEntry(msgid="x" * 70 + " aaaa" + end + '"b', msgstr="")
    catalog = polib.POFile()
    catalog.append(entry)
    lines = po_format.format_catalog(catalog).splitlines()
    start = len(lines) - lines[::-1].index('msgid ""')  # the entry's, not the header's
    if breaks:
        assert lines[start].endswith(" aaaa" + end + '"') and lines[start + 1] == '"\\"b"'
    else:
        assert lines[start].endswith('x "') and lines[start + 1] == '"aaaa' + end + '\\"b"'


@needs_msgcat
def test_saving_in_a_po_editor_then_updating_changes_only_the_translators_edit(tmp_path):
    from test_l10n_catalogs import CELLS, make_project, translate_everything

    make_project(tmp_path, CELLS, ["fr"])
    translate_everything(tmp_path, "fr")
    path = catalogs.catalog_path(tmp_path, "fr", "01_demo")
    long = "Chaque tampon part d’une spécification de données, " * 4
    catalog = catalogs.read_catalog(path)
    next(e for e in catalog if e.msgctxt == "api" and e.msgid.startswith("Every")).msgstr = long
    catalogs.write_catalog(catalog, path)
    before = path.read_text(encoding="utf-8")
    # A translator edits one word and saves with a gettext tool (Poedit formats the same way).
    edited = msgcat(before.replace("Chaque tampon part", "Tout tampon part", 1))
    changed = [a for a, b in zip(before.splitlines(), edited.splitlines()) if a != b]
    assert len(changed) == 1 and len(before.splitlines()) == len(edited.splitlines())
    path.write_text(edited, encoding="utf-8")
    catalogs.update(tmp_path, ["fr"])
    assert path.read_text(encoding="utf-8") == edited
