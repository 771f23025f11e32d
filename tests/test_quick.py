"""Quick mode: the COURSE_QUICK switch and the hyperparameters it shrinks."""

import pytest

from course_helpers.quick import (
    OVERRIDES_VARIABLE,
    QUICK_MODE_VARIABLE,
    hyperparameters,
    is_quick_mode,
)


@pytest.fixture(autouse=True)
def no_overrides(monkeypatch):
    """A COURSE_HYPERPARAMETERS in the caller's shell must not change these tests."""
    monkeypatch.delenv(OVERRIDES_VARIABLE, raising=False)


@pytest.fixture
def quick_off(monkeypatch):
    monkeypatch.delenv(QUICK_MODE_VARIABLE, raising=False)


@pytest.fixture
def quick_on(monkeypatch):
    monkeypatch.setenv(QUICK_MODE_VARIABLE, "1")


def test_quick_mode_variable_is_course_quick():
    assert QUICK_MODE_VARIABLE == "COURSE_QUICK"


def test_quick_mode_is_off_when_course_quick_is_unset(quick_off):
    assert is_quick_mode() is False


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "on", " 1 "])
def test_quick_mode_is_on_for_true_values(monkeypatch, value):
    monkeypatch.setenv("COURSE_QUICK", value)
    assert is_quick_mode() is True


@pytest.mark.parametrize("value", ["", "0", "false", "False", "no", "off"])
def test_quick_mode_is_off_for_false_values(monkeypatch, value):
    monkeypatch.setenv("COURSE_QUICK", value)
    assert is_quick_mode() is False


@pytest.mark.parametrize("value", ["2", "quick", "maybe"])
def test_quick_mode_rejects_values_it_does_not_understand_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("COURSE_QUICK", value)
    with pytest.raises(ValueError, match="COURSE_QUICK") as error:
        is_quick_mode()
    assert repr(value) in str(error.value)
    assert "Set it to 1" in str(error.value)


def test_hyperparameters_use_full_values_when_quick_mode_is_off(quick_off):
    hp = hyperparameters(num_iterations=20_000, batch_size=64, quick=dict(num_iterations=300))
    assert hp.quick_mode is False
    assert hp.num_iterations == 20_000
    assert hp.batch_size == 64


def test_hyperparameters_use_quick_values_in_quick_mode(quick_on):
    hp = hyperparameters(num_iterations=20_000, batch_size=64, quick=dict(num_iterations=300))
    assert hp.quick_mode is True
    assert hp.num_iterations == 300
    assert hp.batch_size == 64


def test_hyperparameters_read_as_a_mapping_in_declaration_order(quick_on):
    hp = hyperparameters(num_iterations=20_000, batch_size=64, quick=dict(num_iterations=300))
    assert dict(hp) == {"num_iterations": 300, "batch_size": 64}
    assert list(hp) == ["num_iterations", "batch_size"]
    assert len(hp) == 2
    assert hp["batch_size"] == 64


def test_hyperparameters_without_quick_values_are_the_full_values_in_quick_mode(quick_on):
    hp = hyperparameters(learning_rate=1e-3)
    assert dict(hp) == {"learning_rate": 1e-3}


def test_hyperparameters_reject_quick_keys_that_are_not_hyperparameters(quick_off):
    with pytest.raises(ValueError, match="'num_iteration'") as error:
        hyperparameters(num_iterations=20_000, quick=dict(num_iteration=300))
    message = str(error.value)
    assert "not among the hyperparameters" in message
    assert "num_iterations" in message  # lists the real names, so the typo is visible


def test_hyperparameters_reject_a_quick_value_of_another_type(quick_off):
    with pytest.raises(TypeError, match="'learning_rate'") as error:
        hyperparameters(learning_rate=1e-3, quick=dict(learning_rate=1))
    assert "int" in str(error.value) and "float" in str(error.value)


def test_hyperparameters_reject_a_bool_quick_value_for_an_int(quick_off):
    with pytest.raises(TypeError, match="'episodes'"):
        hyperparameters(episodes=10, quick=dict(episodes=True))


def test_unknown_hyperparameter_attribute_raises_attribute_error_listing_known_names(quick_off):
    hp = hyperparameters(num_iterations=20_000, batch_size=64)
    with pytest.raises(AttributeError, match="'batch_szie'") as error:
        hp.batch_szie
    assert "batch_size, num_iterations" in str(error.value)


def test_hasattr_is_false_for_an_unknown_hyperparameter(quick_off):
    assert not hasattr(hyperparameters(batch_size=64), "learning_rate")


