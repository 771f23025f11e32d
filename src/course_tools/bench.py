"""``course bench``: the measurements behind the lessons' speed claims, printed as a table.

Each figure comes from running the lessons themselves, headless, with nbclient: the
training loop a learner reads is the loop that is timed. A few lines of instrumentation
are added around the lessons' cells (never saved into them): they note when each
evaluation starts and ends, so that training time, evaluation time and the time to
the first good evaluation can be told apart.

Groups of figures (``--only`` picks some):

- ``dqn``: lesson 02 in full mode, once per seed: training plus evaluation, time to the
  first average return of 195, the final return, peak memory.
- ``sac``: lesson 03 in full mode, once per SAC seed (one by default: a run takes about
  half an hour): ms per iteration and per environment step (without evaluation),
  evaluation time, the return after 20,000, 100,000 and all iterations, when the robot
  first walks, peak memory.
- ``baseline``: the published TF-Agents tutorials, written out as plain scripts in
  ``benchmarks/published/``, beside the lessons in the same run: the DQN tutorial in full
  (its 20 evaluations of 10 episodes included) against the whole of lesson 2, and the SAC
  tutorial's ms per environment step against lesson 3's, over ``--baseline-iterations``,
  at the lesson's ratio of gradient steps to environment steps and at the tutorial's.
- ``cores``: one core beside all of them, in the same run: lesson 2 as a whole and lesson 3's
  ms per iteration over ``--baseline-iterations``, first on every core this process may
  use, then pinned to one; the ratio estimates Binder's pace from the course machine's.
- ``distributed``: lesson 4's jobs (a Reverb server, a learner, collect jobs, no evaluator),
  started by its ``Cluster`` with 1, 2 and 4 collect jobs (``--collect-jobs``), each run
  ``--distributed-iterations`` gradient steps at lesson 3's settings: environment steps and
  gradient steps per second once training runs, the median and largest policy lag, the
  run's wall time, and the peak resident memory of the jobs together
  (``--distributed-evaluator`` adds the evaluator, as the lesson runs it).
- ``quick``: each lesson executed in quick mode, as CI runs it.
- ``l10n``: extracting, merging and building every translation, in a scratch copy, and
  how long ``course l10n status`` and ``check`` take as a translator runs them.
- ``colab``: each lesson on a fresh Colab-like runtime (a scratch virtual environment
  from ``ci/colab/requirements-X.Y.txt``, ``COURSE_RUNTIME=colab``), in quick mode: how
  long its first cell takes to install what Colab lacks (lesson 3 with the pybullet
  compile, then again with the compiled wheel kept), and the whole lesson.
- ``sac-colab``: lesson 3 on the pinned stack and on each Colab-like profile
  (``--colab-python``), one after the other, same seed (the first of ``--sac-seeds``) and
  ``--sac-iterations``: ms per iteration and, in a full run, when the robot first walks and
  its best return.

``--save-runs FILE`` keeps every DQN and SAC run's report, the file rewritten after each
run; ``--resume`` continues such a file, taking the runs it holds (same lesson code, seeds
and settings, in order) instead of running them again (see :mod:`course_tools.run_log`).

``--cpus 1`` pins the benchmark, and the kernels it starts, to one core: the closest this
machine comes to Binder, which gives a lesson one CPU. (Binder limits CPU time rather than
cores, and its machines differ, so treat the figure as an estimate of Binder's pace.)

With a GPU visible to TensorFlow, ``dqn``, ``sac`` and ``baseline`` run once on the CPU
(``CUDA_VISIBLE_DEVICES=-1``) and once on the GPU. Timings are printed, never asserted:
these machines are shared, so repeat a measurement before trusting a small difference.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from course_tools import instrument, lessons
from course_tools.run_log import RunLog, lesson_code

GROUPS = ("dqn", "sac", "baseline", "cores", "distributed", "quick", "l10n", "colab", "sac-colab")
#: What ``course bench`` measures when no ``--only`` is given.
DEFAULT_GROUPS = tuple(group for group in GROUPS if group != "sac-colab")

# The cells course bench wraps, by id ({source} is the lesson's own code). The code they add
# is course_tools.instrument, imported into the lesson's kernel.
_IMPORT = "from course_tools import instrument as _bench\n"
# A training-loop cell, timed from its first line to its last.
_TIMED_LOOP = "_bench.loop_started()\n{source}\n_bench.loop_ended()"
DQN_CELLS = {
    "train-start": _IMPORT
    + "course.average_return = _bench.timed(course.average_return)\n{source}",
    "train-loop": _TIMED_LOOP,
}
SAC_CELLS = {
    "metrics": _IMPORT + "{source}\n"
    "get_eval_metrics = _bench.timed(get_eval_metrics, lambda m: m['AverageReturn'])",
    "train-loop": _TIMED_LOOP,
}
# The last cell of every instrumented run: the figures, as one line.
_REPORT = "print(_bench.report(globals()))"

# Cells that only show or film the result; the benchmark skips them in its runs (lesson 2's
# plot also draws the runs that `--write-reference` measures, which need not exist yet).
_SKIPPED = {"02_dqn_cartpole": ("plot", "video"), "03_sac_minitaur": ("video",)}


@dataclass
class Row:
    """One line of the table."""

    lesson: str
    figure: str
    value: str


def run_instrumented(
    lesson: str,
    cells: dict[str, str],
    *,
    quick: bool = False,
    seed: int | None = None,
    hyperparameters: str = "",
    environment: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Execute ``lesson`` with ``cells`` replaced (``{source}`` = the lesson's own code).

    Returns the figures the report cell printed, plus ``seconds`` for the whole run.
    """
    name = lessons.lesson_path(lesson).stem
    import nbformat  # imported here: it costs most of a second

    notebook = nbformat.read(lessons.lesson_path(name), as_version=4)
    sources = {cell.get("id"): cell.source for cell in notebook.cells}
    replace = {
        cell_id: code.replace("{source}", sources[cell_id]) for cell_id, code in cells.items()
    }
    for cell_id in _SKIPPED.get(name, ()):
        replace[cell_id] = "# skipped by course bench"
    if seed is not None:
        replace["seed"] = f"SEED = {seed}\ncourse.seed_everything(SEED)"
    variables = {"COURSE_HYPERPARAMETERS": hyperparameters, **(environment or {})}
    with (
        lessons._environment(**variables),
        tempfile.TemporaryDirectory(prefix="course-bench-") as scratch,
    ):
        start = time.perf_counter()
        path = lessons.run_lesson(
            name,
            quick=quick,
            show_progress=False,
            extra_code=_REPORT,
            replace=replace,
            output=Path(scratch) / f"{name}.ipynb",
        )
        seconds = time.perf_counter() - start
        outputs = nbformat.read(path, as_version=4).cells[-1].outputs
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    if instrument.PREFIX not in text:
        raise RuntimeError(f"{name}: the report cell printed no figures:\n{text[-2000:]}")
    return {"seconds": seconds, **json.loads(text.split(instrument.PREFIX, 1)[1])}


