"""What the catalogs translate: the lessons, and the guides named in ``TRANSLATED_GUIDES``.

Both are read as a notebook-shaped node whose cells carry stable ids (a lesson's cell
ids; a guide's section anchors), so extracting, merging, checking and building treat
them alike. What differs is where each lives and how its translation is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from course_tools import guides, notebook_json
from course_tools.lessons import lesson_names, read_lesson


@dataclass(frozen=True)
class Source:
    """One English text with its own catalogs: ``name`` is the catalog's name."""

    name: str
    guide: str | None = None  # the guide's name, or None for a lesson

    def english(self, root: Path) -> Path:
        if self.guide is not None:
            return guides.guide_path(root, self.guide)
        return root / "notebooks" / "en" / f"{self.name}.ipynb"

    def target(self, root: Path, language: str) -> Path:
        """Where the built translation goes."""
        if self.guide is not None:
            return guides.guide_path(root, self.guide, language)
        return root / "notebooks" / language / f"{self.name}.ipynb"

    def shown(self, root: Path, language: str = "en") -> str:
        path = self.english(root) if language == "en" else self.target(root, language)
        return str(path.relative_to(root))

    def read(self, root: Path) -> notebook_json.Node:
        """The English source, as cells keyed by id."""
        if self.guide is not None:
            return guides.read_guide(self.english(root))
        return read_lesson(self.english(root))

    def writes(self, translated: notebook_json.Node, language: str) -> str:
        """The text of the built translation."""
        if self.guide is not None:
            return guides.localize_links(guides.guide_text(translated), language)
        return notebook_json.writes(translated)


def sources(root: Path) -> list[Source]:
    """Every lesson, then every translated guide that exists in ``docs/en/``."""
    found = [Source(name) for name in lesson_names(root=root)]
    for guide in guides.TRANSLATED_GUIDES:
        if guides.guide_path(root, guide).exists():
            found.append(Source(guides.catalog_name(guide), guide))
    return found


def source_named(root: Path, name: str) -> Source:
    """The source whose catalogs are called ``name`` (``02_dqn_cartpole``, ``guide_learners``)."""
    guide = guides.guide_of(name)
    return Source(name, guide) if guide is not None else Source(name)
