"""Every "Open in Colab" and "Launch Binder" badge opens the lesson it sits beside.

The badges are made from one setting, [tool.course] in pyproject.toml. These tests read
the README and every notebook in every language as a learner's browser would follow
them, and prove each link lands on a notebook that exists, in the right language.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest

from course_helpers.languages import LANGUAGES
from course_tools import lessons, links

ROOT = Path(__file__).resolve().parents[1]


def configured_repository() -> links.Repository:
    """The course's [tool.course] setting; required, so an incomplete one raises."""
    repository = links.repository(ROOT)
    assert repository is not None  # only returned when the setting is not required
    return repository


REPO = configured_repository()
LESSONS = sorted(p.stem for p in (ROOT / "notebooks" / "en").glob("[0-9][0-9]_*.ipynb"))
COLAB = re.compile(r"\]\((https://colab\.research\.google\.com/github/[^)\s]+)\)")
BINDER = re.compile(r"\]\((https://mybinder\.org/v2/gh/[^)\s]+)\)")


def target(url: str) -> tuple[str, str, str, Path]:
    """(owner/name, branch, language, notebook path in the repository) that a badge opens."""
    if url.startswith("https://colab"):
        match = re.fullmatch(
            r"https://colab\.research\.google\.com/github/([^/]+/[^/]+)/blob/"
            r"([^/]+)/(notebooks/([^/]+)/[^/]+\.ipynb)",
            url,
        )
        assert match is not None, f"not a Colab badge link: {url}"
        repo, branch, path, language = match.groups()
    else:
        match = re.fullmatch(
            r"https://mybinder\.org/v2/gh/([^/]+/[^/]+)/([^?]+)\?urlpath=(.+)", url
        )
        assert match is not None, f"not a Binder badge link: {url}"
        repo, branch, urlpath = match.group(1), match.group(2), unquote(match.group(3))
        # Through the course's server extension, which sets JupyterLab's menus first.
        opened = re.fullmatch(r"course/lab/([^/]+)/(notebooks/([^/]+)/[^/]+\.ipynb)", urlpath)
        assert opened is not None, f"not opened through course/lab/<language>/: {url}"
        menus, path, language = opened.groups()
        assert menus == language, f"{url} shows JupyterLab in {menus}, the lesson in {language}"
    return repo, branch, language, Path(path)


def assert_opens(url: str, language: str, lesson: str) -> None:
    repo, branch, url_language, path = target(url)
    assert (repo, branch) == (f"{REPO.owner}/{REPO.name}", REPO.branch), url
    assert url_language == language, f"{url} opens the {url_language} lesson, not {language}"
    assert path == Path("notebooks", language, f"{lesson}.ipynb"), url
    assert (ROOT / path).is_file(), f"{url} opens {path}, which does not exist"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("lesson", LESSONS)
def test_each_notebook_opens_with_its_own_two_badges(language, lesson):
    notebook = nbformat.read(ROOT / "notebooks" / language / f"{lesson}.ipynb", as_version=4)
    first = notebook.cells[0]
    assert first.id == lessons.BADGES_CELL and first.cell_type == "markdown"
    colab, binder = COLAB.findall(first.source), BINDER.findall(first.source)
    assert len(colab) == 1 and len(binder) == 1, first.source
    assert_opens(colab[0], language, lesson)
    assert_opens(binder[0], language, lesson)


GUIDE = re.compile(r"\]\((https://github\.com/[^)\s]+/docs/[^)\s]+\.md)\)")


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("lesson", LESSONS)
def test_each_notebook_leads_to_the_learners_guide_in_its_language(language, lesson):
    first = nbformat.read(ROOT / "notebooks" / language / f"{lesson}.ipynb", as_version=4).cells[0]
    found = GUIDE.findall(first.source)
    assert found == [REPO.guide_url(language)], first.source
    path = found[0].split(f"/blob/{REPO.branch}/", 1)[1]
    assert (ROOT / path).exists(), f"{lesson} [{language}] links {path}, which does not exist"


def readme_table_rows() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split(links.README_START)[1].split(links.README_END)[0]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in table.strip().splitlines()
    ]
    return rows[2:]  # after the header and the --- line


def test_the_readme_has_one_row_per_lesson_and_one_column_per_language():
    rows = readme_table_rows()
    assert len(rows) == len(LESSONS)
    assert all(len(row) == 1 + len(LANGUAGES) for row in rows)


