"""Helpers behind the TF-Agents lessons: the plumbing, so the notebooks can show the ideas.

Call :func:`setup` in a lesson's first code cell, before TensorFlow is imported.
Importing this package imports neither TensorFlow nor pygame.
"""

from course_helpers import diagrams, selfcheck
from course_helpers.metrics import average_return
from course_helpers.plots import plot_q_values, plot_returns, plot_sac_training
from course_helpers.progress import progress, progress_observer
from course_helpers.quick import hyperparameters, is_quick_mode
from course_helpers.runtime import seed_everything, setup
from course_helpers.video import embed_mp4, record_episodes, record_video, write_mp4

__all__ = [
    "average_return",
    "diagrams",
    "embed_mp4",
    "hyperparameters",
    "is_quick_mode",
    "plot_q_values",
    "plot_returns",
    "plot_sac_training",
    "progress",
    "progress_observer",
    "record_episodes",
    "record_video",
    "seed_everything",
    "selfcheck",
    "setup",
    "write_mp4",
]
