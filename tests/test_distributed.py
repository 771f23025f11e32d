"""Lesson 4's jobs as processes: a server, a learner, collect jobs and an evaluator meet on
loopback; the run survives a collect job's death; no job outlives its launcher."""

from __future__ import annotations

import _thread
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from course_helpers.distributed import sac
from course_helpers.distributed.cluster import Cluster, JobFailed

# The tests marked `notebook` start TensorFlow in several processes: a minute or so each.
QUICK = {**sac.DEFAULTS, **sac.QUICK}


def alive(pid: int) -> bool:
    """Whether a process group led by ``pid`` still has a process (zombies aside)."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    status = f"/proc/{pid}/stat"
    if os.path.exists(status):  # a zombie waiting for its parent is not running
        with open(status) as file:
            return file.read().split(") ", 1)[1].split()[0] != "Z"
    return True


def pid(job) -> int:
    assert job.process is not None, job.name
    return job.process.pid


def wait_until(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.fixture(scope="module")
def run_with_a_crash(tmp_path_factory):
    """A quick run with two collect jobs, of which one is killed at step 100 and started
    again at step 150 (it then skips its random steps: the run has begun)."""
    cluster = Cluster(tmp_path_factory.mktemp("run"), QUICK, collect_jobs=2)
    cluster.start()
    try:
        cluster.wait(until_train_step=100, timeout=600)
        before_kill = dict(cluster.env_steps())
        memory = cluster.memory_mb()
        cluster.kill("collect-1")
        cluster.wait(until_train_step=150, timeout=600)  # the run goes on with one job
        restarted = cluster.jobs["collect-1"]
        last_before_restart = restarted.reports[-1]
        # collect-0 pauses while collect-1 starts again, so that the learner, which then
        # has no new data, cannot finish before collect-1 is back.
        paused = pid(cluster.jobs["collect-0"])
        os.killpg(paused, signal.SIGSTOP)
        try:
            cluster.restart("collect-1")
            assert wait_until(lambda: restarted.reports[-1] is not last_before_restart, 240)
        finally:
            os.killpg(paused, signal.SIGCONT)
        cluster.wait(timeout=600)
    finally:
        cluster.stop()
    return cluster, before_kill, last_before_restart, memory


@pytest.mark.notebook
def test_both_collect_jobs_write_pairs_the_learner_trains_and_the_evaluator_reports(
    run_with_a_crash,
):
    cluster, before_kill, _, _ = run_with_a_crash
    assert before_kill["collect-0"] > 0 and before_kill["collect-1"] > 0, before_kill
    assert cluster.train_step() == QUICK["num_iterations"]
    steps = [step for step, _ in cluster.evaluations()]
    assert steps[0] == 0 and steps[-1] == QUICK["num_iterations"], steps
    # The rate limiter kept the learner's samples near samples_per_insert per pair written.
    server = cluster.jobs["server"].latest
    ratio = server["samples"] / (server["inserts"] - QUICK["initial_collect_steps"])
    assert 0.5 * QUICK["samples_per_insert"] < ratio < 2 * QUICK["samples_per_insert"], server


@pytest.mark.notebook
def test_a_collect_job_killed_mid_run_and_started_again_the_run_completes(run_with_a_crash):
    cluster, _, last_before_restart, _ = run_with_a_crash
    job = cluster.jobs["collect-1"]
    assert job.starts == 2 and cluster.done()
    after = job.reports[job.reports.index(last_before_restart) + 1 :]
    # Started again after the run had begun, it took no random steps: its first report
    # already comes with the learner's weights.
    assert after and after[0]["weights_step"] >= 150, after[:2]
    assert after[0]["env_steps"] == 0 and after[0]["started"]
    assert "collect-1 was stopped." in cluster.events


@pytest.mark.notebook
def test_no_job_outlives_a_finished_run(run_with_a_crash):
    cluster, _, _, _ = run_with_a_crash
    for name, job in cluster.jobs.items():
        assert not alive(pid(job)), name


@pytest.mark.notebook
def test_the_memory_of_every_running_job_is_measured_and_none_once_they_stopped(
    run_with_a_crash,
):
    cluster, _, _, memory = run_with_a_crash
    assert sorted(memory) == sorted(cluster.jobs), memory
    # Each job is a Python process with TensorFlow loaded: hundreds of MiB, not a few.
    assert all(size > 100 for size in memory.values()), memory
    assert cluster.memory_mb() == {}


@pytest.mark.notebook
def test_collect_jobs_act_with_weights_a_few_pulls_old(run_with_a_crash):
    cluster, _, _, _ = run_with_a_crash
    lags = cluster.policy_lags()
    assert lags and max(lags) < QUICK["num_iterations"], lags


@pytest.mark.notebook
def test_an_interrupted_wait_stops_every_job(tmp_path):
    cluster = Cluster(tmp_path, QUICK, collect_jobs=1)
    cluster.start()
    timer = threading.Timer(20, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cluster.wait(timeout=600)
    finally:
        timer.cancel()
        cluster.stop()
    for name, job in cluster.jobs.items():
        assert not alive(pid(job)), name


@pytest.mark.notebook
def test_jobs_end_when_the_kernel_that_started_them_is_killed(tmp_path):
    # A stand-in for a kernel: starts the jobs, writes their process ids, then is killed.
    kernel = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import json, time
                from course_helpers.distributed import sac
                from course_helpers.distributed.cluster import Cluster
                cluster = Cluster({str(tmp_path / "run")!r}, {{**sac.DEFAULTS, **sac.QUICK}})
                cluster.start()
                pids = [job.process.pid for job in cluster.jobs.values()]
                open({str(tmp_path / "pids.json")!r}, "w").write(json.dumps(pids))
                time.sleep(600)
                """
            ),
        ]
    )
    assert wait_until(lambda: (tmp_path / "pids.json").exists(), 60)
    time.sleep(5)  # the jobs are importing TensorFlow, or waiting for one another
    kernel.send_signal(signal.SIGKILL)
    kernel.wait()
    pids = json.loads((tmp_path / "pids.json").read_text())
    assert wait_until(lambda: not any(alive(pid) for pid in pids), 30), [
        pid for pid in pids if alive(pid)
    ]