@pytest.mark.parametrize("row", range(len(LESSONS)))
def test_every_readme_badge_opens_that_lesson_in_that_column_s_language(row):
    cells = readme_table_rows()[row]
    lesson = LESSONS[row]
    for language, cell in zip(LANGUAGES, cells[1:]):
        colab, binder = COLAB.findall(cell), BINDER.findall(cell)
        assert len(colab) == 1 and len(binder) == 1, cell
        assert_opens(colab[0], language, lesson)
        assert_opens(binder[0], language, lesson)


def test_badge_text_is_in_the_notebook_s_language():
    french = nbformat.read(ROOT / "notebooks/fr/02_dqn_cartpole.ipynb", as_version=4).cells[0]
    assert "[![Ouvrir dans Colab]" in french.source


@pytest.mark.parametrize("language", LANGUAGES)
def test_colab_installs_the_helpers_from_the_configured_repository(language):
    for lesson in LESSONS:
        notebook = nbformat.read(ROOT / "notebooks" / language / f"{lesson}.ipynb", as_version=4)
        setup = next(cell for cell in notebook.cells if cell.id == lessons.SETUP_CELL)
        assert f"%pip install --quiet {REPO.archive_url()}" in setup.source


def test_readme_and_english_lessons_are_up_to_date_with_the_setting():
    assert links.sync(ROOT, check=True) == [], "run 'course links' and commit the result"


def copy_course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    shutil.copytree(ROOT / "notebooks" / "en", root / "notebooks" / "en")
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    return root


def test_changing_the_one_setting_moves_every_link(tmp_path):
    root = copy_course(tmp_path)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        .replace(f'repository = "{REPO.owner}/{REPO.name}"', 'repository = "a-teacher/my-fork"')
        .replace(f'branch = "{REPO.branch}"', 'branch = "spring-term"')
    )
    changed = links.sync(root)
    assert {p.name for p in changed} == {"README.md", *(f"{lesson}.ipynb" for lesson in LESSONS)}
    text = (root / "README.md").read_text()
    assert f"{REPO.owner}/{REPO.name}" not in text.split(links.README_START)[1]
    assert "https://mybinder.org/v2/gh/a-teacher/my-fork/spring-term?urlpath=" in text
    setup = next(
        c
        for c in nbformat.read(root / "notebooks/en/01_replay_buffers.ipynb", 4).cells
        if c.id == lessons.SETUP_CELL
    )
    assert "https://github.com/a-teacher/my-fork/archive/refs/heads/spring-term.zip" in setup.source
    assert links.sync(root) == []  # and a second run changes nothing


def test_an_incomplete_setting_is_refused_naming_the_file_and_the_fix(tmp_path):
    root = copy_course(tmp_path)
    (root / "pyproject.toml").write_text('[tool.course]\nrepository = "no-slash"\n')
    with pytest.raises(ValueError, match=r"pyproject\.toml: \[tool\.course\] needs repository"):
        links.sync(root)


def test_a_readme_without_the_table_markers_is_refused_and_left_unchanged(tmp_path):
    root = copy_course(tmp_path)
    readme = root / "README.md"
    readme.write_text("# My course\n")
    with pytest.raises(ValueError, match="README.md: put the two marker lines"):
        links.sync(root)
    assert readme.read_text() == "# My course\n"


def test_the_helpers_install_from_an_archive_of_the_repository_as_on_colab(tmp_path):
    """What Colab's set-up cell does: pip installs the branch's zip, without git."""
    files = ["git", "ls-files", "--cached", "--others", "--exclude-standard"]  # what a push sends
    tracked = subprocess.run(
        files, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    archive = tmp_path / f"{REPO.branch}.zip"
    with zipfile.ZipFile(archive, "w") as zipped:  # laid out as GitHub's archives are
        for name in tracked:
            zipped.write(ROOT / name, f"{REPO.name}-{REPO.branch}/{name}")
    target_dir = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target_dir),
            str(archive),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    probe = (
        "import course_helpers, course_helpers.i18n as i; "
        "i.set_language('fr'); print(course_helpers.__file__); "
        "print(i.gettext('Open in Colab'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(target_dir)},
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    where, french = result.stdout.splitlines()
    assert where.startswith(str(target_dir))
    assert french == "Ouvrir dans Colab"  # the catalogs travel with the package