def _run_or_resume(
    runs: list[dict[str, Any]] | None,
    lesson: str,
    cells: dict[str, str],
    device: str,
    seed: int,
    hyperparameters: str,
    quick: bool,
    environment: dict[str, str],
) -> dict[str, Any]:
    """The report of one instrumented run of ``lesson``: taken from the runs file where
    ``--resume`` found it finished there, else run now and appended to ``runs``."""
    if isinstance(runs, RunLog):
        finished = runs.take(lesson, device, seed, hyperparameters, quick)
        if finished:
            return finished["report"]
    code = lesson_code(lesson)  # before the run: an edit made while it runs is not its code
    report = run_instrumented(
        lesson,
        cells,
        quick=quick,
        seed=seed,
        hyperparameters=hyperparameters,
        environment=environment,
    )
    if runs is not None:
        runs.append(
            {
                "lesson": lesson,
                "device": device,
                "seed": seed,
                "hyperparameters": hyperparameters,
                "quick": quick,
                "lesson_code": code,
                "report": report,
            }
        )
    return report


def run_labels(device: str, seeds: Sequence[int]) -> list[str]:
    """A row label per run: "cpu seed 42", or "cpu seed 42, run 2" for a seed listed twice."""
    labels, seen = [], dict.fromkeys(seeds, 0)
    for seed in seeds:
        seen[seed] += 1
        labels.append(
            f"{device} seed {seed}" + (f", run {seen[seed]}" if seeds.count(seed) > 1 else "")
        )
    return labels


def _machine_of(runs: list[dict[str, Any]] | None, report: dict[str, Any]) -> str | None:
    """Where and when the run of ``report`` ran, as a row states it, if the log knows."""
    run = next((run for run in runs or [] if run.get("report") is report), None)
    machine = (run or {}).get("machine")
    if not machine:
        return None
    return (
        f"{machine.get('date', '?')}, {machine.get('cores', '?')} cores, "
        f"{machine.get('cpu', '?')}, commit {machine.get('commit') or '?'}"
    )


def _spread(values: Sequence[float], unit: str = "", digits: int = 2) -> str:
    """Median, range and every value: how much runs of one setting differ."""
    text = [f"{value:.{digits}f}" for value in values]
    return (
        f"median {statistics.median(values):.{digits}f}{unit}, from {min(values):.{digits}f} "
        f"to {max(values):.{digits}f}{unit} ({', '.join(text)})"
    )


def first_at(evaluations: Sequence[Sequence[float]], target: float) -> tuple[int, float] | None:
    """(step, seconds into training) of the first evaluation at or above ``target``."""
    for step, seconds, value in evaluations:
        if value >= target:
            return int(step), float(seconds)
    return None


def return_at(evaluations: Sequence[Sequence[float]], step: int) -> float | None:
    """The average return measured at ``step``, if an evaluation ran there."""
    return next((value for at, _, value in evaluations if at == step), None)


def ms_per_iteration(report: dict[str, Any]) -> float:
    """Training time per iteration, evaluation excluded."""
    return 1000 * (report["loop_seconds"] - report["eval_seconds"]) / report["iterations"]


def ms_per_env_step(report: dict[str, Any]) -> float:
    """Training time per environment step, evaluation excluded. The published tutorials take
    one environment step per iteration; lesson 3 takes ``collect_steps_per_iteration``."""
    return (
        1000
        * (report["loop_seconds"] - report["eval_seconds"])
        / report.get("env_steps", report["iterations"])
    )


def q_against_returns(curves: dict[str, list[float]], steps: int = 100) -> str | None:
    """Lesson 2's last check, summed up: over the first ``steps`` steps of its greedy episode,
    the mean Q-value predicted for the action taken and the mean discounted return observed."""
    predicted, observed = curves.get("predicted_q"), curves.get("observed_returns")
    if not predicted or not observed:
        return None
    head = min(steps, len(predicted))
    return (
        f"{statistics.fmean(predicted[:head]):.1f} predicted, "
        f"{statistics.fmean(observed[:head]):.1f} observed "
        f"(first {head} of {len(predicted)} steps)"
    )


