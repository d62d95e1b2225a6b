"""The file tools' cost per call, through the gate and the executor as a turn runs them (issue 24:
they now open exactly the place the gate decided on); writes the `## file tools` section of
bench/RESULTS.md.

    .venv/bin/python -m bench.file_tools [--calls 300] [--no-write]

A project of 200 small files in 10 packages; each tool is called `--calls` times in `auto` mode
(read, write and edit of one file, ls of a package, grep and glob over the project), and the
median wall time per call is reported, plus the cost of the exact open itself
(`agent.files.safe_paths.open_exact`) beside a plain `os.open` of the same path. The same command
run with `PYTHONPATH` at an older checkout measures that checkout (`--no-write` then).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from agent.backends import DenyingInteraction
from agent.local import LocalFiles, LocalProcesses
from agent.permissions import PermissionGate, PermissionRules
from agent.tools import ReadTracker, ScopeContract, ToolServices, builtin_tools
from agent.turn import Tooling
from agent.turn.execution import BatchState, ToolExecutor
from agent.turn.tool_calls import SchemaValidators, validate_call
from bench.results_md import write_section
from providers.types import ToolCallPart, ToolResultPart

SECTION = "## file tools"
TOOL_TARGET_MS = 5.0
"""A file tool call (not grep or glob, which start ripgrep) well under a model's token time."""


class Runner:
    def __init__(self, project: Path) -> None:
        self.project = project
        self.gate = PermissionGate(PermissionRules(), cwd=project, roots=[project])
        self.tools = {tool.name: tool for tool in builtin_tools()}
        self.reads = ReadTracker()
        self.validators = SchemaValidators()
        self.count = 0

    async def call(self, name: str, **arguments: Any) -> ToolResultPart:
        self.count += 1
        call = ToolCallPart(id=f"c{self.count}", name=name, arguments=arguments)
        results: list[ToolResultPart] = []
        with anyio.CancelScope() as turn:
            tooling = Tooling(
                session_id="bench",
                cwd=self.project,
                roots=(self.project,),
                files=LocalFiles(),
                processes=LocalProcesses(),
                interaction=DenyingInteraction(),
                gate=self.gate,
                mode=lambda: "auto",
                scope=ScopeContract(),
                reads=self.reads,
                turn=turn,
                services=ToolServices(
                    read_denied=self.gate.read_denied,
                    read_deny_globs=self.gate.read_deny_globs,
                ),
            )
            checked = validate_call(call, self.tools, self.validators, tooling.context, print)

            async def record(result: ToolResultPart) -> bool:
                return True

            executor = ToolExecutor(tooling, emit=lambda event: None)
            results = await executor.run_batch([checked], BatchState(), record)
        [result] = results
        assert not result.is_error, result.content
        return result


def make_project(root: Path) -> Path:
    project = root / "project"
    for number in range(200):
        path = project / f"pkg{number % 10}" / f"module{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def function_{number}():\n    return {number}\n" * 10, encoding="utf-8")
    return Path(os.path.realpath(project))


async def measure(calls: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="earshot-bench-files-") as temp:
        runner = Runner(make_project(Path(temp)))
        target = "pkg1/module1.py"
        cases: dict[str, Callable[[int], tuple[str, dict[str, Any]]]] = {
            "read": lambda n: ("read", {"path": target}),
            "write": lambda n: ("write", {"path": f"new/file{n}.txt", "content": f"{n}\n"}),
            "edit": lambda n: (
                "edit",
                {
                    "path": target,
                    "old_string": f"return {1 if n % 2 == 0 else 'X'}\n",
                    "new_string": f"return {'X' if n % 2 == 0 else 1}\n",
                    "replace_all": True,
                },
            ),
            "ls": lambda n: ("ls", {"path": "pkg2"}),
            "grep": lambda n: ("grep", {"pattern": "function_1[0-9]\\b"}),
            "glob": lambda n: ("glob", {"pattern": "**/module1*.py"}),
        }
        medians: dict[str, float] = {}
        for label, make in cases.items():
            await runner.call("read", path=target)  # edits need a fresh read
            timings: list[float] = []
            for number in range(calls):
                name, arguments = make(number)
                started = time.perf_counter()
                await runner.call(name, **arguments)
                timings.append(time.perf_counter() - started)
            medians[label] = statistics.median(timings) * 1000
        medians.update(_primitive(runner.project / target))
        return medians


def _primitive(path: Path) -> dict[str, float]:
    """Microseconds per open and close of `path`: plain, and exact (when this checkout has it)."""
    try:
        from agent.files import READ_FLAGS, open_exact
    except ImportError:
        return {}
    found: dict[str, float] = {}
    for label, opener in (
        ("os.open", lambda: os.open(path, READ_FLAGS)),
        ("open_exact", lambda: open_exact(path, READ_FLAGS)),
    ):
        started = time.perf_counter()
        for _ in range(20_000):
            os.close(opener())
        found[label] = (time.perf_counter() - started) / 20_000 * 1e6
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    medians = anyio.run(measure, args.calls)
    tools = ["read", "write", "edit", "ls", "grep", "glob"]
    row = " | ".join(f"{medians[name]:.2f}" for name in tools)
    met = all(medians[name] < TOOL_TARGET_MS for name in ("read", "write", "edit", "ls"))
    primitive = (
        f"Opening a file: `os.open` {medians['os.open']:.1f} us, `open_exact` (openat2, no link "
        f"followed) {medians['open_exact']:.1f} us, open and close, 20,000 times."
        if "open_exact" in medians
        else "This checkout has no `agent.files.safe_paths`."
    )
    command = "python -m bench.file_tools" + (f" --calls {args.calls}" if args.calls != 300 else "")
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Machine: CPython {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f} at the end. Date: {time.strftime('%Y-%m-%d')}.",
            "",
            "Median ms per call through validation, the gate and the executor (`auto`, 200 files):",
            "",
            "| read | write | edit | ls | grep | glob |",
            "|---|---|---|---|---|---|",
            f"| {row} |",
            "",
            f"{primitive} Target: read, write, edit and ls under {TOOL_TARGET_MS:g} ms a call: "
            f"{'met' if met else 'NOT met'}.",
            "",
        ]
    )
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
