"""The two halves: the learner's runtime (course_helpers) and the course's tooling (course_tools).

The runtime never imports the tooling, no module imports itself through others, and the
course command starts without TensorFlow or matplotlib. The contracts live in
pyproject.toml ([tool.importlinter]); `make lint` checks them too.
"""

from __future__ import annotations

import json
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import course_helpers

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every import A -> B for which B also leads back to A, as the loop A -> B -> ... -> A.

    Imports inside functions count: a lazy import still ties two modules together.
    """
    found = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                found.append([importer, *back])
    return found


def test_the_import_graph_of_both_packages_has_no_cycle():
    graph = grimp.build_graph("course_helpers", "course_tools")
    assert cycles(graph) == []


def test_a_cycle_would_be_found_and_named():
    graph = grimp.build_graph("course_helpers", "course_tools")
    graph.add_import(importer="course_tools.notebook_json", imported="course_tools.l10n.build")
    loops = cycles(graph)
    # l10n.build imports notebook_json itself: the shortest way back.
    assert [
        "course_tools.notebook_json",
        "course_tools.l10n.build",
        "course_tools.notebook_json",
    ] in loops


def run_lint_imports(pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    if pythonpath is not None:
        environment["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
    )


def test_the_import_contracts_are_kept():
    result = run_lint_imports()
    assert result.returncode == 0, result.stdout[-3000:]
    assert "4 kept, 0 broken" in result.stdout


def test_a_runtime_module_that_imports_the_tooling_breaks_the_contract(tmp_path):
    """The contract is not decorative: one such import in a copy of the tree fails it."""
    shutil.copytree(
        ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    metrics = tmp_path / "src" / "course_helpers" / "metrics.py"
    metrics.write_text(
        metrics.read_text(encoding="utf-8") + "\nfrom course_tools import lessons  # noqa: E402\n",
        encoding="utf-8",
    )
    result = run_lint_imports(pythonpath=tmp_path / "src")
    assert result.returncode != 0
    assert "never imports the course's tooling BROKEN" in result.stdout
    assert "course_helpers.metrics -> course_tools.lessons" in result.stdout


def test_importing_every_runtime_module_loads_no_tooling_module():
    names = [
        info.name for info in pkgutil.walk_packages(course_helpers.__path__, "course_helpers.")
    ]
    assert "course_helpers.replay.standin.tables" in names  # the walk reaches subpackages
    probe = (
        "import importlib, json, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'course_tools')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert json.loads(result.stdout.splitlines()[-1]) == []


# Each command that needs no lesson run, as an author or a translator types it.
LIGHT_COMMANDS = [
    ["--help"],
    ["list"],
    ["l10n", "status"],
    ["l10n", "check"],
    ["links", "--check"],
    ["binder", "--check"],
    ["l10n", "--help"],
    ["grade", "--help"],
    ["bench", "--help"],
]


@pytest.mark.parametrize("command", LIGHT_COMMANDS, ids=" ".join)
def test_the_course_command_starts_without_tensorflow_or_matplotlib(command):
    probe = (
        "import json, sys\n"
        "from course_tools import cli\n"
        "try:\n"
        f"    cli.main({command!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = {'tensorflow', 'matplotlib', 'tf_agents', 'reverb', 'pybullet', 'nbgrader'}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & heavy)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert json.loads(result.stdout.splitlines()[-1]) == []


def layout_blocks() -> dict[str, str]:
    """The layout lines for each package, in the maintainers' guide's picture of the
    repository (its code block that lists src/course_helpers/)."""
    guide = (ROOT / "docs" / "en" / "maintainers.md").read_text(encoding="utf-8")
    section = next(block for block in guide.split("```")[1::2] if "src/course_helpers/" in block)
    return {
        "course_helpers": section.split("src/course_helpers/", 1)[1].split("src/course_tools/")[0],
        "course_tools": section.split("src/course_tools/", 1)[1].split("\nexercises/")[0],
    }


def test_the_maintainers_layout_names_every_module_of_both_packages():
    for package, block in layout_blocks().items():
        folder = ROOT / "src" / package
        for child in folder.iterdir():
            if (
                child.name == "__pycache__"
                or child.name == "__init__.py"
                and package == "course_tools"
            ):
                continue
            if child.suffix == ".py" or (child / "__init__.py").exists():
                name = child.name if child.suffix == ".py" else f"{child.name}/"
                assert name in block, f"docs/en/maintainers.md's layout lacks src/{package}/{name}"


def test_every_module_the_maintainers_layout_names_exists():
    """The other way round: no line for a module that moved or was removed."""
    for package, block in layout_blocks().items():
        # Each entry starts a line, two spaces in: "  runtime.py", "  i18n.py, locale/".
        entries = [
            line[2:].split("  ")[0]
            for line in block.splitlines()
            if line[:2] == "  " and line[2] != " "
        ]
        names = [name.strip() for entry in entries for name in entry.split(",")]
        assert len(names) >= 10, names
        for name in names:
            assert (ROOT / "src" / package / name.rstrip("/")).exists(), (
                f"docs/en/maintainers.md names src/{package}/{name}"
            )