def dqn_rows(
    seeds: Sequence[int],
    quick: bool,
    device: str,
    environment: dict[str, str],
    hyperparameters: str = "",
    runs: list[dict[str, Any]] | None = None,
) -> list[Row]:
    """Lesson 02 once per seed (a seed may be listed twice, for two runs of it); with
    ``runs``, each run's seed, settings and report are appended to it as well."""
    lesson, rows, reached, walls, finals = "02 DQN", [], [], [], []
    kept_returns: list[float] = []
    for seed, run_label in zip(seeds, run_labels(device, seeds)):
        report = _run_or_resume(
            runs, "02", DQN_CELLS, device, seed, hyperparameters, quick, environment
        )
        first = first_at(report["evaluations"], 195)
        final = report["evaluations"][-1][2] if report["evaluations"] else float("nan")
        finals.append(final)
        walls.append(report["loop_seconds"])
        reached.append(first[1] if first else None)
        kept = report.get("kept", {})
        if "kept_return" in kept:
            kept_returns.append(kept["kept_return"])
            rows.append(
                Row(
                    lesson,
                    f"{run_label}: kept policy (best evaluation, "
                    f"{kept['best_return']:.1f} at step {int(kept['best_step']):,}), "
                    "average return over 100 new episodes",
                    f"{kept['kept_return']:.1f}",
                )
            )
        q_check = q_against_returns(report.get("curves", {}))
        if q_check:
            rows.append(Row(lesson, f"{run_label}: Q against the observed return", q_check))
        rows += [
            Row(
                lesson,
                f"{run_label}: training + evaluation, {report['iterations']:,} steps",
                f"{report['loop_seconds']:.1f} s (evaluation {report['eval_seconds']:.1f} s)",
            ),
            Row(
                lesson,
                f"{run_label}: first average return >= 195",
                f"step {first[0]:,} after {first[1]:.1f} s" if first else "not reached",
            ),
            Row(lesson, f"{run_label}: final average return", f"{final:.1f}"),
            Row(lesson, f"{run_label}: peak memory", f"{report['peak_memory_mb']:.0f} MiB"),
        ]
    if len(seeds) > 1:
        times = [t for t in reached if t is not None]
        rows += [
            Row(
                lesson,
                f"{device} median training + evaluation, {len(seeds)} runs",
                f"{statistics.median(walls):.1f} s",
            ),
            Row(
                lesson,
                f"{device} median time to 195, {len(seeds)} runs",
                f"{statistics.median(times):.1f} s ({len(times)} of {len(seeds)} reached it)"
                if times
                else "not reached",
            ),
            Row(
                lesson,
                f"{device} runs whose final average return is >= 195",
                f"{sum(final >= 195 for final in finals)} of {len(seeds)} "
                f"(finals: {', '.join(f'{final:.1f}' for final in finals)})",
            ),
        ]
        if kept_returns:
            rows.append(
                Row(
                    lesson,
                    f"{device} runs whose kept policy scores >= 195 over 100 new episodes",
                    f"{sum(value >= 195 for value in kept_returns)} of {len(kept_returns)} "
                    f"(scores: {', '.join(f'{value:.1f}' for value in kept_returns)})",
                )
            )
    return rows


def sac_rows(
    seeds: Sequence[int],
    quick: bool,
    iterations: int | None,
    device: str,
    environment: dict[str, str],
    hyperparameters: str = "",
    runs: list[dict[str, Any]] | None = None,
) -> list[Row]:
    """Lesson 03 once per seed; each run takes about half an hour in full mode, hence one
    seed by default. An iteration is one gradient step and ``collect_steps_per_iteration``
    environment steps; the rows give both counts. With ``runs``, each run's seed, settings
    and report are appended to it as well."""
    lesson, rows, walked_after = "03 SAC", [], []
    bests: list[float] = []
    finals: list[float] = []
    kept_returns: list[float] = []
    per_iteration_ms: list[float] = []
    # A short run still records its training curves ten times.
    overrides = ",".join(
        filter(
            None,
            [
                f"num_iterations={iterations},log_interval={_tenth(iterations)}"
                if iterations
                else "",
                hyperparameters,
            ],
        )
    )
    for seed, run_label in zip(seeds, run_labels(device, seeds)):
        report = _run_or_resume(runs, "03", SAC_CELLS, device, seed, overrides, quick, environment)
        evaluations, label = report["evaluations"], f"{run_label}:"
        per_iteration = report["env_steps"] // report["iterations"]

        def steps(iteration: int, per_iteration: int = per_iteration) -> str:
            return f"{iteration:,} iterations ({iteration * per_iteration:,} environment steps)"

        rows += [
            Row(
                lesson,
                f"{label} ms per iteration, evaluation excluded",
                f"{ms_per_iteration(report):.2f}",
            ),
            Row(
                lesson,
                f"{label} ms per environment step, evaluation excluded",
                f"{ms_per_env_step(report):.2f}",
            ),
            Row(
                lesson,
                f"{label} training loop, {steps(report['iterations'])}",
                f"{report['loop_seconds'] / 60:.1f} min (evaluation {report['eval_seconds']:.0f} s)",
            ),
        ]
        for step in sorted({20_000, 100_000, report["iterations"]}):
            value = return_at(evaluations, step)
            if value is not None:
                rows.append(
                    Row(lesson, f"{label} average return at {step:,} iterations", f"{value:.2f}")
                )
        best = max(evaluations, key=lambda e: e[2], default=None)
        if best:
            rows.append(
                Row(
                    lesson,
                    f"{label} best average return",
                    f"{best[2]:.2f} at {steps(best[0])}, {best[1] / 60:.1f} min",
                )
            )
        walked = first_at(evaluations, 5.0)
        walked_after.append(walked[1] if walked else None)
        rows += [
            Row(
                lesson,
                f"{label} first average return >= 5 (walking)",
                f"{steps(walked[0])}, {walked[1] / 60:.1f} min" if walked else "not reached",
            ),
            Row(
                lesson,
                f"{label} return against time (iterations, min, return)",
                "; ".join(f"{s:,}, {t / 60:.1f}, {v:.2f}" for s, t, v in evaluations),
            ),
            Row(
                lesson,
                f"{label} alpha and entropy at each evaluation (iterations, alpha, entropy)",
                alpha_and_entropy(report.get("curves", {}), [int(e[0]) for e in evaluations]),
            ),
            Row(lesson, f"{label} peak memory", f"{report['peak_memory_mb']:.0f} MiB"),
        ]
        kept = report.get("kept", {})
        if "kept_return" in kept:
            kept_returns.append(kept["kept_return"])
            rows.append(
                Row(
                    lesson,
                    f"{label} kept actor (best evaluation, {kept['best_return']:.2f} at "
                    f"{int(kept['best_step']):,} iterations), average return on new episodes",
                    f"{kept['kept_return']:.2f}",
                )
            )
        machine = _machine_of(runs, report)
        if machine:
            rows.append(Row(lesson, f"{label} ran on", machine))
        bests.append(best[2] if best else float("nan"))
        finals.append(evaluations[-1][2] if evaluations else float("nan"))
        per_iteration_ms.append(ms_per_iteration(report))
    if len(seeds) > 1:
        runs_label = f"{device}, {len(seeds)} runs (seeds {', '.join(map(str, seeds))})"
        times = [t / 60 for t in walked_after if t is not None]
        rows += [
            Row(
                lesson,
                f"{runs_label}: walked (an evaluation at 5 or more)",
                f"{len(times)} of {len(seeds)}",
            ),
            Row(
                lesson,
                f"{runs_label}: minutes of training to walk, of those that walked",
                _spread(times, " min", 1) if times else "none walked",
            ),
            Row(lesson, f"{runs_label}: best average return", _spread(bests)),
            Row(lesson, f"{runs_label}: final average return", _spread(finals)),
            Row(
                lesson,
                f"{runs_label}: ms per iteration, evaluation excluded",
                _spread(per_iteration_ms, " ms"),
            ),
        ]
        if len(kept_returns) == len(seeds):
            rows.append(
                Row(
                    lesson,
                    f"{runs_label}: kept actor's average return on new episodes",
                    _spread(kept_returns),
                )
            )
    return rows


