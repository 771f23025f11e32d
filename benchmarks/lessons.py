"""Benchmark: run lessons headless and print their time, peak memory and results.

    .venv/bin/python benchmarks/lessons.py                 # every lesson, full mode
    .venv/bin/python benchmarks/lessons.py 02 --quick      # one lesson, quick mode

Figures are printed, never asserted: these machines are shared, so timings vary.
Peak memory is the kernel's own peak resident set size (Reverb and pybullet run
inside it), read from getrusage at the end of the lesson.
"""

from __future__ import annotations

import argparse
import json
import time

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


def run(name: str, quick: bool) -> dict:
    name = lessons.lesson_path(name).stem
    start = time.perf_counter()
    path = lessons.run_lesson(name, quick=quick, show_progress=False, extra_code=REPORT_CELL,
                              output=lessons.project_root() / "runs" / "benchmark" / f"{name}.ipynb")
    seconds = time.perf_counter() - start
    import nbformat

    last = nbformat.read(path, as_version=4).cells[-1]
    text = "".join(o.get("text", "") for o in last.outputs if o.get("output_type") == "stream")
    report = json.loads(text.split("BENCHMARK ", 1)[1])
    return {"lesson": name, "mode": "quick" if quick else "full", "seconds": round(seconds, 1), **report}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: all)")
    parser.add_argument("--quick", action="store_true", help="run in quick mode")
    args = parser.parse_args()
    for name in args.lessons or lessons.lesson_names():
        print(json.dumps(run(name, args.quick)), flush=True)


if __name__ == "__main__":
    main()
