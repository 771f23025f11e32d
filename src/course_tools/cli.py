"""The ``course`` command: open the lessons in JupyterLab, or run one headless."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from course_helpers.languages import LANGUAGES, TRANSLATED
from course_tools import bench as course_bench
from course_tools import binder, lessons, links
from course_tools.l10n import build as l10n_build
from course_tools.l10n import catalogs, sources
from course_tools.l10n import check as l10n_check
from course_tools.run_log import RunLog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="course", description="Open or run the TF-Agents course lessons."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    lab = commands.add_parser("lab", help="open JupyterLab on the lessons")
    lab.add_argument(
        "--instructor",
        action="store_true",
        help="with nbgrader's instructor tools (Create Assignment, Formgrader, "
        "course list); learners see only the Assignment List and Validate",
    )
    lab.add_argument(
        "--lang",
        choices=LANGUAGES,
        help="show JupyterLab's menus in this language (a default: a language chosen in "
        "Settings > Language stays) and open its lessons' folder",
    )
    lab.add_argument(
        "jupyter_args",
        nargs=argparse.REMAINDER,
        help="passed to jupyter lab, e.g. --no-browser --port 8890",
    )

    run = commands.add_parser("run", help="execute a lesson and save the executed notebook")
    run.add_argument("lesson", help="e.g. 02_dqn_cartpole, 02 or dqn_cartpole")
    run.add_argument("--lang", default="en", choices=LANGUAGES)
    run.add_argument("--quick", action="store_true", help="shrink the loops (quick mode)")
    run.add_argument(
        "-o", "--output", help="where to write it (default runs/<lang>/<lesson>.ipynb)"
    )
    run.add_argument(
        "--cell-timeout",
        type=int,
        default=None,
        help="stop a cell after this many seconds (default: no limit; a full "
        "SAC training cell runs for about half an hour)",
    )

    commands.add_parser("list", help="list the lessons")

    bench = commands.add_parser(
        "bench",
        help="measure the lessons: training speed, returns, memory, quick-mode and "
        "localization times; prints a table (the full set takes about 45 minutes)",
    )
    bench.add_argument(
        "--only",
        default=",".join(course_bench.DEFAULT_GROUPS),
        help=f"comma-separated groups among {', '.join(course_bench.GROUPS)} (default: all "
        "but sac-colab, whose full runs take hours)",
    )
    bench.add_argument(
        "--seeds", default="42,1,2,3,4", help="seeds of the DQN runs (default: 42,1,2,3,4)"
    )
    bench.add_argument(
        "--sac-seeds",
        default="42",
        help="seeds of the SAC runs, 35 to 40 minutes each in full mode (default: 42)",
    )
    bench.add_argument(
        "--sac-iterations",
        type=int,
        default=None,
        help="train SAC for this many iterations instead of the lesson's value",
    )
    bench.add_argument(
        "--hyperparameters",
        default="",
        help="values to try instead of the lessons' defaults in the dqn and sac "
        "groups, as COURSE_HYPERPARAMETERS takes them, e.g. "
        "replay_buffer_capacity=100000,gamma=0.98",
    )
    bench.add_argument(
        "--baseline-iterations",
        type=int,
        default=10_000,
        help="SAC iterations of the published loop and of the lesson, for the "
        "ms per iteration of each, in the baseline and cores groups "
        "(default: 10000)",
    )
    bench.add_argument(
        "--collect-jobs",
        default="1,2,4",
        help="numbers of collect jobs the distributed group runs lesson 4 with (default: 1,2,4)",
    )
    bench.add_argument(
        "--distributed-iterations",
        type=int,
        default=3_000,
        help="gradient steps of each run of the distributed group (default: 3000)",
    )
    bench.add_argument(
        "--distributed-evaluator",
        action="store_true",
        help="run the evaluator too in the distributed group, as lesson 4 does (its memory "
        "counts then; by default the group measures throughput without it)",
    )
    bench.add_argument(
        "--colab-python",
        default="3.13",
        help="Python versions of the Colab-like profiles the colab and sac-colab groups "
        "measure, e.g. 3.13,3.12 (default: 3.13)",
    )
    bench.add_argument(
        "--lessons", default=None, help="comma-separated lessons for the quick group (default: all)"
    )
    bench.add_argument(
        "--quick",
        action="store_true",
        help="run every lesson in quick mode: checks that the benchmark works, "
        "in a few minutes; the figures mean nothing",
    )
    bench.add_argument(
        "--cpus",
        type=int,
        default=None,
        help="run on this many cores; 1 estimates Binder, which gives one CPU",
    )
    bench.add_argument("--markdown", action="store_true", help="print a Markdown table")
    bench.add_argument(
        "--save-runs",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write every DQN and SAC run's full report (its evaluations, Q-values, "
        "settings and machine) to this JSON file, again after each run; an existing file is "
        "not overwritten (see --resume)",
    )
    bench.add_argument(
        "--resume",
        action="store_true",
        help="with --save-runs naming a file an earlier `course bench` left unfinished: take "
        "the runs it holds instead of running them again (same groups, seeds in the same "
        "order, settings and lesson code), run the rest, and print the table of all of them",
    )
    bench.add_argument(
        "--write-reference",
        action="store_true",
        help="ship the DQN and SAC runs with the course: lessons 2 and 3 draw the "
        "learner's curve over them (src/course_helpers/measurements/<lesson>.json); only "
        "with the lessons' defaults in full mode",
    )

    for name, help_text in (
        (
            "links",
            "write the Colab and Binder badges into the README and the English lessons, "
            "from [tool.course] in pyproject.toml",
        ),
        ("binder", "write binder/environment.yml from the pins in requirements.txt"),
    ):
        sync = commands.add_parser(name, help=help_text)
        sync.add_argument(
            "--check",
            action="store_true",
            help="change nothing; exit with 1 if a file is out of date",
        )

    site = commands.add_parser(
        "site", help="the course as a website: build it, or refresh a stored run"
    )
    site_steps = site.add_subparsers(dest="step", required=True)
    site_build = site_steps.add_parser(
        "build",
        help="write _build/site/html: every lesson in every language with a full run's outputs "
        "(runs lessons 1 and 2, about 5 minutes; lesson 3 comes from site/executions/)",
    )
    site_build.add_argument(
        "--lang", action="append", choices=LANGUAGES, help="only this language (repeatable)"
    )
    site_build.add_argument(
        "--quick",
        action="store_true",
        help="run every lesson in quick mode instead (a minute or two; the pages say so)",
    )
    site_build.add_argument(
        "--reuse",
        action="store_true",
        help="reuse the lessons the previous build executed (same mode), to work on the site",
    )
    site_execute = site_steps.add_parser(
        "execute",
        help="run a stored lesson in full and keep it in site/executions/<lang>/ "
        "(lesson 3: about half an hour per language)",
    )
    site_execute.add_argument("lesson", help="e.g. 03_sac_minitaur or 03")
    site_execute.add_argument("--lang", default="en", choices=LANGUAGES)
    site_execute.add_argument(
        "--quick",
        action="store_true",
        help="store a quick-mode run (its page says the agent is not trained), until a "
        "full run is stored",
    )

    l10n = commands.add_parser("l10n", help="translation catalogs (gettext, keyed by cell id)")
    steps = l10n.add_subparsers(dest="step", required=True)
    steps.add_parser("extract", help="write locales/templates/*.pot from notebooks/en")
    update = steps.add_parser("update", help="merge the templates into locales/<lang>/*.po")
    update.add_argument(
        "--lang",
        action="append",
        choices=list(TRANSLATED),
        help="only this language (repeatable; default: all)",
    )
    build = steps.add_parser(
        "build", help="write notebooks/<lang>/*.ipynb from English and catalogs"
    )
    build.add_argument(
        "--lang",
        action="append",
        choices=list(TRANSLATED),
        help="only this language (repeatable; default: all)",
    )
    steps.add_parser(
        "check",
        help="fail if built notebooks are stale, code differs, or a "
        "translation breaks code spans, links or math",
    )
    status = steps.add_parser("status", help="translated, fuzzy and untranslated, per lesson")
    status.add_argument(
        "--counts",
        action="store_true",
        help="only the table of counts, not the list of entries to work on",
    )
    status.add_argument(
        "--min-percent",
        type=float,
        default=None,
        help="exit with 1 if any catalog is less translated than this",
    )

    assign = commands.add_parser(
        "assignment", help="turn a lesson, in one language, into an nbgrader source assignment"
    )
    assign.add_argument("lesson", help="e.g. 01_replay_buffers or 01")
    assign.add_argument("--lang", default="en", choices=LANGUAGES)
    assign.add_argument(
        "--course",
        required=True,
        type=Path,
        help="the nbgrader course folder (created, with its nbgrader_config.py, "
        "if it does not exist)",
    )
    assign.add_argument(
        "--exchange",
        default=None,
        help="for a new course: the folder release/fetch/submit/collect share",
    )
    grade = commands.add_parser(
        "grade", help="autograde each submission in its own process and report the scores"
    )
    grade.add_argument("assignment", help="e.g. 01_replay_buffers-fr")
    grade.add_argument("--course", default=Path("."), type=Path, help="the nbgrader course folder")
    grade.add_argument("--student", action="append", help="only this student (repeatable)")
    grade.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="seconds one submission may take in all (default 1800)",
    )
    grade.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="submissions graded at once, each in its own sandbox (default: the CPUs "
        "grading may use)",
    )
    grade.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without the sandbox where it cannot start (macOS, no user "
        "namespaces): student code can then read and change the course; "
        "the report marks every submission graded so",
    )
    merge = commands.add_parser(
        "merge-grades",
        help="bring into this course the grades of an assignment graded in a copy of it "
        "on another machine (a class split by --student)",
    )
    merge.add_argument("assignment", help="e.g. 01_replay_buffers-fr")
    merge.add_argument(
        "--from", dest="other", required=True, type=Path, help="the other copy's course folder"
    )
    merge.add_argument("--course", default=Path("."), type=Path, help="this course folder")
    validate = commands.add_parser(
        "validate", help="run a notebook's tests as the grader will, and say so in its language"
    )
    validate.add_argument("notebook", type=Path)
    ship = commands.add_parser(
        "ship-policy",
        help="make the trained Minitaur lesson 3 shows first, from a recorded full run",
    )
    ship.add_argument(
        "record",
        type=Path,
        help="a file written by `course bench --only sac --save-runs FILE` with "
        "COURSE_BENCH_KEEP_ACTOR set",
    )
    ship.add_argument("--seed", type=int, default=None, help="the run to ship, if it holds several")

    # argparse hands a REMAINDER only what follows the first positional, so options
    # such as `course lab --no-browser --port 8890` arrive as unknown arguments.
    args, unknown = parser.parse_known_args(argv)
    if args.command == "lab":
        args.jupyter_args = [*unknown, *args.jupyter_args]
    elif unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        if args.command == "list":
            for name in lessons.lesson_names():
                print(name)
        elif args.command == "run":
            path = lessons.run_lesson(
                args.lesson, args.lang, args.output, args.quick, args.cell_timeout
            )
            print(f"Executed notebook written to {path}")
        elif args.command == "bench":
            return _bench(args)
        elif args.command == "l10n":
            return _l10n(args)
        elif args.command == "site":
            return _site(args)
        elif args.command in ("links", "binder"):
            return _sync(args)
        elif args.command in ("assignment", "grade", "validate", "merge-grades"):
            return _grading(args)
        elif args.command == "ship-policy":
            from course_tools import trained_policy

            folder = trained_policy.ship(args.record, args.seed)
            print(f"Wrote the trained policy and its record to {folder}")
        elif args.command == "lab":
            from course_tools import lab_settings

            root = lessons.project_root() / "notebooks"
            command = [
                sys.executable,
                "-m",
                "jupyterlab",
                f"--ServerApp.root_dir={root}",
                # No news pop-up, and the menus in --lang: defaults in a folder of the
                # course's own, so the environment's JupyterLab stays as it was.
                f"--LabApp.app_settings_dir={lab_settings.prepare(args.lang)}",
                *([f"--LabApp.default_url=/lab/tree/{args.lang}"] if args.lang else []),
                *args.jupyter_args,
            ]
            if os.geteuid() == 0 and "--allow-root" not in command:
                # Containers and cloud machines often run as root, where JupyterLab
                # refuses to start unless told otherwise.
                print("course lab: running as root, so starting JupyterLab with --allow-root.")
                command.append("--allow-root")
            if not args.instructor:
                print(
                    "course lab: nbgrader's instructor tools are off; "
                    "`course lab --instructor` turns them on."
                )
            os.execve(sys.executable, command, lab_environment(args.instructor))
    except (ValueError, OSError, lessons.LessonFailed) as error:  # CatalogError, NotebookError too
        print(f"course {args.command}: {error}", file=sys.stderr)
        return 1
    return 0


def _site(args: argparse.Namespace) -> int:
    from course_tools import site

    root = lessons.project_root()
    if args.step == "build":
        html = site.build(root, args.lang, quick=args.quick, reuse=args.reuse)
        print(f"course site: the website is in {html}; open {html / 'index.html'}")
    else:
        name = lessons.lesson_path(args.lesson, args.lang).stem
        target = site.stored_path(site.Paths(root), args.lang, name)
        path = site.execute(root, name, args.lang, target, quick=args.quick)
        print(f"course site: stored {path}")
    return 0


def lab_environment(instructor: bool) -> dict[str, str]:
    """This environment, with the learners' JupyterLab configuration first unless
    ``instructor`` (jupyter-config/learner/ turns nbgrader's instructor tools off)."""
    environment = dict(os.environ)
    if not instructor:
        learner = lessons.project_root() / "jupyter-config" / "learner"
        environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
            filter(None, [str(learner), environment.get("JUPYTER_CONFIG_PATH")])
        )
    return environment


