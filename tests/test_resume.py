"""Lesson 3's run survives a restart: stopped in the middle of its training loop, the
lesson run again from the top resumes from its last checkpoint and ends at the same
iteration count as a run that was never stopped (issue 34)."""

import json
import os
import signal
import threading
import time
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from course_helpers import runs
from course_tools import lessons

pytestmark = pytest.mark.notebook

# Quick mode, but with four evaluations (one every 100 iterations), so that the first
# checkpoint is written well before the loop ends and the interruption falls inside it.
SETTINGS = {"COURSE_QUICK": "1", "COURSE_HYPERPARAMETERS": "num_iterations=400"}
REPORT = (
    "import json\n"
    "print('RESUME ' + json.dumps({'step': int(agent_learner.train_step_numpy), "
    "'eval_steps': [int(s) for s in eval_steps], 'log_steps': [int(s) for s in log_steps]}))"
)


def _interrupt_after_first_checkpoint(client: NotebookClient, folder_glob, stop: threading.Event):
    """Interrupt the kernel, as a learner's restart would stop it, once a record exists."""
    while not stop.is_set():
        if any(folder_glob()):
            time.sleep(0.5)  # past the checkpoint's files, into the next iterations
            # What Jupyter's interrupt button does for a local kernel: SIGINT to its process.
            provisioner: Any = client.km.provisioner if client.km else None
            os.kill(provisioner.pid, signal.SIGINT)
            return
        time.sleep(0.1)


def test_lesson_3_resumes_after_an_interrupt_and_a_new_kernel_and_trains_to_the_end(
    tmp_path, monkeypatch
):
    for name, value in {**SETTINGS, runs.RUNS_VARIABLE: str(tmp_path)}.items():
        monkeypatch.setenv(name, value)
    source = lessons.lesson_path("03_sac_minitaur")
    notebook = nbformat.read(source, as_version=4)
    # The plots and the video are not what this test is about.
    notebook.cells = [c for c in notebook.cells if c.get("id") not in ("video",)]
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(source.parent)}},
    )

    def records():  # written just after the checkpoint of the same step
        return tmp_path.glob(f"*/{runs.PROGRESS}/step-*.json")

    stop = threading.Event()
    watcher = threading.Thread(
        target=_interrupt_after_first_checkpoint, args=(client, records, stop), daemon=True
    )
    with client.setup_kernel():
        watcher.start()
        interrupted = False
        try:
            for index, cell in enumerate(notebook.cells):
                if cell.cell_type == "code":
                    client.execute_cell(cell, index)
        except CellExecutionError as error:
            interrupted = "KeyboardInterrupt" in str(error)
        finally:
            stop.set()
    assert interrupted, "the training loop was expected to be interrupted"
    (folder,) = tmp_path.iterdir()
    stopped_at = runs.checkpoint_step(folder)
    assert 0 < stopped_at < 400

    # A new kernel runs the whole lesson again, in the same run folder.
    executed = lessons.run_lesson(
        "03_sac_minitaur",
        quick=True,
        show_progress=False,
        output=tmp_path / "resumed.ipynb",
        extra_code=REPORT,
        runs_folder=tmp_path,
    )
    cells = {cell.get("id"): cell for cell in nbformat.read(executed, as_version=4).cells}
    told = "".join(output.get("text", "") for output in cells["run-folder"].outputs)
    assert f"saved at iteration {stopped_at}" in told
    collected = "".join(output.get("text", "") for output in cells["initial-collect"].outputs)
    assert "Initial collection" not in collected  # the table came back from its checkpoint
    assert int(collected.rsplit(":", 1)[1].replace(",", "")) > 0
    line = next(
        text
        for output in nbformat.read(executed, as_version=4).cells[-1].outputs
        for text in output.get("text", "").splitlines()
        if text.startswith("RESUME ")
    )
    report = json.loads(line.removeprefix("RESUME "))
    assert report["step"] == 400
    # Every evaluation once: those up to the stop from the saved record, then the new ones.
    evaluations = report["eval_steps"]
    assert evaluations == sorted(set(evaluations)) and evaluations[0] == 0
    assert set(range(stopped_at + 100, 401, 100)) <= set(evaluations)
    assert report["log_steps"] == sorted(set(report["log_steps"]))
    assert runs.checkpoint_step(folder) == 400
    assert os.listdir(folder / "train" / "replay_buffer_checkpoints")
