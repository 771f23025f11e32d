"""The helpers' own messages in the learner's language.

Lessons pass their language to :func:`course_helpers.setup`; text the helpers write into
a notebook (a progress bar's label, a self-check's feedback, a plot's axis) comes from the
package's gettext catalogs in ``locale/<lang>/LC_MESSAGES/course_helpers.po``. The
course's tooling reads the same catalogs for what it writes to learners (the badges, the
grading feedback, the note on a paragraph whose translation is being updated), so each
language has one catalog of the course's own words.
They are read with polib, so no compiled .mo files need to be built or committed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import polib

from course_helpers.languages import check_language

_LOCALE_DIR = Path(__file__).parent / "locale"


@cache
def translator(language: str) -> Callable[[str], str]:
    """A gettext-style function for ``language``: the translation, or the English text."""
    path = catalog_path(language)
    if language == "en" or not path.exists():
        return lambda text: text
    translations = {
        entry.msgid: entry.msgstr
        for entry in polib.pofile(str(path))
        if entry.translated() and not entry.obsolete
    }
    return lambda text: translations.get(text, text)


_language = "en"


def set_language(language: str) -> None:
    """Choose the language of the helpers' text; :func:`course_helpers.setup` calls this."""
    global _language
    _language = check_language(language)


def current_language() -> str:
    """The language chosen by :func:`set_language` ("en" until a lesson chooses)."""
    return _language


def gettext(text: str) -> str:
    """``text`` in the language chosen by :func:`set_language` (English if untranslated)."""
    return translator(_language)(text)


def gettext_noop(text: str) -> str:
    """Mark ``text`` for the catalogs without translating it yet (gettext's convention):
    for text written before the language is known, translated later by :func:`gettext`."""
    return text


def catalog_path(language: str) -> Path:
    """The helpers' catalog of ``language`` (``locale/<lang>/LC_MESSAGES/course_helpers.po``)."""
    return _LOCALE_DIR / check_language(language) / "LC_MESSAGES" / "course_helpers.po"
