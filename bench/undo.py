"""Whole-tree undo snapshots (a batch that runs a command); writes the `## undo` section of
bench/RESULTS.md.

    .venv/bin/python -m bench.undo [--files 3000] [--later 10] [--no-write]

A project of `--files` small Python files in 30 packages; the first whole-tree snapshot hashes
them all into the private index, and each later one (one file changed in between, as after a
command) should only stat them (`agent/undo/store.py`). Target, from the test this replaced: a later
snapshot under 2 s, and cheaper than the first. The test (`tests/agent/test_undo_shell.py`) keeps
the behaviour that makes it so: after a snapshot the private index lists nothing unchanged.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from agent.undo import UndoStore
from bench.results_md import write_section

SECTION = "## undo"
LATER_TARGET_S = 2.0


async def measure(files: int, later: int) -> tuple[float, list[float]]:
    with tempfile.TemporaryDirectory(prefix="earshot-bench-undo-") as temp:
        project = Path(temp) / "project"
        for number in range(files):
            path = project / f"pkg{number % 30}" / f"module{number}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"value = {number}\n" * 20, encoding="utf-8")
        store = UndoStore(project, Path(temp) / "data")
        timings: list[float] = []
        for batch in range(later + 1):
            started = time.perf_counter()
            assert await store.snapshot("s", f"b{batch}", [], whole_tree=True) is not None
            timings.append(time.perf_counter() - started)
            (project / "pkg0" / "module0.py").write_text(f"changed {batch}\n", encoding="utf-8")
        return timings[0], timings[1:]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--later", type=int, default=10)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    first, later = anyio.run(measure, args.files, args.later)
    typical = statistics.median(later)
    met = typical < LATER_TARGET_S and typical < first
    command = "python -m bench.undo" + (f" --files {args.files}" if args.files != 3000 else "")
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Machine: CPython {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f} at the end. Date: {time.strftime('%Y-%m-%d')}.",
            "",
            f"Whole-tree snapshot of {args.files:,} files: the first (hashes everything) "
            f"{first * 1000:.0f} ms; later ones (one file changed) median "
            f"{typical * 1000:.0f} ms, min {min(later) * 1000:.0f}, max {max(later) * 1000:.0f} "
            f"over {len(later)}. Target: a later snapshot under {LATER_TARGET_S:g} s and cheaper "
            f"than the first: {'met' if met else 'NOT met'}.",
            "",
        ]
    )
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
