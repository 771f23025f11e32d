"""Every command that reads a catalog refuses what `msgfmt --check` refuses, naming the line."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from course_tools.l10n import catalogs, po_syntax

pytestmark = pytest.mark.unit

HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: fr\\n"\n\n'
ENTRY = 'msgctxt "a"\nmsgid "One"\nmsgstr "{}"\n'

BROKEN = {
    # name: (catalog text, line msgfmt and we name, words of our message)
    "unclosed quote": (
        HEADER + 'msgctxt "a"\nmsgid "One"\nmsgstr "Un\n',
        8,
        "no closing double quote",
    ),
    "unclosed continuation": (
        HEADER + 'msgctxt "a"\nmsgid "One"\nmsgstr ""\n"Un deux\n"trois"\n',
        9,
        "no closing double quote",
    ),
    "unescaped inner quote": (HEADER + ENTRY.format('Un "deux" trois'), 8, "closing quote"),
    "duplicate entry": (
        HEADER + ENTRY.format("Un") + "\n" + ENTRY.format("Une"),
        10,
        "duplicate message definition: the entry at line 6",
    ),
    "duplicate of an obsolete entry": (
        HEADER + ENTRY.format("Un") + '\n#~ msgctxt "a"\n#~ msgid "One"\n#~ msgstr "Une"\n',
        10,
        "duplicate message definition",
    ),
    "missing msgstr": (
        HEADER + 'msgctxt "a"\nmsgid "One"\n\nmsgctxt "b"\nmsgid "Two"\nmsgstr "Deux"\n',
        9,
        "has no msgstr",
    ),
    "invalid escape": (HEADER + ENTRY.format("Un \\q"), 8, "invalid escape"),
    "stray text": (HEADER + ENTRY.format("Un") + "bonjour\n", 9, "not gettext"),
    "newline in msgid only": (
        HEADER + 'msgctxt "a"\nmsgid "One\\n"\nmsgstr "Un"\n',
        6,
        "do not both end with a newline",
    ),
}
VALID = {
    "plain": HEADER + ENTRY.format("Un"),
    "same English in two cells": HEADER
    + ENTRY.format("Un")
    + '\nmsgctxt "b"\nmsgid "One"\nmsgstr "Une"\n',
    "fuzzy with previous msgid": HEADER + '#, fuzzy\n#| msgid "Onne"\n' + ENTRY.format("Un"),
    "wrapped strings and escapes": HEADER + 'msgctxt "a"\nmsgid ""\n"One \\"two\\" "\n"three"\n'
    'msgstr ""\n"Un « deux » "\n"trois \\\\ \\t"\n',
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_catalog_is_refused_naming_its_line(name):
    text, line, words = BROKEN[name]
    with pytest.raises(po_syntax.PoSyntaxError) as error:
        po_syntax.validate(text)
    assert error.value.line == line and words in str(error.value)


@pytest.mark.parametrize("name", VALID)
def test_a_valid_catalog_is_accepted(name):
    po_syntax.validate(VALID[name])


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext is not installed")
@pytest.mark.parametrize("name", [*BROKEN, *VALID])
def test_msgfmt_check_agrees(name, tmp_path):
    text = BROKEN[name][0] if name in BROKEN else VALID[name]
    path = tmp_path / "x.po"
    path.write_text(text, encoding="utf-8")
    result = subprocess.run(
        ["msgfmt", "--check", "-o", "/dev/null", str(path)], capture_output=True, text=True
    )
    assert (result.returncode != 0) == (name in BROKEN), result.stderr


def test_every_command_refuses_the_catalog_and_changes_no_file(tmp_path):
    """update, build, status and check all read catalogs: none may damage one."""
    from course_tools.l10n import build, check
    from test_l10n_catalogs import CELLS, make_project

    make_project(tmp_path, CELLS)  # every language: a failing update or build changes none
    path = catalogs.catalog_path(tmp_path, "fr", "01_demo")
    broken = path.read_text(encoding="utf-8").replace('msgstr ""\n\n', 'msgstr "Un\n\n', 1)
    path.write_text(broken, encoding="utf-8")
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    for command in (
        lambda: catalogs.update(tmp_path),
        lambda: build.build(tmp_path),
        lambda: catalogs.status(tmp_path),
        lambda: check.check(tmp_path),
    ):
        with pytest.raises(
            catalogs.CatalogError,
            match=r"locales/fr/01_demo\.po, line \d+: this string has no "
            "closing double quote",
        ):
            command()
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == files