def test_repr_marks_the_values_quick_mode_changed_with_their_full_values(quick_on):
    hp = hyperparameters(num_iterations=20_000, batch_size=64, quick=dict(num_iterations=300))
    lines = repr(hp).splitlines()
    assert "Quick mode is ON" in lines[0]
    changed = next(line for line in lines if line.startswith("num_iterations"))
    unchanged = next(line for line in lines if line.startswith("batch_size"))
    assert "300" in changed and "quick mode (full: 20,000)" in changed
    assert "quick mode" not in unchanged


def test_repr_shows_full_size_run_and_no_quick_notes_when_quick_mode_is_off(quick_off):
    hp = hyperparameters(num_iterations=20_000, quick=dict(num_iterations=300))
    text = repr(hp)
    assert text.splitlines()[0] == "Full-size run (quick mode is off)."
    assert "20,000" in text
    assert "quick mode (full" not in text


@pytest.mark.parametrize(
    "language, iterations, gamma",
    [("pt-br", "150.000", "0,99"), ("fr", "150\u202f000", "0,99"), ("es", "150\u00a0000", "0.99")],
)
def test_the_table_writes_numbers_as_the_lessons_language_does(
    quick_on, monkeypatch, language, iterations, gamma
):
    from course_helpers import i18n

    monkeypatch.setattr(i18n, "_language", language)
    hp = hyperparameters(num_iterations=150_000, gamma=0.99, quick=dict(num_iterations=300))
    lines = repr(hp).splitlines()
    assert f" {iterations})" in next(line for line in lines if line.startswith("num_iterations"))
    assert f"  {gamma}" in next(line for line in lines if line.startswith("gamma"))
    assert "150,000" not in repr(hp)  # which reads as 150 in Portuguese and French


def test_repr_shows_a_bool_full_value_as_a_bool(quick_on):
    hp = hyperparameters(use_target_network=True, quick=dict(use_target_network=False))
    assert "quick mode (full: True)" in repr(hp)


def test_repr_of_no_hyperparameters_does_not_fail(quick_off):
    assert repr(hyperparameters()) == "Full-size run (quick mode is off)."


def test_html_repr_is_a_table_marking_the_changed_values(quick_on):
    hp = hyperparameters(num_iterations=20_000, batch_size=64, quick=dict(num_iterations=300))
    html = hp._repr_html_()
    assert html.startswith("<p>Quick mode is ON")
    assert (
        "<td><code>num_iterations</code></td><td>300</td><td>quick mode (full: 20,000)</td>" in html
    )
    assert "<td><code>batch_size</code></td><td>64</td><td></td>" in html


def test_html_repr_escapes_values(quick_off):
    html = hyperparameters(layer="<Dense>")._repr_html_()
    assert "&lt;Dense&gt;" in html
    assert "<Dense>" not in html


def test_overrides_variable_is_course_hyperparameters():
    assert OVERRIDES_VARIABLE == "COURSE_HYPERPARAMETERS"


def test_course_hyperparameters_sets_values_and_wins_over_quick_mode(quick_on, monkeypatch):
    monkeypatch.setenv("COURSE_HYPERPARAMETERS", "num_iterations=5_000, learning_rate=0.01")
    hp = hyperparameters(
        num_iterations=20_000, learning_rate=1e-3, batch_size=64, quick=dict(num_iterations=300)
    )
    assert dict(hp) == {"num_iterations": 5000, "learning_rate": 0.01, "batch_size": 64}
    assert type(hp.num_iterations) is int and type(hp.learning_rate) is float


def test_course_hyperparameters_apply_with_quick_mode_off(quick_off, monkeypatch):
    monkeypatch.setenv("COURSE_HYPERPARAMETERS", "batch_size=32")
    assert hyperparameters(batch_size=64).batch_size == 32


def test_course_hyperparameters_sets_a_switch_written_as_true_false_1_or_0(quick_off, monkeypatch):
    for text, value in [("true", True), ("False", False), ("1", True), ("0", False)]:
        monkeypatch.setenv("COURSE_HYPERPARAMETERS", f"double_q={text}")
        hp = hyperparameters(double_q=not value, batch_size=64)
        assert hp.double_q is value


def test_course_hyperparameters_rejects_a_switch_that_is_not_true_or_false(quick_off, monkeypatch):
    monkeypatch.setenv("COURSE_HYPERPARAMETERS", "double_q=yes")
    with pytest.raises(ValueError, match="double_q must be a bool, got 'yes'"):
        hyperparameters(double_q=False)


def test_repr_marks_values_set_by_course_hyperparameters(quick_on, monkeypatch):
    monkeypatch.setenv("COURSE_HYPERPARAMETERS", "num_iterations=5000")
    hp = hyperparameters(num_iterations=20_000, batch_size=64, quick=dict(batch_size=8))
    lines = repr(hp).splitlines()
    changed = next(line for line in lines if line.startswith("num_iterations"))
    assert "5,000" in changed and "set by COURSE_HYPERPARAMETERS (full: 20,000)" in changed
    assert "quick mode (full: 64)" in next(line for line in lines if line.startswith("batch_size"))


