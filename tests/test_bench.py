"""course bench: the figures behind the lessons' speed claims.

The full benchmark takes most of an hour and is never part of the test run; these tests
check its arithmetic, that the cells it instruments still exist, and (one smoke test)
that a quick-mode run prints a complete table.
"""

import json
import re
import subprocess
import sys
import threading

import nbformat
import pytest

from course_tools import bench, lessons


def test_first_at_gives_the_step_and_time_of_the_first_evaluation_reaching_the_target():
    evaluations = [[1000, 2.0, 150.0], [2000, 4.0, 195.0], [3000, 6.0, 200.0]]
    assert bench.first_at(evaluations, 195) == (2000, 4.0)
    assert bench.first_at(evaluations, 201) is None


def test_return_at_finds_the_evaluation_at_a_step():
    evaluations = [[20_000, 60.0, 1.5], [40_000, 120.0, 3.0]]
    assert bench.return_at(evaluations, 40_000) == 3.0
    assert bench.return_at(evaluations, 100_000) is None


def test_alpha_and_entropy_are_read_where_an_evaluation_ran():
    curves: dict[str, list[float]] = {
        "log_steps": [5_000, 10_000, 20_000],
        "alphas": [0.5, 0.2, 0.05],
        "entropies": [-1.0, -2.5, -4.0],
    }
    assert bench.alpha_and_entropy(curves, [10_000, 20_000, 40_000]) == (
        "10,000, 0.200, -2.50; 20,000, 0.050, -4.00"
    )
    assert bench.alpha_and_entropy({}, [20_000]) == "none logged"


def test_ms_per_iteration_leaves_evaluation_out():
    report = {"loop_seconds": 50.0, "eval_seconds": 10.0, "iterations": 20_000}
    assert bench.ms_per_iteration(report) == pytest.approx(2.0)


def test_ms_per_env_step_divides_by_the_environment_steps_of_the_run():
    lesson = {"loop_seconds": 50.0, "eval_seconds": 10.0, "iterations": 4_000, "env_steps": 8_000}
    assert bench.ms_per_env_step(lesson) == pytest.approx(5.0)
    assert bench.ms_per_iteration(lesson) == pytest.approx(10.0)
    published = {"loop_seconds": 50.0, "eval_seconds": 10.0, "iterations": 4_000}  # one step each
    assert bench.ms_per_env_step(published) == pytest.approx(10.0)


def test_the_table_aligns_its_columns_and_has_a_markdown_form():
    rows = [
        bench.Row("02 DQN", "cpu seed 42: final average return", "200.0"),
        bench.Row("all", "localization build", "3.1 s"),
    ]
    text = bench.format_table(rows).splitlines()
    assert text[0].split() == ["lesson", "figure", "value"]
    assert len({line.index(value) for line, value in zip(text[1:], ("200.0", "3.1 s"))}) == 1
    markdown = bench.format_table(rows, markdown=True).splitlines()
    assert markdown[:2] == ["| lesson | figure | value |", "| --- | --- | --- |"]
    assert markdown[2] == "| 02 DQN | cpu seed 42: final average return | 200.0 |"


def test_an_unknown_group_is_refused_with_the_list_of_groups():
    with pytest.raises(ValueError, match="Unknown benchmark group.*speed.*dqn, sac, baseline"):
        bench.measure(only=["speed"])


@pytest.mark.parametrize("lesson, cells", [("02", bench.DQN_CELLS), ("03", bench.SAC_CELLS)])
def test_every_cell_the_benchmark_replaces_exists_in_the_english_lesson(lesson, cells):
    """A renamed cell id would otherwise fail only in the hour-long benchmark."""
    path = lessons.lesson_path(lesson)
    ids = {cell.get("id") for cell in nbformat.read(path, as_version=4).cells}
    skipped = set(bench._SKIPPED[path.stem])
    assert set(cells) | skipped <= ids