@pytest.mark.notebook
def test_a_failing_job_stops_the_run_and_its_error_names_the_job_and_its_log(tmp_path):
    cluster = Cluster(tmp_path, {**QUICK, "env_name": "NoSuchBulletEnv-v0"}, collect_jobs=1)
    cluster.start()
    with pytest.raises(JobFailed) as failure:
        cluster.wait(timeout=300)
    message = str(failure.value)
    # Every job but the server loads the Minitaur first: any of them may fail first.
    failed = re.search(r"The (train|eval|collect-0) job stopped with exit code 1", message)
    assert failed, message
    assert str(tmp_path / "logs" / f"{failed.group(1)}.log") in message
    assert "NoSuchBulletEnv" in message  # the error the job ended with
    for name, job in cluster.jobs.items():
        assert not alive(pid(job)), name


def test_settings_the_jobs_do_not_know_are_refused_with_their_names(tmp_path):
    with pytest.raises(ValueError, match="batchsize"):
        sac.write_settings(tmp_path, {"batchsize": 64})
    assert not (tmp_path / sac.SETTINGS_FILE).exists()


def test_a_job_without_the_runs_settings_says_where_it_looked(tmp_path):
    with pytest.raises(SystemExit, match=str(tmp_path / sac.SETTINGS_FILE)):
        sac.read_settings(tmp_path)


def test_a_folder_that_holds_a_run_is_refused_before_any_job_starts(tmp_path):
    sac.write_settings(tmp_path, QUICK)
    cluster = Cluster(tmp_path, QUICK, collect_jobs=1)
    with pytest.raises(FileExistsError, match="holds a run already"):
        cluster.start()
    assert all(job.process is None for job in cluster.jobs.values())


class _Ended:
    """A stand-in for a job's process that has ended."""

    def poll(self) -> int:
        return 0


