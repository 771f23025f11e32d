"""Training-progress plots, labelled the same way in every lesson."""

import matplotlib
import numpy as np
import pytest

from course_helpers.plots import plot_policy_fit, plot_returns

STEPS = [0, 1000, 2000]
RETURNS = [9.4, 57.0, 200.0]


def test_plots_render_with_a_headless_backend():
    assert matplotlib.get_backend().lower() == "agg"


def test_plot_returns_labels_the_axes_and_sets_the_title(close_figures):
    ax = plot_returns(STEPS, RETURNS, title="DQN on CartPole")
    assert ax.get_xlabel() == "Training step"
    assert ax.get_ylabel() == "Average return"
    assert ax.get_title() == "DQN on CartPole"


def test_plot_returns_has_a_default_title(close_figures):
    assert plot_returns(STEPS, RETURNS).get_title() == "Average return during training"


def test_plot_returns_draws_returns_against_steps(close_figures):
    ax = plot_returns(STEPS, RETURNS)
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_xdata(), STEPS)
    np.testing.assert_array_equal(line.get_ydata(), RETURNS)


def test_plot_returns_draws_a_dashed_target_line_at_the_target(close_figures):
    ax = plot_returns(STEPS, RETURNS, target=195)
    lines = ax.get_lines()
    assert len(lines) == 2
    target = lines[1]
    assert set(np.asarray(target.get_ydata())) == {195}
    assert target.get_linestyle() == "--"
    legend = ax.get_legend()
    assert legend is not None
    assert "target (195)" in [text.get_text() for text in legend.get_texts()]


def test_plot_returns_draws_no_target_line_without_a_target(close_figures):
    assert len(plot_returns(STEPS, RETURNS).get_lines()) == 1


def test_plot_returns_draws_into_the_given_axes(close_figures):
    figure, (left, right) = close_figures.subplots(1, 2)
    assert plot_returns(STEPS, RETURNS, ax=right) is right
    assert len(right.get_lines()) == 1
    assert len(left.get_lines()) == 0


def test_plot_returns_accepts_numpy_arrays(close_figures):
    # plot_returns' annotations name sequences; NumPy arrays are accepted all the same.
    ax = plot_returns(np.array(STEPS), np.array(RETURNS))
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), RETURNS)


def test_plot_returns_rejects_steps_and_returns_of_different_lengths(close_figures):
    with pytest.raises(ValueError, match="same length") as error:
        plot_returns([0, 1000], RETURNS)
    assert "2 steps and 3 returns" in str(error.value)
    assert close_figures.get_fignums() == []  # fails before opening a figure


def test_plot_returns_rejects_empty_input_saying_nothing_was_recorded(close_figures):
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_returns([], [])


def test_plot_q_values_draws_the_estimates_and_the_largest_true_value(close_figures):
    from course_helpers.plots import plot_q_values

    ax = plot_q_values(STEPS, [1.0, 40.0, 230.0], bound=200)
    estimates, bound = ax.get_lines()
    np.testing.assert_array_equal(estimates.get_ydata(), [1.0, 40.0, 230.0])
    assert set(np.asarray(bound.get_ydata())) == {200} and bound.get_linestyle() == "--"
    assert ax.get_ylabel() == "Estimated Q-value"
    legend = ax.get_legend()
    assert legend is not None
    assert "largest true value (200)" in [t.get_text() for t in legend.get_texts()]


def test_plot_q_values_refuses_steps_and_values_of_different_lengths(close_figures):
    from course_helpers.plots import plot_q_values

    with pytest.raises(ValueError, match="steps and q_values must have the same length"):
        plot_q_values(STEPS, [1.0])


def test_plot_q_against_returns_draws_one_point_of_each_per_step_of_the_episode(close_figures):
    from course_helpers.plots import plot_q_against_returns

    ax = plot_q_against_returns([9.8, 9.9, 9.7], [2.97, 1.99, 1.0])
    predicted, observed = ax.get_lines()
    np.testing.assert_array_equal(predicted.get_xdata(), [0, 1, 2])
    np.testing.assert_array_equal(predicted.get_ydata(), [9.8, 9.9, 9.7])
    np.testing.assert_array_equal(observed.get_ydata(), [2.97, 1.99, 1.0])
    assert observed.get_linestyle() == "--"
    assert ax.get_xlabel() == "Step of the episode"
    legend = ax.get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["predicted Q(s, a)", "discounted return observed"]


