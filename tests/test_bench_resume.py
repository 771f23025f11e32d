"""course bench --save-runs and --resume: ten runs of lesson 3 take most of a working day,
so a benchmark must keep each run as it ends and continue where an interrupted one stopped,
without ever mixing in a run of other code or other settings."""

import json
import subprocess

import pytest

from course_tools import bench, cli, lessons, run_log


def _report(best: float, final: float, kept: float) -> dict:
    """A lesson-3 report as the instrumented notebook prints it, with these returns."""
    return {
        "evaluations": [[20_000, 240.0, 1.0], [40_000, 480.0, best], [60_000, 720.0, final]],
        "loop_seconds": 750.0,
        "eval_seconds": 30.0,
        "iterations": 60_000,
        "env_steps": 120_000,
        "peak_memory_mb": 900.0,
        "kept": {"best_step": 40_000.0, "best_return": best, "kept_return": kept},
    }


@pytest.fixture
def fake_lesson_3(monkeypatch):
    """Runs of lesson 3 that take no time: seed s scores a best of s + 2 (so seeds 3 and up
    walk) and records which seeds actually ran; seed 99 is a run that gets interrupted."""
    ran: list[int] = []

    def fake_run(lesson, cells, **options):
        seed = options["seed"]
        if seed == 99:
            raise KeyboardInterrupt
        ran.append(seed)
        return _report(best=seed + 2.0, final=seed + 1.0, kept=seed + 1.5)

    monkeypatch.setattr(bench, "run_instrumented", fake_run)
    monkeypatch.setattr(bench, "devices", lambda: [("cpu", {})])
    return ran


def _bench(*arguments: str) -> int:
    return cli.main(["bench", "--only", "sac", *arguments])


def test_each_finished_run_is_in_the_file_before_the_next_one_starts(fake_lesson_3, tmp_path):
    runs_file = tmp_path / "runs.json"
    with pytest.raises(KeyboardInterrupt):
        _bench("--sac-seeds", "3,99", "--save-runs", str(runs_file))
    saved = json.loads(runs_file.read_text())["runs"]
    assert [run["seed"] for run in saved] == [3]
    assert saved[0]["report"]["kept"]["kept_return"] == 4.5
    # Each run says where and when it ran, and which code of the lesson it ran.
    assert saved[0]["machine"]["cores"] >= 1 and saved[0]["machine"]["date"]
    assert saved[0]["lesson_code"] == run_log.lesson_code("03")
    assert not list(tmp_path.glob(".runs.json.*")), "the scratch copy was left behind"


def test_resume_takes_the_finished_runs_and_runs_only_the_rest(fake_lesson_3, tmp_path, capsys):
    runs_file = tmp_path / "runs.json"
    assert _bench("--sac-seeds", "3", "--save-runs", str(runs_file)) == 0
    fake_lesson_3.clear()
    capsys.readouterr()

    assert _bench("--sac-seeds", "3,4,1", "--save-runs", str(runs_file), "--resume") == 0
    assert fake_lesson_3 == [4, 1], "seed 3 ran again although the file held its run"
    assert [run["seed"] for run in json.loads(runs_file.read_text())["runs"]] == [3, 4, 1]
    printed = capsys.readouterr().out
    assert "Resuming" in printed and "1 finished run(s)" in printed
    # The table covers all three runs, the one taken from the file included.
    label = "cpu, 3 runs (seeds 3, 4, 1)"
    assert f"03 SAC  {label}: walked (an evaluation at 5 or more): 2 of 3" in printed
    assert f"{label}: best average return: median 5.00, from 3.00 to 6.00 (5.00, 6.00, 3.00)" in (
        printed
    )
    assert "03 SAC  cpu seed 3: ran on: " in printed


def test_resume_refuses_a_file_started_with_other_seeds_and_leaves_it_as_it_was(
    fake_lesson_3, tmp_path, capsys
):
    runs_file = tmp_path / "runs.json"
    assert _bench("--sac-seeds", "3", "--save-runs", str(runs_file)) == 0
    before = runs_file.read_text()
    fake_lesson_3.clear()
    capsys.readouterr()

    assert _bench("--sac-seeds", "4,3", "--save-runs", str(runs_file), "--resume") != 0
    error = capsys.readouterr().err
    assert "run 1 of the file does not match" in error
    assert "seed: 3 there, 4 here" in error
    assert fake_lesson_3 == [] and runs_file.read_text() == before


def test_resume_refuses_a_run_of_other_settings(fake_lesson_3, tmp_path, capsys):
    runs_file = tmp_path / "runs.json"
    assert _bench("--sac-seeds", "3", "--save-runs", str(runs_file)) == 0
    capsys.readouterr()
    arguments = ("--sac-seeds", "3", "--save-runs", str(runs_file), "--resume")
    assert _bench(*arguments, "--hyperparameters", "reward_scale_factor=20.0") != 0
    assert "hyperparameters: '' there, 'reward_scale_factor=20.0' here" in capsys.readouterr().err


def test_resume_refuses_a_run_of_other_lesson_code(fake_lesson_3, tmp_path, capsys):
    """A run of an edited lesson (a trial, or an older commit) is not a run of this one."""
    runs_file = tmp_path / "runs.json"
    assert _bench("--sac-seeds", "3", "--save-runs", str(runs_file)) == 0
    record = json.loads(runs_file.read_text())
    record["runs"][0]["lesson_code"] = "tokens-0123456789abcdef"
    runs_file.write_text(json.dumps(record))
    capsys.readouterr()
    assert _bench("--sac-seeds", "3", "--save-runs", str(runs_file), "--resume") != 0
    assert "lesson code: 'tokens-0123456789abcdef' there" in capsys.readouterr().err


