"""Numbers as the learner's language writes them: its decimal mark, digit groups and percent.

A lesson in Portuguese that prints ``150,000`` says 150 to its reader. Every number a
lesson or a helper shows goes through :func:`number` or :func:`percent`, which follow the
rule of the lesson's language, the same rule its glossary (``locales/<lang>/GLOSSARY.md``)
sets for the prose:

>>> from course_helpers.i18n import set_language
>>> set_language("pt-br"); number(150_000), number(0.101, 3), percent(0.4)
('150.000', '0,101', '40%')
>>> set_language("fr"); number(1234.5, 1), percent(0.4)
('1\u202f234,5', '40\u00a0%')
>>> set_language("en"); number(-2.08451, 2)
'-2.08'

Three of the styles are CLDR's (``tests/test_numbers.py`` compares them with Babel's data
for each language's ``cldr_locale``). Spanish is the exception: its glossary writes a
decimal point, as the code does, and groups digits with a no-break space from five digits
on (1000, 20 000), the RAE's recommendation, which no CLDR locale combines. That is why the
styles are written out here, rather than read from Babel at run time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import SupportsFloat

from course_helpers import i18n
from course_helpers.languages import check_language

NBSP, NNBSP = "\u00a0", "\u202f"


@dataclass(frozen=True)
class NumberStyle:
    """How one language writes numbers."""

    #: Between the whole part and the decimals.
    decimal: str
    #: Between groups of three digits.
    group: str
    #: A whole part is grouped once it has at least this many digits (4: 1,000; 5: 1000).
    group_from: int
    #: A percentage, from the number already written: "{}%" or "{}" + NBSP + "%".
    percent: str
    #: Between the numbers of a list: "0.5, 0.25" but "0,5; 0,25" where the comma is the
    #: decimal mark.
    list_separator: str = ", "


STYLES: dict[str, NumberStyle] = {
    "en": NumberStyle(".", ",", 4, "{}%"),
    "pt-br": NumberStyle(",", ".", 4, "{}%", "; "),
    "es": NumberStyle(".", NBSP, 5, "{}" + NBSP + "%"),
    "fr": NumberStyle(",", NNBSP, 4, "{}" + NBSP + "%", NNBSP + "; "),
}


def style(language: str | None = None) -> NumberStyle:
    """The style of ``language``, or of the lesson's language (:func:`i18n.set_language`)."""
    return STYLES[check_language(language) if language else i18n.current_language()]


def number(value: SupportsFloat, decimals: int | None = None, language: str | None = None) -> str:
    """``value`` written in the lesson's language, with ``decimals`` digits after the mark.

    Args:
        value: an int, a float, or anything ``float()`` accepts (a NumPy or TensorFlow
            scalar included).
        decimals: digits after the decimal mark; ``None`` writes a whole number as it is
            and any other number in the shortest form that reads back as the same value
            (``repr``, as ``f"{x}"`` does; for a float32, its own shortest form).
        language: a course language; by default the one :func:`course_helpers.setup` chose.
    """
    if decimals is not None and (not isinstance(decimals, int) or decimals < 0):
        raise ValueError(f"decimals must be a whole number, 0 or more, got {decimals!r}.")
    if isinstance(value, bool):
        raise TypeError("number() writes numbers, not True or False.")
    if isinstance(value, int):
        written = str(value) if decimals is None else f"{value:.{decimals}f}"
    else:
        shortest = _shortest(value)
        value = float(value)
        if not math.isfinite(value):
            return str(value)  # nan, inf and -inf read the same in every language
        if decimals is None:
            written = str(int(value)) if value.is_integer() and abs(value) < 1e16 else shortest
        else:
            written = f"{value:.{decimals}f}"
    if "e" in written:
        return written.replace(".", style(language).decimal)  # 1e-05: science, left as is
    return _localize(written, style(language))


def _shortest(value: SupportsFloat) -> str:
    """The shortest digits that give ``value`` back at its own precision: 0.0125 for a
    float32 0.0125, where ``repr(float(...))`` would write 0.012500000186264515."""
    if hasattr(value, "numpy"):  # a TensorFlow scalar: its NumPy value
        value = value.numpy()
    if type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
        return str(value)  # NumPy writes a scalar in the shortest form of its own dtype
    return repr(float(value))


def number_list(
    values: Iterable[SupportsFloat], decimals: int | None = None, language: str | None = None
) -> str:
    """``values`` written as :func:`number` writes each, separated as the language separates
    numbers in a list: "0.5, 0.25" in English, "0,5; 0,25" in Portuguese."""
    return style(language).list_separator.join(number(v, decimals, language) for v in values)


def percent(fraction: SupportsFloat, decimals: int = 0, language: str | None = None) -> str:
    """``fraction`` (0.4) as a percentage in the lesson's language ("40%", "40 %")."""
    return style(language).percent.format(number(100 * float(fraction), decimals, language))


def _localize(written: str, chosen: NumberStyle) -> str:
    """Rewrite Python's "-1234.5" with the style's marks and groups."""
    sign = "-" if written.startswith("-") else ""
    whole, _, decimals = written.lstrip("-").partition(".")
    if len(whole) >= chosen.group_from:
        head = len(whole) % 3 or 3
        whole = chosen.group.join(
            [whole[:head]] + [whole[i : i + 3] for i in range(head, len(whole), 3)]
        )
    return sign + whole + (chosen.decimal + decimals if decimals else "")


#: Each language's long date (CLDR's ``d MMMM y``, with "de" in Spanish and Portuguese).
DATE_PATTERNS = {
    "en": "{day} {month} {year}",
    "fr": "{day} {month} {year}",
    "es": "{day} de {month} de {year}",
    "pt-br": "{day} de {month} de {year}",
}


def date(iso: str, language: str | None = None) -> str:
    """A date (``2026-11-27``, or the start of an ISO timestamp) as the language writes it:
    27 November 2026, 27 novembre 2026, 27 de noviembre de 2026, 27 de novembro de 2026."""
    chosen = check_language(language or i18n.current_language())
    year, month, day = (int(part) for part in iso[:10].split("-"))
    _ = i18n.translator(chosen)
    months = (
        _("January"),
        _("February"),
        _("March"),
        _("April"),
        _("May"),
        _("June"),
        _("July"),
        _("August"),
        _("September"),
        _("October"),
        _("November"),
        _("December"),
    )
    return DATE_PATTERNS[chosen].format(day=day, month=months[month - 1], year=year)
