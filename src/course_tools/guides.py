"""The course's guides on disk: Markdown pages in ``docs/en/``, some translated.

A guide is cut into sections at its anchor lines (``<a id="quick-mode"></a>``, alone on a
line, before each heading). The anchor gives the section a stable id, as a cell id does
in a lesson, so the translation tooling keys a guide's paragraphs by section exactly as
it keys a lesson's by cell: :func:`read_guide` returns a notebook-shaped node of markdown
cells, and :func:`guide_text` writes one back. The same anchors are what links point to,
in every language (a heading's own slug would change with its translation).

Links inside the English guides are relative to ``docs/en/``. A translated guide lives in
``docs/<lang>/``, so :func:`localize_links` points its lesson links at that language's
notebooks and its links to untranslated guides at the English ones.
"""

from __future__ import annotations

import re
from pathlib import Path

from course_tools import notebook_json

#: Every guide, in the order the site lists them.
GUIDES = ("learners", "instructors", "translators", "maintainers", "measurements")
#: The guides translated through gettext catalogs (``locales/<lang>/guide_<name>.po``).
TRANSLATED_GUIDES = ("learners",)
#: The prefix of a guide's catalog name, which sets it apart from the lessons' (NN_name).
CATALOG_PREFIX = "guide_"

#: Ids the translation tooling treats as generated cells (a lesson's badges).
RESERVED = ("badges",)
ANCHOR = re.compile(r'^<a id="([a-z0-9][a-z0-9-]*)"></a>$')
_LINK = re.compile(r"\]\(([^)\s]+)\)")


class GuideError(ValueError):
    """A guide cannot be read; the message names the file and line and says what to fix."""


def guide_path(root: Path, name: str, language: str = "en") -> Path:
    return root / "docs" / language / f"{name}.md"


def catalog_name(name: str) -> str:
    """``learners`` -> ``guide_learners``, the name of its template and catalogs."""
    return f"{CATALOG_PREFIX}{name}"


def guide_of(catalog: str) -> str | None:
    """The guide a catalog name belongs to, or None for a lesson's catalog."""
    return catalog[len(CATALOG_PREFIX) :] if catalog.startswith(CATALOG_PREFIX) else None


def parse(text: str, where: str) -> notebook_json.Node:
    """The sections of a guide's text as markdown cells keyed by their anchors."""
    cells: list[notebook_json.Node] = []
    seen: dict[str, int] = {}
    current: list[str] | None = None
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if fence is None and stripped[:3] in ("```", "~~~"):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence):
            fence = None
        match = ANCHOR.match(line) if fence is None else None
        if match:
            cell_id = match.group(1)
            if cell_id in RESERVED:
                raise GuideError(
                    f"{where}, line {number}: the anchor {cell_id!r} is reserved for the "
                    "lessons' generated cells; choose another id."
                )
            if cell_id in seen:
                raise GuideError(
                    f"{where}, line {number}: the anchor {cell_id!r} is already used on line "
                    f"{seen[cell_id]}. Give this section an id of its own: links and "
                    "translations are keyed by it."
                )
            seen[cell_id] = number
            current = []
            cells.append(notebook_json.markdown_cell(cell_id, ""))
            cells[-1]["_lines"] = current
        elif current is None:
            if stripped:
                raise GuideError(
                    f"{where}, line {number}: text before the first anchor. Start the guide "
                    f'with an anchor line such as <a id="learners"></a>, then a blank line '
                    "and its title."
                )
        else:
            current.append(line)
    if fence is not None:
        raise GuideError(f"{where}: a fenced code block ({fence}) is never closed.")
    if not cells:
        raise GuideError(f'{where}: no anchor line (<a id="..."></a>) found.')
    for cell in cells:
        cell.source = "\n".join(cell.pop("_lines")).strip("\n")
    return notebook_json.Node(
        cells=cells, metadata=notebook_json.Node(), nbformat=4, nbformat_minor=5
    )


def read_guide(path: Path) -> notebook_json.Node:
    """Read a guide; an unreadable one raises :class:`GuideError` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise GuideError(f"{path}: cannot be read ({error.strerror}).") from error
    return parse(text, str(path))


def guide_text(guide: notebook_json.Node) -> str:
    """The Markdown of a guide: each section after its anchor line, as :func:`parse` reads it."""
    sections = [f'<a id="{cell.id}"></a>\n\n{cell.source}'.rstrip("\n") for cell in guide.cells]
    return "\n\n".join(sections) + "\n"


def localize_links(text: str, language: str) -> str:
    """Point a guide's links, written for ``docs/en/``, at ``docs/<language>/``'s neighbours.

    A lesson opens in the guide's language; a guide that is not translated opens in English.
    """

    def target(match: re.Match[str]) -> str:
        link = match.group(1)
        path, _, anchor = link.partition("#")
        if path.startswith("../../notebooks/en/"):
            path = path.replace("/en/", f"/{language}/", 1)
        elif path.endswith(".md") and "/" not in path and path[:-3] not in TRANSLATED_GUIDES:
            path = f"../en/{path}"
        return f"]({path}{'#' + anchor if anchor else ''})"

    return _LINK.sub(target, text)