def _grading(args: argparse.Namespace) -> int:
    from course_tools.grading import assignment, grade, validate

    if args.command == "assignment":
        lesson = lessons.lesson_path(args.lesson).stem
        path = assignment.write(
            lessons.project_root(), args.course, lesson, args.lang, exchange=args.exchange
        )
        print(
            f"wrote {path}\nNext, in {args.course}: nbgrader generate_assignment "
            f"{assignment.assignment_id(lesson, args.lang)}"
        )
        return 0
    if args.command == "merge-grades":
        from course_tools.grading import merge

        merged = merge.merge(args.course, args.other, args.assignment)
        print(
            f"merged {len(merged)} submissions of {args.assignment} from {args.other}: "
            + (", ".join(merged) or "none")
        )
        return 0
    if args.command == "grade":
        jobs = grade.default_jobs() if args.jobs is None else args.jobs
        start = time.monotonic()
        try:
            outcomes = grade.grade_all(
                args.course.resolve(),
                args.assignment,
                only=args.student,
                timeout=args.timeout,
                unsandboxed=args.unsandboxed,
                jobs=jobs,
            )
        except grade.SandboxUnavailable as error:
            print(error, file=sys.stderr)
            return 2
        sandbox = (
            "sandbox: none (--unsandboxed)" if args.unsandboxed else grade.sandbox_description()
        )
        print(grade.report(outcomes, sandbox))
        print(
            f"{len(outcomes)} submissions in {time.monotonic() - start:.0f} s, "
            f"{jobs} at a time (--jobs {jobs})"
        )
        return 0
    passed, report = validate.validate(args.notebook)
    print(report)
    return 0 if passed else 1


