"""nbgrader preprocessors that speak the assignment's language and keep outputs small.

nbgrader's feedback page is English-only. Instead of patching it, the course's
configuration (:mod:`course_tools.grading.settings`) adds :class:`Localize` to
``GenerateFeedback.preprocessors`` and renders with this package's ``course_feedback``
template, which takes every label from ``resources["course"]``. :class:`LimitOutputSize`
joins the autograde preprocessors, because nbgrader's ``LimitOutput`` counts lines and a
single ten-megabyte line would still reach the feedback page.

The language comes from the instructor's copy of the assignment (its source notebook,
written by ``course assignment``), never from the submission, which a student controls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from course_helpers.i18n import translator
from course_helpers.languages import LANGUAGES

#: Where ``course assignment`` records the lesson and language in a source notebook.
METADATA_KEY = "course_helpers"


def instructor_notebook(config: Any, assignment: str, notebook: str) -> nbformat.NotebookNode:
    """The instructor's source copy of ``notebook`` in ``assignment``."""
    coursedir = CourseDirectory(config=config)
    folder = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    return nbformat.read(folder / f"{notebook}.ipynb", as_version=4)


def recorded_language(notebook: nbformat.NotebookNode, default: str = "en") -> str:
    """The language ``course assignment`` recorded in ``notebook``, else ``default``."""
    language = notebook.metadata.get(METADATA_KEY, {}).get("language")
    return language if language in LANGUAGES else default


def assignment_language(config: Any, assignment: str, notebook: str, default: str) -> str:
    """The language recorded in the source notebook of ``assignment``, else ``default``."""
    try:
        return recorded_language(instructor_notebook(config, assignment, notebook), default)
    except (OSError, ValueError):
        return default


def labels(language: str) -> dict[str, str]:
    """Every text of the feedback page, in ``language``."""
    _ = translator(language)
    return {
        "score_of": _("Score: {points}"),
        "test_cell": _("Test cell"),
        "coding_response": _("Coding free-response"),
        "written_response": _("Written response"),
        "task": _("Task"),
        "comment": _("Comment"),
        "comments": _("Comments"),
        "late_penalty": _("Late submission penalty"),
        "student_answer": _("Your answer"),
        "student_task": _("Your task"),
        "grade_cell": _("Test cell"),
        "top": _("Back to the top"),
        "feedback_for": _("Feedback on {notebook}"),
    }


class Localize(NbGraderPreprocessor):
    """Put the assignment's language and the page's labels into ``resources["course"]``."""

    language = Unicode("en", help="Language when the source notebook names none.").tag(config=True)

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple:
        info = resources["nbgrader"]
        language = assignment_language(
            self.config, info["assignment"], info["notebook"], self.language
        )
        resources["course"] = {"language": language, "labels": labels(language)}
        return nb, resources


class LimitOutputSize(NbGraderPreprocessor):
    """Cut every text output longer than ``max_chars`` characters, saying so in its language."""

    max_chars = Integer(100_000, help="Longest text kept from one output.").tag(config=True)
    language = Unicode("en", help="Language when the source notebook names none.").tag(config=True)

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple:
        info = resources["nbgrader"]
        language = assignment_language(
            self.config, info["assignment"], info["notebook"], self.language
        )
        _ = translator(language)
        note = _("[Output cut here: it was {count} characters long.]")
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if "text" in output:
                    output.text = self._cut(output.text, note)
                for mime, value in output.get("data", {}).items():
                    if mime == "text/plain":
                        output.data[mime] = self._cut(value, note)
                    elif mime.startswith("text/") and len(value) > self.max_chars:
                        output.data[mime] = note.format(count=len(value))  # HTML cannot be cut
        return nb, resources

    def _cut(self, text: str, note: str) -> str:
        if len(text) <= self.max_chars:
            return text
        return text[: self.max_chars] + "\n" + note.format(count=len(text)) + "\n"
