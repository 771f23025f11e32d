"""The lessons' data-flow pictures: drawn in the lesson's language, every word legible."""

from __future__ import annotations

import matplotlib
import pytest

from course_helpers import diagrams, i18n
from course_helpers.languages import LANGUAGES

PICTURES = ["replay_buffer_flow", "dqn_loop", "sac_actor_learner", "distributed_sac"]


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n.set_language("en")


def texts_and_boxes(figure):
    renderer = figure.canvas.get_renderer()
    ax = figure.axes[0]
    boxes = {
        patch.get_gid().removeprefix("box:"): patch.get_window_extent(renderer)
        for patch in ax.patches
        if (patch.get_gid() or "").startswith("box:")
    }
    texts = [
        (text.get_gid() or "", text.get_text(), text.get_window_extent(renderer))
        for text in ax.texts
    ]
    return boxes, texts


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", PICTURES)
def test_every_label_fits_its_box_and_no_arrow_label_covers_a_box(name, language, close_figures):
    i18n.set_language(language)
    figure = getattr(diagrams, name)()
    boxes, texts = texts_and_boxes(figure)
    page = figure.bbox
    for gid, text, extent in texts:
        assert page.contains(extent.x0, extent.y0) and page.contains(extent.x1, extent.y1), (
            f"{name} ({language}): {text!r} runs off the picture"
        )
        if gid.startswith("box-text:"):
            box = boxes[gid.removeprefix("box-text:")]
            assert (
                box.x0 <= extent.x0
                and extent.x1 <= box.x1
                and box.y0 <= extent.y0
                and extent.y1 <= box.y1
            ), f"{name} ({language}): {text!r} overflows its box"
        elif gid == "arrow-label":
            covered = [box for box, area in boxes.items() if area.overlaps(extent)]
            assert not covered, f"{name} ({language}): arrow label {text!r} covers {covered}"


@pytest.mark.parametrize("name", PICTURES)
def test_a_french_picture_has_french_words(name, close_figures):
    english = [text for _, text, _ in texts_and_boxes(getattr(diagrams, name)())[1]]
    i18n.set_language("fr")
    french = [text for _, text, _ in texts_and_boxes(getattr(diagrams, name)())[1]]
    assert len(french) == len(english)
    assert sum(a != b for a, b in zip(english, french)) >= len(english) // 2


def test_pictures_use_the_headless_backend():
    assert matplotlib.get_backend().lower() == "agg"