def run_published(
    name: str, arguments: Sequence[str], environment: dict[str, str]
) -> dict[str, Any]:
    """Run ``benchmarks/published/<name>.py``, a published tutorial as a plain script.

    Returns the figures it printed, plus ``seconds`` for the whole process, start-up included.
    """
    script = lessons.project_root() / "benchmarks" / "published" / f"{name}.py"
    start = time.perf_counter()
    ran = subprocess.run(
        [sys.executable, str(script), *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
    )
    seconds = time.perf_counter() - start
    if ran.returncode != 0 or "BENCHMARK " not in ran.stdout:
        tail = "\n".join((ran.stdout + ran.stderr).strip().splitlines()[-20:])
        raise RuntimeError(
            f"{script.name} failed (exit {ran.returncode}); the end of its output:\n{tail}"
        )
    return {"seconds": seconds, **json.loads(ran.stdout.split("BENCHMARK ", 1)[1])}


def _loop_and_whole(report: dict[str, Any]) -> str:
    return (
        f"loop {report['loop_seconds']:.1f} s (evaluation {report['eval_seconds']:.1f} s); "
        f"whole {report['seconds']:.1f} s"
    )


def alpha_and_entropy(curves: dict[str, list[float]], steps: Sequence[int]) -> str:
    """SAC's α and policy entropy where they were logged at an evaluation's step."""
    logged = dict(
        zip(curves.get("log_steps", []), zip(curves.get("alphas", []), curves.get("entropies", [])))
    )
    found = [(step, *logged[step]) for step in steps if step in logged]
    return (
        "; ".join(f"{step:,}, {alpha:.3f}, {entropy:.2f}" for step, alpha, entropy in found)
        or "none logged"
    )


def baseline_rows(
    quick: bool, iterations: int, device: str, environment: dict[str, str]
) -> list[Row]:
    """The published tutorials as plain scripts, beside the lessons, in the same run."""
    return dqn_baseline_rows(quick, device, environment) + sac_baseline_rows(
        quick, iterations, device, environment
    )


def dqn_baseline_rows(quick: bool, device: str, environment: dict[str, str]) -> list[Row]:
    """The DQN tutorial in full (20,000 iterations, 20 evaluations of 10 episodes, as it is
    published) and lesson 2 in full, as wholes: the script's process against the whole notebook.
    """
    dqn_arguments = (
        ["--iterations", "300", "--eval-interval", "100", "--eval-episodes", "2"] if quick else []
    )
    published = run_published("dqn_tutorial", dqn_arguments, environment)
    lesson = run_instrumented("02", DQN_CELLS, quick=quick, environment=environment)
    return [
        Row(
            "02 DQN",
            f"{device} published tutorial as a script, {published['iterations']:,} iterations, "
            f"{len(published['evaluations']) - 1} evaluations",
            _loop_and_whole(published),
        ),
        Row(
            "02 DQN",
            f"{device} published tutorial: ms per iteration, evaluation excluded",
            f"{ms_per_iteration(published):.2f}",
        ),
        Row(
            "02 DQN",
            f"{device} lesson, {lesson['iterations']:,} environment steps, "
            f"{len(lesson['evaluations'])} evaluations",
            _loop_and_whole(lesson),
        ),
        Row(
            "02 DQN",
            f"{device} published tutorial / whole lesson",
            f"{published['seconds'] / lesson['seconds']:.1f} times",
        ),
    ]


def sac_baseline_rows(
    quick: bool, iterations: int, device: str, environment: dict[str, str]
) -> list[Row]:
    """``iterations`` iterations of the SAC tutorial's loop and of lesson 3's, after the same
    10,000 random steps, with no evaluation inside them, for the ms per environment step
    (tracing included). The tutorial takes one gradient step per environment step, the
    lesson one per ``collect_steps_per_iteration``; a third run gives the lesson the
    tutorial's ratio (and its former 10 iterations per call), for a comparison at equal work.
    """
    sac_iterations = 200 if quick else iterations
    initial = 300 if quick else 10_000
    published = run_published(
        "sac_tutorial",
        [
            "--iterations",
            str(sac_iterations),
            "--initial-collect-steps",
            str(initial),
            "--eval-interval",
            "0",
            "--eval-episodes",
            "1" if quick else "20",
        ],
        environment,
    )
    # log_interval: the lesson plots its training curves, which needs at least one point.
    overrides = (
        f"num_iterations={sac_iterations},eval_interval={sac_iterations},"
        f"log_interval={_tenth(sac_iterations)},initial_collect_steps={initial}"
    )
    lesson = run_instrumented(
        "03", SAC_CELLS, quick=quick, hyperparameters=overrides, environment=environment
    )
    equal_work = run_instrumented(
        "03",
        SAC_CELLS,
        quick=quick,
        environment=environment,
        hyperparameters=overrides + ",collect_steps_per_iteration=1,steps_per_call=10",
    )
    ratio = lesson["env_steps"] // lesson["iterations"]
    label = "ms per environment step, evaluation excluded"
    return [
        Row(
            "03 SAC",
            f"{device} published tutorial, {sac_iterations:,} environment steps "
            f"and gradient steps: {label}",
            f"{ms_per_env_step(published):.2f}",
        ),
        Row(
            "03 SAC",
            f"{device} lesson, {lesson['env_steps']:,} environment steps and "
            f"{lesson['iterations']:,} gradient steps: {label}",
            f"{ms_per_env_step(lesson):.2f}",
        ),
        Row(
            "03 SAC",
            f"{device} published tutorial / lesson, ms per environment step "
            f"(the lesson takes 1 gradient step per {ratio})",
            f"{ms_per_env_step(published) / ms_per_env_step(lesson):.1f} times",
        ),
        Row(
            "03 SAC",
            f"{device} lesson at 1 gradient step per environment step, "
            f"{sac_iterations:,} of each: {label}",
            f"{ms_per_env_step(equal_work):.2f}",
        ),
        Row(
            "03 SAC",
            f"{device} published tutorial / lesson at equal work",
            f"{ms_per_env_step(published) / ms_per_env_step(equal_work):.1f} times",
        ),
        Row(
            "03 SAC",
            f"{device} peak memory: published tutorial; lesson",
            f"{published['peak_memory_mb']:.0f} MiB; {lesson['peak_memory_mb']:.0f} MiB",
        ),
    ]


def cores_rows(quick: bool, iterations: int, device: str, environment: dict[str, str]) -> list[Row]:
    """Lesson 2 as a whole and ``iterations`` of lesson 3's loop, on every core this process
    may use and then on one (kernels inherit the process's CPU affinity)."""
    available = sorted(os.sched_getaffinity(0))
    if len(available) < 2:
        return [
            Row(
                "--",
                f"{device} one core against {len(available)}",
                "skipped: this process may use only one core (was it started with --cpus 1?)",
            )
        ]
    sac_iterations = 200 if quick else iterations
    initial = 300 if quick else 10_000
    overrides = (
        f"num_iterations={sac_iterations},eval_interval={sac_iterations},"
        f"log_interval={_tenth(sac_iterations)},initial_collect_steps={initial}"
    )
    runs: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    for cores in (available, available[:1]):
        os.sched_setaffinity(0, cores)
        try:
            runs[len(cores)] = (
                run_instrumented("02", DQN_CELLS, quick=quick, environment=environment),
                run_instrumented(
                    "03", SAC_CELLS, quick=quick, hyperparameters=overrides, environment=environment
                ),
            )
        finally:
            os.sched_setaffinity(0, available)
    many, one = len(available), 1
    rows = []
    for count in (many, one):
        dqn, sac = runs[count]
        on = f"{count} core{'s' if count > 1 else ''}"
        rows += [
            Row(
                "02 DQN",
                f"{device} {on}: whole lesson, {dqn['iterations']:,} environment steps",
                _loop_and_whole(dqn),
            ),
            Row(
                "03 SAC",
                f"{device} {on}: {sac['iterations']:,} iterations "
                f"({sac['env_steps']:,} environment steps): ms per iteration, evaluation excluded",
                f"{ms_per_iteration(sac):.2f}",
            ),
        ]
    rows += [
        Row(
            "02 DQN",
            f"{device} whole lesson, 1 core / {many} cores",
            f"{runs[one][0]['seconds'] / runs[many][0]['seconds']:.2f} times",
        ),
        Row(
            "03 SAC",
            f"{device} ms per iteration, 1 core / {many} cores",
            f"{ms_per_iteration(runs[one][1]) / ms_per_iteration(runs[many][1]):.2f} times",
        ),
    ]
    return rows


class PeakMemory:
    """The largest resident memory of a cluster's jobs while it runs: of all of them
    together, and of each, sampled every ``interval`` seconds (``Cluster.memory_mb``)."""

    def __init__(self, cluster: Any, interval: float = 0.5):
        self.cluster, self.interval = cluster, interval
        self.total_mb = 0.0
        self.by_job: dict[str, float] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            sizes = self.cluster.memory_mb()
            self.total_mb = max(self.total_mb, sum(sizes.values()))
            for name, size in sizes.items():
                self.by_job[name] = max(self.by_job.get(name, 0.0), size)
            if self._done.wait(self.interval):
                return

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exception: object) -> None:
        self._done.set()
        self._thread.join()

    def describe(self) -> str:
        """ "1,740 MiB (server 350, train 420, ...)": the total, then each job's own peak."""
        jobs = ", ".join(f"{name} {size:,.0f}" for name, size in self.by_job.items())
        return f"{self.total_mb:,.0f} MiB ({jobs})"


