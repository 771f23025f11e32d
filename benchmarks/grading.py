"""Benchmark: how long `course grade` takes for a class of submissions of one lesson.

    .venv/bin/python benchmarks/grading.py                     # 20 submissions of lesson 01, en
    .venv/bin/python benchmarks/grading.py 02 --lang fr -n 5
    .venv/bin/python benchmarks/grading.py -n 10 --compare     # each also graded unsandboxed
    .venv/bin/python benchmarks/grading.py -n 60 --jobs 1,2 --fillers 6  # a class, two ways

Every submission is the released notebook with the reference solutions filled in, so each
one runs the whole lesson (in quick mode, as grading does). With ``--compare``, each
submission is graded twice in a row, in the sandbox and without it, and the figures
include the median of the paired differences: what the sandbox costs per submission.
With ``--jobs 1,2`` the whole class is graded once with each number of jobs, one after
the other (nbgrader's ``--force`` grades again), and the figures include each one's wall
time and the speed-up over the first. ``--fillers K`` makes K of the submissions also try
to write 300,000 empty files in their folder, as a hostile class did (they stop at the
sandbox's disk limit). After the last grading, ``nbgrader generate_feedback`` and
``nbgrader export`` are timed for the whole class. Prints figures; asserts nothing. The
course is built in a temporary folder and removed afterwards.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from course_tools import exercises, lessons
from course_tools.grading import assignment, grade

# What a hostile submission did: empty files until none more may be made. The workflow
# test's class holds it too (tests/grading/fixtures.py), so the code is taken from there.
# (Loaded by path: this script is itself named grading.)
_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "grading" / "fixtures.py"
_spec = importlib.util.spec_from_file_location("course_grading_fixtures", _FIXTURES)
assert _spec is not None and _spec.loader is not None
_fixtures = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
FILLER = _fixtures.FILES_FILLER


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lesson", nargs="?", default="01")
    parser.add_argument("--lang", default="en")
    parser.add_argument("-n", "--submissions", type=int, default=20)
    parser.add_argument(
        "--compare",
        action="store_true",
        help="grade each submission again without the sandbox, right after",
    )
    parser.add_argument("--jobs", default="1", help="comma-separated numbers of jobs, e.g. 1,2")
    parser.add_argument(
        "--fillers", type=int, default=0, help="submissions that also fill their folder with files"
    )
    args = parser.parse_args()
    jobs = [int(value) for value in args.jobs.split(",")]
    root = lessons.project_root()
    lesson = lessons.lesson_path(args.lesson).stem
    name = assignment.assignment_id(lesson, args.lang)
    with tempfile.TemporaryDirectory() as folder:
        course = Path(folder) / "course"
        assignment.write(root, course, lesson, args.lang)
        grade.run_nbgrader("generate_assignment", name, course=course)
        released = nbformat.read(course / "release" / name / f"{lesson}.ipynb", as_version=4)
        for cell in released.cells:
            cell.source = exercises.solutions(root, lesson).get(cell.get("id"), cell.source)
        filler = nbformat.v4.new_code_cell(FILLER)
        for index in range(args.submissions):
            target = course / "submitted" / f"student{index:02d}" / name / f"{lesson}.ipynb"
            target.parent.mkdir(parents=True)
            submitted = nbformat.from_dict(released)
            if index < args.fillers:
                submitted.cells.append(filler)
            nbformat.write(submitted, target)
        totals = []
        for count in jobs:
            start = time.perf_counter()
            outcomes = grade.grade_all(course, name, jobs=count)
            totals.append((count, time.perf_counter() - start, outcomes))
        total = totals[0][1]
        steps = {}
        for step in (["generate_feedback", name, "--force"], ["export"]):
            start = time.perf_counter()
            grade.run_nbgrader(*step, course=course)
            steps[step[0]] = time.perf_counter() - start
        unsandboxed = []
        if args.compare:  # each student again, both ways, in alternating order
            for index, outcome in enumerate(outcomes):
                order = (True, False) if index % 2 else (False, True)
                pair = {
                    way: grade.grade_one(
                        course, name, outcome.student, timeout=1800, unsandboxed=way
                    )
                    for way in order
                }
                outcomes[index], plain = pair[False], pair[True]
                unsandboxed.append(plain)
    seconds = sorted(outcome.seconds for outcome in outcomes)
    print(f"{'figure':<40} value")
    print(f"{'lesson':<40} {name}")
    print(f"{'submissions graded':<40} {len(outcomes)}")
    print(f"{'all with full marks':<40} {all(o.score == o.max_score for o in outcomes)}")
    print(f"{'submissions filling their folder':<40} {args.fillers}")
    for count, seconds_taken, graded in totals:
        scores = [(o.student, o.score, o.status) for o in graded]
        same = scores == [(o.student, o.score, o.status) for o in totals[0][2]]
        print(
            f"{f'--jobs {count}: total wall time':<40} {seconds_taken:.1f} s "
            f"(speed-up {total / seconds_taken:.2f}; same scores as --jobs {jobs[0]}: {same})"
        )
    print(f"{'per submission (median, last run)':<40} {seconds[len(seconds) // 2]:.1f} s")
    print(f"{'per submission (slowest, last run)':<40} {seconds[-1]:.1f} s")
    statuses = sorted({o.status for o in outcomes})
    print(f"{'statuses (last run)':<40} {', '.join(statuses)}")
    for step, seconds_taken in steps.items():
        print(f"{f'nbgrader {step}, whole class':<40} {seconds_taken:.1f} s")
    print(f"{'sandbox':<40} {grade.sandbox_description()}")
    print(f"{'CPUs':<40} {grade.default_jobs()}")
    if unsandboxed:
        plain = sorted(outcome.seconds for outcome in unsandboxed)
        extra = [s.seconds - u.seconds for s, u in zip(outcomes, unsandboxed)]
        print(f"{'unsandboxed: per submission (median)':<40} {plain[len(plain) // 2]:.1f} s")
        print(
            f"{'unsandboxed: all with full marks':<40} "
            f"{all(o.score == o.max_score for o in unsandboxed)}"
        )
        print(
            f"{'sandbox cost per submission (median)':<40} {statistics.median(extra):+.1f} s "
            f"(paired; range {min(extra):+.1f} to {max(extra):+.1f} s)"
        )


if __name__ == "__main__":
    main()
