"""The lessons' data-flow pictures, drawn with matplotlib in the lesson's language.

Each picture is a few labelled boxes joined by labelled arrows. Drawing them here, rather
than shipping images, keeps every word in the helpers' gettext catalogs, so a French
lesson shows a French picture, and keeps the pictures in step with the code they depict.
Symbols are matplotlib mathtext (``$Q_\\theta$``) and stay the same in every language.

In a lesson::

    course.diagrams.dqn_loop()
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from course_helpers.i18n import gettext as _

__all__ = ["distributed_sac", "dqn_loop", "replay_buffer_flow", "sac_actor_learner"]

# One colour per role, the same in every picture: who acts, what stores, who learns.
_ACTING = "#dbe9f6"
_STORING = "#fdebd0"
_LEARNING = "#e2f0d9"
_WATCHING = "#eeeeee"


@dataclass(frozen=True)
class _Box:
    x: float  # centre, in the picture's coordinates (0 to 10 across, 0 to 6 up)
    y: float
    text: str
    colour: str
    width: float = 2.6
    height: float = 1.1


def _draw(
    boxes: dict[str, _Box],
    arrows: list[tuple[str, str, str, float]],
    title: str,
    size: tuple[float, float] = (10, 6),
) -> Figure:
    """Draw ``boxes`` and ``arrows`` (from, to, label, bend) on a new figure."""
    figure, ax = plt.subplots(figsize=(size[0] * 0.95, size[1] * 0.95))
    ax.set_xlim(0, size[0])
    ax.set_ylim(0, size[1])
    ax.set_axis_off()
    ax.set_title(title, fontsize=13)
    patches = {}
    for name, box in boxes.items():
        patch = FancyBboxPatch(
            (box.x - box.width / 2, box.y - box.height / 2),
            box.width,
            box.height,
            boxstyle="round,pad=0.05,rounding_size=0.15",
            facecolor=box.colour,
            edgecolor="#444444",
            linewidth=1.2,
        )
        ax.add_patch(patch)
        patches[name] = patch
        patch.set_gid(f"box:{name}")
        ax.text(
            box.x, box.y, box.text, ha="center", va="center", fontsize=10, gid=f"box-text:{name}"
        )
    for start, end, label, bend in arrows:
        _arrow(ax, patches[start], patches[end], boxes[start], boxes[end], label, bend)
    figure.tight_layout()
    return figure


def _arrow(
    ax: Axes, start: FancyBboxPatch, end: FancyBboxPatch, a: _Box, b: _Box, label: str, bend: float
) -> None:
    arrow = FancyArrowPatch(
        posA=(a.x, a.y),
        posB=(b.x, b.y),
        patchA=start,
        patchB=end,
        arrowstyle="-|>",
        mutation_scale=16,
        linewidth=1.4,
        color="#333333",
        connectionstyle=f"arc3,rad={bend}",
        shrinkA=4,
        shrinkB=4,
    )
    ax.add_patch(arrow)
    if label:
        # The label sits beside the arrow's middle, pushed off the line the way it bends.
        mid_x, mid_y = (a.x + b.x) / 2, (a.y + b.y) / 2
        dx, dy = b.x - a.x, b.y - a.y
        length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
        offset = bend * length / 2 + (0.3 if bend >= 0 else -0.3)
        x, y = mid_x + dy / length * offset, mid_y - dx / length * offset
        ax.text(
            x,
            y,
            label,
            ha="center",
            va="center",
            fontsize=9,
            color="#222222",
            gid="arrow-label",
            bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.9),
        )


def replay_buffer_flow() -> Figure:
    """Lesson 01: who writes into a replay buffer, what it keeps, and the three ways to read."""
    boxes = {
        "writer": _Box(
            1.5, 4.8, _("Driver plays the policy;\nobservers write each step"), _ACTING, width=2.6
        ),
        "buffer": _Box(
            5.5,
            4.8,
            _("Replay buffer\nbatch_size segments,\nmax_length items each"),
            _STORING,
            width=2.8,
            height=1.4,
        ),
        "evict": _Box(9.7, 4.8, _("Oldest item\noverwritten (FIFO)"), _WATCHING, width=2.4),
        "sample": _Box(
            2.05,
            2.4,
            _("as_dataset(sample_batch_size)\nitems drawn uniformly"),
            _LEARNING,
            width=3.2,
        ),
        "sequences": _Box(
            5.5, 2.4, _("as_dataset(..., num_steps=T)\nsequences of T steps"), _LEARNING, width=3.2
        ),
        "everything": _Box(
            9.3, 2.4, _("single_deterministic_pass\nevery item, exactly once"), _WATCHING, width=3.0
        ),
        "train": _Box(
            3.65, 0.6, _("Training step\nagent.train(experience)"), _LEARNING, width=3.0, height=0.9
        ),
    }
    arrows = [
        ("writer", "buffer", _("add_batch"), 0.0),
        ("buffer", "evict", _("when a segment\nis full"), 0.0),
        ("buffer", "sample", _("sample"), 0.0),
        ("buffer", "sequences", _("sample"), 0.0),
        ("buffer", "everything", _("read all"), 0.0),
        ("sample", "train", "", 0.0),
        ("sequences", "train", "", 0.0),
        ("train", "writer", _("new weights:\nthe policy changes"), -1.1),
    ]
    return _draw(
        boxes, arrows, _("A replay buffer: written by acting, read by learning"), size=(11, 6)
    )


def dqn_loop() -> Figure:
    """Lesson 02: DQN's loop of collecting, storing, sampling, updating and copying."""
    boxes = {
        "env": _Box(1.3, 4.2, _("Environment\nCartPole"), _ACTING, width=2.1),
        "collect": _Box(5.9, 4.2, _("Collect policy\nε-greedy on $Q_\\theta$"), _ACTING),
        "table": _Box(10.0, 4.2, _("Replay buffer\n(Reverb table)"), _STORING, width=2.2),
        "dataset": _Box(10.0, 1.3, _("Batches of pairs\n$(s, a, r, d, s')$"), _STORING, width=2.2),
        "update": _Box(5.9, 1.3, _("Gradient step on $Q_\\theta$\nTD loss"), _LEARNING),
        "target": _Box(1.3, 1.3, _("Target network\n$Q_{\\theta^-}$"), _LEARNING, width=2.1),
    }
    arrows = [
        ("collect", "env", _("action $a$"), 0.2),
        ("env", "collect", _("$s'$, $r$, discount $d$"), 0.2),
        ("collect", "table", _("observer\nwrites"), 0.0),
        ("table", "dataset", _("sample\nuniformly"), 0.0),
        ("dataset", "update", "", 0.0),
        ("target", "update", _("targets $y$"), 0.2),
        ("update", "target", _("copy every\ntarget_update_period"), 0.2),
        ("update", "collect", _("new weights $\\theta$"), 0.0),
    ]
    return _draw(boxes, arrows, _("DQN: collect, store, sample, update"), size=(11.4, 5.5))


