"""`earshot eval TASKS [--model M | --scripted NAME] [--jobs N | --ray ADDRESS] [--max-mode MODE]
[--json]`.

Each task runs as an ordinary print-mode session (the permission gate, the command sandbox) in
the mode its `task.json` asks for, which may be no more permissive than `--max-mode` (default
`auto`): a task set is someone else's, and cannot give its model `yolo` by asking.

Exit codes: 0 every task passed, 1 at least one failed, 2 usage error (no tasks, a bad option,
Ray missing or unreachable).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent.modes import MODES

if TYPE_CHECKING:
    import argparse

    from agent.modes import Mode

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def add_eval_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "eval",
        help="run an evaluation task set through print mode: pass rate, turns, tokens, cost, time",
    )
    parser.add_argument("tasks", metavar="TASKS", help="a task directory, or a directory of them")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--model", metavar="PROVIDER/MODEL", help="default: the settings' model")
    which.add_argument(
        "--scripted",
        metavar="NAME",
        help="play each task's NAME.json with the scripted model (offline; e.g. solution)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, default=1, metavar="N", help="tasks run at once")
    where.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="fan the tasks out over a Ray cluster (auto, ray://host:10001, or local)",
    )
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="(repeatable)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="per task agent run")
    parser.add_argument("--keep", action="store_true", help="keep each task's work directory")
    parser.add_argument(
        "--max-mode",
        choices=MODES,
        default="auto",
        metavar="MODE",
        help="the most permissive permission mode a task may ask for (default auto; a task "
        "asking for more is refused, so yolo runs only when you give --max-mode yolo)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")


def run_eval_command(options: argparse.Namespace, cwd: Path) -> int:
    import os

    from earshot.evals.tasks import (
        TaskError,
        check_modes,
        load_tasks,
        payload,
        user_gate_settings,
    )

    jobs = cast("int", options.jobs)
    if jobs < 1:
        print("earshot: --jobs must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    model = cast("str | None", options.model)
    scripted = cast("str | None", options.scripted)
    try:
        tasks = load_tasks(cwd / Path(cast("str", options.tasks)), cast("list[str]", options.only))
        check_modes(tasks, cast("Mode", options.max_mode))
        user_gate = user_gate_settings(os.environ) if scripted is not None else None
        payloads = [
            payload(
                task,
                model=model,
                scripted=scripted,
                keep=bool(options.keep),
                timeout=cast("float | None", options.timeout),
                user_gate=user_gate,
            )
            for task in tasks
        ]
    except TaskError as exc:
        print(f"earshot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    label = f"scripted:{scripted}" if scripted else model or "the settings' model"
    as_json = bool(options.json)

    def progress(result: Any) -> None:
        if not as_json:
            state = "pass" if result.passed else "FAIL"
            print(f"earshot eval: {result.name}: {state}", file=sys.stderr, flush=True)

    address = cast("str | None", options.ray)
    if address is not None:
        from earshot.evals.ray_backend import RayUnavailable, run_on_ray

        try:
            results = run_on_ray(payloads, address, on_result=progress)
        except RayUnavailable as exc:
            print(f"earshot: {exc}", file=sys.stderr)
            return EXIT_USAGE
    else:
        import anyio

        from earshot.evals.harness import run_local

        results = anyio.run(lambda: run_local(payloads, jobs=jobs, on_result=progress))
    from earshot.evals.report import render_table, to_json

    if as_json:
        import json

        json.dump(to_json(results, model=label), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        render_table(results, sys.stdout, model=label)
    return EXIT_OK if all(result.passed for result in results) else EXIT_FAILED