@pytest.mark.notebook
def test_course_bench_in_quick_mode_prints_a_table_with_every_figure_group():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_tools.cli",
            "bench",
            "--quick",
            "--only",
            "dqn,sac,baseline,l10n",
            "--seeds",
            "42",
            "--sac-seeds",
            "7",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.split("\n\n")[-1].strip().splitlines()
    rows = {tuple(re.split(r"\s{2,}", line.strip(), maxsplit=2)[:2]): line for line in lines}
    assert ("lesson", "figure") in rows
    values = {key: re.split(r"\s{2,}", line.strip(), maxsplit=2)[2] for key, line in rows.items()}
    assert re.fullmatch(
        r"[\d.]+ s \(evaluation [\d.]+ s\)",
        values["02 DQN", "cpu seed 42: training + evaluation, 400 steps"],
    )
    first = values["02 DQN", "cpu seed 42: first average return >= 195"]
    final = float(values["02 DQN", "cpu seed 42: final average return"])
    # 400 steps rarely reach 195; either way the row must agree with the final return.
    if first == "not reached":
        assert final < 195
    else:
        assert re.fullmatch(r"step [\d,]+ after [\d.]+ s", first)
    assert float(values["03 SAC", "cpu seed 7: ms per iteration, evaluation excluded"]) > 0
    assert float(values["03 SAC", "cpu seed 7: average return at 200 iterations"]) < 5
    assert re.fullmatch(r"\d+ MiB", values["03 SAC", "cpu seed 7: peak memory"])
    build = [key for key in values if key[1].startswith("localization build")]
    assert len(build) == 1 and re.fullmatch(r"[\d.]+ s", values[build[0]])
    assert re.fullmatch(
        r"loop [\d.]+ s \(evaluation [\d.]+ s\); whole [\d.]+ s",
        values["02 DQN", "cpu published tutorial as a script, 300 iterations, 3 evaluations"],
    )
    assert re.fullmatch(
        r"loop [\d.]+ s \(evaluation [\d.]+ s\); whole [\d.]+ s",
        values["02 DQN", "cpu lesson, 400 environment steps, 2 evaluations"],
    )
    assert re.fullmatch(r"[\d.]+ times", values["02 DQN", "cpu published tutorial / whole lesson"])
    assert float(values["03 SAC", "cpu seed 7: ms per environment step, evaluation excluded"]) > 0
    label = "ms per environment step, evaluation excluded"
    assert (
        float(
            values[
                "03 SAC",
                f"cpu published tutorial, 200 environment steps and gradient steps: {label}",
            ]
        )
        > 0
    )
    assert (
        float(
            values["03 SAC", f"cpu lesson, 400 environment steps and 200 gradient steps: {label}"]
        )
        > 0
    )
    assert re.fullmatch(
        r"[\d.]+ times",
        values[
            "03 SAC",
            "cpu published tutorial / lesson, ms per environment step (the lesson takes 1 gradient step per 2)",
        ],
    )
    assert (
        float(
            values[
                "03 SAC",
                f"cpu lesson at 1 gradient step per environment step, 200 of each: {label}",
            ]
        )
        > 0
    )
    assert re.fullmatch(
        r"[\d.]+ times", values["03 SAC", "cpu published tutorial / lesson at equal work"]
    )
    for command in ("--help", "list", "l10n status", "l10n check"):
        assert re.fullmatch(
            r"[\d.]+ s", values["all", f"course {command} (a new process, median of 3)"]
        )


def test_a_published_script_that_fails_is_reported_with_its_name_and_output(tmp_path, monkeypatch):
    folder = tmp_path / "benchmarks" / "published"
    folder.mkdir(parents=True)
    (folder / "broken.py").write_text("import sys\nprint('reverb is missing')\nsys.exit(3)\n")
    monkeypatch.setattr(lessons, "project_root", lambda: tmp_path)
    with pytest.raises(RuntimeError, match=r"broken\.py failed \(exit 3\).*\n.*reverb is missing"):
        bench.run_published("broken", [], {})