def distributed_rows(
    collect_jobs: Sequence[int],
    iterations: int,
    quick: bool,
    emit_runs: list | None = None,
    evaluator: bool = False,
) -> list[Row]:
    """Lesson 4's jobs with each number of collect jobs, one run each, one after another;
    with ``evaluator``, the evaluator too, as the lesson runs them."""
    from course_helpers.distributed import DEFAULTS, QUICK, Cluster

    settings = {**DEFAULTS, **(QUICK if quick else {})}
    if not quick:
        settings.update(num_iterations=iterations, initial_collect_steps=2_000)
    rows = []
    for count in collect_jobs:
        with tempfile.TemporaryDirectory(prefix="course-distributed-") as folder:
            cluster = Cluster(folder, settings, collect_jobs=count, evaluator=evaluator)
            started = time.perf_counter()
            cluster.start(check_memory=False)  # the benchmark measures; it is not a lesson
            try:
                with PeakMemory(cluster) as memory:
                    cluster.wait(timeout=6 * 3600, show=False)
            finally:
                cluster.stop()
            seconds = time.perf_counter() - started
            speed, lags = cluster.throughput(), cluster.policy_lags()
        if emit_runs is not None:
            emit_runs.append(
                {
                    "lesson": "04",
                    "collect_jobs": count,
                    "evaluator": evaluator,
                    "seconds": seconds,
                    **speed,
                    "lags": lags,
                    "peak_memory_mb": memory.total_mb,
                    "peak_memory_mb_by_job": memory.by_job,
                }
            )
        label = (
            f"{count} collect job{'s' if count > 1 else ''}"
            f"{' and the evaluator' if evaluator else ''}, {settings['num_iterations']:,} steps"
        )
        rows += [
            Row(
                "04 distributed",
                f"{label}: environment steps per second, all collect jobs",
                f"{speed['env_steps_per_second']:.1f}",
            ),
            Row(
                "04 distributed",
                f"{label}: gradient steps per second",
                f"{speed['gradient_steps_per_second']:.2f}",
            ),
            Row(
                "04 distributed",
                f"{label}: policy lag, median and largest (gradient steps)",
                f"{statistics.median(lags):.0f}, {max(lags)}" if lags else "no stretch recorded",
            ),
            Row("04 distributed", f"{label}: whole run, start to stop", _seconds(seconds)),
            Row(
                "04 distributed",
                f"{label}: peak resident memory, all jobs together (each job's own peak)",
                memory.describe(),
            ),
        ]
    return rows


