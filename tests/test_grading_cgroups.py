"""Where grading makes its control groups in cgroup v2, on a stand-in of /sys/fs/cgroup.

The kernel's own rules cannot be tried on a machine whose cgroup v2 hierarchy has no
controllers (CI's has none: its controllers are in cgroup v1, which
test_grading_unprivileged.py tries for real). These tests check the steps grading takes in
a group systemd delegated (``systemd-run --user --scope -p Delegate=yes``), on folders that
stand for it: the processes move into a leaf, then the controllers are enabled for the
children, and the sandboxes' groups are made beside the leaf.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course_tools.grading import cgroups

pytestmark = pytest.mark.unit


@pytest.fixture
def delegated(tmp_path, monkeypatch):
    """A stand-in v2 root, not writable by this process, with a delegated scope in it."""
    root = tmp_path / "cgroup"
    scope = root / "user.slice" / "user-1000.slice" / "run-u7.scope"
    scope.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (scope / "cgroup.controllers").write_text("cpu memory pids\n")
    (scope / "cgroup.subtree_control").write_text("\n")
    (scope / "cgroup.procs").write_text("4242\n4243\n")
    monkeypatch.setattr(cgroups, "ROOT", root)
    monkeypatch.setattr(cgroups, "_own_v2", lambda: scope)
    real_access = cgroups.os.access
    monkeypatch.setattr(
        cgroups.os, "access", lambda p, m: False if Path(p) == root else real_access(p, m)
    )
    return scope


def test_a_delegated_group_is_where_grading_makes_its_groups(delegated):
    assert cgroups.version() == 2
    assert cgroups._v2_parent() == delegated
    assert cgroups.description() == f"cgroup v2, delegated: {delegated}"


def test_the_processes_move_into_a_leaf_before_the_controllers_are_enabled(delegated, monkeypatch):
    moved: list[str] = []
    leaf_procs = delegated / cgroups.LEAF / "cgroup.procs"

    original = Path.write_text

    def record(self, data, *args, **kwargs):
        if self == leaf_procs:
            moved.append(data)
        if self == delegated / "cgroup.subtree_control":
            assert moved == ["4242", "4243"], "controllers enabled before the group was empty"
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", record)
    assert cgroups._prepare_v2(delegated) is None
    assert moved == ["4242", "4243"]
    # (a stand-in file keeps the last write; the kernel would hold every controller)
    assert (delegated / "cgroup.subtree_control").read_text() == "+cpu"


def test_a_grader_already_in_the_leaf_makes_its_groups_beside_it(delegated, monkeypatch):
    monkeypatch.setattr(cgroups, "_own_v2", lambda: delegated / cgroups.LEAF)
    assert cgroups._v2_parent() == delegated


def test_a_group_delegated_without_memory_says_so(delegated):
    (delegated / "cgroup.controllers").write_text("cpu pids\n")
    problem = cgroups._prepare_v2(delegated)
    assert problem is not None and "without the controllers memory" in problem


def test_controllers_already_enabled_move_nothing(delegated):
    (delegated / "cgroup.subtree_control").write_text("memory pids\n")
    assert cgroups._prepare_v2(delegated) is None
    assert not (delegated / cgroups.LEAF).exists()
