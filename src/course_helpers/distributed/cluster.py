"""Start a distributed SAC run's jobs on this machine, watch them, and stop them all.

:class:`Cluster` runs each job of :mod:`course_helpers.distributed` as its own process,
exactly as a person would start it in a terminal (``python -m
course_helpers.distributed.collect --root-dir ... --address localhost:PORT``), with the
server on a free port of this machine. It is the plumbing of lesson 4: what the jobs do is
in their modules.

No job outlives the cluster: :meth:`Cluster.stop` ends every job's process group (first
politely, then for good), and runs when the notebook's kernel exits, when a cell waiting
on the jobs is interrupted, and when a job the run cannot do without fails. Each job also
ends by itself when the kernel that started it is gone (``--exit-with-parent``).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from course_helpers.distributed.job import LANGUAGE_VARIABLE, MARK
from course_helpers.distributed.sac import write_settings
from course_helpers.i18n import current_language, gettext
from course_helpers.numbers import number

#: How long a job may take to stop after SIGTERM before it is killed.
GRACE_SECONDS = 5.0

#: The peak memory of each kind of job, in MiB (proportional set size, so that shared
#: library pages count once), in a run with lesson 4's settings (`course bench --only
#: distributed --collect-jobs 2 --distributed-evaluator --distributed-iterations 1000`,
#: 28 November 2026, 2-core Intel Xeon, TensorFlow 2.15): mostly TensorFlow, which each
#: process loads for itself. The five jobs together peaked at 1,881 MiB, with a nearly empty
#: replay table; the table comes on top, in the server: about 3.5 KB per pair.
JOB_MEMORY_MB = {"train": 505.0, "server": 340.0, "collect": 420.0, "evaluate": 330.0}
TABLE_KB_PER_PAIR = 3.5

# The latest Cluster made in this process: %%requires cluster asks it whether it fits.
_latest: Cluster | None = None


class JobFailed(RuntimeError):
    """A job the run cannot do without (the server, the learner, the evaluator) failed."""


@dataclass
class Job:
    """One job's process and what it has reported."""

    name: str
    module: str
    arguments: list[str]
    log_path: Path
    process: subprocess.Popen | None = None
    reports: list[dict[str, Any]] = field(default_factory=list)
    starts: int = 0
    first_report: int = 0  # where the reports of the job's latest start begin
    stopped: bool = False  # ended by Cluster.stop, with the run, not before it

    def reports_since_start(self) -> list[dict[str, Any]]:
        return self.reports[self.first_report :]

    @property
    def latest(self) -> dict[str, Any]:
        return self.reports[-1] if self.reports else {}

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        """What to show of the job's log when it fails: the error a Python traceback ends
        with (its unindented lines), else the last ``lines`` lines."""
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return ""
        starts = [i for i, line in enumerate(text) if line.startswith("Traceback (most recent")]
        if starts:
            after = text[starts[-1] + 1 :]
            error = [line for line in after if line and not line.startswith(" ")]
            if error:
                return "\n".join(error)
        return "\n".join(text[-lines:])


