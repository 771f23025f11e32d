"""A training run's folder: named so that the same settings resume and other settings start
afresh, its record saved atomically beside each checkpoint and read back at resume."""

import json

import numpy as np
import pytest

from course_helpers import i18n, runs


@pytest.fixture(autouse=True)
def english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture
def base(tmp_path, monkeypatch):
    monkeypatch.setenv(runs.RUNS_VARIABLE, str(tmp_path))
    return tmp_path


def test_the_same_settings_find_the_same_folder_and_other_settings_a_new_one(base):
    first = runs.run_folder("03_sac_minitaur", 42, {"num_iterations": 150_000, "gamma": 0.99})
    again = runs.run_folder("03_sac_minitaur", 42, {"gamma": 0.99, "num_iterations": 150_000})
    longer = runs.run_folder("03_sac_minitaur", 42, {"num_iterations": 200_000, "gamma": 0.99})
    other_seed = runs.run_folder("03_sac_minitaur", 1, {"num_iterations": 150_000, "gamma": 0.99})
    assert first == again and first.parent == base
    assert len({first, longer, other_seed}) == 3
    assert json.loads((first / "settings.json").read_text())["num_iterations"] == 150_000


def test_a_folder_is_never_given_to_other_settings_even_if_a_file_was_edited(base):
    """settings.json is for reading: the folder's name, not the file, ties it to its settings,
    and an existing settings file is never rewritten."""
    folder = runs.run_folder("03_sac_minitaur", 42, {"num_iterations": 10})
    (folder / "settings.json").write_text("my notes", encoding="utf-8")
    assert runs.run_folder("03_sac_minitaur", 42, {"num_iterations": 10}) == folder
    assert (folder / "settings.json").read_text(encoding="utf-8") == "my notes"


def test_without_the_variable_runs_go_beside_the_notebook_or_to_a_mounted_drive(
    tmp_path, monkeypatch
):
    monkeypatch.delenv(runs.RUNS_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runs, "COLAB_DRIVE", tmp_path / "no-drive")
    assert runs.runs_base() == tmp_path / "runs"
    (tmp_path / "drive").mkdir()
    monkeypatch.setattr(runs, "COLAB_DRIVE", tmp_path / "drive")
    assert runs.runs_base() == tmp_path / "drive" / "tf-agents-course" / "runs"


def test_the_checkpoint_step_is_the_newest_learner_checkpoint(base):
    folder = runs.run_folder("l", 1, {})
    assert runs.checkpoint_step(folder) == 0
    assert runs.describe_run(folder).startswith("A new run.")
    checkpoints = folder / runs.CHECKPOINTS
    checkpoints.mkdir(parents=True)
    for name in ("ckpt-20000.index", "ckpt-100000.index", "ckpt-40000.data-00000-of-00001"):
        (checkpoints / name).write_text("")
    assert runs.checkpoint_step(folder) == 100_000
    assert "saved at iteration 100,000" in runs.describe_run(folder)


def test_the_record_comes_back_as_saved_with_the_actors_weights(base):
    folder = runs.run_folder("l", 1, {})
    weights = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)]
    runs.save_progress(
        folder,
        20_000,
        evaluations=([0, 20_000], [-0.5, np.float32(1.25)], [0.0, 4.0]),
        best=(1.25, 20_000, weights),
    )
    saved = runs.saved_progress(folder, 20_000)
    steps, returns, minutes = saved["evaluations"]
    assert steps == [0, 20_000] and returns == [-0.5, 1.25] and minutes == [0.0, 4.0]
    best_return, best_step, best_weights = saved["best"]
    assert (best_return, best_step) == (1.25, 20_000)
    assert all(np.array_equal(a, b) for a, b in zip(best_weights, weights))


def test_a_resume_reads_the_record_of_its_checkpoint_or_the_one_before(base):
    """A run stopped after its checkpoint but before its record resumes with the record
    before; a new run (step 0) has none."""
    folder = runs.run_folder("l", 1, {})
    for step in (20_000, 40_000, 60_000):
        runs.save_progress(folder, step, evaluations=([step],))
    assert runs.saved_progress(folder, 0) == {}
    assert runs.saved_progress(folder, 40_000)["evaluations"] == ([40_000],)
    assert runs.saved_progress(folder, 50_000)["evaluations"] == ([40_000],)
    assert runs.saved_progress(folder, 10_000) == {}


def test_a_record_half_written_is_not_read(base):
    """Saving writes to a partial file and renames it: a run stopped while saving leaves
    only a .partial file, which is not a record."""
    folder = runs.run_folder("l", 1, {})
    runs.save_progress(folder, 20_000, evaluations=([20_000],))
    (folder / runs.PROGRESS / "step-000040000.json.partial").write_text('{"step": 4')
    assert runs.saved_progress(folder, 40_000)["evaluations"] == ([20_000],)


def test_the_sentences_follow_the_lessons_language(base):
    folder = runs.run_folder("l", 1, {})
    (folder / runs.CHECKPOINTS).mkdir(parents=True)
    (folder / runs.CHECKPOINTS / "ckpt-120000.index").write_text("")
    i18n.set_language("fr")
    told = runs.describe_run(folder)
    assert "120\u202f000" in told and "iteration" not in told.split(":")[0].lower()
