"""What the command sandbox adds to a command; writes the `## sandbox` section of bench/RESULTS.md.

Run from the repo root: `.venv/bin/python -m bench.sandbox` (`--runs N`, `--no-write` to only
print). Linux with bubblewrap only.

Each case runs through `agent.local.backends.LocalProcesses` exactly as the `bash` tool does, once
plain, once confined with the network on and once with it off (the runs taking turns, so a busy
machine slows all alike), in a git project without `.earshot/` (so every confined run also mounts,
records and removes a placeholder). A confined run enters the sandbox's shared network namespace
(`nsenter`) before bwrap starts, gets the private `/tmp`, and has the host's sockets covered. The
overhead is the difference of the medians. Target: under 15 ms per call.

Cases: `true`; `ls -la` in the project; `grep -rn` over 1,000 files (10 lines each).
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import anyio

from agent.local import LocalProcesses
from agent.sandbox import Sandbox, open_sandbox
from agent.sandbox.linux import plan_mounts
from agent.settings import SandboxConfig
from bench.results_md import write_section

SECTION = "## sandbox"
TARGET_MS = 15.0
CASES = {
    "`true`": "true",
    "`ls -la`": "ls -la",
    "`grep -rn` over 1,000 files": "grep -rn needle src | wc -l",
}


def _project(base: Path) -> Path:
    project = base / "project"
    source = project / "src"
    for index in range(1000):
        folder = source / f"m{index // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"line {line} of file {index}" for line in range(9)] + ["needle here"]
        (folder / f"f{index}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return project


Sample = tuple[float]
"""(wall ms,)"""
VARIANTS = ("plain", "network on", "network off")


async def _time(command: str, project: Path, sandbox: Sandbox | None) -> Sample:
    started = time.perf_counter()
    result = await LocalProcesses().run(
        command, cwd=project, timeout=60, output_limit=100_000, confine=sandbox
    )
    elapsed = (time.perf_counter() - started) * 1000
    if result.exit_code != 0:
        raise RuntimeError(f"{command!r} failed: {result.output}")
    return (elapsed,)


Timings = dict[str, dict[str, list[Sample]]]
"""case -> variant -> samples."""


async def measure(runs: int) -> tuple[Timings, float]:
    base = Path(tempfile.mkdtemp(prefix="earshot-bench-"))
    os.environ["XDG_DATA_HOME"] = str(base / "data")  # the sandbox's lock, not the user's
    try:
        project = _project(base)
        sandboxes: dict[str, Sandbox | None] = {"plain": None}
        for variant, network in (("network on", True), ("network off", False)):
            sandbox = await open_sandbox(SandboxConfig(network=network), (project,))
            if not sandbox.active:
                raise SystemExit(f"no sandbox: {sandbox.reason}")
            if sandbox.notice():
                print(sandbox.notice(), file=sys.stderr)
            sandboxes[variant] = sandbox
        sandbox = sandboxes["network on"]
        assert sandbox is not None
        timings: Timings = {}
        for name, command in CASES.items():
            samples: dict[str, list[Sample]] = {variant: [] for variant in VARIANTS}
            for _ in range(3):  # warm the page cache and the probe
                for variant in VARIANTS:
                    await _time(command, project, sandboxes[variant])
            for _ in range(runs):
                for variant in VARIANTS:
                    samples[variant].append(await _time(command, project, sandboxes[variant]))
            timings[name] = samples
        started = time.process_time()
        for _ in range(runs):
            plan_mounts(sandbox.places())
        planning = (time.process_time() - started) * 1000 / runs
        return timings, planning
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _median(samples: list[Sample], index: int) -> float:
    return statistics.median(sample[index] for sample in samples)


def report(timings: Timings, planning: float, runs: int) -> str:
    bwrap = shutil.which("bwrap") or "bwrap"
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, check=False)
    load = os.getloadavg()[0]
    rows = [
        "| command | network | plain ms | sandboxed ms | added (medians) | added (fastest runs) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    worst = 0.0
    for name, samples in timings.items():
        plain = samples["plain"]
        for variant in VARIANTS[1:]:
            confined = samples[variant]
            added = _median(confined, 0) - _median(plain, 0)
            fastest = min(s[0] for s in confined) - min(s[0] for s in plain)
            worst = max(worst, added)
            rows.append(
                f"| {name} | {variant.removeprefix('network ')} | {_median(plain, 0):.1f} | "
                f"{_median(confined, 0):.1f} | +{added:.1f} ms | +{fastest:.1f} ms |"
            )
    verdict = "within" if worst < TARGET_MS else "OVER"
    return "\n".join(
        [
            SECTION,
            "",
            f"Command: `.venv/bin/python -m bench.sandbox --runs {runs}` (medians of {runs} runs "
            "per case, plain, sandboxed with the network on and with it off taking turns, "
            "through `LocalProcesses` as the `bash` tool runs them; a git project without "
            "`.earshot/`, so each sandboxed run also mounts, records and removes a "
            "placeholder).",
            f"Machine: CPython {platform.python_version()}, {platform.system()} "
            f"{platform.machine()}, {os.cpu_count()} CPUs, {version.stdout.strip()}, load "
            f"average {load:.1f} at the end. Date: {date.today().isoformat()}.",
            "",
            f"Added per call (target under {TARGET_MS:g} ms): at most **+{worst:.1f} ms** wall "
            f"(median), {verdict} the target. Planning the mounts (protected paths, placeholders, "
            f"pins, the host's sockets) takes {planning:.2f} ms of CPU; the rest is entering the "
            "shared network namespace (`nsenter`) and bubblewrap creating and tearing down the "
            "namespaces (three processes where a plain command is one: bwrap, its init, the "
            'command). "Fastest runs" compares the fastest run of each, close to the cost on an '
            "idle machine.",
            "",
            *rows,
            *_busy_note(load),
        ]
    )


def _busy_note(load: float) -> list[str]:
    if load < 2 * (os.cpu_count() or 1):
        return []
    return [
        "",
        f"The machine was busy (load {load:.1f} on {os.cpu_count()} CPUs): most of the added "
        "time is then waiting to be scheduled, for three processes instead of one. Compare "
        "runs made at similar load only.",
    ]


def main() -> None:
    if not sys.platform.startswith("linux"):
        raise SystemExit("bench.sandbox measures bubblewrap: Linux only")
    runs = 40
    if "--runs" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1])
    timings, planning = anyio.run(measure, runs)
    text = report(timings, planning, runs)
    print(text)
    if "--no-write" not in sys.argv:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
