"""The sandbox's own disk and grading several submissions at once (course grade --jobs).

The pieces here; a real sandbox filling its disk is in test_grading_sandbox.py, and a whole
class graded two at a time, three of its students past the disk, in test_grading_workflow.py.
"""

from __future__ import annotations

import io
import sys

import pytest

from course_tools.grading import bubblewrap, disk, grade, settings


def _usage(where: str, used_bytes: int, files: int) -> disk.Usage:
    return disk.Usage(where, used_bytes, files, 128 * 2**20, 2_000)


def test_a_full_disk_is_described_by_each_limit_reached():
    graded = "the graded folder"
    by_bytes = disk.Report(True, False, [_usage(graded, 128 * 2**20, 3), _usage("/tmp", 0, 5)])
    both = disk.Report(True, True, [_usage(graded, 128 * 2**20, 2_000)])
    in_tmp = disk.Report(True, True, [_usage(graded, 4096, 1), _usage("/tmp", 0, 2_513)])
    assert disk.describe(by_bytes) == [
        "over the disk limit: the graded folder held 128.0 MiB of at most 128 MiB"
    ]
    assert disk.describe(both) == [
        "over the disk limit: the graded folder held 128.0 MiB of at most 128 MiB",
        "over the disk limit: the graded folder held 2,000 files and folders of at most 2,000",
    ]
    assert disk.describe(in_tmp) == [
        "over the disk limit: /tmp held 2,513 files and folders of at most 2,000"
    ]


def test_reports_are_read_line_by_line_and_a_garbled_line_is_skipped():
    report = disk.Report(True, False, [_usage("/g", 1, 2)])
    stream = io.BytesIO(b"not json\n" + report.line() + b'{"full": 1}\n')
    assert list(disk.read_reports(stream)) == [report]


def test_the_tmpfs_counts_its_own_root_beside_the_files_it_may_hold():
    assert disk.tmpfs_options(2**20, 100) == "size=1048576,nr_inodes=101,mode=0755"


def test_with_a_disk_the_graded_folder_is_shown_read_only_for_process_1_to_copy(tmp_path):
    folder, sockets = tmp_path / "autograded" / "ana" / "a", tmp_path / "sockets"
    folder.mkdir(parents=True)
    sockets.mkdir()
    kernel = [sys.executable, "-m", "ipykernel_launcher"]
    command = bubblewrap.command(
        kernel,
        folder=folder,
        sockets=sockets,
        readable=[],
        environment={},
        disk=bubblewrap.Disk(64 * 2**20, 500, report=9),
        privileged=True,
    )
    options, started = command[: command.index("--")], command[command.index("--") + 1 :]
    assert [options[i + 1] for i, o in enumerate(options) if o == "--bind"] == [str(sockets)]
    assert str(folder) in [options[i + 1] for i, o in enumerate(options) if o == "--ro-bind"]
    assert options[options.index("--dir") + 1] == disk.MOUNT_POINT
    # Root's capabilities are dropped, then two given back for process 1 alone.
    caps = [o for i, o in enumerate(options) if i and options[i - 1] in ("--cap-add", "--cap-drop")]
    assert caps == ["ALL", "CAP_SYS_ADMIN", "CAP_SETPCAP"]
    # /tmp is a tmpfs of the same size (bubblewrap's --size applies to the next --tmpfs).
    tmp = options.index("/tmp", options.index("--tmpfs"))
    assert options[tmp - 3 : tmp - 1] == ["--size", str(64 * 2**20)]
    # -P: the graded folder, process 1's working folder, is not on its import path.
    assert started[:5] == [sys.executable, "-P", "-m", "course_tools.grading.disk", "--folder"]
    assert started[started.index("--report") + 1] == "9"
    after = started.index("--")
    assert started[after + 1 : after + 3] == [str(bubblewrap.init_program()), "--"]
    assert started[-3:] == kernel


def test_without_a_disk_the_graded_folder_is_mounted_as_before(tmp_path):
    command = bubblewrap.command(
        ["python"], folder=tmp_path, sockets=tmp_path / "s", readable=[], environment={}
    )
    assert "--cap-add" not in command and "--size" not in command
    assert "course_tools.grading.disk" not in command