def test_a_published_script_reports_its_figures_and_its_whole_time(tmp_path, monkeypatch):
    folder = tmp_path / "benchmarks" / "published"
    folder.mkdir(parents=True)
    (folder / "fine.py").write_text(
        'import json, os\nprint("step 1")\n'
        'print("BENCHMARK " + json.dumps({"iterations": 10, "seen": os.environ["SEEN"]}))\n'
    )
    monkeypatch.setattr(lessons, "project_root", lambda: tmp_path)
    report = bench.run_published("fine", [], {"SEEN": "yes"})
    assert report["iterations"] == 10 and report["seen"] == "yes" and report["seconds"] > 0


@pytest.mark.parametrize("name", ["dqn_tutorial", "sac_tutorial"])
def test_the_published_scripts_are_in_the_repository_and_take_the_benchmark_options(name):
    script = lessons.project_root() / "benchmarks" / "published" / f"{name}.py"
    result = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for option in ("--iterations", "--eval-interval", "--eval-episodes", "--seed"):
        assert option in result.stdout


@pytest.mark.parametrize("option", ["--seeds", "--sac-seeds"])
def test_seeds_that_are_not_numbers_are_refused_naming_the_option(option, capsys):
    from course_tools import cli

    assert cli.main(["bench", "--only", "dqn,sac", option, "42,one"]) != 0
    assert (
        f"{option} takes whole numbers separated by commas, got '42,one'" in capsys.readouterr().err
    )


def _executed_cell(outputs, start="2026-11-24T10:00:00.250000Z", end="2026-11-24T10:01:12.750000Z"):
    cell = nbformat.v4.new_code_cell("course.setup()")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text) for text in outputs]
    cell.metadata["execution"] = {"iopub.execute_input": start, "shell.execute_reply": end}
    return cell


def test_cell_seconds_reads_the_timing_nbclient_records():
    assert bench.cell_seconds(_executed_cell([])) == pytest.approx(72.5)
    assert bench.cell_seconds(nbformat.v4.new_code_cell("x = 1")) is None


def test_the_colab_rows_name_what_the_set_up_cell_installed():
    said = (
        "Runtime ready on Colab: rendering with pyvirtualdisplay; quick mode on.\n"
        "Installed for Colab in 212 s: tf-keras~=2.21.0, gin-config==0.5.0, pybullet==3.2.7.\n"
        "Replay buffer: an in-process stand-in for Reverb.\n"
    )
    assert bench.installed_for_colab(_executed_cell([said])) == (
        "tf-keras~=2.21.0, gin-config==0.5.0, pybullet==3.2.7"
    )
    assert bench.installed_for_colab(_executed_cell(["Runtime ready on Binder.\n"])) == "nothing"


def test_the_colab_group_refuses_a_python_without_a_profile():
    with pytest.raises(
        ValueError, match=r"No Colab-like profile for Python 3\.10.*requirements-3\.10\.txt"
    ):
        bench.colab_rows("3.10")