def sac_actor_learner() -> Figure:
    """Lesson 03: the Actor-Learner API's roles around one Reverb table."""
    boxes = {
        "collect": _Box(
            2.0, 4.9, _("Collect actor\nMinitaur + stochastic policy"), _ACTING, width=3.2
        ),
        "table": _Box(6.6, 4.9, _("Reverb table\nuniform, FIFO"), _STORING, width=2.4),
        "learner": _Box(6.6, 2.6, _("Learner\ncritics, actor, α"), _LEARNING, width=2.6),
        "variables": _Box(
            2.0, 2.6, _("Policy variables\n(the actor's weights)"), _LEARNING, width=3.2
        ),
        "eval": _Box(
            2.0, 0.6, _("Eval actor\ngreedy policy → metrics"), _WATCHING, width=3.2, height=0.9
        ),
        "saved": _Box(10.3, 2.6, _("Triggers\nSavedModel, steps/s"), _WATCHING, width=2.1),
    }
    arrows = [
        ("collect", "table", _("observer writes\n$(s, a, r, d, s')$"), 0.0),
        ("table", "learner", _("dataset of\nbatches"), 0.0),
        ("learner", "variables", _("updates"), 0.0),
        ("variables", "collect", _("reads"), 0.0),
        ("variables", "eval", _("reads"), 0.0),
        ("learner", "saved", _("every\ninterval"), 0.0),
    ]
    return _draw(boxes, arrows, _("SAC with the Actor-Learner API"), size=(11.5, 6))


def distributed_sac() -> Figure:
    """Lesson 04: the jobs of a distributed run, each its own process, around one server."""
    boxes = {
        "collect0": _Box(1.9, 5.0, _("Collect job 0\nMinitaur + collect policy"), _ACTING, 3.3),
        "collect1": _Box(1.9, 3.4, _("Collect job 1\nMinitaur + collect policy"), _ACTING, 3.3),
        "replay": _Box(6.7, 5.0, _("Replay table\nSampleToInsertRatio"), _STORING, 2.9),
        "variables": _Box(6.7, 2.4, _("Variable container\nweights + train step"), _STORING, 2.9),
        "train": _Box(11.0, 3.7, _("Train job\nLearner: critics, actor, α"), _LEARNING, 3.0),
        "eval": _Box(1.9, 1.0, _("Evaluator\ngreedy policy → return"), _WATCHING, 3.3, 0.9),
    }
    arrows = [
        ("collect0", "replay", _("write pairs"), 0.0),
        ("collect1", "replay", "", 0.0),
        ("replay", "train", _("sample\nbatches"), 0.0),
        ("train", "variables", _("push\nweights"), 0.0),
        ("variables", "collect1", _("pull every\nK steps"), 0.0),
        ("variables", "collect0", "", 0.2),
        ("variables", "eval", _("pull"), 0.0),
    ]
    figure = _draw(
        boxes, arrows, _("Distributed SAC: one Reverb server, many processes"), (12.8, 6)
    )
    ax = figure.axes[0]
    # The Reverb server: one process that holds both tables.
    server = FancyBboxPatch(
        (4.95, 1.55), 3.5, 4.25, boxstyle="round,pad=0.05,rounding_size=0.2",
        facecolor="none", edgecolor="#888888", linestyle="--", linewidth=1.2,
    )  # fmt: skip
    ax.add_patch(server)
    ax.text(6.7, 3.7, _("Reverb server"), ha="center", va="center", fontsize=10,
            style="italic", color="#555555", gid="server-label")  # fmt: skip
    return figure