def quick_rows(names: Sequence[str]) -> list[Row]:
    """Each lesson in quick mode on this stack (the pinned one: Binder and local)."""
    rows = []
    for name in names:
        stem = lessons.lesson_path(name).stem
        with tempfile.TemporaryDirectory(prefix="course-bench-") as scratch:
            output = Path(scratch) / f"{stem}.ipynb"
            start = time.perf_counter()
            lessons.run_lesson(stem, quick=True, show_progress=False, output=output)
            whole = time.perf_counter() - start
            seconds = cell_seconds(first_code_cell(output))
            rows += [
                Row(stem[:2], "quick mode: first cell (set-up)", _seconds(seconds)),
                Row(stem[:2], "quick mode: whole lesson", f"{whole:.1f} s"),
            ]
    return rows


def l10n_rows() -> list[Row]:
    """Extract, merge and build every language, in a scratch copy of notebooks/ and locales/;
    then the start-up of the commands a translator runs most."""
    from course_tools.l10n import build, catalogs

    root = lessons.project_root()
    with tempfile.TemporaryDirectory(prefix="course-bench-") as scratch:
        copy = Path(scratch)
        for folder in ("notebooks", "locales"):
            shutil.copytree(root / folder, copy / folder)
        start = time.perf_counter()
        catalogs.extract(copy)
        catalogs.update(copy, None)
        written = build.build(copy, None)
        seconds = time.perf_counter() - start
    rows = [
        Row(
            "all",
            f"localization build: extract, update, build ({len(written)} notebooks)",
            f"{seconds:.1f} s",
        )
    ]
    # What an author or a translator waits for: each read-only command as its own process
    # (Python's start-up included), the median of three runs, on the repository itself.
    for command in (["--help"], ["list"], ["l10n", "status"], ["l10n", "check"]):
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "course_tools.cli", *command],
                cwd=root,
                capture_output=True,
                check=False,
            )
            runs.append(time.perf_counter() - start)
        rows.append(
            Row(
                "all",
                f"course {' '.join(command)} (a new process, median of 3)",
                f"{statistics.median(runs):.2f} s",
            )
        )
    return rows


def first_code_cell(path: Path) -> Any:
    """The first code cell of an executed notebook: the lesson's set-up cell."""
    import nbformat  # imported here: it costs most of a second

    return next(
        cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"
    )


def installed_for_colab(cell: Any) -> str:
    """What an executed English set-up cell says it installed for Colab, or "nothing"."""
    printed = "".join(output.get("text", "") for output in cell.get("outputs", []))
    found = re.search(r"Installed for Colab in \d+ s: (.*)\.", printed)
    return found.group(1) if found else "nothing"


def _seconds(seconds: float | None) -> str:
    return f"{seconds:.1f} s" if seconds is not None else "?"


def cell_seconds(cell: Any) -> float | None:
    """How long nbclient took to run an executed cell, from the timing it records."""
    timing = cell.get("metadata", {}).get("execution", {})
    try:
        start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    return (end - start).total_seconds()


def colab_venv(python: str, venv: Path) -> Path:
    """A fresh environment of the Colab-like profile for ``python`` (what Colab preinstalls),
    with the course installed from this checkout; its set-up cell installs the rest."""
    root = lessons.project_root()
    lock = root / "ci" / "colab" / f"requirements-{python}.txt"
    if not lock.exists():
        raise ValueError(f"No Colab-like profile for Python {python}: {lock} does not exist.")
    interpreter = subprocess.run(
        [str(root / "ci" / "find-python"), python], check=True, capture_output=True, text=True
    ).stdout.strip()
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
    for arguments in (["-r", str(lock)], ["--no-deps", "-e", str(root)]):
        subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *arguments],
            check=True,
        )
    return venv


#: The rows of lesson 3's run that the sac-colab group reads from each profile's own bench.
SAC_COLAB_FIGURES = (
    "ms per iteration, evaluation excluded",
    "first average return >= 5 (walking)",
    "best average return",
)


