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
