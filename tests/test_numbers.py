"""Every number a lesson prints follows its language's rule (course_helpers.numbers)."""

from __future__ import annotations

import numpy as np
import pytest
from babel.numbers import format_decimal, format_percent

from course_helpers import numbers
from course_helpers.languages import ALL, language

pytestmark = pytest.mark.unit

NBSP, NNBSP = "\u00a0", "\u202f"
VALUES = [0, 7, 999, 1000, 12_345, 150_000, 1_234_567, -4, -0.62, 0.101, 19.1, 1234.5, -98765.4321]


@pytest.mark.parametrize("code", ["en", "pt-br", "fr"])
@pytest.mark.parametrize("decimals", [0, 1, 3])
def test_cldr_languages_write_numbers_as_babel_does(code, decimals):
    cldr = language(code).cldr_locale
    pattern = "#,##0" + ("." + "0" * decimals if decimals else "")
    for value in VALUES:
        expected = format_decimal(value, format=pattern, locale=cldr)
        assert numbers.number(value, decimals, code) == expected, (code, value)


@pytest.mark.parametrize("code", ["en", "pt-br", "fr"])
def test_cldr_languages_write_percentages_as_babel_does(code):
    for fraction in (0, 0.4, 0.955, 1):
        assert numbers.percent(fraction, 0, code) == format_percent(
            fraction, locale=language(code).cldr_locale
        )


def test_spanish_follows_its_glossary_a_decimal_point_and_groups_from_five_digits():
    assert numbers.number(1000, language="es") == "1000"
    assert numbers.number(20_000, language="es") == f"20{NBSP}000"
    assert numbers.number(0.02, 2, "es") == "0.02"
    assert numbers.number(1_234_567.5, 1, "es") == f"1{NBSP}234{NBSP}567.5"
    assert numbers.percent(0.95, language="es") == f"95{NBSP}%"


def test_the_lessons_language_is_the_default(monkeypatch):
    from course_helpers import i18n

    monkeypatch.setattr(i18n, "_language", "pt-br")
    assert numbers.number(150_000) == "150.000"  # not "150,000", which reads as 150 here
    monkeypatch.setattr(i18n, "_language", "en")
    assert numbers.number(150_000) == "150,000"


def test_without_decimals_a_number_is_written_as_python_writes_it():
    assert numbers.number(3, language="fr") == "3"
    assert numbers.number(3.0, language="fr") == "3"
    assert numbers.number(0.1 + 0.2, language="fr") == "0,30000000000000004"
    assert numbers.number(2.5e-05, language="fr") == "2,5e-05"
    assert numbers.number(float("nan"), 2, "fr") == "nan"


def test_numpy_and_tensorflow_scalars_are_numbers():
    import tensorflow as tf

    assert numbers.number(np.float32(23.4), 1, "pt-br") == "23,4"
    assert numbers.number(np.int64(10_000), language="pt-br") == "10.000"
    assert numbers.number(tf.constant(-325.61), 2, "fr") == "-325,61"


def test_a_float32_is_written_in_its_own_shortest_form():
    import tensorflow as tf

    # repr(float(np.float32(0.0125))) would be 0.012500000186264515.
    assert numbers.number(np.float32(0.0125), language="fr") == "0,0125"
    assert numbers.number(tf.constant(0.0125), language="pt-br") == "0,0125"
    assert numbers.number(np.float64(0.1), language="en") == "0.1"


def test_a_list_is_separated_so_that_a_decimal_comma_cannot_be_misread():
    values = [0.0, 1 / 3, 2 / 3]
    assert numbers.number_list(values, 3, "en") == "0.000, 0.333, 0.667"
    assert numbers.number_list(values, 3, "pt-br") == "0,000; 0,333; 0,667"
    assert numbers.number_list(values, 3, "fr") == "0,000\u202f; 0,333\u202f; 0,667"
    assert numbers.number_list(values, 3, "es") == "0.000, 0.333, 0.667"


@pytest.mark.parametrize("bad", [-1, 1.5, "2"])
def test_decimals_must_be_a_whole_number(bad):
    with pytest.raises(ValueError, match="decimals must be a whole number"):
        numbers.number(1.0, bad, "en")


def test_every_language_has_a_style():
    assert set(numbers.STYLES) == {entry.code for entry in ALL}


@pytest.mark.parametrize(
    "language, written",
    [
        ("en", "27 November 2026"),
        ("fr", "27 novembre 2026"),
        ("es", "27 de noviembre de 2026"),
        ("pt-br", "27 de novembro de 2026"),
    ],
)
def test_a_date_is_written_as_the_language_writes_it(language, written):
    """The date a stored result was made, as a reader of the lesson's language reads it."""
    assert numbers.date("2026-11-27T02:39:03+00:00", language=language) == written
