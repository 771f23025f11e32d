"""Progress bars around the lessons' loops."""

import io

import pytest

from course_helpers.progress import progress


def test_progress_of_an_int_iterates_over_that_range_with_the_description():
    bar = progress(3, "Training", file=io.StringIO())
    assert bar.desc == "Training"
    assert list(bar) == [0, 1, 2]
    assert bar.total == 3


def test_progress_passes_an_iterable_through_unchanged():
    items = ["a", "b"]
    bar = progress(items, "Collecting", file=io.StringIO())
    assert list(bar) == items


def test_progress_forwards_tqdm_options_such_as_total_for_a_generator():
    bar = progress((i * i for i in range(4)), "Evaluating", total=4, file=io.StringIO())
    assert bar.total == 4
    assert list(bar) == [0, 1, 4, 9]


def test_progress_draws_the_description_and_the_count():
    out = io.StringIO()
    for _ in progress(3, "Training", file=out, mininterval=0):
        pass
    text = out.getvalue()
    assert "Training" in text
    assert "3/3" in text


def test_progress_options_override_the_defaults():
    bar = progress(2, "Training", mininterval=0, file=io.StringIO())
    assert bar.mininterval == 0
    bar.close()
    assert progress(2, "Training", file=io.StringIO()).mininterval == 0.5


@pytest.fixture
def in_language(monkeypatch):
    from course_helpers import i18n

    return lambda code: monkeypatch.setattr(i18n, "_language", code)


def drawn(**options) -> str:
    """The text of a bar of 25 calls, each counting 40 steps, after 10 calls."""
    bar = progress(25, "Training", file=io.StringIO(), mininterval=0, ncols=100, **options)
    bar.update(10)
    return str(bar)


def test_a_french_bar_writes_its_words_and_numbers_in_french(in_language):
    in_language("fr")
    text = drawn(unit="step", unit_scale=40)
    assert text.startswith("Entraînement\u00a0: 40\u00a0%|")  # not "Entraînement: 40%"
    assert "| 400/1\u202f000 [" in text  # not "1000" nor "1,000"
    assert " pas/s]" in text  # not "step/s"


def test_a_portuguese_bar_groups_thousands_with_a_point(in_language):
    in_language("pt-br")
    text = drawn(unit="episode", unit_scale=400)
    assert text.startswith("Treinamento:  40%|")
    assert "| 4.000/10.000 [" in text  # "10,000" would read as ten in Portuguese
    assert " episódio/s]" in text


def test_a_slow_bar_writes_seconds_per_unit_with_the_languages_decimal_mark(in_language):
    from course_helpers.progress import _localized_fields

    in_language("fr")
    fields = {"n": 1, "total": 5, "elapsed": 4.0, "rate": 0.25, "unit": "image"}
    fields.update(unit_scale=False, prefix="Enregistrement")
    assert _localized_fields(fields)["rate_l"] == "4,00 s/image"


def test_a_bar_without_a_total_writes_its_count_and_rate_in_the_language_too(in_language):
    # A video's frames are counted without a total: "1 234,50 image/s", not "1234.50image/s".
    in_language("fr")
    bar = progress(iter(range(5000)), "Filming", unit="frame", file=io.StringIO(), mininterval=0)
    bar.update(1234)
    text = str(bar)
    assert text.startswith("Tournage : 1 234 [") or ": 1 234 [" in text, text
    assert "/s]" in text and "frame" not in text and "1234" not in text, text


def test_an_english_bar_keeps_tqdms_layout():
    text = drawn()
    assert text.startswith("Training:  40%|")
    assert "| 10/25 [" in text and " it/s]" in text


def test_a_portuguese_postfix_shows_translated_labels_and_portuguese_numbers(in_language):
    in_language("pt-br")
    bar = progress(25, "Training", file=io.StringIO(), mininterval=0, ncols=200)
    bar.set_postfix(loss=0.5234, avg_return=23.4)
    assert bar.postfix == "perda: 0,523 · retorno médio: 23,4"  # not "loss=0.523"
    bar.close()


def test_a_french_postfix_puts_a_no_break_space_before_each_colon(in_language):
    import numpy as np

    in_language("fr")
    bar = progress(25, "Training", file=io.StringIO(), mininterval=0, ncols=200)
    bar.set_postfix(critic_loss=np.float32(12345.6), alpha=0.0123)
    assert bar.postfix == "perte du critique\u00a0: 12\u202f346 · α\u00a0: 0,0123"
    bar.close()


def test_a_postfix_keeps_an_unknown_label_and_a_text_value_as_they_are():
    bar = progress(25, "Training", file=io.StringIO(), mininterval=0)
    bar.set_postfix({"phase": "warm-up"}, episodes=3)
    assert bar.postfix == "phase: warm-up · episodes: 3"
    bar.close()


def run_driver(env, policy, observer, **limits):
    from tf_agents.drivers import py_driver

    py_driver.PyDriver(env, policy, [observer], **limits).run(env.reset())


def test_progress_observer_shows_no_bar_before_the_first_step():
    from course_helpers import progress_observer

    assert progress_observer(3, "Collecting").bar is None


def test_progress_observer_counts_every_step_a_driver_takes(cartpole, random_policy):
    from course_helpers import progress_observer

    observer = progress_observer(10, "Collecting")
    run_driver(cartpole, random_policy, observer, max_steps=4)
    bar = observer.bar
    assert bar is not None
    assert bar.n == 4 and bar.desc == "Collecting" and observer.completed == 0
    run_driver(cartpole, random_policy, observer, max_steps=6)
    assert observer.bar is None and observer.completed == 1


def test_progress_observer_fills_its_bar_exactly_when_the_driver_stops_across_episodes(
    cartpole, random_policy
):
    """A driver does not count the boundary between two episodes as a step; neither does
    the bar, so it never fills early and leaves a second, stray bar behind."""
    from course_helpers import progress_observer

    observer = progress_observer(300, "Collecting")  # random CartPole episodes: ~20 steps
    run_driver(cartpole, random_policy, observer, max_steps=299)
    assert observer.bar is not None and observer.bar.n == 299 and observer.completed == 0
    run_driver(cartpole, random_policy, observer, max_steps=1)
    assert observer.bar is None and observer.completed == 1


def test_progress_observer_counts_finished_episodes_and_starts_a_new_bar_each_run(
    cartpole, random_policy
):
    from course_helpers import progress_observer

    observer = progress_observer(2, "Evaluating", count="episodes")
    run_driver(cartpole, random_policy, observer, max_episodes=1, max_steps=1000)
    bar = observer.bar
    assert bar is not None
    assert bar.n == 1 and observer.completed == 0
    run_driver(cartpole, random_policy, observer, max_episodes=1, max_steps=1000)
    assert observer.bar is None and observer.completed == 1
    run_driver(cartpole, random_policy, observer, max_episodes=2, max_steps=1000)
    assert observer.completed == 2


def test_progress_observer_rejects_an_unknown_count():
    from course_helpers import progress_observer

    with pytest.raises(ValueError, match="count must be 'steps' or 'episodes'"):
        progress_observer(3, "Collecting", count="frames")


@pytest.mark.parametrize("total", [0, -5, 2.5, "10"])
def test_progress_observer_rejects_a_total_that_is_not_a_positive_number_of_steps(total):
    from course_helpers import progress_observer

    with pytest.raises(ValueError, match="total must be a positive number of steps"):
        progress_observer(total, "Collecting")