def test_course_hyperparameters_rejects_an_unknown_name_listing_the_known_ones(
    quick_off, monkeypatch
):
    monkeypatch.setenv("COURSE_HYPERPARAMETERS", "num_iteration=5000")
    with pytest.raises(
        ValueError, match="COURSE_HYPERPARAMETERS: cannot use 'num_iteration=5000'"
    ) as error:
        hyperparameters(num_iterations=20_000, batch_size=64)
    assert "names from: num_iterations, batch_size" in str(error.value)


def test_course_hyperparameters_rejects_a_pair_without_a_value(quick_off, monkeypatch):
    monkeypatch.setenv("COURSE_HYPERPARAMETERS", "num_iterations")
    with pytest.raises(ValueError, match="Write name=value pairs separated by commas"):
        hyperparameters(num_iterations=20_000)


@pytest.mark.parametrize(
    "setting, full, kind",
    [
        ("num_iterations=5.5", 20_000, "int"),
        ("learning_rate=fast", 1e-3, "float"),
        ("use_target=no", True, "bool"),
        ("name=other", "text", "str"),
    ],
)
def test_course_hyperparameters_rejects_a_value_of_the_wrong_type(
    quick_off, monkeypatch, setting, full, kind
):
    name = setting.split("=")[0]
    monkeypatch.setenv("COURSE_HYPERPARAMETERS", setting)
    with pytest.raises(ValueError, match=f"COURSE_HYPERPARAMETERS: {name} must be a {kind}"):
        hyperparameters(**{name: full})


def test_a_mistyped_quick_name_is_explained_in_the_lessons_language(quick_off, monkeypatch):
    from course_helpers import i18n

    monkeypatch.setattr(i18n, "_language", "pt-br")
    with pytest.raises(ValueError, match="não está entre os hiperparâmetros"):
        hyperparameters(num_iterations=20_000, quick=dict(num_iteration=300))


# A loop that checks its step count once per call of `steps_per_call` steps never lands on an
# interval that is not a multiple of it: the run silently skips every evaluation at 500 steps
# when it counts 40 at a time. `multiples_of` turns that into an error at the cell.
MULTIPLES = dict(update_period=["steps_per_call"], steps_per_call=["eval_interval"])


def lesson_values(**changes):
    values = dict(update_period=4, steps_per_call=40, eval_interval=1_000)
    return {**values, **changes}


def test_multiples_that_divide_evenly_pass(quick_off):
    hp = hyperparameters(**lesson_values(), multiples_of=MULTIPLES)
    assert hp.eval_interval == 1_000


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (dict(eval_interval=500), "eval_interval = 500 is not a multiple of steps_per_call = 40"),
        (dict(update_period=3), "steps_per_call = 40 is not a multiple of update_period = 3"),
    ],
)
def test_a_value_that_is_not_a_multiple_is_refused_naming_both_and_the_cell(
    quick_off, changes, message
):
    with pytest.raises(ValueError, match=message) as error:
        hyperparameters(**lesson_values(**changes), multiples_of=MULTIPLES)
    assert "in the cell that sets the hyperparameters" in str(error.value)


def test_the_check_applies_to_the_quick_values_in_quick_mode_only(quick_on):
    quick = dict(eval_interval=300)
    with pytest.raises(ValueError, match="quick=... values") as error:
        hyperparameters(**lesson_values(), quick=quick, multiples_of=MULTIPLES)
    assert "eval_interval = 300" in str(error.value)


def test_the_check_applies_to_values_set_by_course_hyperparameters(quick_off, monkeypatch):
    monkeypatch.setenv(OVERRIDES_VARIABLE, "eval_interval=500")
    with pytest.raises(ValueError, match="in COURSE_HYPERPARAMETERS, or in the cell"):
        hyperparameters(**lesson_values(), multiples_of=MULTIPLES)


def test_multiples_of_with_an_unknown_name_is_refused(quick_off):
    with pytest.raises(ValueError, match="multiples_of=... names 'eval_intervall'"):
        hyperparameters(**lesson_values(), multiples_of=dict(steps_per_call=["eval_intervall"]))


def test_the_multiple_error_is_in_the_lessons_language_with_its_numbers(quick_off, monkeypatch):
    from course_helpers import i18n

    monkeypatch.setattr(i18n, "_language", "fr")
    with pytest.raises(ValueError, match="eval_interval = 2\u202f500 n’est pas un multiple"):
        hyperparameters(**lesson_values(eval_interval=2_500), multiples_of=MULTIPLES)