def test_an_older_run_without_its_lesson_code_is_checked_against_its_commit(tmp_path):
    """Runs saved before runs carried a fingerprint name their commit: the lesson at that
    commit decides; a trial's "with local changes" cannot be checked, so it is refused."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=lessons.project_root(),
    )
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    committed = subprocess.run(
        ["git", "show", "HEAD:notebooks/en/03_sac_minitaur.ipynb"],
        capture_output=True,
        text=True,
        cwd=lessons.project_root(),
    ).stdout
    same_as_head = run_log.lesson_code("03", committed) == run_log.lesson_code("03")
    runs_file = tmp_path / "runs.json"
    for commit, accepted in (
        (head.stdout.strip(), same_as_head),
        ("abc1234 with local changes", False),
    ):
        old_run = {
            "lesson": "03",
            "device": "cpu",
            "seed": 3,
            "hyperparameters": "",
            "quick": False,
        }
        record = {"machine": {"commit": commit}, "runs": [{**old_run, "report": _report(6, 5, 5)}]}
        runs_file.write_text(json.dumps(record))
        log = run_log.RunLog.resume(runs_file)
        if accepted:
            taken = log.take("03", "cpu", 3, "", False)
            assert taken is not None and taken["seed"] == 3
        else:  # the lesson was edited since HEAD, or the commit had local changes
            at_commit = run_log._lesson_code_at("03_sac_minitaur", commit)
            with pytest.raises(ValueError, match=f"lesson code: {at_commit!r} there"):
                log.take("03", "cpu", 3, "", False)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--resume"], "give it with --save-runs PATH"),
        (["--resume", "--save-runs", "{missing}"], "does not exist (leave out --resume"),
    ],
)
def test_resume_without_a_file_to_continue_says_what_to_give(tmp_path, capsys, arguments, message):
    arguments = [a.format(missing=tmp_path / "none.json") for a in arguments]
    assert _bench(*arguments) != 0
    assert message in capsys.readouterr().err


def test_resume_of_a_file_that_is_not_a_runs_file_names_it(tmp_path, capsys):
    runs_file = tmp_path / "notes.json"
    runs_file.write_text("my notes, not JSON")
    assert _bench("--save-runs", str(runs_file), "--resume") != 0
    error = capsys.readouterr().err
    assert f"--resume {runs_file}: not a file of runs" in error
    assert runs_file.read_text() == "my notes, not JSON"


def test_sac_rows_give_the_spread_of_the_runs_returns_and_times(fake_lesson_3):
    rows = {row.figure: row.value for row in bench.sac_rows([1, 4, 6], False, None, "cpu", {})}
    label = "cpu, 3 runs (seeds 1, 4, 6)"
    assert rows[f"{label}: walked (an evaluation at 5 or more)"] == "2 of 3"
    # Seeds 4 and 6 first reach 5 at their second evaluation: 40,000 iterations, 8 minutes.
    assert rows[f"{label}: minutes of training to walk, of those that walked"] == (
        "median 8.0 min, from 8.0 to 8.0 min (8.0, 8.0)"
    )
    assert rows[f"{label}: final average return"] == (
        "median 5.00, from 2.00 to 7.00 (2.00, 5.00, 7.00)"
    )
    assert rows[f"{label}: kept actor's average return on new episodes"] == (
        "median 5.50, from 2.50 to 7.50 (2.50, 5.50, 7.50)"
    )
    assert rows[f"{label}: ms per iteration, evaluation excluded"].startswith("median 12.00 ms")
    assert (
        rows[
            "cpu seed 4: kept actor (best evaluation, 6.00 at 40,000 iterations), "
            "average return on new episodes"
        ]
        == "5.50"
    )


def test_a_refused_command_leaves_no_file_behind(fake_lesson_3, tmp_path, capsys):
    """The file is written when a run ends: a typo in the seeds creates nothing that would
    then refuse the corrected command as "already exists"."""
    runs_file = tmp_path / "runs.json"
    assert _bench("--sac-seeds", "3,x", "--save-runs", str(runs_file)) != 0
    assert not runs_file.exists()
    assert _bench("--sac-seeds", "3", "--save-runs", str(tmp_path / "no" / "runs.json")) != 0
    assert "no folder" in capsys.readouterr().err


def test_a_comment_reworded_in_the_lesson_keeps_its_fingerprint():
    """Resumed runs stay valid when only a comment of the lesson changes; code does not."""
    notebook = {"cells": [{"cell_type": "code", "source": "x = 1  # one\nprint(x)\n"}]}
    reworded = {"cells": [{"cell_type": "code", "source": "x = 1    # the number one\nprint(x)"}]}
    changed = {"cells": [{"cell_type": "code", "source": "x = 2  # one\nprint(x)\n"}]}
    code = run_log.lesson_code("03", json.dumps(notebook))
    assert code.startswith("tokens-")
    assert run_log.lesson_code("03", json.dumps(reworded)) == code
    assert run_log.lesson_code("03", json.dumps(changed)) != code


def test_lesson_4s_runs_in_the_file_are_left_aside_and_not_shipped(fake_lesson_3, tmp_path):
    """The distributed group's runs are measured again each time; only lesson 2's and 3's
    runs are taken, and only the runs taken or made go into the table and the reference."""
    runs_file = tmp_path / "runs.json"
    assert _bench("--sac-seeds", "3", "--save-runs", str(runs_file)) == 0
    record = json.loads(runs_file.read_text())
    seed_3 = record["runs"][0]
    record["runs"] = [{"lesson": "04", "collect_jobs": 2}, seed_3, {**seed_3, "seed": 9}]
    runs_file.write_text(json.dumps(record))
    log = run_log.RunLog.resume(runs_file)
    assert log.take("03", "cpu", 3, "", False) is not None
    assert log.used == [seed_3] and log.unused() == 1
