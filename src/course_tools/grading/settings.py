"""The course's nbgrader configuration, applied from the course's ``nbgrader_config.py``.

``course assignment`` writes a short ``nbgrader_config.py`` into the course folder that
calls :func:`apply`; every nbgrader command run there (``nbgrader generate_assignment``,
``autograde``, ``generate_feedback``, the formgrader) then uses these settings. They
replace nbgrader's English-only texts through its own options and add the sandbox of
:mod:`course_tools.grading.sandbox`; nbgrader itself is not modified.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from course_helpers.i18n import translator
from course_helpers.languages import check_language
from course_tools.grading import sandbox

#: Set by ``course grade`` for each assignment, so that texts nbgrader writes while
#: autograding (a note on a test cell put back) follow that assignment's language.
LANGUAGE_VARIABLE = "COURSE_GRADING_LANGUAGE"
#: Set to 1 by ``course grade --unsandboxed``: kernels start without bubblewrap.
UNSANDBOXED_VARIABLE = "COURSE_GRADING_UNSANDBOXED"

#: Seconds an nbgrader process waits for another to finish writing the gradebook (SQLite
#: lets one process write at a time; ``course grade --jobs`` runs several).
GRADEBOOK_TIMEOUT = 120

TEMPLATES = Path(__file__).parent / "templates"
#: Where these settings lived before the learner's runtime and the course's tooling
#: became two packages; an nbgrader_config.py written then still names it.
FORMER_MODULE = "course_helpers.grading"


def check_config(path: Path) -> None:
    """Refuse a course's ``nbgrader_config.py`` that imports the settings from their former
    place, naming the line to change (the file is the instructor's: it is never rewritten)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FORMER_MODULE in line:
            raise ValueError(
                f"{path}, line {number}: {FORMER_MODULE} is now course_tools.grading (the "
                "course's tooling moved to its own package). Replace "
                f"{FORMER_MODULE!r} with 'course_tools.grading' in that line."
            )


def gradebook_url(root: Path) -> str:
    """The course's gradebook, ``gradebook.db`` in ``root`` as nbgrader's default, with
    writers that wait :data:`GRADEBOOK_TIMEOUT` seconds for each other (SQLAlchemy passes
    ``timeout`` to SQLite)."""
    return f"sqlite:///{Path(root).resolve() / 'gradebook.db'}?timeout={GRADEBOOK_TIMEOUT}"


def validator_messages(language: str) -> dict[str, str]:
    """nbgrader Validator's warnings, in ``language`` (same placeholders as nbgrader's)."""
    _ = translator(language)
    return {
        "type_changed_warning": _(
            "The type of {num_changed} cell(s) has changed. The tests may "
            "pass now and still fail when your assignment is graded."
        )
        + "\n",
        "changed_warning": _(
            "The contents of {num_changed} test cell(s) have changed. The tests "
            "may pass now and still fail when your assignment is graded."
        )
        + "\n",
        "failed_warning": _(
            "{num_failed} cell(s) failed. If you submit your notebook as it is, "
            "you will not receive full credit."
        )
        + "\n",
        "passed_warning": _("{num_passed} cell(s) passed.") + "\n",
    }


def success_message(language: str) -> str:
    """What ``course validate`` prints when every test passes."""
    _ = translator(language)
    return _("Success: your notebook passes every test.")


def apply(
    c: Any,
    *,
    root: Path,
    course_id: str,
    language: str,
    exchange: str | None = None,
    cell_timeout: int = 120,
    cpu_seconds: int = 900,
    memory_mb: int = 8192,
    file_mb: int = 256,
    processes: int = 512,
    disk_mb: int = 512,
    disk_files: int = 10_000,
    user: str | None = None,
    quick: bool = True,
) -> None:
    """Configure nbgrader (``c``, from ``get_config()``) for this course.

    ``language`` is the course's default; each assignment's own language, recorded by
    ``course assignment``, wins where nbgrader lets it (feedback, autograde notes).
    Each submission's kernel runs in a sandbox (:mod:`course_tools.grading.kernel`)
    unless :data:`UNSANDBOXED_VARIABLE` is set.
    """
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import GetGrades

    from course_tools.grading.feedback import LimitOutputSize, Localize
    from course_tools.grading.sanitize import RestoreGradingMetadata

    language = check_language(os.environ.get(LANGUAGE_VARIABLE) or language)
    _ = translator(language)

    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = course_id
    c.CourseDirectory.db_url = gradebook_url(root)
    if exchange:
        c.Exchange.root = str(exchange)

    # `nbgrader zip_collect` files a received folder, downloaded/<assignment>/archive/
    # <student>/<notebook>.ipynb (or zip archives of that layout), under submitted/.
    c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/]+)/(?P<file_id>[^/]+\.ipynb)$"

    if user:
        sandbox.check_user(user)

    # Answer cells keep the lesson's stub (written before the solution region), so the
    # released notebook reads exactly like the lesson.
    c.ClearSolutions.code_stub = {"python": ""}

    # Each student's notebook runs in its own kernel, in a sandbox (bubblewrap, and a
    # control group where grading may make one), confined again before the first cell.
    sandboxed = os.environ.get(UNSANDBOXED_VARIABLE) != "1"
    if sandboxed:
        c.Execute.kernel_manager_class = "course_tools.grading.kernel.SandboxedKernelManager"
        c.SandboxedKernelManager.memory_mb = memory_mb
        c.SandboxedKernelManager.processes = processes
        c.SandboxedKernelManager.cpu_seconds = cpu_seconds
        c.SandboxedKernelManager.disk_mb = disk_mb
        c.SandboxedKernelManager.disk_files = disk_files
        c.SandboxedKernelManager.user = user or ""
        c.SandboxedKernelManager.private = [str(Path(root).resolve())]
    c.Execute.timeout = cell_timeout
    c.Execute.interrupt_on_timeout = True
    # nbgrader gives up on the whole notebook when a cell's last outputs come more than
    # iopub_timeout seconds after its reply (nbclient's default: 4). On a machine grading
    # several submissions at once (course grade --jobs), a busy kernel can take longer.
    c.Execute.iopub_timeout = 30
    # In the sandbox, the kernel is started as ``user`` (it cannot switch users itself),
    # and its process limit counts the whole sandbox; outside, it counts all of the
    # grader's processes, so it is not set.
    c.Execute.extra_arguments = [
        "--IPKernelApp.exec_lines="
        + repr(
            [
                sandbox.startup_line(
                    cpu_seconds=cpu_seconds,
                    memory_mb=memory_mb,
                    file_mb=file_mb,
                    user=None if sandboxed else user,
                    processes=processes if sandboxed else None,
                    quick=quick,
                    language=language,
                )
            ]
        )
    ]
    c.Execute.error_on_timeout = {
        "ename": "CellTimeoutError",
        "evalue": "",
        "traceback": [
            _("CellTimeoutError: this cell ran longer than {seconds} s and was stopped.").format(
                seconds=cell_timeout
            )
        ],
    }

    # A deleted test cell comes back, so that it is graded as the instructor wrote it.
    c.OverwriteCells.add_missing_cells = True
    # (nbgrader turns the note's first line into a comment in a code cell.)
    c.OverwriteCells.missing_cell_notification = (
        _("This cell (id: {cell_id}) was missing from the submission; grading put it back.") + "\n"
    )
    # Tampered grading metadata is restored from the instructor's copy first.
    c.Autograde.sanitize_preprocessors = [
        RestoreGradingMetadata,
        *Autograde.class_traits()["sanitize_preprocessors"].default(),
    ]
    c.LimitOutput.max_lines = 500
    c.LimitOutputSize.language = language
    c.Autograde.autograde_preprocessors = _after_limit_output(LimitOutputSize)

    c.Localize.language = language
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, Localize]
    # Only the exporter that GenerateFeedback creates: the formgrader's own pages keep theirs.
    c.GenerateFeedback.HTMLExporter.template_name = "course_feedback"
    c.GenerateFeedback.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]

    for name, text in validator_messages(language).items():
        setattr(c.Validator, name, text)


def _after_limit_output(extra: type) -> list[type]:
    """nbgrader's own autograde preprocessors, with ``extra`` right after LimitOutput."""
    from nbgrader.converters.autograde import Autograde
    from nbgrader.preprocessors import LimitOutput

    steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
    steps.insert(steps.index(LimitOutput) + 1, extra)
    return steps
