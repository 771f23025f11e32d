"""Each lesson survives "Run All" twice in the same kernel, as a learner would do it.

The usual trap is state left by the first run: a Reverb server still holding its port,
a learner restoring the first run's checkpoint. The notebooks run in quick mode.

This is also the pinned profile's execution of the English lessons (nbval collects the
translations): every cell must run without an error, and every exercise, left blank as
a learner first finds it, must get its self-check's "not yet" (✘) rather than an error.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_tools import exercises

LESSONS = sorted(
    (Path(__file__).resolve().parents[1] / "notebooks" / "en").glob("[0-9][0-9]_*.ipynb")
)


@pytest.mark.notebook
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_run_all_twice_in_one_kernel(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    assert os.environ.get("COURSE_QUICK") == "1", "conftest turns quick mode on"
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    with client.setup_kernel():
        for run in (1, 2):
            for index, cell in enumerate(nb.cells):
                # execute_cell raises CellExecutionError naming the cell if it fails.
                client.execute_cell(cell, index)
            errors = [
                c.id
                for c in nb.cells
                if any(o.get("output_type") == "error" for o in c.get("outputs", []))
            ]
            assert not errors, f"run {run} of {path.name} failed in cells {errors}"
            checks = exercises.check_outputs(nb)
            assert len(checks) >= 3, f"{path.name} has fewer than three self-checks"
            assert {cell: text[:1] for cell, text in checks.items()} == dict.fromkeys(
                checks, "✘"
            ), (f"run {run} of {path.name}: a blank exercise did not get its 'not yet'", checks)
