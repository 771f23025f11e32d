"""The course's languages, defined once.

Everything that depends on the list of languages reads it from here: the helpers'
messages (:mod:`course_helpers.i18n`), the translation tooling (folders under
``notebooks/`` and ``locales/``, the catalogs' ``Language`` header), the badges table of
the README, the grading feedback and the JupyterLab language packs in the pins. Adding a
language starts with one line in :data:`ALL`.

>>> [language.code for language in ALL]
['en', 'pt-br', 'es', 'fr']
>>> language("pt-br").locale
'pt_BR'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """One language of the course."""

    #: The folder name under ``notebooks/`` and ``locales/``, and what lessons pass to
    #: ``course.setup(language=...)``.
    code: str
    #: The gettext locale: the ``Language`` header of its catalogs.
    locale: str
    #: Its name in itself, as the README's badges table shows it.
    name: str
    #: The PyPI distribution that translates JupyterLab's own menus (Settings > Language);
    #: ``None`` for English, JupyterLab's source language. requirements.in lists each
    #: (tests/test_binder.py checks it).
    lab_language_pack: str | None
    #: The locale that pack registers with JupyterLab.
    lab_locale: str
    #: The CLDR locale (Babel's) whose dates and numbers follow the course's typography in
    #: this language: British dates in English (25 November 2026), and a decimal point in
    #: Spanish, as its glossary asks (29.8 min).
    cldr_locale: str


#: English first: it is the source, and needs no catalog.
ALL: tuple[Language, ...] = (
    Language("en", "en", "English", None, "en", "en_GB"),
    Language(
        "pt-br", "pt_BR", "Português (Brasil)", "jupyterlab-language-pack-pt-br", "pt_BR", "pt_BR"
    ),
    Language("es", "es", "Español", "jupyterlab-language-pack-es-es", "es_ES", "es_419"),
    Language("fr", "fr", "Français", "jupyterlab-language-pack-fr-fr", "fr_FR", "fr"),
)

#: Every language's code, English first.
LANGUAGES: tuple[str, ...] = tuple(entry.code for entry in ALL)
#: The languages translated from English.
TRANSLATED: tuple[str, ...] = LANGUAGES[1:]


def language(code: str) -> Language:
    """The language whose code is ``code``; a :class:`ValueError` lists the choices.

    >>> language("fr").name
    'Français'
    """
    for entry in ALL:
        if entry.code == code:
            return entry
    raise ValueError(f"Unknown language {code!r}. Choose one of: {', '.join(LANGUAGES)}.")


def check_language(code: str) -> str:
    """``code`` itself, once it is known to be one of the course's languages."""
    return language(code).code
