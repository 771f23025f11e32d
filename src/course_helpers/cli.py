"""The ``course`` command: open the lessons in JupyterLab, or run one headless."""

from __future__ import annotations

import argparse
import os
import sys

from course_helpers import lessons


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="course", description="Open or run the TF-Agents course lessons."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    lab = commands.add_parser("lab", help="open JupyterLab on the lessons")
    lab.add_argument("jupyter_args", nargs=argparse.REMAINDER,
                     help="passed to jupyter lab, e.g. --no-browser --port 8890")

    run = commands.add_parser("run", help="execute a lesson and save the executed notebook")
    run.add_argument("lesson", help="e.g. 02_dqn_cartpole, 02 or dqn_cartpole")
    run.add_argument("--lang", default="en", choices=lessons.LANGUAGES)
    run.add_argument("--quick", action="store_true", help="shrink the loops (quick mode)")
    run.add_argument("-o", "--output", help="where to write it (default runs/<lang>/<lesson>.ipynb)")
    run.add_argument("--cell-timeout", type=int, default=1800, help="seconds per cell")

    commands.add_parser("list", help="list the lessons")

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
            path = lessons.run_lesson(args.lesson, args.lang, args.output, args.quick,
                                      args.cell_timeout)
            print(f"Executed notebook written to {path}")
        elif args.command == "lab":
            root = lessons.project_root() / "notebooks"
            command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}",
                       *args.jupyter_args]
            if os.geteuid() == 0 and "--allow-root" not in command:
                # Containers and cloud machines often run as root, where JupyterLab
                # refuses to start unless told otherwise.
                print("course lab: running as root, so starting JupyterLab with --allow-root.")
                command.append("--allow-root")
            os.execv(sys.executable, command)
    except (ValueError, FileNotFoundError, lessons.LessonFailed) as error:
        print(f"course {args.command}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
