"""The first prompt, sent the moment `session/new` is answered (issue 25, item 5); writes the
`## first prompt` section of bench/RESULTS.md.

    .venv/bin/python bench/first_prompt.py [--runs 20] [--no-write]
                                           [--dev-venv | --earshot PATH] [--tree DIR ...]

Each run spawns `earshot --stdio`, sends `initialize`, then `session/new`, and writes a prompt as
soon as that answer is read, as a scripted client (`acpx exec`, `earshot -p`) or a fast typist
does. The model is `loopback.LoopbackChat` (OpenAI Chat Completions on 127.0.0.1, driven through
the real OpenAI SDK), which notes its own time. Per run:
- overhead: prompt written -> its answer read, minus the model's own time (request read ->
  answer written). Target: at most 100 ms, p50 over the runs;
- prompt written -> the model has read the request;
- the start-up figures this must not give back: spawn -> `initialize` answered, spawn ->
  `session/new` answered, resident memory when that answer is read.
Wall-clock figures: on a shared machine, compare builds in one run (`--tree`, which interleaves).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from builds import Build, add_arguments, builds
from loopback import AcpClient, LoopbackChat, bench_env, interleaved, settings_for
from results_md import write_section

SECTION = "## first prompt"
OVERHEAD_MS = 100.0


@dataclass
class Run:
    init_ms: float
    ready_ms: float
    rss_at_ready_mb: float
    to_model_ms: float
    overhead_ms: float


def one_run(build: Build, tag: str, workspace: Path, env: dict[str, str], model: LoopbackChat):
    client = AcpClient([str(build.earshot), "--stdio"], workspace, env)
    try:
        init = client.initialize()
        session_id, ready = client.new_session(workspace)
        rss = client.rss_mb()
        written, answered = client.prompt(session_id, f"[bench {tag}] say ok")
    finally:
        client.close()
    arrived = model.first_arrival(tag)
    return Run(
        init_ms=init * 1000,
        ready_ms=ready * 1000,
        rss_at_ready_mb=rss,
        to_model_ms=(arrived - written) * 1000,
        overhead_ms=(answered - written - model.model_seconds(tag)) * 1000,
    )


def report(results: dict[Build, list[Run]], command: str, load: tuple[float, float]) -> str:
    lines = [
        SECTION,
        "",
        f"Command: `{command}` (its docstring says what each row measures).",
        f"Machine: CPython {platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the start and {load[1]:.1f} at the "
        f"end. Date: {time.strftime('%Y-%m-%d')}.",
        "",
    ]
    for build, runs in results.items():

        def row(name: str, values: list[float], unit: str, target: str = "") -> str:
            return (
                f"| {name} | {statistics.median(values):.1f} {unit} | {min(values):.1f} | "
                f"{max(values):.1f} | {target} |"
            )

        overhead = [r.overhead_ms for r in runs]
        verdict = "met" if statistics.median(overhead) <= OVERHEAD_MS else "NOT met"
        lines += [
            f"{build.where}, {len(runs)} runs:",
            "",
            "| measure | median | min | max | target |",
            "| --- | ---: | ---: | ---: | --- |",
            row(
                "first prompt: overhead over the model's own time",
                overhead,
                "ms",
                f"<= {OVERHEAD_MS:g} ms p50: {verdict}",
            ),
            row("first prompt: written -> at the model", [r.to_model_ms for r in runs], "ms"),
            row("spawn -> `initialize` answered", [r.init_ms for r in runs], "ms"),
            row("spawn -> `session/new` answered", [r.ready_ms for r in runs], "ms"),
            row("RSS when `session/new` is answered", [r.rss_at_ready_mb for r in runs], "MB"),
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    add_arguments(parser)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    model = LoopbackChat()
    try:
        with tempfile.TemporaryDirectory(prefix="earshot-bench-first-") as temp:
            work = Path(temp)
            found = builds(args, work)
            workspace = work / "workspace"
            workspace.mkdir()
            env = bench_env(work, settings_for(model))
            for index, build in enumerate(found):  # compile and cache what the runs load
                one_run(build, f"warm{index}", workspace, env, model)
            results: dict[Build, list[Run]] = {build: [] for build in found}
            for run, label in interleaved([b.label for b in found], args.runs):
                build = next(b for b in found if b.label == label)
                index = found.index(build)
                results[build].append(one_run(build, f"r{run}b{index}", workspace, env, model))
    finally:
        model.close()
    command = "python bench/first_prompt.py" + (f" --runs {args.runs}" if args.runs != 20 else "")
    command += "".join(f" --tree {tree}" for tree in args.tree)
    text = report(results, command, (load_start, os.getloadavg()[0]))
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