def _sync(args: argparse.Namespace) -> int:
    root = lessons.project_root()
    module = links if args.command == "links" else binder
    changed = module.sync(root, check=args.check)
    for path in changed:
        print(f"{'out of date' if args.check else 'wrote'}: {path.relative_to(root)}")
    if args.check and changed:
        print(
            f"course {args.command}: run 'course {args.command}' and commit the result.",
            file=sys.stderr,
        )
        return 1
    if not changed:
        print(f"course {args.command}: everything is up to date.")
    return 0


def _bench(args: argparse.Namespace) -> int:
    def split(text: str | None) -> list[str]:
        return [part.strip() for part in (text or "").split(",") if part.strip()]

    def seeds(option: str, text: str) -> list[int]:
        try:
            return [int(seed) for seed in split(text)] or [42]
        except ValueError:
            raise ValueError(
                f"{option} takes whole numbers separated by commas, got {text!r}."
            ) from None

    if args.write_reference and (
        not {"dqn", "sac"} & set(split(args.only))
        or args.quick
        or args.hyperparameters
        or args.sac_iterations is not None
    ):
        raise ValueError(
            "--write-reference ships the lesson's own runs: it needs the dqn or sac group, "
            "full mode, and no --hyperparameters or --sac-iterations."
        )
    if args.resume and (args.save_runs is None or not args.save_runs.exists()):
        raise ValueError(
            "--resume continues the file of runs that --save-runs names; "
            + (
                f"{args.save_runs} does not exist (leave out --resume to start it)."
                if args.save_runs is not None
                else "give it with --save-runs PATH."
            )
        )
    if args.save_runs is not None and args.save_runs.exists() and not args.resume:
        raise ValueError(
            f"--save-runs {args.save_runs}: the file already exists; give a new path, "
            "so that no earlier measurement is overwritten, or add --resume to continue it."
        )
    if args.save_runs is not None and not args.save_runs.parent.is_dir():
        raise ValueError(
            f"--save-runs {args.save_runs}: no folder {args.save_runs.parent}; create it "
            "first, or give a path in an existing folder."
        )
    # The file is written when the first run ends, and after each one: a command refused
    # (bad seeds, a file that does not match) leaves nothing behind and changes nothing.
    runs = (
        RunLog.resume(args.save_runs, course_bench.machine_description)
        if args.resume
        else RunLog(args.save_runs, course_bench.machine_description)
    )
    if args.resume:
        print(f"Resuming {args.save_runs}: {len(runs)} finished run(s) in it", flush=True)
    if args.cpus is not None:
        cores = course_bench.pin_to_cpus(args.cpus)
        print(f"Pinned to {len(cores)} core(s): {', '.join(map(str, cores))}", flush=True)
    rows = course_bench.measure(
        only=split(args.only),
        seeds=seeds("--seeds", args.seeds),
        sac_seeds=seeds("--sac-seeds", args.sac_seeds),
        quick=args.quick,
        sac_iterations=args.sac_iterations,
        hyperparameters=args.hyperparameters,
        baseline_iterations=args.baseline_iterations,
        lessons_for_quick=split(args.lessons) or None,
        colab_pythons=split(args.colab_python) or ["3.13"],
        collect_jobs=seeds("--collect-jobs", args.collect_jobs),
        distributed_iterations=args.distributed_iterations,
        distributed_evaluator=args.distributed_evaluator,
        emit=lambda row: print(f"... {row.lesson}  {row.figure}: {row.value}", flush=True),
        runs=runs,
    )
    if args.write_reference:
        made = course_bench.references(runs.used, course_bench.machine_description())
        for name, reference in made.items():
            path = course_bench.REFERENCES / f"{name}.json"
            path.write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")
            print(f"Wrote the measured runs that lesson {name} draws to {path}", flush=True)
    for note in runs.notes:
        print(note, flush=True)
    if args.save_runs is not None:
        print(f"{args.save_runs} holds {len(runs)} run(s)", flush=True)
        if runs.unused():
            print(
                f"{runs.unused()} run(s) of {args.save_runs} were not asked for this time; "
                "they stay in the file.",
                flush=True,
            )
    print()
    print(course_bench.format_table(rows, markdown=args.markdown))
    return 0