def test_the_speeds_measured_after_stop_count_each_jobs_steps_to_its_last_report(tmp_path):
    # Two collect jobs ended by stop() with the run: the window ends at the earlier of their
    # last reports, not at the learner's, where their unreported stretches would count as
    # no steps. A job killed before that says nothing of the end and is left out.
    cluster = Cluster(tmp_path / "run", sac.QUICK, collect_jobs=3, evaluator=False)
    train, first, second, killed = (
        cluster.jobs[name] for name in ("train", "collect-0", "collect-1", "collect-2")
    )
    train.reports = [{"time": float(t), "train_step": 10.0 * t} for t in range(11)]
    first.reports = [{"time": float(t), "env_steps": 20.0 * t} for t in range(9)]
    second.reports = [{"time": float(t), "env_steps": 20.0 * t} for t in range(10)]
    killed.reports = [{"time": float(t), "env_steps": 20.0 * t} for t in range(3)]
    for job in (train, first, second, killed):
        job.process = _Ended()  # type: ignore[assignment]
    first.stopped = second.stopped = True
    speeds = cluster.throughput()
    # From the learner's first step (t = 1) to t = 8: 7 s, 7 × 20 × 2 steps of the two and
    # the killed job's 40 (from t = 1 to its end at t = 2).
    assert speeds["gradient_steps_per_second"] == pytest.approx(10.0)
    assert speeds["env_steps_per_second"] == pytest.approx((7 * 20 * 2 + 20) / 7)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads Linux's /proc")
def test_memory_mb_reads_a_running_jobs_resident_memory_and_skips_an_ended_one(tmp_path):
    cluster = Cluster(tmp_path / "run", sac.QUICK, collect_jobs=1, evaluator=False)
    # A stand-in for the server: a process that holds 80 MiB it has written to.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; b = b'x' * (80 << 20); print(1, flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline()  # the 80 MiB are written
        cluster.jobs["server"].process = holder
        cluster.jobs["train"].process = _Ended()  # type: ignore[assignment]
        sizes = cluster.memory_mb()
        assert list(sizes) == ["server"], sizes
        assert 80 < sizes["server"] < 200, sizes
    finally:
        holder.kill()
        holder.wait()
    assert cluster.memory_mb() == {}


def test_start_refuses_before_any_job_where_the_jobs_would_not_fit_in_memory(tmp_path, monkeypatch):
    """Past a container's limit (Binder's 2 GB) the system would kill a job midway; the
    cluster says so first, with the figures, and starts nothing."""
    from course_helpers.distributed import cluster as cluster_module

    monkeypatch.setattr(cluster_module, "_latest", None)  # restored after the test
    monkeypatch.setattr(cluster_module, "memory_limit_mb", lambda: 2048.0)
    launched: list = []
    cluster = Cluster(tmp_path / "run", sac.QUICK, collect_jobs=2)
    monkeypatch.setattr(cluster, "_launch", launched.append)
    with pytest.raises(cluster_module.NotEnoughMemory) as refused:
        cluster.start()
    message = str(refused.value)
    assert message.startswith("These 5 jobs, each a process with its own TensorFlow")
    assert "allows 2.0 GB" in message and "start(check_memory=False)" in message
    assert launched == [] and not (tmp_path / "run" / "settings.json").exists()
    # Asked to, it starts them anyway.
    cluster.start(check_memory=False)
    assert [job.name for job in launched] == ["train", "server", "collect-0", "collect-1", "eval"]


def test_the_memory_needed_grows_with_the_jobs_and_the_table(tmp_path, monkeypatch):
    from course_helpers.distributed import cluster as cluster_module

    monkeypatch.setattr(cluster_module, "_latest", None)  # restored after the test
    one = Cluster(tmp_path / "a", {**sac.DEFAULTS, "replay_buffer_capacity": 0}, collect_jobs=1)
    four = Cluster(tmp_path / "b", {**sac.DEFAULTS, "replay_buffer_capacity": 0}, collect_jobs=4)
    table = Cluster(
        tmp_path / "c", {**sac.DEFAULTS, "replay_buffer_capacity": 50_000}, collect_jobs=1
    )
    collect = four.memory_needed_mb() - one.memory_needed_mb()
    assert collect == pytest.approx(3 * cluster_module.JOB_MEMORY_MB["collect"])
    # 50,000 pairs of about 3.5 KB each: about 171 MiB more in the server.
    assert table.memory_needed_mb() - one.memory_needed_mb() == pytest.approx(50_000 * 3.5 / 1024)