def sac_colab_rows(
    pythons: Sequence[str],
    seed: int,
    iterations: int | None,
    quick: bool,
    environment: dict[str, str],
) -> list[Row]:
    """Lesson 3 on the pinned stack (with Reverb) and on each Colab-like profile (newer
    Python and TensorFlow, the in-process stand-in for Reverb), one after the other in one
    run, same seed and iterations: the ms per iteration of each and, in a full run, whether
    the robot walks there. Each profile runs ``course bench --only sac`` in its own fresh
    environment, whose set-up cell first installs what Colab lacks (pybullet is compiled
    once per profile; that time is not counted)."""
    import importlib.metadata

    options = ["--sac-seeds", str(seed)]
    options += ["--sac-iterations", str(iterations)] if iterations else []
    options += ["--quick"] if quick else []
    pinned = (
        f"pinned stack (Python {sys.version_info.major}.{sys.version_info.minor}, "
        f"TensorFlow {importlib.metadata.version('tensorflow')}, Reverb)"
    )
    rows = [
        Row("03 SAC", f"{pinned}, {row.figure.removeprefix('cpu ')}", row.value)
        for row in sac_rows([seed], quick, iterations, "cpu", environment)
        if row.figure.endswith(SAC_COLAB_FIGURES)
    ]
    with tempfile.TemporaryDirectory(prefix="course-bench-sac-colab-") as scratch:
        for python in pythons:
            venv = colab_venv(python, Path(scratch) / f"venv-{python}")
            ran = subprocess.run(
                [str(venv / "bin" / "course"), "bench", "--only", "sac", *options],
                env={
                    **os.environ,
                    **environment,
                    "COURSE_RUNTIME": "colab",
                    "MPLBACKEND": "Agg",
                    "COURSE_WHEEL_CACHE": str(Path(scratch) / "wheels"),
                },
                cwd=lessons.project_root(),
                capture_output=True,
                text=True,
            )
            if ran.returncode != 0:
                tail = "\n".join((ran.stdout + ran.stderr).strip().splitlines()[-20:])
                raise RuntimeError(
                    f"lesson 3 failed on the Colab-like runtime for Python {python}; "
                    f"the end of its output:\n{tail}"
                )
            version = subprocess.run(
                [
                    str(venv / "bin" / "python"),
                    "-c",
                    "import tensorflow; print(tensorflow.__version__)",
                ],
                capture_output=True,
                text=True,
            ).stdout.strip()
            label = f"colab {python} (TensorFlow {version}, the in-process stand-in for Reverb)"
            rows += [
                Row("03 SAC", f"{label}, {figure}", value)
                for figure, value in emitted_rows(ran.stdout)
                if figure.endswith(SAC_COLAB_FIGURES)
            ]
            shutil.rmtree(venv)
    return rows


def emitted_rows(output: str) -> list[tuple[str, str]]:
    """The (figure, value) of each row a ``course bench`` process printed as it went
    ("... 03 SAC  cpu seed 7: best average return: 6.21 at ..."), without the device."""
    found = []
    for line in output.splitlines():
        if not line.startswith("... "):
            continue
        _, _, rest = line.partition("  ")  # after the lesson ("03 SAC")
        figure, _, value = rest.partition(" ")[2].rpartition(": ")  # after the device
        if figure:
            found.append((figure, value))
    return found


def colab_rows(python: str, quick: bool = True) -> list[Row]:
    """Each lesson on a fresh Colab-like runtime, as a learner opening it from its badge.

    Colab gives every notebook its own runtime, so each lesson starts from a new scratch
    environment holding the profile's lock (what Colab preinstalls), and its set-up cell
    installs the rest. Lesson 3 runs twice: compiling pybullet, then reusing the wheel
    that compile left in the wheel cache. ``quick`` only shortens the benchmark's own
    check (lessons 1 and 3, without the second run).
    """
    root = lessons.project_root()
    label = f"colab {python}"
    runs = (
        [("01", "fresh"), ("03", "fresh")]
        if quick
        else [("01", "fresh"), ("02", "fresh"), ("03", "fresh"), ("03", "wheel kept")]
    )
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="course-bench-colab-") as scratch:
        wheels = Path(scratch) / "wheels"
        for number, how in runs:
            venv = colab_venv(python, Path(scratch) / f"venv-{number}-{how.replace(' ', '-')}")
            stem = lessons.lesson_path(number).stem
            output = Path(scratch) / f"{stem}-{how.replace(' ', '-')}.ipynb"
            environment = {
                **os.environ,
                "COURSE_RUNTIME": "colab",
                "MPLBACKEND": "Agg",
                "COURSE_WHEEL_CACHE": str(wheels),
                "COURSE_QUICK": "1",
            }
            start = time.perf_counter()
            ran = subprocess.run(
                [str(venv / "bin" / "course"), "run", stem, "--quick", "-o", str(output)],
                env=environment,
                cwd=root,
                capture_output=True,
                text=True,
            )
            whole = time.perf_counter() - start
            if ran.returncode != 0:
                tail = "\n".join((ran.stdout + ran.stderr).strip().splitlines()[-20:])
                raise RuntimeError(
                    f"{stem} failed on the Colab-like runtime for Python "
                    f"{python} ({how}); the end of its output:\n{tail}"
                )
            first = first_code_cell(output)
            rows += [
                Row(
                    stem[:2],
                    f"{label}, {how} runtime: first cell (installs {installed_for_colab(first)})",
                    _seconds(cell_seconds(first)),
                ),
                Row(
                    stem[:2], f"{label}, {how} runtime: whole lesson, quick mode", f"{whole:.1f} s"
                ),
            ]
            shutil.rmtree(venv)
    return rows


def machine_description() -> dict[str, Any]:
    """When and where a measurement ran: the date, the cores this process may use, the CPU's
    model, the Python and TensorFlow versions, and the course's commit (if in a git checkout)."""
    import platform

    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in cpuinfo.read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=lessons.project_root(),
    )
    # A lesson changed for a trial (a worktree with an edit) is not the commit's lesson.
    changed = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", "notebooks", "src"],
        capture_output=True,
        text=True,
        cwd=lessons.project_root(),
    )
    return {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "cores": len(os.sched_getaffinity(0)),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
        "commit": (
            commit.stdout.strip() + (" with local changes" if changed.stdout.strip() else "")
        )
        if commit.returncode == 0
        else "",
    }


#: Where ``--write-reference`` writes the lessons' measured runs, shipped with the helpers.
REFERENCES = Path(__file__).resolve().parent.parent / "course_helpers" / "measurements"


