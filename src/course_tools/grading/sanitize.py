"""Restore the instructor's grading metadata on a submission before nbgrader reads it.

nbgrader trusts a cell's ``nbgrader`` metadata for which cells are graded and how much
they are worth. A student can change it, on purpose or with a stray click in the cell
toolbar, and some changes make nbgrader 0.9.6 stop grading the whole notebook: an
answer cell marked as graded fails with ``MissingEntry: No such grade cell``.

:class:`RestoreGradingMetadata` runs first among ``Autograde.sanitize_preprocessors``
(set by :mod:`course_tools.grading.settings`). It works on nbgrader's copy of the
submission, never on the submitted file. Each cell whose id is in the instructor's
source notebook gets that cell's ``nbgrader`` metadata back, any other cell loses its
``nbgrader`` metadata, and every difference is logged with :data:`NOTE`, so that
``course grade`` can report it. nbgrader's own ``OverwriteCells`` then restores the
test cells' sources and puts back missing ones, as usual.
"""

from __future__ import annotations

import os

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from course_tools.grading.feedback import instructor_notebook

#: Marks the log lines that ``course grade`` copies into its report.
NOTE = "course-grading-note:"
#: Set by ``course grade`` for each nbgrader run: a secret that every genuine note carries
#: after :data:`NOTE`. nbgrader's log also holds text a student wrote (a timed-out cell's
#: source, which nbclient's error quotes); without the secret, such a line is no note.
TOKEN_VARIABLE = "COURSE_GRADING_NOTE_TOKEN"


def note_mark() -> str:
    """What begins a genuine note in this run's log: :data:`NOTE` and the run's secret."""
    return NOTE + os.environ.get(TOKEN_VARIABLE, "")


_ADDED = ("checksum", "cell_type")


class RestoreGradingMetadata(NbGraderPreprocessor):
    """Give every cell the instructor's ``nbgrader`` metadata; log what a student changed."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple:
        info = resources["nbgrader"]
        from nbgrader.preprocessors import ClearHiddenTests

        source = instructor_notebook(self.config, info["assignment"], info["notebook"])
        expected = {cell.id: cell for cell in source.cells if "nbgrader" in cell.metadata}
        # What students were given: the test cells without their hidden tests.
        released, _ = ClearHiddenTests(config=self.config).preprocess(
            nbformat.from_dict(source), {}
        )
        given = {cell.id: cell.source.strip() for cell in released.cells}
        present = set()
        for cell in nb.cells:
            original = expected.get(cell.get("id"))
            found = cell.metadata.get("nbgrader")
            if original is None:
                if found is not None:
                    del cell.metadata["nbgrader"]
                    self.log.warning(
                        "%s %s: grading metadata added by the student was removed",
                        note_mark(),
                        cell.get("id"),
                    )
                continue
            present.add(cell.id)
            # generate_assignment adds these two to the released copy; nbgrader checks them.
            added = {key: value for key, value in (found or {}).items() if key in _ADDED}
            if (
                found is None
                or {k: v for k, v in found.items() if k not in _ADDED}
                != original.metadata["nbgrader"]
            ):
                self.log.warning(
                    "%s %s: grading metadata differed from the instructor's copy and was restored",
                    note_mark(),
                    cell.id,
                )
                cell.metadata["nbgrader"] = {**original.metadata["nbgrader"], **added}
            if (
                original.metadata["nbgrader"].get("locked")
                and cell.source.strip() != given[cell.id]
            ):
                self.log.warning(
                    "%s %s: test cell edited; the instructor's version was graded",
                    note_mark(),
                    cell.id,
                )
        for cell_id in expected.keys() - present:
            self.log.warning(
                "%s %s: cell missing; the instructor's version was put back", note_mark(), cell_id
            )
        return nb, resources