def test_pin_to_cpus_limits_the_process_and_refuses_impossible_counts():
    import subprocess
    import sys

    script = (
        "import os; from course_tools import bench; "
        "print(bench.pin_to_cpus(1), len(os.sched_getaffinity(0)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.split()[-1] == "1", result.stderr
    with pytest.raises(ValueError, match="--cpus takes a number from 1 to"):
        bench.pin_to_cpus(0)


def test_the_cores_group_runs_each_lesson_on_every_core_then_on_one_and_restores_the_process(
    monkeypatch,
):
    import os

    available = sorted(os.sched_getaffinity(0))
    if len(available) < 2:
        pytest.skip("needs two cores")
    seen = []

    def fake_run(lesson, cells, **kwargs):
        # The kernel a run starts inherits this affinity.
        seen.append((lesson, len(os.sched_getaffinity(0))))
        seconds = 20.0 if len(os.sched_getaffinity(0)) > 1 else 34.0
        return {
            "seconds": seconds,
            "loop_seconds": seconds / 2,
            "eval_seconds": 1.0,
            "iterations": 1000,
            "env_steps": 2000,
        }

    monkeypatch.setattr(bench, "run_instrumented", fake_run)
    rows = {row.figure: row.value for row in bench.cores_rows(False, 1000, "cpu", {})}
    assert seen == [("02", len(available)), ("03", len(available)), ("02", 1), ("03", 1)]
    assert sorted(os.sched_getaffinity(0)) == available
    assert rows[f"cpu whole lesson, 1 core / {len(available)} cores"] == "1.70 times"
    assert (
        rows[f"cpu ms per iteration, 1 core / {len(available)} cores"] == "1.78 times"
    )  # (17 - 1) / (10 - 1)
    assert (
        rows[
            "cpu 1 core: 1,000 iterations (2,000 environment steps): ms per iteration, evaluation excluded"
        ]
        == "16.00"
    )


def test_the_cores_group_says_why_it_skips_a_process_pinned_to_one_core(monkeypatch):
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: {0})
    [row] = bench.cores_rows(False, 1000, "cpu", {})
    assert "skipped" in row.value and "--cpus 1" in row.value