def test_every_nbgrader_process_waits_its_turn_for_the_gradebook(tmp_path):
    from sqlalchemy import create_engine
    from traitlets.config import Config

    config = Config()
    settings.apply(config, root=tmp_path, course_id="c", language="en")
    url = config.CourseDirectory.db_url
    assert url == f"sqlite:///{tmp_path.resolve() / 'gradebook.db'}?timeout=120"
    engine = create_engine(url)
    _, keywords = engine.dialect.create_connect_args(engine.url)
    assert keywords["timeout"] == settings.GRADEBOOK_TIMEOUT


def test_jobs_must_be_one_or_more(tmp_path):
    with pytest.raises(ValueError, match="--jobs must be 1 or more, not 0"):
        grade.grade_all(tmp_path, "a", jobs=0, unsandboxed=True)


def test_jobs_grade_every_submission_and_report_them_in_the_students_order(tmp_path, monkeypatch):
    import threading
    import time

    running, most = set(), []
    lock = threading.Lock()

    def grade_one(course, assignment, student, *, timeout, unsandboxed):
        with lock:
            running.add(student)
            most.append(len(running))
        time.sleep(0.05 if student != "ana" else 0.2)  # ana finishes last
        with lock:
            running.discard(student)
        return grade.Outcome(student, 1, 1, "graded", 0.1)

    monkeypatch.setattr(grade, "grade_one", grade_one)
    monkeypatch.setattr(grade, "load_config", lambda course: None)
    monkeypatch.setattr(grade, "_check_generated", lambda course, assignment: None)
    for student in ("ana", "ben", "chen", "dana", "eli"):
        (tmp_path / "submitted" / student / "a").mkdir(parents=True)
    outcomes = grade.grade_all(tmp_path, "a", jobs=2, unsandboxed=True)
    assert [o.student for o in outcomes] == ["ana", "ben", "chen", "dana", "eli"]
    assert max(most) == 2


def test_a_submission_that_found_the_gradebook_locked_is_graded_again_alone(tmp_path, monkeypatch):
    tries: dict[str, int] = {}

    def grade_one(course, assignment, student, *, timeout, unsandboxed):
        tries[student] = tries.get(student, 0) + 1
        if student == "ben" and tries[student] == 1:
            note = "sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) database is locked"
            return grade.Outcome(student, 0, 1, "failed", 0.1, [note])
        return grade.Outcome(student, 1, 1, "graded", 0.1)

    monkeypatch.setattr(grade, "grade_one", grade_one)
    monkeypatch.setattr(grade, "load_config", lambda course: None)
    monkeypatch.setattr(grade, "_check_generated", lambda course, assignment: None)
    for student in ("ana", "ben"):
        (tmp_path / "submitted" / student / "a").mkdir(parents=True)
    outcomes = grade.grade_all(tmp_path, "a", jobs=2, unsandboxed=True)
    assert [(o.student, o.status) for o in outcomes] == [("ana", "graded"), ("ben", "graded")]
    assert tries == {"ana": 1, "ben": 2}


def test_the_report_makes_room_for_the_longest_status():
    outcomes = [
        grade.Outcome("ana", 5, 5, "graded", 20.0),
        grade.Outcome("uma", 5, 5, disk.OVER_LIMIT, 21.0, ["over the disk limit: ..."]),
    ]
    lines = grade.report(outcomes).splitlines()
    assert lines[1].index("20.0s") == lines[2].index("21.0s")
    assert "over the disk limit" in lines[2]


def test_the_configuration_a_new_course_gets_names_the_disk_limits():
    from course_tools.grading import assignment

    text = assignment.CONFIG_TEMPLATE.format(course_id="c", language="en", exchange=None)
    assert "disk_mb=512," in text and "disk_files=10_000," in text


def test_a_busy_kernels_late_outputs_do_not_fail_the_whole_notebook(tmp_path):
    from traitlets.config import Config

    config = Config()
    settings.apply(config, root=tmp_path, course_id="c", language="en")
    assert config.Execute.iopub_timeout >= 30


def test_a_note_a_student_wrote_into_the_log_is_no_note():
    from course_tools.grading.sanitize import NOTE

    mark = NOTE + "6f1c"
    log = [
        "[AutogradeApp | INFO] Converting notebook ...",
        f"[AutogradeApp | WARNING] {mark} ex-time-check: test cell edited",
        # nbclient's timeout error quotes the cell's source, without the kernel's prefix:
        f"    ['print(\"{NOTE} over the disk limit: the graded folder held 1 MiB\")']",
        f"    {NOTE}0000 over the disk limit: a guess at the secret",
    ]
    assert grade.notes_in(log, mark) == ["ex-time-check: test cell edited"]
