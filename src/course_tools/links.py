"""The "Open in Colab" and "Launch Binder" links, made from one setting.

The repository's owner, name and branch live in ``pyproject.toml`` under
``[tool.course]``. Everything that points at the published repository is made from
them: the badges table in the README, the badges cell that opens every notebook (in the
notebook's own language), and the address the set-up cell installs ``course_helpers``
from on Colab. After a fork or a rename, change the setting and run ``course links``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union
from urllib.parse import quote

from course_helpers.i18n import translator
from course_helpers.languages import ALL, LANGUAGES
from course_tools.lessons import BADGES_CELL, SETUP_CELL, lesson_names, read_lesson

if TYPE_CHECKING:
    import nbformat

    from course_tools import notebook_json

# A notebook as nbformat reads it, or as course_tools.notebook_json does (the same shape).
Notebook = Union["nbformat.NotebookNode", "notebook_json.Node"]

README_START = "<!-- badges:start (written by `course links`; edit pyproject.toml instead) -->"
README_END = "<!-- badges:end -->"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
#: Where the set-up cell installs course_helpers from on Colab: an archive of the branch.
_ARCHIVE = re.compile(
    r"https://github\.com/[^/\s\"']+/[^/\s\"']+/archive/refs/heads/[^\s\"']+\.zip"
)


@dataclass(frozen=True)
class Repository:
    """Where the course is published on GitHub."""

    owner: str
    name: str
    branch: str

    def colab_url(self, language: str, lesson: str) -> str:
        return (
            f"https://colab.research.google.com/github/{self.owner}/{self.name}/blob/"
            f"{self.branch}/notebooks/{language}/{lesson}.ipynb"
        )

    def binder_url(self, language: str, lesson: str) -> str:
        """Binder opens the lesson through the course's server extension, which first sets
        JupyterLab's menus to ``language`` (:mod:`course_tools.lab_settings`)."""
        path = quote(f"course/lab/{language}/notebooks/{language}/{lesson}.ipynb", safe="")
        return f"https://mybinder.org/v2/gh/{self.owner}/{self.name}/{self.branch}?urlpath={path}"

    def archive_url(self) -> str:
        """The branch as a zip, which pip installs without git (Colab's set-up cell)."""
        return f"https://github.com/{self.owner}/{self.name}/archive/refs/heads/{self.branch}.zip"

    def guide_url(self, language: str) -> str:
        """The learners' guide in ``language`` (docs/<language>/learners.md) on GitHub."""
        return (
            f"https://github.com/{self.owner}/{self.name}/blob/{self.branch}/docs/"
            f"{language}/learners.md"
        )

    def badges_cell_text(self, language: str, lesson: str) -> str:
        """A lesson's first cell: its two badges, then a link to the learners' guide."""
        _ = translator(language)
        guide = _("How to run the lessons, on Colab, Binder or your own computer")
        return f"{self.badges(language, lesson)}\n\n[{guide}]({self.guide_url(language)})"

    def badges(self, language: str, lesson: str) -> str:
        """The two badges as markdown, with their text in ``language``."""
        _ = translator(language)
        return (
            f"[![{_('Open in Colab')}]({COLAB_BADGE})]({self.colab_url(language, lesson)}) "
            f"[![{_('Launch Binder')}]({BINDER_BADGE})]({self.binder_url(language, lesson)})"
        )


def repository(root: Path, required: bool = True) -> Repository | None:
    """Read ``[tool.course]`` from ``pyproject.toml``; a clear error if it is incomplete.

    Without ``required``, a project with no such table (a scratch course in a test, a
    private copy) gets None: its notebooks simply keep the badges they have.
    """
    path = root / "pyproject.toml"
    try:
        with path.open("rb") as file:
            settings = tomllib.load(file).get("tool", {}).get("course")
    except FileNotFoundError:
        settings = None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML ({error}).") from error
    if settings is None:
        if not required:
            return None
        settings = {}
    repo, branch = settings.get("repository", ""), settings.get("branch", "")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo) or not re.fullmatch(r"[\w./-]+", branch):
        raise ValueError(
            f'{path}: [tool.course] needs repository = "owner/name" and branch = "main" '
            f"(the GitHub repository the badges open); found repository={repo!r}, "
            f"branch={branch!r}."
        )
    owner, name = repo.split("/")
    return Repository(owner, name, branch)


