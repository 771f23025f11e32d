"""Grading the lessons' exercises with nbgrader 0.9, in the students' languages.

- :mod:`~course_helpers.grading.assignment`: a lesson becomes a source assignment.
- :mod:`~course_helpers.grading.settings`: the course's nbgrader configuration.
- :mod:`~course_helpers.grading.sandbox`: limits for the kernel that runs a submission.
- :mod:`~course_helpers.grading.sanitize`: the instructor's grading metadata, restored.
- :mod:`~course_helpers.grading.feedback`: feedback pages in the assignment's language.
- :mod:`~course_helpers.grading.grade`: ``course grade``, one submission at a time.
- :mod:`~course_helpers.grading.validate`: ``course validate``, in the notebook's language.

Nothing here is imported by the lessons; nbgrader is needed only to grade.
"""
