"""Benchmark: how long `course grade` takes for a class of submissions of one lesson.

    .venv/bin/python benchmarks/grading.py                     # 20 submissions of lesson 01, en
    .venv/bin/python benchmarks/grading.py 02 --lang fr -n 5
    .venv/bin/python benchmarks/grading.py -n 10 --compare     # each also graded unsandboxed

Every submission is the released notebook with the reference solutions filled in, so each
one runs the whole lesson (in quick mode, as grading does). With ``--compare``, each
submission is graded twice in a row, in the sandbox and without it, and the figures
include the median of the paired differences: what the sandbox costs per submission.
Prints figures; asserts nothing. The course is built in a temporary folder and removed
afterwards.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from course_tools import exercises, lessons
from course_tools.grading import assignment, grade


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
    args = parser.parse_args()
    root = lessons.project_root()
    lesson = lessons.lesson_path(args.lesson).stem
    name = assignment.assignment_id(lesson, args.lang)
    with tempfile.TemporaryDirectory() as folder:
        course = Path(folder) / "course"
        assignment.write(root, course, lesson, args.lang)
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", name],
            cwd=course,
            env=grade.nbgrader_environment(),
            check=True,
            capture_output=True,
        )
        released = nbformat.read(course / "release" / name / f"{lesson}.ipynb", as_version=4)
        for cell in released.cells:
            cell.source = exercises.solutions(root, lesson).get(cell.get("id"), cell.source)
        for index in range(args.submissions):
            target = course / "submitted" / f"student{index:02d}" / name / f"{lesson}.ipynb"
            target.parent.mkdir(parents=True)
            nbformat.write(released, target)
        start = time.perf_counter()
        outcomes = grade.grade_all(course, name)
        total = time.perf_counter() - start
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
    print(f"{'total wall time':<40} {total:.1f} s")
    print(f"{'per submission (median)':<40} {seconds[len(seconds) // 2]:.1f} s")
    print(f"{'per submission (slowest)':<40} {seconds[-1]:.1f} s")
    print(f"{'sandbox':<40} {grade.sandbox_description()}")
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
