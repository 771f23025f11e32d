"""What the published-tutorial scripts share: their options and the line they end with."""

from __future__ import annotations

import argparse
import json
import resource
import time

START = time.perf_counter()  # imported first by each script: the time before TensorFlow loads


def arguments(
    doc: str,
    *,
    iterations: int,
    eval_interval: int,
    eval_episodes: int,
    extra: dict[str, int] | None = None,
) -> argparse.Namespace:
    """The options every script takes (``extra`` adds more, name: default)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument(
        "--eval-interval", type=int, default=eval_interval, help="0: no evaluation inside the loop"
    )
    parser.add_argument("--eval-episodes", type=int, default=eval_episodes)
    parser.add_argument("--seed", type=int, default=42)
    for name, default in (extra or {}).items():
        parser.add_argument(f"--{name}", type=int, default=default)
    return parser.parse_args()


def report(
    *,
    imported: float,
    loop_start: float,
    loop_end: float,
    eval_seconds: float,
    iterations: int,
    evaluations: list[tuple[int, float]],
) -> None:
    """Print ``BENCHMARK {json}``, the line ``course bench`` reads."""
    figures = {
        "import_seconds": imported - START,
        "setup_seconds": loop_start - imported,
        "loop_seconds": loop_end - loop_start,
        "eval_seconds": eval_seconds,
        "iterations": iterations,
        "evaluations": evaluations,
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print("BENCHMARK " + json.dumps(figures), flush=True)
