"""The course's tooling: what authors, translators, instructors and CI run.

The ``course`` command (:mod:`course_tools.cli`) and everything behind it: finding and
running lessons, the Colab and Binder links, translation (:mod:`course_tools.l10n`),
grading with nbgrader (:mod:`course_tools.grading`), the exercises' reference solutions
and ``course bench``. Learners never import it: lessons import :mod:`course_helpers`, the
runtime, which never imports this package (``make lint`` checks it with import-linter).
"""
