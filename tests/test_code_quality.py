"""The habits CI keeps: the pre-commit hooks exist and do what they say.

`make lint` runs ruff, mypy and import-linter itself; these tests protect the pre-commit
configuration that runs the same tools on a contributor's machine.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".pre-commit-config.yaml"


def hooks() -> dict[str, dict]:
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    return {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}


def test_the_pre_commit_configuration_is_valid():
    pre_commit = Path(sys.executable).with_name("pre-commit")
    result = subprocess.run(
        [str(pre_commit), "validate-config", str(CONFIG)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_hook_runs_a_tool_installed_in_the_environment():
    """Local hooks run .venv's pinned tools; a hook naming a missing one would fail every commit."""
    assert set(hooks()) == {"ruff-check", "ruff-format", "mypy", "import-contracts", "nbstripout"}
    for hook in hooks().values():
        executable = Path(shlex.split(hook["entry"])[0])
        assert executable.parts[0] == ".venv", hook["id"]
        assert (Path(sys.executable).parent / executable.name).exists(), hook["id"]


def test_the_nbstripout_hook_strips_outputs_and_keeps_cell_ids(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    notebook.cells[0].id = "setup"
    notebook.cells[0].execution_count = 1
    notebook.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    path = tmp_path / "notebooks" / "en" / "01_demo.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    hook = hooks()["nbstripout"]
    assert re.search(hook["files"], "notebooks/en/01_demo.ipynb")
    command = shlex.split(hook["entry"])
    executable = Path(sys.executable).parent / Path(command[0]).name
    subprocess.run([str(executable), *command[1:], str(path)], check=True)
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][0]
    assert cell["id"] == "setup"
    assert cell["outputs"] == [] and cell["execution_count"] is None


def test_ruff_applies_the_projects_rules_beyond_its_defaults(tmp_path):
    """The settings are read: bugbear's mutable default (B006) is not among ruff's defaults."""
    ruff = Path(sys.executable).with_name("ruff")
    sample = tmp_path / "sample.py"
    sample.write_text("def f(items=[]):\n    return items\n", encoding="utf-8")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    result = subprocess.run(
        [str(ruff), "check", str(sample)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 1 and "B006" in result.stdout


def test_ci_runs_the_lint_before_the_tests():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    ci = next(line for line in makefile.splitlines() if line.startswith("ci:"))
    assert ci.split(":", 1)[1].split()[:2] == ["lint", "test"]
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    for tool in ("ruff check", "ruff format --check", "mypy", "lint-imports"):
        assert f"$(BIN)/{tool}" in lint, tool