#: The lesson each benchmark group's runs belong to.
def _tenth(iterations: int) -> int:
    """A tenth of a SAC run, rounded down to a multiple of the lesson's ``steps_per_call``
    (5), which its loop counts in and its hyperparameters cell requires."""
    return max(5, iterations // 50 * 5)


REFERENCE_LESSONS = {"02": "02_dqn_cartpole", "03": "03_sac_minitaur"}


def reference_runs(runs: Sequence[dict[str, Any]], machine: dict[str, Any]) -> dict[str, Any]:
    """One lesson's full runs, as :func:`course_helpers.measured_runs` reads them: the
    average return at each evaluation of each run, with the seeds, settings, date, machine
    and commit.

    Only runs of the lesson's own defaults in full mode may be shipped: a reference measured
    with other settings, or in quick mode, would mislead every learner who compares with it.
    """
    if not runs:
        raise ValueError("--write-reference needs the dqn or sac group: no run was made.")
    if any(run["quick"] or run["hyperparameters"] for run in runs):
        raise ValueError(
            "--write-reference ships the lesson's own runs: drop --quick and --hyperparameters."
        )
    steps = [int(step) for step, _, _ in runs[0]["report"]["evaluations"]]
    returns = []
    for run in runs:
        evaluations = run["report"]["evaluations"]
        if [int(step) for step, _, _ in evaluations] != steps:
            raise ValueError(
                f"seed {run['seed']} evaluated at other steps than seed {runs[0]['seed']}; "
                "the runs cannot be drawn as one band."
            )
        returns.append([round(float(value), 2) for _, _, value in evaluations])
    # Runs taken from a resumed file ran on their own day and machine: the reference gives
    # the last run's date, and every machine and commit the runs ran on.
    machines = [run.get("machine") or machine for run in runs]
    return {
        "date": max(str(m.get("date") or machine["date"]) for m in machines),
        "machine": "; ".join(
            dict.fromkeys(
                f"{m.get('cores', '?')} cores, {m.get('cpu', '?')}, Python {m.get('python', '?')}"
                for m in machines
            )
        ),
        "commit": ", ".join(dict.fromkeys(str(m.get("commit", "")) for m in machines)),
        "seeds": [int(run["seed"]) for run in runs],
        "hyperparameters": runs[0]["report"]["hyperparameters"],
        "steps": steps,
        "returns": returns,
    }


def references(runs: Sequence[dict[str, Any]], machine: dict[str, Any]) -> dict[str, Any]:
    """{lesson name: its reference}, one per lesson among ``runs`` (lesson 2's DQN runs,
    lesson 3's SAC runs), each made by :func:`reference_runs`."""
    by_lesson: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        if run["lesson"] in REFERENCE_LESSONS:  # lesson 4's runs measure speed only
            by_lesson.setdefault(REFERENCE_LESSONS[run["lesson"]], []).append(run)
    if not by_lesson:
        raise ValueError("--write-reference needs the dqn or sac group: no run was made.")
    return {name: reference_runs(found, machine) for name, found in by_lesson.items()}


def devices() -> list[tuple[str, dict[str, str]]]:
    """("cpu", env) always, and ("gpu", {}) when TensorFlow sees a GPU."""
    import tensorflow as tf

    found = [("cpu", {"CUDA_VISIBLE_DEVICES": "-1"})]
    if tf.config.list_physical_devices("GPU"):
        found.append(("gpu", {}))
    return found


def measure(
    only: Sequence[str] = GROUPS,
    seeds: Sequence[int] = (42, 1, 2, 3, 4),
    sac_seeds: Sequence[int] = (42,),
    quick: bool = False,
    sac_iterations: int | None = None,
    hyperparameters: str = "",
    baseline_iterations: int = 10_000,
    lessons_for_quick: Sequence[str] | None = None,
    colab_pythons: Sequence[str] = ("3.13",),
    collect_jobs: Sequence[int] = (1, 2, 4),
    distributed_iterations: int = 3_000,
    distributed_evaluator: bool = False,
    emit: Callable[[Row], None] = lambda row: None,
    runs: list[dict[str, Any]] | None = None,
) -> list[Row]:
    """Run the chosen groups and return their rows; ``emit`` sees each row as it is ready,
    and ``runs``, where given, receives every DQN and SAC run's full report."""
    unknown = sorted(set(only) - set(GROUPS))
    if unknown:
        raise ValueError(
            f"Unknown benchmark group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}."
        )
    rows: list[Row] = []

    def add(new_rows: list[Row]) -> None:
        for row in new_rows:
            rows.append(row)
            emit(row)

    needs_device = {"dqn", "sac", "baseline", "cores"} & set(only)
    for device, environment in devices() if needs_device else []:
        if "dqn" in only:
            add(dqn_rows(seeds, quick, device, environment, hyperparameters, runs))
        if "sac" in only:
            add(
                sac_rows(
                    sac_seeds, quick, sac_iterations, device, environment, hyperparameters, runs
                )
            )
        if "baseline" in only:
            add(baseline_rows(quick, baseline_iterations, device, environment))
        if "cores" in only:
            add(cores_rows(quick, baseline_iterations, device, environment))
    if "distributed" in only:
        add(
            distributed_rows(
                collect_jobs, distributed_iterations, quick, runs, distributed_evaluator
            )
        )
    if "quick" in only:
        add(quick_rows(lessons_for_quick or lessons.lesson_names()))
    if "l10n" in only:
        add(l10n_rows())
    if "colab" in only:
        for python in colab_pythons:
            add(colab_rows(python, quick=quick))
    if "sac-colab" in only:
        add(sac_colab_rows(colab_pythons, sac_seeds[0], sac_iterations, quick, {}))
    return rows


def pin_to_cpus(count: int) -> list[int]:
    """Run this process, and every kernel it starts, on ``count`` of its cores."""
    available = sorted(os.sched_getaffinity(0))
    if not 1 <= count <= len(available):
        raise ValueError(
            f"--cpus takes a number from 1 to {len(available)}, the cores this "
            f"process may use; got {count}."
        )
    os.sched_setaffinity(0, available[:count])
    return available[:count]


def format_table(rows: Sequence[Row], markdown: bool = False) -> str:
    """The rows as an aligned text table, or as a Markdown table."""
    header = Row("lesson", "figure", "value")
    if markdown:
        lines = [f"| {header.lesson} | {header.figure} | {header.value} |", "| --- | --- | --- |"]
        return "\n".join(lines + [f"| {r.lesson} | {r.figure} | {r.value} |" for r in rows])
    widths = [max(len(getattr(r, f)) for r in [header, *rows]) for f in ("lesson", "figure")]
    return "\n".join(
        f"{r.lesson:<{widths[0]}}  {r.figure:<{widths[1]}}  {r.value}" for r in [header, *rows]
    )