class Cluster:
    """A server, a learner, ``collect_jobs`` collect jobs and an evaluator on this machine.

    Example (a lesson's cell)::

        cluster = Cluster(run_dir, hp, collect_jobs=2)
        cluster.start()
        cluster.wait()       # progress bars until the learner's last step is evaluated
        cluster.stop()
    """

    def __init__(
        self,
        root_dir: str | os.PathLike[str],
        settings: Mapping[str, Any],
        *,
        collect_jobs: int = 2,
        evaluator: bool = True,
        port: int | None = None,
        modules: Mapping[str, str] | None = None,
    ):
        if collect_jobs < 1:
            raise ValueError(
                gettext("A run needs at least one collect job; collect_jobs={count}.").format(
                    count=collect_jobs
                )
            )
        self.root_dir = Path(root_dir)
        self.settings = {**settings, "collect_jobs": collect_jobs}
        self.collect_jobs, self.evaluator = collect_jobs, evaluator
        self.port = port  # None: a free one, found when the jobs start
        # The module each kind of job runs: the course's, unless replaced (an experiment
        # with a server of your own: modules={"server": "my_server"}).
        self.modules = {
            kind: f"course_helpers.distributed.{kind}"
            for kind in ("train", "server", "collect", "evaluate")
        }
        self.modules.update(modules or {})
        self.jobs: dict[str, Job] = {}
        self._add_jobs()
        self.events: list[str] = []  # what happened to the jobs, in the learner's language
        self._started_at: float | None = None
        self._stopped = False
        self._lock = threading.Lock()
        global _latest
        _latest = self

    # -- starting and stopping -------------------------------------------------------------

    @property
    def address(self) -> str:
        """Where the jobs find the Reverb server (PORT until the jobs start)."""
        return f"localhost:{self.port or 'PORT'}"

    def _add_jobs(self) -> None:
        common = ["--root-dir", str(self.root_dir), "--exit-with-parent"]
        at = ["--address", self.address]
        self.jobs = {}
        self._add("train", "train", common + at)
        self._add("server", "server", common + ["--port", str(self.port or "PORT")])
        for task in range(self.collect_jobs):
            self._add(f"collect-{task}", "collect", common + at + ["--task", str(task)])
        if self.evaluator:
            self._add("eval", "evaluate", common + at)

    def start(self, check_memory: bool = True) -> Cluster:
        """Start every job: the learner first (it saves the policies the others wait
        for), the server, the collect jobs, and the evaluator.

        First, unless ``check_memory`` is False, it checks that the machine has the memory
        the jobs need (:meth:`memory_shortfall`) and raises :class:`NotEnoughMemory` if not:
        past its limit, the system would kill one of them midway.

        The server listens on every network interface, not only the loopback one, and
        without authentication (Reverb's default): see lesson 4, "Across machines". The
        port is found free here and taken by the server once it has the policy's specs,
        some seconds later: another program could take it in between (rarely), and the
        server job would then fail with a message that names the port."""
        if self._started_at is not None:
            raise RuntimeError(gettext("These jobs have started already; make a new Cluster."))
        if (self.root_dir / "settings.json").exists() or (self.root_dir / "train").exists():
            raise FileExistsError(
                gettext(
                    "{folder} holds a run already, which the learner would resume; give each "
                    'run a folder of its own: course.new_run_folder("04_distributed_sac").'
                ).format(folder=self.root_dir)
            )
        shortfall = self.memory_shortfall() if check_memory else None
        if shortfall:
            raise NotEnoughMemory(
                gettext(
                    "{why}. Run the lesson on a computer with more memory, or fewer jobs; "
                    "to start them anyway, call start(check_memory=False)."
                ).format(why=shortfall[0].upper() + shortfall[1:])
            )
        if self.port is None:  # a free port, found as portpicker finds one (stdlib only)
            with socket.socket() as probe:
                probe.bind(("", 0))
                self.port = int(probe.getsockname()[1])
            self._add_jobs()
        write_settings(self.root_dir, self.settings)
        (self.root_dir / "logs").mkdir(parents=True, exist_ok=True)
        self._started_at = time.time()
        for job in self.jobs.values():
            self._launch(job)
        atexit.register(self.stop)
        return self

    def _add(self, name: str, kind: str, arguments: list[str]) -> None:
        log = self.root_dir / "logs" / f"{name}.log"
        self.jobs[name] = Job(name, self.modules[kind], arguments, log)

    def _launch(self, job: Job) -> None:
        environment = {**os.environ, LANGUAGE_VARIABLE: current_language()}
        environment.setdefault("PYTHONUNBUFFERED", "1")
        job.stopped = False
        log = open(job.log_path, "a", encoding="utf-8")  # noqa: SIM115 - the reader closes it
        job.process = subprocess.Popen(
            [sys.executable, "-m", job.module, *job.arguments],
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            env=environment,
            text=True,
            start_new_session=True,  # a process group of its own, which stop() ends whole
        )
        job.starts += 1
        job.first_report = len(job.reports)
        threading.Thread(
            target=self._read, args=(job, job.process.stdout, log), daemon=True
        ).start()

    def _read(self, job: Job, stream: IO[str] | None, log: IO[str]) -> None:
        """Keep the job's reports, and copy every line it prints to its log."""
        with log:
            for line in stream or ():
                log.write(line)
                log.flush()
                if line.startswith(MARK):
                    try:
                        report = json.loads(line[len(MARK) :])
                    except json.JSONDecodeError:
                        continue
                    with self._lock:
                        job.reports.append(report)

    def kill(self, name: str) -> None:
        """End one job at once (SIGKILL), as a crash or a lost machine would."""
        job = self._job(name)
        self._refuse_if_stopped()
        self._check_or_stop()
        if job.running():
            assert job.process is not None
            _signal_group(job.process, signal.SIGKILL)
            job.process.wait()
            self.events.append(gettext("{job} was stopped.").format(job=name))

    def restart(self, name: str) -> None:
        """Start a job again that has ended, with the same arguments."""
        job = self._job(name)
        self._refuse_if_stopped()
        self._check_or_stop(collectors=not name.startswith("collect-"))
        if job.running():
            raise RuntimeError(gettext("{job} is still running.").format(job=name))
        self._launch(job)
        self.events.append(gettext("{job} was started again.").format(job=name))

    def stop(self) -> None:
        """End every job still running: SIGTERM, then SIGKILL after a grace period."""
        self._stopped = True
        running = [job for job in self.jobs.values() if job.running()]
        for job in running:
            assert job.process is not None
            job.stopped = True
            _signal_group(job.process, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        for job in running:
            assert job.process is not None
            try:
                job.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(job.process, signal.SIGKILL)
                job.process.wait()
            # Whatever the job started (its own children) goes with it.
            _signal_group(job.process, signal.SIGKILL)
        atexit.unregister(self.stop)

    def _refuse_if_stopped(self) -> None:
        if self._stopped and not self.done():
            raise RuntimeError(
                gettext("These jobs were stopped before the run was done; make a new Cluster.")
            )

    def _check_or_stop(self, collectors: bool = True) -> None:
        try:
            self._check(collectors=collectors)
        except JobFailed:
            self.stop()
            raise

    def _job(self, name: str) -> Job:
        if name not in self.jobs:
            raise KeyError(
                gettext("There is no job named {name}; the jobs are: {names}.").format(
                    name=repr(name), names=", ".join(self.jobs)
                )
            )
        return self.jobs[name]

    # -- watching --------------------------------------------------------------------------

    def train_step(self) -> int:
        """The learner's last reported train step."""
        return int(self.jobs["train"].latest.get("train_step", 0))

    def done(self) -> bool:
        """The learner reached its last step, and the evaluator evaluated it."""
        trained = self.jobs["train"].latest.get("done", False)
        if not self.evaluator:
            return bool(trained)
        evaluations = self.evaluations()
        last = self.settings["num_iterations"]
        return bool(trained) and bool(evaluations) and evaluations[-1][0] >= last

    def evaluations(self) -> list[tuple[int, float]]:
        """(train step, average return) of every evaluation so far."""
        if "eval" not in self.jobs:
            return []
        with self._lock:
            reports = list(self.jobs["eval"].reports)
        return [(int(r["train_step"]), float(r["average_return"])) for r in reports]

    def env_steps(self) -> dict[str, int]:
        """Environment steps each collect job has written (over all its starts)."""
        totals = {}
        with self._lock:
            for name, job in self.jobs.items():
                if name.startswith("collect-"):
                    # A restarted job counts from 0 again: add up each start's last count.
                    total, previous = 0, 0
                    for report in job.reports:
                        if report["env_steps"] < previous:
                            total += previous
                        previous = report["env_steps"]
                    totals[name] = total + previous
        return totals

    def waiting(self) -> dict[str, float]:
        """Seconds each collect job spent in the flushes that end its stretches, waiting
        for the server to take its pairs: how long the rate limiter held it back. Only
        stretches begun after the learner's first gradient step count (until then the
        limiter holds the jobs while the learner builds its training function); the waits
        at episode ends are not counted either, since the job does not time them."""
        totals = {}
        with self._lock:
            first_step = min(
                (r["time"] for r in self.jobs["train"].reports if r.get("train_step", 0) > 0),
                default=float("inf"),
            )
            for name, job in self.jobs.items():
                if name.startswith("collect-"):
                    total, previous = 0.0, None
                    for report in job.reports:
                        if "waited" in report and previous is not None and previous >= first_step:
                            total += report["waited"]
                        previous = report["time"]
                    totals[name] = total
        return totals

    def table_counts(self) -> dict[str, int]:
        """The replay table's last counts, as the server reported them: pairs written
        (``inserts``), pairs sampled (``samples``, a batch counting its size) and held (``size``)."""
        latest = self.jobs["server"].latest
        return {key: int(latest.get(key, 0)) for key in ("inserts", "samples", "size")}

    def inserts(self) -> int:
        """Pairs written into the replay table so far, as the server counts them."""
        return int(self.jobs["server"].latest.get("inserts", 0))

    def throughput(self, since: float = 0.0) -> dict[str, float]:
        """Environment steps (all collect jobs together) and gradient steps per second, from
        the learner's first gradient step (or from the time ``since``, if later) to its
        last report. Both come from the jobs' own reports: a collect job reports its steps
        after the server has taken their pairs, the learner after every push."""
        with self._lock:
            trains = [(r["time"], float(r["train_step"])) for r in self.jobs["train"].reports]
            collect_jobs = [job for n, job in self.jobs.items() if n.startswith("collect-")]
            collectors = [_cumulative(job.reports) for job in collect_jobs]
        training = [t for t, step in trains if step > 0 and t >= since]
        if len(training) < 2:
            return {"env_steps_per_second": 0.0, "gradient_steps_per_second": 0.0}
        t0, t1 = training[0], training[-1]
        # A collect job's count is known up to its last report: end the window there, so
        # that a stretch in progress is not counted as no steps at all.
        # Only jobs still running (or ended by stop(), with the run) and reporting since
        # their latest start count: a job killed or failed before the end, its last report,
        # or a restarted one's old ones, say nothing of the present.
        live = [
            series[-1][0]
            for job, series in zip(collect_jobs, collectors)
            if series
            and series[-1][0] > t0
            and (job.running() or job.stopped)
            and job.reports_since_start()
        ]
        t1 = min([t1, *live])
        seconds = max(t1 - t0, 1e-9)
        env_steps = sum(_at(series, t1) - _at(series, t0) for series in collectors if series)
        return {
            "env_steps_per_second": env_steps / seconds,
            "gradient_steps_per_second": (_at(trains, t1) - _at(trains, t0)) / seconds,
        }

    def memory_needed_mb(self) -> float:
        """About how much memory these jobs take together, in MiB, from the measured
        :data:`JOB_MEMORY_MB` and the replay table's capacity."""
        kinds = [name.split("-")[0] for name in self.jobs]
        sizes = {**JOB_MEMORY_MB, "eval": JOB_MEMORY_MB["evaluate"]}
        table = float(self.settings.get("replay_buffer_capacity", 0)) * TABLE_KB_PER_PAIR / 1024
        return sum(sizes.get(kind, JOB_MEMORY_MB["collect"]) for kind in kinds) + table

    def memory_shortfall(self) -> str | None:
        """Why this machine lacks the memory to run these jobs beside this process, or None
        where it has it (or cannot tell). Once the jobs have started, None."""
        if self._started_at is not None:
            return None
        limit = memory_limit_mb()
        here = _resident_mb(os.getpid()) or 0.0
        needed = self.memory_needed_mb() + here
        if limit is None or needed <= limit:
            return None
        return gettext(
            "these {count} jobs, each a process with its own TensorFlow, need about {needed} GB "
            "of memory together with this notebook, and this machine allows {limit} GB"
        ).format(
            count=len(self.jobs), needed=number(needed / 1024, 1), limit=number(limit / 1024, 1)
        )

    def memory_mb(self) -> dict[str, float]:
        """The memory each running job's process takes now, in MiB (its proportional set
        size: shared pages split among the processes that share them, so the sizes add up
        to what the jobs take together). Linux only; elsewhere, and for a job that is not
        running, nothing."""
        sizes = {}
        for name, job in self.jobs.items():
            if job.process is not None and job.running():
                resident = _resident_mb(job.process.pid)
                if resident is not None:
                    sizes[name] = resident
        return sizes

    def commands(self) -> list[str]:
        """Each job's command line, as a person would type it to start that job by hand
        (on another machine, replace localhost with the server's address; before the
        jobs start, the port reads PORT)."""
        import shlex

        return [
            shlex.join(
                [
                    "python",
                    "-m",
                    job.module,
                    *(a for a in job.arguments if a != "--exit-with-parent"),
                ]
            )
            for job in self.jobs.values()
        ]

    def policy_lags(self) -> list[int]:
        """For each stretch of ``collect_steps_per_pull`` steps a collect job played, how
        many gradient steps the learner had taken, when the stretch ended, since the
        weights the job played it with: how stale that stretch's data was."""
        with self._lock:
            trains = [(r["time"], r["train_step"]) for r in self.jobs["train"].reports]
            collectors = [list(j.reports) for n, j in self.jobs.items() if n.startswith("collect-")]
        lags = []
        for reports in collectors:
            acting_with = None  # the train step of the weights the job acts with
            for report in reports:
                if report.get("started") or report.get("random"):
                    acting_with = report["weights_step"]  # the random steps need no weights
                    continue
                learner_step = max((s for t, s in trains if t <= report["time"]), default=0)
                if acting_with is not None:
                    lags.append(max(0, learner_step - acting_with))
                acting_with = report["weights_step"]
        return lags

    def wait(
        self,
        until_train_step: int | None = None,
        timeout: float | None = None,
        until_collecting: str | None = None,
        show: bool = True,
    ) -> Cluster:
        """Show the jobs' progress until the run is done, or until the learner reaches
        ``until_train_step``, or until the collect job ``until_collecting`` has played a
        stretch with the learner's weights since it last started; stop every job if the
        cell is interrupted or a job the run needs fails. ``show=False``: no progress bars."""
        from course_helpers.progress import progress

        if self._started_at is None:
            raise RuntimeError(gettext("Start the jobs first: cluster.start()."))
        self._refuse_if_stopped()
        hp = self.settings
        # The rate limiter lets the table fill to initial_collect_steps before the first
        # sample, then lets in samples_per_insert sampled pairs per pair written.
        expected = hp["initial_collect_steps"] + round(
            hp["num_iterations"] * hp["batch_size"] / hp["samples_per_insert"]
        )
        training = progress(hp["num_iterations"], "Training", unit="step", disable=not show)
        collecting = progress(expected, "Pairs written", unit="pair", disable=not show)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                self._check()
                training.n = min(self.train_step(), hp["num_iterations"])
                collecting.n = min(self.inserts(), expected)
                evaluations = self.evaluations()
                alive = sum(
                    job.running() for name, job in self.jobs.items() if name.startswith("collect")
                )
                training.set_postfix(
                    avg_return=evaluations[-1][1] if evaluations else "…", refresh=False
                )
                collecting.set_postfix(collect_jobs=number(alive), refresh=False)
                training.refresh()
                collecting.refresh()
                if self.done():  # the server serves until stopped, and a collect job may be held
                    self.stop()
                    return self
                if until_train_step and self.train_step() >= until_train_step:
                    return self
                if until_collecting and any(
                    "waited" in report
                    for report in self._job(until_collecting).reports_since_start()
                ):
                    return self
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(
                        gettext("The jobs did not finish within {seconds} s.").format(
                            seconds=number(timeout or 0)
                        )
                    )
                time.sleep(0.5)
        except BaseException:
            self.stop()
            raise
        finally:
            training.close()
            collecting.close()

    def _check(self, collectors: bool = True) -> None:
        """Raise :class:`JobFailed` when the server, the learner or the evaluator has
        failed, or when no collect job is left to feed the learner."""
        if self._stopped or self._started_at is None:
            return
        for name, job in self.jobs.items():
            if job.process is None or job.process.poll() is None:
                continue
            vital = not name.startswith("collect-")
            finished = job.process.returncode == 0 and name in ("train", "eval")
            if vital and not finished:
                raise JobFailed(self._failure(job))
        if not collectors:
            return
        collect_jobs = [j for n, j in self.jobs.items() if n.startswith("collect-")]
        latest = self.jobs["train"].latest
        trained = (
            latest.get("done") or latest.get("train_step", 0) >= self.settings["num_iterations"]
        )
        if not trained and not any(j.running() for j in collect_jobs):
            raise JobFailed(
                gettext("No collect job is running, so the learner would wait for data forever.")
                + "\n"
                + self._failure(collect_jobs[-1])
            )

    def _failure(self, job: Job) -> str:
        assert job.process is not None
        return gettext(
            "The {job} job stopped with exit code {code}; every job was stopped. "
            "The end of its log ({log}):\n{tail}"
        ).format(job=job.name, code=job.process.returncode, log=job.log_path, tail=job.log_tail())


def _cumulative(reports: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(time, environment steps so far) of one collect job, counted across its restarts
    (each start counts from 0 again)."""
    series, done, previous = [], 0.0, 0.0
    for report in reports:
        if report["env_steps"] < previous:
            done += previous
        previous = report["env_steps"]
        series.append((report["time"], done + previous))
    return series


def _at(series: list[tuple[float, float]], moment: float) -> float:
    """The value of a (time, value) series at ``moment``, interpolated between reports
    (the first value before the series starts, the last after it ends)."""
    before = [(t, v) for t, v in series if t <= moment]
    after = [(t, v) for t, v in series if t >= moment]
    if not before:
        return series[0][1]
    if not after:
        return series[-1][1]
    (ta, va), (tb, vb) = before[-1], after[0]
    return va if tb == ta else va + (moment - ta) / (tb - ta) * (vb - va)


class NotEnoughMemory(RuntimeError):
    """The machine lacks the memory for a cluster's jobs; the message says how much."""


def latest_shortfall() -> str | None:
    """:meth:`Cluster.memory_shortfall` of the latest cluster made in this process (None if
    none was made): ``%%requires cluster`` skips a cell when there is one."""
    return _latest.memory_shortfall() if _latest is not None else None


def memory_limit_mb() -> float | None:
    """The memory this process and its children may use, in MiB: the smallest limit of the
    control groups it is in, from its own up to the root (Binder sets 2 GB on its
    container; Slurm and systemd may set one higher up), or the machine's memory where no
    group sets one; None where neither can be read (not Linux). What other programs in the
    same group already use is not subtracted: the check is a lower bound of the need."""
    limits = []
    for path in _cgroup_limit_files():
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():  # "max" (cgroup v2) or a huge number (v1) mean no limit
            limits.append(int(text) / 2**20)
    try:
        limits.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20)
    except (ValueError, OSError, AttributeError):
        pass
    return min(limits) if limits else None


def _cgroup_limit_files() -> list[Path]:
    """The memory-limit files of this process's control groups and of every group above
    them, in cgroup v2 (``0::/path``; under /sys/fs/cgroup/unified on hybrid hosts) and v1
    (the ``memory`` controller's line)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    files = []
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and not controllers:
            roots, name = [Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")], "memory.max"
        elif "memory" in controllers.split(","):
            roots, name = [Path("/sys/fs/cgroup/memory")], "memory.limit_in_bytes"
        else:
            continue
        parts = [part for part in path.split("/") if part]
        # Inside a container the group's path may not exist under the mount, whose root is
        # then the container's own group: the walk up reaches it.
        files += [
            root.joinpath(*parts[:depth]) / name
            for root in roots
            for depth in range(len(parts), -1, -1)
        ]
    return files


def _resident_mb(pid: int) -> float | None:
    """The memory process ``pid`` takes, in MiB: its proportional set size (PSS), that is its
    own resident pages plus its share of the pages it shares with other processes (the
    libraries of TensorFlow, which five jobs map alike), so that the sizes of several
    processes add up to what they take together. From Linux's /proc, read directly: psutil,
    which would also cover other systems, is not among the runtime's dependencies. Where
    smaps_rollup is missing (Linux before 4.14), the resident set size, which counts shared
    pages once per process."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    """Send ``signum`` to the process group the job leads (it may have ended already)."""
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
