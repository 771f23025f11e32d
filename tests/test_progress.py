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


def test_progress_observer_advances_one_step_per_trajectory_and_closes_when_done():
    from course_helpers import progress_observer

    observer = progress_observer(3, "Collecting")
    observer.bar.fp = io.StringIO()  # keep the bar out of the test output
    assert observer.bar.desc == "Collecting" and observer.bar.total == 3
    observer(object())
    observer(object())
    assert observer.bar.n == 2 and not observer.bar.disable
    observer(object())
    assert observer.bar.n == 3
    assert observer.bar.disable  # tqdm marks a closed bar disabled


@pytest.mark.parametrize("total", [0, -5, 2.5, "10"])
def test_progress_observer_rejects_a_total_that_is_not_a_positive_number_of_steps(total):
    from course_helpers import progress_observer

    with pytest.raises(ValueError, match="total must be a positive number of steps"):
        progress_observer(total, "Collecting")
