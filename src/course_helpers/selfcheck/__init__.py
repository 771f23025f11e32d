"""Self-checks for the exercises: an answer at once, in the lesson's language.

A check compares what the learner wrote with what TF-Agents really does, computed at
check time, so no solution is stored in the notebook. When the answer is wrong, the
message names the misunderstanding it most likely comes from (time before batch, a
forgotten axis) instead of saying only "wrong", and it never prints the right answer.

While nbgrader runs a notebook (``nbgrader validate`` or ``autograde``, which set
``NBGRADER_EXECUTION`` in the kernel's environment), a check that does not pass raises
``AssertionError`` with its hint instead of returning it, so nbgrader counts its cell as
failed. Everywhere else it only shows the note.

The checks live in one module per lesson; all of them are reachable from here, as the
lessons call them: ``course.selfcheck.dataset_shapes(...)``.
"""

from course_helpers.selfcheck.distributed import *  # noqa: F403
from course_helpers.selfcheck.dqn import *  # noqa: F403
from course_helpers.selfcheck.feedback import Feedback as Feedback
from course_helpers.selfcheck.replay_buffers import *  # noqa: F403
from course_helpers.selfcheck.sac import *  # noqa: F403