def test_the_kernel_instrumentation_times_the_loop_and_the_evaluations_inside_it(monkeypatch):
    """What course bench runs in the lesson's kernel: one evaluation before the loop (step
    0, left out) and two inside it, each with its step, its time into the loop and its value."""
    from course_tools import instrument

    clock = iter([0.0, 1.0, 10.0, 12.0, 13.0, 20.0, 21.0, 30.0, 31.0, 32.0])
    monkeypatch.setattr(instrument.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(instrument, "evaluations", [])
    returns = iter([9.0, 50.0, 200.0, 199.0])
    evaluate = instrument.timed(
        lambda: {"AverageReturn": next(returns)}, lambda m: m["AverageReturn"]
    )
    evaluate()  # step 0, at 0.0 to 1.0: before the loop
    instrument.loop_started()  # 10.0
    evaluate()  # 12.0 to 13.0
    evaluate()  # 20.0 to 21.0
    instrument.loop_ended()  # 30.0
    evaluate()  # 31.0 to 32.0: after the loop, left out too
    namespace = {
        "hp": {"num_iterations": 100, "collect_steps_per_iteration": 2},
        "eval_steps": [0, 50, 100],
        "alphas": [0.5, 0.25],
    }
    figures = instrument.figures(namespace)
    assert figures["iterations"] == 100 and figures["env_steps"] == 200
    assert figures["loop_seconds"] == 20.0 and figures["eval_seconds"] == 2.0
    assert figures["evaluations"] == [[50, 3.0, 50.0], [100, 11.0, 200.0]]
    assert figures["curves"] == {"alphas": [0.5, 0.25]}
    line = instrument.report(namespace)
    assert (
        line.startswith(instrument.PREFIX) and json.loads(line[len(instrument.PREFIX) :]) == figures
    )


@pytest.mark.parametrize(
    "evaluations, first, median",
    [
        (
            [[200, 1.0, 50.0], [400, 2.0, 196.0]],
            "step 400 after 2.0 s",
            "2.0 s (2 of 2 reached it)",
        ),
        (
            [[200, 1.0, 195.0], [400, 2.0, 120.0]],
            "step 200 after 1.0 s",
            "1.0 s (2 of 2 reached it)",
        ),
        ([[200, 1.0, 50.0], [400, 2.0, 194.9]], "not reached", "not reached"),
    ],
)
def test_dqn_rows_report_the_first_evaluation_at_195_or_say_it_was_not_reached(
    monkeypatch, evaluations, first, median
):
    def fake_run(lesson, cells, **options):
        return {
            "evaluations": evaluations,
            "loop_seconds": 3.0,
            "eval_seconds": 0.5,
            "iterations": 400,
            "peak_memory_mb": 600.0,
        }

    monkeypatch.setattr(bench, "run_instrumented", fake_run)
    rows = {row.figure: row.value for row in bench.dqn_rows([42, 1], False, "cpu", {})}
    assert rows["cpu seed 42: first average return >= 195"] == first
    assert rows["cpu seed 42: final average return"] == f"{evaluations[-1][2]:.1f}"
    # Both seeds got the same evaluations here.
    assert rows["cpu median time to 195, 2 runs"] == median
    finals = rows["cpu runs whose final average return is >= 195"]
    kept = 2 if evaluations[-1][2] >= 195 else 0
    assert finals.startswith(f"{kept} of 2 (finals: ")


def test_dqn_rows_sum_up_q_against_the_observed_return_and_keep_each_run_when_asked(
    monkeypatch,
):
    def fake_run(lesson, cells, **options):
        return {
            "evaluations": [[200, 1.0, 50.0]],
            "loop_seconds": 3.0,
            "eval_seconds": 0.5,
            "iterations": 400,
            "peak_memory_mb": 600.0,
            "curves": {"predicted_q": [10.0, 12.0, 14.0], "observed_returns": [3.0, 2.0, 1.0]},
        }

    monkeypatch.setattr(bench, "run_instrumented", fake_run)
    runs: list = []
    rows = {row.figure: row.value for row in bench.dqn_rows([7, 7], False, "cpu", {}, "", runs)}
    # A seed listed twice gives two runs, each with its own label.
    assert rows["cpu seed 7, run 2: Q against the observed return"] == (
        "12.0 predicted, 2.0 observed (first 3 of 3 steps)"
    )
    assert [run["seed"] for run in runs] == [7, 7]
    assert runs[0]["report"]["curves"]["predicted_q"] == [10.0, 12.0, 14.0]


def test_sac_rows_keep_each_run_with_its_seed_and_settings_when_asked(monkeypatch):
    """--save-runs keeps lesson 3's runs as it keeps lesson 2's: the tuning history of SAC
    lives in such files (benchmarks/results/sac-runs)."""

    def fake_run(lesson, cells, **options):
        return {
            "evaluations": [[20_000, 240.0, 1.5], [40_000, 480.0, 6.0]],
            "loop_seconds": 500.0,
            "eval_seconds": 20.0,
            "iterations": 40_000,
            "env_steps": 80_000,
            "peak_memory_mb": 900.0,
            "kept": {"best_step": 40_000.0, "best_return": 6.0, "kept_return": 5.5},
        }

    monkeypatch.setattr(bench, "run_instrumented", fake_run)
    runs: list = []
    rows = {
        row.figure: row.value
        for row in bench.sac_rows([3, 4], False, 40_000, "cpu", {}, "reward_scale_factor=20", runs)
    }
    assert rows["cpu seed 3: first average return >= 5 (walking)"].startswith("40,000 iterations")
    assert [(run["lesson"], run["seed"]) for run in runs] == [("03", 3), ("03", 4)]
    assert "reward_scale_factor=20" in runs[0]["hyperparameters"]
    assert runs[1]["report"]["kept"]["kept_return"] == 5.5


def test_the_report_reads_lesson_3s_kept_actor_and_saves_its_weights_when_asked(
    monkeypatch, tmp_path
):
    """Lesson 3 re-evaluates its kept actor as kept_metrics; with COURSE_BENCH_KEEP_ACTOR the
    report also saves that actor's weights, from which the shipped policy is made."""
    import numpy as np

    from course_tools import instrument

    class Actor:
        def get_weights(self):
            return [np.ones((2, 3), np.float32), np.zeros(3, np.float32)]

    monkeypatch.setattr(instrument, "_loop", {"start": 0.0, "end": 1.0})
    monkeypatch.setattr(instrument, "evaluations", [])
    namespace = {
        "hp": {"num_iterations": 10},
        "eval_steps": [0],
        "kept_metrics": {"AverageReturn": 6.25},
        "best_step": 8,
        "best_return": 7.0,
        "actor_net": Actor(),
        "SEED": 5,
    }
    monkeypatch.delenv(instrument.KEEP_ACTOR, raising=False)
    report = json.loads(instrument.report(namespace)[len(instrument.PREFIX) :])
    assert report["kept"] == {"best_step": 8.0, "best_return": 7.0, "kept_return": 6.25}
    assert "actor_weights" not in report
    monkeypatch.setenv(instrument.KEEP_ACTOR, str(tmp_path / "actors"))
    report = json.loads(instrument.report(namespace)[len(instrument.PREFIX) :])
    saved = np.load(report["actor_weights"])
    assert "seed-5" in report["actor_weights"]
    assert [saved[name].shape for name in saved.files] == [(2, 3), (3,)]


def _run(seed, values, *, quick=False, hyperparameters="", lesson="02"):
    return {
        "lesson": lesson,
        "seed": seed,
        "quick": quick,
        "hyperparameters": hyperparameters,
        "report": {
            "evaluations": [[1000 * (i + 1), 1.0, v] for i, v in enumerate(values)],
            "hyperparameters": {"num_env_steps": 2000, "gamma": 0.99},
        },
    }


MACHINE = {
    "date": "2026-11-26T12:00:00+00:00",
    "cores": 2,
    "cpu": "EPYC",
    "python": "3.11.9",
    "commit": "abc1234",
}


def test_the_reference_file_holds_every_runs_returns_with_seeds_settings_and_machine():
    from course_helpers.measured_runs import MeasuredRuns

    reference = bench.reference_runs([_run(42, [50.0, 200.0]), _run(42, [60.0, 180.0])], MACHINE)
    assert reference["steps"] == [1000, 2000] and reference["seeds"] == [42, 42]
    assert reference["returns"] == [[50.0, 200.0], [60.0, 180.0]]
    assert reference["hyperparameters"] == {"num_env_steps": 2000, "gamma": 0.99}
    assert reference["commit"] == "abc1234" and "2 cores, EPYC" in reference["machine"]
    runs = MeasuredRuns(
        lesson="02_dqn_cartpole",
        **{k: tuple(v) if isinstance(v, list) else v for k, v in reference.items()},
    )
    assert runs.returns == ([50.0, 200.0], [60.0, 180.0])


@pytest.mark.parametrize(
    "runs, reason",
    [
        ([], "no run was made"),
        ([_run(42, [50.0], quick=True)], "drop --quick"),
        ([_run(42, [50.0], hyperparameters="gamma=1.0")], "drop --quick and --hyperparameters"),
        ([_run(42, [50.0, 60.0]), _run(1, [50.0])], "evaluated at other steps"),
    ],
)
def test_a_reference_that_would_mislead_is_refused(runs, reason):
    with pytest.raises(ValueError, match=reason):
        bench.reference_runs(runs, MACHINE)


def test_each_lessons_runs_become_that_lessons_reference():
    made = bench.references(
        [
            _run(42, [50.0, 200.0]),
            _run(1, [1.0, 6.0], lesson="03"),
            _run(2, [2.0, 7.0], lesson="03"),
        ],
        MACHINE,
    )
    assert set(made) == {"02_dqn_cartpole", "03_sac_minitaur"}
    assert made["02_dqn_cartpole"]["seeds"] == [42]
    assert made["03_sac_minitaur"]["seeds"] == [1, 2]
    assert made["03_sac_minitaur"]["returns"] == [[1.0, 6.0], [2.0, 7.0]]
    with pytest.raises(ValueError, match="no run was made"):
        bench.references([], MACHINE)


def test_write_reference_refuses_other_settings_before_running_anything(capsys):
    from course_tools import cli

    code = cli.main(
        ["bench", "--only", "dqn", "--write-reference", "--hyperparameters", "gamma=1.0"]
    )
    assert code != 0
    assert "--write-reference ships the lesson's own runs" in capsys.readouterr().err


def test_save_runs_refuses_to_overwrite_an_earlier_measurement(tmp_path, capsys):
    from course_tools import cli

    earlier = tmp_path / "runs.json"
    earlier.write_text("{}")
    assert cli.main(["bench", "--only", "dqn", "--save-runs", str(earlier)]) != 0
    assert "already exists" in capsys.readouterr().err
    assert earlier.read_text() == "{}"


def test_the_sac_colab_group_puts_each_colab_profile_beside_the_pinned_stack(monkeypatch, tmp_path):
    """Issue 34: lesson 3's ms per iteration and whether it walks, on the pinned stack and
    on each Colab-like profile, in one run; each profile runs the sac group in its own fresh
    environment, on the Colab runtime (the stand-in for Reverb)."""

    def fake_sac_rows(seeds, quick, iterations, device, environment, *rest):
        return [
            bench.Row(
                "03 SAC", f"cpu seed {seeds[0]}: ms per iteration, evaluation excluded", "11.10"
            ),
            bench.Row("03 SAC", f"cpu seed {seeds[0]}: peak memory", "900 MiB"),
            bench.Row("03 SAC", f"cpu seed {seeds[0]}: best average return", "6.50 at 140,000"),
        ]

    calls = []

    def fake_venv(python, venv):
        (venv / "bin").mkdir(parents=True)
        return venv

    def fake_run(command, **options):
        calls.append((command, options.get("env", {})))
        if command[-2:] == ["-c", "import tensorflow; print(tensorflow.__version__)"]:
            return subprocess.CompletedProcess(command, 0, "2.21.0\n", "")
        printed = (
            "... 03 SAC  cpu seed 42: ms per iteration, evaluation excluded: 8.24\n"
            "... 03 SAC  cpu seed 42: first average return >= 5 (walking): not reached\n"
            "... 03 SAC  cpu seed 42: peak memory: 1000 MiB\n"
        )
        return subprocess.CompletedProcess(command, 0, printed, "")

    monkeypatch.setattr(bench, "sac_rows", fake_sac_rows)
    monkeypatch.setattr(bench, "colab_venv", fake_venv)
    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    rows = {row.figure: row.value for row in bench.sac_colab_rows(["3.13"], 42, 3000, False, {})}
    pinned = [figure for figure in rows if figure.startswith("pinned stack (Python 3.11")]
    assert len(pinned) == 2 and all("Reverb" in figure for figure in pinned)
    colab = "colab 3.13 (TensorFlow 2.21.0, the in-process stand-in for Reverb), seed 42: "
    assert rows[colab + "ms per iteration, evaluation excluded"] == "8.24"
    assert rows[colab + "first average return >= 5 (walking)"] == "not reached"
    assert not any("peak memory" in figure for figure in rows)
    command, environment = calls[0]
    assert command[1:] == [
        "bench",
        "--only",
        "sac",
        "--sac-seeds",
        "42",
        "--sac-iterations",
        "3000",
    ]
    assert environment["COURSE_RUNTIME"] == "colab"


def test_peak_memory_keeps_the_largest_total_and_each_jobs_own_largest():
    """Lesson 4's memory on Binder: the jobs' sizes summed at one moment, not each job's
    peak added up (they need not peak together)."""
    samples = iter(
        [
            {"server": 300.0, "train": 500.0},
            {"server": 400.0, "train": 450.0},
            {"server": 350.0, "train": 700.0},
        ]
    )

    exhausted = threading.Event()

    class FakeCluster:
        def memory_mb(self):
            sample = next(samples, None)
            if sample is None:
                exhausted.set()
            return sample or {}

    with bench.PeakMemory(FakeCluster(), interval=0.01) as peak:
        assert exhausted.wait(10), "the sampler did not take its three samples"
    assert peak.total_mb == 1050.0
    assert peak.by_job == {"server": 400.0, "train": 700.0}
    assert peak.describe() == "1,050 MiB (server 400, train 700)"