def test_plot_q_against_returns_refuses_series_of_different_lengths(close_figures):
    from course_helpers.plots import plot_q_against_returns

    with pytest.raises(ValueError, match="2 predicted values and 3 observed returns"):
        plot_q_against_returns([1.0, 2.0], [1.0, 2.0, 3.0])
    assert close_figures.get_fignums() == []


def test_plot_sac_training_has_one_panel_per_quantity_and_the_target_entropy(close_figures):
    from course_helpers.plots import plot_sac_training

    figure = plot_sac_training(
        STEPS,
        alpha=[1.0, 0.5, 0.1],
        entropy=[5.0, 0.0, -3.5],
        critic_loss=[9.0, 3.0, 2.0],
        actor_loss=[-1.0, -5.0, -9.0],
        target_entropy=-4.0,
    )
    titles = [ax.get_title() for ax in figure.axes]
    assert titles == ["Temperature α", "Policy entropy", "Critic loss", "Actor loss"]
    entropy_panel = figure.axes[1]
    curve, target = entropy_panel.get_lines()
    np.testing.assert_array_equal(curve.get_ydata(), [5.0, 0.0, -3.5])
    assert set(np.asarray(target.get_ydata())) == {-4.0}
    assert figure.axes[0].get_yscale() == "log"


def test_plot_sac_training_names_the_series_whose_length_is_wrong(close_figures):
    from course_helpers.plots import plot_sac_training

    with pytest.raises(ValueError, match="steps and actor_loss must have the same length"):
        plot_sac_training(
            STEPS, alpha=[1, 1, 1], entropy=[1, 1, 1], critic_loss=[1, 1, 1], actor_loss=[1, 1]
        )


def test_plot_sac_training_before_anything_is_recorded_says_when_values_come(close_figures):
    from course_helpers.plots import plot_sac_training

    with pytest.raises(ValueError, match="records these values every log_interval steps"):
        plot_sac_training([], alpha=[], entropy=[], critic_loss=[], actor_loss=[])


def test_plot_policy_fit_draws_the_target_and_the_fitted_density_over_the_actions(close_figures):
    ax = plot_policy_fit([-0.5, 0.0, 0.5], [0.2, 1.5, 0.3], [0.4, 1.0, 0.4], alpha=0.3)
    target, fitted = ax.get_lines()
    np.testing.assert_array_equal(np.asarray(target.get_ydata(), dtype=float), [0.2, 1.5, 0.3])
    np.testing.assert_array_equal(np.asarray(fitted.get_ydata(), dtype=float), [0.4, 1.0, 0.4])
    assert ax.get_title() == "α = 0.3"
    assert ax.get_xlabel() == "Action a"
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["target exp(Q/α)/Z", "fitted actor π"]


def test_plot_policy_fit_refuses_densities_that_do_not_match_the_grid(close_figures):
    with pytest.raises(ValueError, match="one density value of each per action"):
        plot_policy_fit([0.0, 0.5], [1.0], [1.0, 2.0], alpha=1.0)
    with pytest.raises(ValueError, match="the grid of actions is empty"):
        plot_policy_fit([], [], [], alpha=1.0)


def test_tick_labels_and_legends_write_numbers_as_the_lessons_language_does(
    close_figures, monkeypatch
):
    from course_helpers import i18n
    from course_helpers.plots import plot_q_values, plot_sac_training

    monkeypatch.setattr(i18n, "_language", "fr")
    ax = plot_q_values([0, 5_000, 10_000], [1.0, 40.5, 86.0], bound=86.6033)
    ax.figure.canvas.draw()
    xticks = [t.get_text() for t in ax.get_xticklabels()]
    assert "10\u202f000" in xticks and not any("," in t and "\u202f" not in t for t in xticks)
    legend = ax.get_legend()
    assert legend is not None
    assert any("(86,6)" in t.get_text() for t in legend.get_texts())
    steps = list(range(5_000, 150_001, 5_000))
    ones = [1.0] * len(steps)
    figure = plot_sac_training(steps, alpha=ones, entropy=ones, critic_loss=ones, actor_loss=ones)
    figure.canvas.draw()
    bottom = figure.axes[2]
    labels = [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]
    assert len(labels) <= 6  # "100000120000140000" ran together with eight
    assert "120\u202f000" in labels