def badges_cell(repo: Repository, language: str, lesson: str) -> nbformat.NotebookNode:
    import nbformat  # imported here: it costs most of a second

    cell = nbformat.v4.new_markdown_cell(repo.badges_cell_text(language, lesson))
    cell.id = BADGES_CELL
    cell.metadata = {"course": {"generated": "course links"}}
    return cell


def with_links(
    notebook: Notebook, repo: Repository, language: str, lesson: str, where: str
) -> Notebook:
    """Put the badges cell first and the archive address into the set-up cell, in place.

    ``where`` names the notebook in errors. Nothing else in the notebook changes.
    """
    cells = notebook.cells
    if cells and cells[0].get("id") == BADGES_CELL:
        cells[0] = badges_cell(repo, language, lesson)
    else:
        cells.insert(0, badges_cell(repo, language, lesson))
    setup = [cell for cell in cells if cell.get("id") == SETUP_CELL]
    if len(setup) != 1 or len(_ARCHIVE.findall(setup[0].source)) != 1:
        raise ValueError(
            f"{where}: the set-up cell (id {SETUP_CELL!r}) must install course_helpers on "
            f"Colab from one address like {repo.archive_url()}; found "
            f"{len(setup)} set-up cell(s)."
        )
    setup[0].source = _ARCHIVE.sub(repo.archive_url(), setup[0].source)
    return notebook


def readme_table(repo: Repository, lessons: list[str], titles: dict[str, str]) -> str:
    """One row per lesson, one column per language, two badges in each cell."""
    header = "| Lesson | " + " | ".join(entry.name for entry in ALL) + " |"
    rows = [header, "| --- |" + " --- |" * len(LANGUAGES)]
    for lesson in lessons:
        cells = [repo.badges(language, lesson).replace(") [", ")<br>[") for language in LANGUAGES]
        rows.append(f"| {titles.get(lesson, lesson)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def with_readme_table(readme: str, table: str, where: str) -> str:
    if readme.count(README_START) != 1 or readme.count(README_END) != 1:
        raise ValueError(
            f"{where}: put the two marker lines where the badges table goes:\n"
            f"{README_START}\n{README_END}"
        )
    before, rest = readme.split(README_START)
    _, after = rest.split(README_END)
    return f"{before}{README_START}\n{table}\n{README_END}{after}"


def lesson_title(notebook: Notebook) -> str:
    """The lesson's first heading: its title."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("# "):
            return cell.source.splitlines()[0][2:].strip()
    return ""


def sync(root: Path, check: bool = False) -> list[Path]:
    """Bring the README and the English lessons up to date with ``[tool.course]``.

    Returns the files that were (with ``check``: would be) rewritten. The localized
    notebooks take their badges from ``course l10n build``.
    """

    repo = repository(root)
    assert repo is not None  # required: an incomplete setting raised
    changed = []
    titles = {}
    for lesson in lesson_names(root=root):
        path = root / "notebooks" / "en" / f"{lesson}.ipynb"
        notebook = read_lesson(path)
        titles[path.stem] = lesson_title(notebook)
        with_links(notebook, repo, "en", path.stem, str(path.relative_to(root)))
        import nbformat  # imported here: it costs most of a second

        fresh = nbformat.writes(notebook) + "\n"  # as nbformat.write() saves it
        if path.read_text(encoding="utf-8") != fresh:
            changed.append(path)
            if not check:
                path.write_text(fresh, encoding="utf-8")
    readme_path = root / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    updated = with_readme_table(readme, readme_table(repo, sorted(titles), titles), "README.md")
    if updated != readme:
        changed.append(readme_path)
        if not check:
            readme_path.write_text(updated, encoding="utf-8")
    return changed
