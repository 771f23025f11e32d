"""``binder/environment.yml``: what mybinder.org installs, made from requirements.txt.

mybinder.org ignores the repository's root files when a ``binder/`` folder exists, and
its build cannot read a requirements file from outside that folder before the rest of
the repository is copied in. So the pins are written into ``binder/environment.yml``
itself, by ``course binder``, from requirements.txt: the same pins CI installs and
tests. ``course binder --check`` (and a unit test) fail when the two drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The Python that dm-reverb 0.14 has wheels for; Binder builds it with conda.
PYTHON = "3.11"
HEADER = """\
# What mybinder.org builds: Python {python} from conda-forge, then the project's pins.
# Written by `course binder` from requirements.txt; edit requirements.in, run
# `make lock`, then `course binder`. binder/postBuild installs course_helpers itself.
"""


def pins(requirements: str) -> list[str]:
    """The requirement lines of a pip-compiled file, without comments or blank lines.

    Environment markers (``; sys_platform == 'darwin'``) stay: pip honours them.
    """
    found = []
    for line in requirements.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith(("#", "-")):
            found.append(re.sub(r"\s*;\s*", " ; ", line))
    return found


def environment_yml(requirements: str) -> str:
    lines = [
        HEADER.format(python=PYTHON) + "name: tf-agents-course",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python={PYTHON}",
        "  - pip",
        "  - pip:",
    ]
    lines += [f'      - "{pin}"' for pin in pins(requirements)]
    return "\n".join(lines) + "\n"


def sync(root: Path, check: bool = False) -> list[Path]:
    """Rewrite binder/environment.yml from requirements.txt; return it if it changed."""
    target = root / "binder" / "environment.yml"
    fresh = environment_yml((root / "requirements.txt").read_text(encoding="utf-8"))
    current = target.read_text(encoding="utf-8") if target.exists() else None
    if current == fresh:
        return []
    if not check:
        target.parent.mkdir(exist_ok=True)
        target.write_text(fresh, encoding="utf-8")
    return [target]
