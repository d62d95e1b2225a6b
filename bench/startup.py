"""Start-up cost of the provider layer: what `import providers` and resolving a model add to a bare
Python start.

    .venv/bin/python bench/startup.py [--runs 20] [--no-write]

Each case runs in a fresh subprocess, `--runs` times; the median wall time is reported. The last
case also checks, inside the child, that no vendor SDK (openai, anthropic, google.genai) and no
pydantic was imported. Results go to this benchmark's own `## startup` section of
`bench/RESULTS.md`. Exits non-zero when a check fails or `import providers` adds more than 30 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
SECTION = "## startup"
BUDGET_MS = 30.0
FORBIDDEN = ("openai", "anthropic", "google.genai", "pydantic")

RESOLVE = f"""
import sys
from providers.catalog import ModelCatalog
from providers.registry import resolve_endpoint, split_model_name
provider, model = split_model_name("anthropic/claude-sonnet-4-5")
endpoint = resolve_endpoint(provider, {{}}, {{"ANTHROPIC_API_KEY": "test-key"}})
info = ModelCatalog.load().get(provider, model)
assert endpoint.api == "anthropic" and info is not None and info.context_window
loaded = [name for name in {FORBIDDEN!r} if name in sys.modules]
if loaded:
    sys.exit("imported at start-up: " + ", ".join(loaded))
"""


@dataclass(frozen=True)
class Case:
    name: str
    code: str


CASES = (
    Case("bare `python -c pass`", "pass"),
    Case("`import providers`", "import providers"),
    # For attribution: the shared types every path below needs anyway (via providers.model).
    Case("`import providers.types`", "import providers.types"),
    Case("registry + catalog, resolve a model to Endpoint and ModelInfo", RESOLVE),
)


def measure(code: str, runs: int) -> list[float]:
    """Wall times in ms of `python -c code`, each in a fresh process."""
    times: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        elapsed = (time.perf_counter() - started) * 1000
        if result.returncode != 0:
            raise SystemExit(f"benchmark child failed: {result.stderr.strip()}")
        times.append(elapsed)
    return times


def write_section(body: str) -> None:
    """Replace (or add) this benchmark's section, leaving every other section as it is."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == SECTION), None)
    if start is None:
        new = [*lines, "", *body.splitlines()]
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        new = [*lines[:start], *body.splitlines(), "", *lines[end:]]
    RESULTS.write_text("\n".join(new).rstrip("\n") + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="provider-layer start-up benchmark")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    runs: int = args.runs

    # Warm the OS page cache and .pyc files so the first case is not penalised.
    measure(RESOLVE, 2)
    medians: list[float] = []
    rows: list[str] = []
    for case in CASES:
        times = measure(case.code, runs)
        median = statistics.median(times)
        medians.append(median)
        added = f"+{median - medians[0]:.1f}" if medians[0] != median else "0"
        rows.append(
            f"| {case.name} | {median:.1f} | {added} | {min(times):.1f} | {max(times):.1f} |"
        )
        print(f"{case.name}: median {median:.1f} ms (min {min(times):.1f}, max {max(times):.1f})")

    added_by_import = medians[1] - medians[0]
    within = added_by_import <= BUDGET_MS
    verdict = "within" if within else "OVER"
    body = "\n".join(
        [
            SECTION,
            "",
            f"Command: `.venv/bin/python bench/startup.py --runs {runs}` "
            f"(median of {runs} fresh subprocesses per case; wall time in ms).",
            f"Machine: {platform.python_implementation()} {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs. "
            f"Date: {time.strftime('%Y-%m-%d')}.",
            "",
            "| case | median | added to bare | min | max |",
            "| --- | ---: | ---: | ---: | ---: |",
            *rows,
            "",
            f"`import providers` adds {added_by_import:.1f} ms to a bare start: {verdict} the "
            f"{BUDGET_MS:.0f} ms budget. The last case checked inside the child that none of "
            f"{', '.join(FORBIDDEN)} was imported.",
        ]
    )
    if not args.no_write:
        write_section(body)
        print(f"wrote the {SECTION} section of {RESULTS}")
    return 0 if within else 1


if __name__ == "__main__":
    raise SystemExit(main())
