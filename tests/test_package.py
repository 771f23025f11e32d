"""The package a lesson imports: every public name resolves, and importing it is light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import course_helpers

pytestmark = pytest.mark.unit


def test_every_public_name_resolves_to_what_the_lessons_call():
    assert set(course_helpers.__all__) == {
        *course_helpers._EXPORTS,
        *course_helpers._SUBMODULES,
        "progress",
        "progress_observer",
    }
    for name in course_helpers.__all__:
        assert getattr(course_helpers, name) is not None
    assert callable(course_helpers.progress) and callable(course_helpers.setup)


def test_importing_the_package_imports_nothing_heavy():
    probe = (
        "import sys, course_helpers; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'matplotlib', 'numpy', 'tensorflow', 'tqdm', 'nbformat', 'pygame'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