def _l10n(args: argparse.Namespace) -> int:
    root = lessons.project_root()
    if args.step == "extract":
        for path in catalogs.extract(root):
            print(f"wrote {path.relative_to(root)}")
    elif args.step == "update":
        for path, report in catalogs.update(root, args.lang).items():
            print(
                f"{path.relative_to(root)}: {len(report.fuzzy)} fuzzy, {len(report.new)} new, "
                f"{len(report.obsolete)} obsolete"
            )
            for warning in report.warnings:
                print(f"warning: {warning}", file=sys.stderr)
            changed = {(cell, text) for cell, text in report.fuzzy + report.new}
            for item in catalogs.todo(path):
                if (item.cell_id, item.english) in changed:
                    print(f"  {item.describe(root)}")
    elif args.step == "build":
        for path in l10n_build.build(root, args.lang):
            print(f"wrote {path.relative_to(root)}")
    elif args.step == "check":
        problems = l10n_check.check(root)
        for problem in problems:
            print(problem, file=sys.stderr)
        print(
            f"course l10n check: {len(problems)} problem(s)."
            if problems
            else "course l10n check: every localized notebook is up to date and consistent."
        )
        return 1 if problems else 0
    elif args.step == "status":
        rows = catalogs.status(root)
        print(
            f"{'language':<8}  {'lesson':<20}  {'translated':>10}  {'fuzzy':>5}  "
            f"{'untranslated':>12}  {'done':>6}"
        )
        for row in rows:
            print(
                f"{row.language:<8}  {row.lesson:<20}  {row.translated:>10}  {row.fuzzy:>5}  "
                f"{row.untranslated:>12}  {row.percent:>5.1f}%"
            )
        if not args.counts:
            for language in TRANSLATED:
                items = [
                    item
                    for name in (source.name for source in sources.sources(root))
                    for item in catalogs.todo(catalogs.catalog_path(root, language, name))
                ]
                if items:
                    print(f"\n{language}: {len(items)} entries to translate or review")
                    for item in items:
                        print(f"  {item.describe(root)}")
        if args.min_percent is not None:
            behind = [r for r in rows if r.percent < args.min_percent]
            for row in behind:
                print(
                    f"course l10n status: {row.language}/{row.lesson} is {row.percent:.1f}% "
                    f"translated, below {args.min_percent:g}%",
                    file=sys.stderr,
                )
            return 1 if behind else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
