"""Benchmark: run lessons headless and print their time, peak memory and results.

    .venv/bin/python benchmarks/lessons.py                 # every lesson, full mode
    .venv/bin/python benchmarks/lessons.py 02 --quick      # one lesson, quick mode

Figures are printed, never asserted: these machines are shared, so timings vary.
Peak memory is the kernel's own peak resident set size (Reverb and pybullet run
inside it), read from getrusage at the end of the lesson. Cells that ran 5 s or more
are listed with their durations, so that, say, an evaluation's cost can be told apart
from the training loop's.
COURSE_HYPERPARAMETERS works here too, e.g. for a SAC run shorter than the full one.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime

from course_helpers import lessons

# One cell appended to each executed lesson; it prints the figures as JSON.
REPORT_CELL = r'''
import json as _json, resource as _resource
_report = {"peak_memory_mb": _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss / 1024}
if "eval_returns" in globals():
    _report["eval_steps"] = [int(s) for s in eval_steps]
    _report["eval_returns"] = [round(float(r), 2) for r in eval_returns]
    _reached = [int(s) for s, r in zip(eval_steps, eval_returns) if r >= 195]
    _report["first_step_at_195"] = _reached[0] if _reached else None
if "progress_bar" in globals() and progress_bar.n:
    _report["iterations"] = progress_bar.n
    _report["ms_per_iteration_including_eval"] = round(
        1000 * progress_bar.format_dict["elapsed"] / progress_bar.n, 2)
print("BENCHMARK " + _json.dumps(_report))
'''


def cell_seconds(cell) -> float:
    """How long a cell ran, from the timestamps nbclient records in its metadata."""
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    return (datetime.fromisoformat(end.replace("Z", "+00:00"))
            - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()


def run(name: str, quick: bool) -> dict:
    name = lessons.lesson_path(name).stem
    start = time.perf_counter()
    path = lessons.run_lesson(name, quick=quick, show_progress=False, extra_code=REPORT_CELL,
                              output=lessons.project_root() / "runs" / "benchmark" / f"{name}.ipynb")
    seconds = time.perf_counter() - start
    import nbformat

    cells = nbformat.read(path, as_version=4).cells
    text = "".join(o.get("text", "") for o in cells[-1].outputs if o.get("output_type") == "stream")
    report = json.loads(text.split("BENCHMARK ", 1)[1])
    slow = {cell.id: round(cell_seconds(cell), 1) for cell in cells[:-1] if cell_seconds(cell) >= 5}
    return {"lesson": name, "mode": "quick" if quick else "full", "seconds": round(seconds, 1),
            **report, "cells_over_5_s": slow}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: all)")
    parser.add_argument("--quick", action="store_true", help="run in quick mode")
    args = parser.parse_args()
    for name in args.lessons or lessons.lesson_names():
        print(json.dumps(run(name, args.quick)), flush=True)


if __name__ == "__main__":
    main()
