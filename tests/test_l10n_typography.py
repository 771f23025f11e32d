"""Each language's typography, as its publishers set it, on the words only."""

from __future__ import annotations

import pytest

from course_tools.l10n import typography

pytestmark = pytest.mark.unit

NBSP, NNBSP = "\u00a0", "\u202f"


@pytest.mark.parametrize(
    "text, language, words",
    [
        (
            "Pourquoi ? Voici : un « tampon ».",
            "fr",
            [
                "narrow no-break space (U+202F), not a plain space, before '?'",
                "no-break space (U+00A0), not a plain space, before ':'",
                "no-break space (U+00A0) after '«'",
            ],
        ),
        ("Un mot;", "fr", ["narrow no-break space (U+202F) before ';'"]),
        ('Il dit "non".', "fr", ["« guillemets » instead of straight quotes"]),
        (
            "Por qué? Así : no.",
            "es",
            ["write '¿' where the phrase ending in '?' begins", "no space before ':'"],
        ),
        ("Un « búfer ».", "es", ["no space inside « »"]),
        (
            "Il collecte 300 000 pas.",
            "fr",
            ["narrow no-break space (U+202F), not a plain space, between a number's thousands"],
        ),
        (
            f"Durante 10{NNBSP}000 pasos.",
            "es",
            ["no-break space (U+00A0), not a narrow no-break space, between a number's thousands"],
        ),
        ('Ele disse "não".', "pt-br", ["“aspas curvas” instead of straight quotes"]),
    ],
)
def test_a_mistake_is_named_with_the_rule_it_breaks(text, language, words):
    found = " ".join(typography.problems(text, language))
    for phrase in words:
        assert phrase in found


@pytest.mark.parametrize(
    "text, language",
    [
        (f"Pourquoi{NNBSP}? Voici{NBSP}: un «{NBSP}tampon{NBSP}».", "fr"),
        ("Le code `a ? b : c` et $x : y$ et [lien](https://a.b/c?d=1) restent tels quels.", "fr"),
        ("¿Por qué? Así: «búfer».", "es"),
        (f"Il collecte 300{NNBSP}000 pas, soit 1{NNBSP}000 par épisode.", "fr"),
        (f"Durante 10{NBSP}000 pasos, y 1000 más.", "es"),
        ("Ele disse “não”: certo?", "pt-br"),
    ],
)
def test_correct_text_and_code_pass(text, language):
    assert typography.problems(text, language) == []


def test_text_copied_from_the_english_keeps_english_typography():
    english = 'See Cassirer et al. (2021). Reverb: A Framework For Experience Replay. Error "Received incompatible tensor".'
    french = 'Voir Cassirer et al. (2021). Reverb: A Framework For Experience Replay. Erreur "Received incompatible tensor".'
    assert typography.problems(french, "fr", english) == []


def test_french_spaces_are_set_where_they_belong_and_nowhere_else():
    text = "Pourquoi ? Voici: un « mot » ; et `x: y` puis https://a.b/c?d"
    fixed = typography.fix_french_spaces(text)
    assert (
        fixed
        == f"Pourquoi{NNBSP}? Voici{NBSP}: un «{NBSP}mot{NBSP}»{NNBSP}; et `x: y` puis https://a.b/c?d"
    )
    assert typography.problems(fixed, "fr") == []


@pytest.mark.parametrize(
    "english, french, mark",
    [
        # the English has "; `target_update_tau`", so the French ';' sat in a copied stretch
        (
            "copies of both (*target networks*); `target_update_tau` sets how slowly.",
            "copies des deux (*réseaux cibles*) ; `target_update_tau` règle leur lenteur.",
            "';'",
        ),
        # a copied error message right after the French colon
        (
            'It fails: "Received incompatible tensor at flattened index 0".',
            'Elle échoue : "Received incompatible tensor at flattened index 0".',
            "':'",
        ),
        # a copied paper title after the French question mark's plain space
        (
            "Why? Reverb: A Framework For Experience Replay.",
            "Pourquoi ? Reverb: A Framework For Experience Replay.",
            "'?'",
        ),
        # a link whose English text follows the colon
        (
            "See: [the TF-Agents guide to replay buffers](https://a.b/c).",
            "Voir : [the TF-Agents guide to replay buffers](https://a.b/c).",
            "':'",
        ),
    ],
)
def test_a_french_mark_before_text_copied_from_the_english_is_still_checked(english, french, mark):
    found = " ".join(typography.problems(french, "fr", english))
    assert f"not a plain space, before {mark}" in found
