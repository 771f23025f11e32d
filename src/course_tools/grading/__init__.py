"""Grading the lessons' exercises with nbgrader 0.9, in the students' languages.

- :mod:`~course_tools.grading.assignment`: a lesson becomes a source assignment.
- :mod:`~course_tools.grading.settings`: the course's nbgrader configuration.
- :mod:`~course_tools.grading.sandbox`: limits for the kernel that runs a submission.
- :mod:`~course_tools.grading.sanitize`: the instructor's grading metadata, restored.
- :mod:`~course_tools.grading.feedback`: feedback pages in the assignment's language.
- :mod:`~course_tools.grading.grade`: ``course grade``, one submission at a time.
- :mod:`~course_tools.grading.validate`: ``course validate``, in the notebook's language.

Nothing here is imported by the lessons; nbgrader is needed only to grade.
"""
