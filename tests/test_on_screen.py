"""The check that fails a translated lesson's cell when it shows English (tests/on_screen.py)."""

import pytest

import on_screen


def stdout(text):
    return [{"output_type": "stream", "name": "stdout", "text": text}]


def test_a_french_line_with_french_numbers_passes():
    assert on_screen.problems("fr", stdout("pas 10\u202f000 : gain moyen 200,0\n")) == []


@pytest.mark.parametrize(
    "language, text, number",
    [
        ("fr", "gain moyen 23.4\n", "23.4"),
        ("pt-br", "perda 0.101\n", "0.101"),
        ("es", "pérdida 0,523\n", "0,523"),
    ],
)
def test_a_number_in_english_format_is_reported(language, text, number):
    assert on_screen.problems(language, stdout(text)) == [f"a number in English format: {number!r}"]


def test_portuguese_groups_of_thousands_and_versions_are_not_english_numbers():
    text = (
        "passo 10.000; 2 núcleos, AMD EPYC, Python 3.11.7; 1.234.567 itens\n"
        "entropia estimada: 1.055,12, entropia alvo: -4,00\n"
    )
    assert on_screen.problems("pt-br", stdout(text)) == []


def test_a_helpers_english_unit_in_a_progress_bar_is_reported():
    bar = [
        {
            "output_type": "display_data",
            "data": {"text/plain": "Treinamento: 40%| 4/10 [00:01, 3,2 step/s]"},
        }
    ]
    assert on_screen.problems("pt-br", bar) == ["English text from the helpers: 'step/s'"]


def test_a_helpers_english_message_is_reported():
    text = "The measured runs of 02 are damaged: every run needs one average return\n"
    assert any("English text from the helpers" in p for p in on_screen.problems("fr", stdout(text)))


def test_code_reprs_and_log_lines_are_left_out():
    outputs = stdout(
        "array([0.5, 1.25], dtype=float32)\nTensorSpec(shape=(4,), dtype=tf.float32)\n"
    )
    outputs.append({"output_type": "stream", "name": "stderr", "text": "W0.5 absl: step/s 1.5\n"})
    assert on_screen.problems("fr", outputs) == []


def test_a_spec_printed_over_several_lines_is_code_not_prose():
    spec = (
        "BoundedArraySpec(shape=(28,), dtype=dtype('float32'), name='observation', "
        "minimum=[-3.1515927 -3.1515927\n  -167.72488], maximum=[3.1515927\n 167.72488])\n"
    )
    assert on_screen.problems("fr", stdout("Spécification :\n" + spec)) == []


def test_figures_paths_and_shapes_in_library_messages_are_not_numbers():
    text = (
        "<Figure size 522.5x300 with 1 Axes>\n"
        "urdf_root=/usr/lib/python3.11/site-packages/pybullet_data\n"
        "InvalidArgumentError: shape [320,3]\n"
    )
    assert on_screen.problems("es", stdout(text)) == []
    assert on_screen.problems("fr", stdout(text)) == []
