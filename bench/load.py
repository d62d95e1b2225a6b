"""Many sessions prompting at once in one `earshot --stdio` (issue 25, item 6); writes the `## load`
section of bench/RESULTS.md.

    .venv/bin/python bench/load.py [--sessions 20] [--turns 10] [--runs 3] [--no-write]
                                   [--dev-venv | --earshot PATH] [--tree DIR ...]
                                   [--py-spy FILE] [--first-token-ms 100] [--chunks 40]
                                   [--chunk-ms 5] [--file-kb 6]

One process, `--sessions` sessions opened at once (`session/new`), then every session runs
`--turns` prompts one after the other, all sessions at the same time (a Zed window with several
threads, or a turn fanning out subagents). Every other turn makes the model call `read` on a
`--file-kb` KB file first (so that turn has two model calls); the others are answered with text.
The model is `loopback.LoopbackChat` over the real OpenAI SDK: its first chunk after
`--first-token-ms`, then `--chunks` text chunks `--chunk-ms` apart. The same is run with one
session (`--turns` prompts), which must not get slower.

Per build (the builds take turns, run by run):
- overhead per turn: prompt written -> its answer read, minus the model's own time in that turn
  (its calls' request read -> answer written). Targets: p50 under 100 ms with 20 sessions;
- agent CPU per turn: the process's user + system time (`/proc/<pid>/stat`, threads included)
  from the first prompt to the last answer, over the number of turns (the SDK's import and each
  session's warm-up included). Target: under 20 ms. Also shown: the part spent in the kernel,
  and the CPU per turn once every session's first turn has ended ("after the first turns").
  CPU time is the figure to trust on a shared machine (it moved little between load 3 and 15);
  the wall-clock ones grow with the load. Per streamed chunk the agent pays a wake-up of its
  loop and one of the editor (its ACP message), so the model's pace matters: one chunk at a
  time cost ~5x a burst of them (`--chunk-ms`).

`--py-spy FILE` runs the first build's many-session run of the first round under `py-spy
record --gil -f raw` (py-spy from PyPI, in the venv: `pip install py-spy`) and writes the
samples to FILE (the agent runs slower meanwhile: its figures then are not results).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from builds import Build, add_arguments, builds
from loopback import (
    AcpClient,
    LoopbackChat,
    bench_env,
    cpu_split,
    interleaved,
    percentile,
    settings_for,
)
from results_md import write_section

SECTION = "## load"
OVERHEAD_MS, CPU_MS = 100.0, 20.0


@dataclass
class Turn:
    session: int
    turn: int
    overhead_ms: float
    wall_ms: float


@dataclass
class Run:
    sessions: int
    turns: list[Turn] = field(default_factory=list[Turn])
    cpu_s: float = 0.0
    system_s: float = 0.0
    """The part of `cpu_s` spent in the kernel (writes, reads, syncs, polls)."""
    later_cpu_ms: float = 0.0
    """Agent CPU per turn once every session's first turn has ended (no warm-up, no SDK import
    left): what a turn costs in a process that has been running a while."""
    open_s: float = 0.0
    """The `session/new` answers, all of them."""
    phase_s: float = 0.0
    """First prompt written -> last answer read."""

    @property
    def cpu_per_turn_ms(self) -> float:
        return self.cpu_s * 1000 / len(self.turns)


@dataclass
class Setting:
    workspace: Path
    env: dict[str, str]
    model: LoopbackChat
    turns: int


def prompt_text(tag: str, turn: int) -> str:
    if turn % 2 == 1:
        return f"[bench {tag}] read notes.txt and tell me what it says"
    return f"[bench {tag}] say something short"


def one_run(build: Build, sessions: int, setting: Setting, label: str, profile: Path | None):
    command = [str(build.earshot), "--stdio"]
    if profile is not None:
        spy = Path(sys.executable).parent / "py-spy"
        command = [str(spy), "record", "--gil", "-r", "250", "-f", "raw"]
        command += ["-o", str(profile), "--"]
        command += [str(build.earshot.parent / "python"), str(build.earshot), "--stdio"]
    client = AcpClient(command, setting.workspace, setting.env)
    run = Run(sessions)
    lock = threading.Lock()
    try:
        client.initialize()
        opened = time.perf_counter()
        ids: list[str] = [""] * sessions

        def open_one(index: int) -> None:
            ids[index] = client.new_session(setting.workspace)[0]

        _all(open_one, sessions)
        run.open_s = time.perf_counter() - opened
        cpu_before = _agent_cpu(client, profile)
        started = time.perf_counter()

        first_turns_left = [sessions]
        steady: list[tuple[float, int]] = []
        """(agent CPU, turns done) when the last session's first turn ended."""

        def drive(index: int) -> None:
            for turn in range(setting.turns):
                tag = f"{label}s{index}t{turn}"
                written, answered = client.prompt(ids[index], prompt_text(tag, turn))
                model = setting.model.model_seconds(tag)
                result = Turn(
                    index, turn, (answered - written - model) * 1000, (answered - written) * 1000
                )
                with lock:
                    run.turns.append(result)
                    if turn == 0:
                        first_turns_left[0] -= 1
                        if not first_turns_left[0]:
                            steady.append((sum(_agent_cpu(client, profile)), len(run.turns)))

        _all(drive, sessions)
        run.phase_s = time.perf_counter() - started
        user, system = _agent_cpu(client, profile)
        run.cpu_s = user + system - sum(cpu_before)
        run.system_s = system - cpu_before[1]
        [(cpu_then, done_then)] = steady
        later = len(run.turns) - done_then
        run.later_cpu_ms = (user + system - cpu_then) * 1000 / later if later else 0.0
    finally:
        client.close()
    return run


def _agent_cpu(client: AcpClient, profile: Path | None) -> tuple[float, float]:
    """The agent's (user, system) CPU seconds so far."""
    if profile is None:
        return cpu_split(client.process.pid)
    # Under py-spy the agent is py-spy's child.
    children = Path(f"/proc/{client.process.pid}/task/{client.process.pid}/children")
    [pid] = children.read_text(encoding="utf-8").split()
    return cpu_split(int(pid))


def _all(work: object, count: int) -> None:
    """Run `work(i)` for every i in its own thread; raise the first failure."""
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            work(index)  # type: ignore[operator]
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


# ------------------------------------------------------------------------------- report


def summary(runs: list[Run]) -> dict[str, float]:
    turns = [t for run in runs for t in run.turns]
    overhead = [t.overhead_ms for t in turns]
    first = [t.overhead_ms for t in turns if t.turn == 0]
    later = [t.overhead_ms for t in turns if t.turn > 0]
    return {
        "p50": percentile(overhead, 0.5),
        "p95": percentile(overhead, 0.95),
        "first": statistics.median(first),
        "later": statistics.median(later) if later else 0.0,
        "cpu": statistics.median(run.cpu_per_turn_ms for run in runs),
        "cpu_min": min(run.cpu_per_turn_ms for run in runs),
        "cpu_max": max(run.cpu_per_turn_ms for run in runs),
        "system": statistics.median(run.system_s * 1000 / len(run.turns) for run in runs),
        "steady": statistics.median(run.later_cpu_ms for run in runs),
        "open": statistics.median(run.open_s * 1000 for run in runs),
        "phase": statistics.median(run.phase_s for run in runs),
    }


def report(
    results: dict[Build, dict[int, list[Run]]],
    args: argparse.Namespace,
    command: str,
    load: tuple[float, float],
) -> str:
    lines = [
        SECTION,
        "",
        f"Command: `{command}` (its docstring says what each row measures).",
        f"Machine: CPython {platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the start and {load[1]:.1f} at the "
        f"end. Date: {time.strftime('%Y-%m-%d')}. The model: first chunk after "
        f"{args.first_token_ms:g} ms, then {args.chunks} text chunks {args.chunk_ms:g} ms apart; "
        f"every other turn reads a {args.file_kb} KB file first. {args.runs} runs per case.",
        "",
        "| build | sessions x turns | overhead p50 | p95 | first turns p50 | later turns p50 "
        "| agent CPU per turn (min-max) | of which system | after the first turns "
        "| all `session/new` answered | turns took |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    verdicts: list[str] = []
    for build, cases in results.items():
        for sessions, runs in cases.items():
            s = summary(runs)
            lines.append(
                f"| {build.label} | {sessions} x {args.turns} | {s['p50']:.0f} ms | "
                f"{s['p95']:.0f} ms | {s['first']:.0f} ms | {s['later']:.0f} ms | "
                f"{s['cpu']:.1f} ms ({s['cpu_min']:.1f}-{s['cpu_max']:.1f}) | "
                f"{s['system']:.1f} ms | {s['steady']:.1f} ms | {s['open']:.0f} ms | "
                f"{s['phase']:.1f} s |"
            )
            if sessions == args.sessions and build is next(iter(results)):
                overhead_ok = "met" if s["p50"] < OVERHEAD_MS else "NOT met"
                cpu_ok = "met" if s["cpu"] < CPU_MS else "NOT met"
                verdicts.append(
                    f"Targets for {build.label}, {sessions} sessions: overhead p50 under "
                    f"{OVERHEAD_MS:g} ms: {overhead_ok}; agent CPU per turn under {CPU_MS:g} "
                    f"ms: {cpu_ok}."
                )
    lines += ["", *verdicts, "", *(f"- {b.label}: {b.where}" for b in results), ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--first-token-ms", type=float, default=100.0)
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--chunk-ms", type=float, default=5.0)
    parser.add_argument("--file-kb", type=int, default=6)
    parser.add_argument("--no-single", action="store_true", help="skip the one-session case")
    parser.add_argument("--py-spy", type=Path, help="profile the first many-session run")
    parser.add_argument("--no-write", action="store_true")
    add_arguments(parser)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    model = LoopbackChat(
        first_token_ms=args.first_token_ms, chunks=args.chunks, chunk_ms=args.chunk_ms
    )
    try:
        with tempfile.TemporaryDirectory(prefix="earshot-bench-load-") as temp:
            work = Path(temp)
            found = builds(args, work)
            workspace = work / "workspace"
            workspace.mkdir()
            line = "The quick brown fox jumps over the lazy dog; earshot reads this line.\n"
            text = line * (args.file_kb * 1024 // len(line))
            (workspace / "notes.txt").write_text(text, encoding="utf-8")
            setting = Setting(workspace, bench_env(work, settings_for(model)), model, args.turns)
            cases = [args.sessions] if args.no_single else [args.sessions, 1]
            results: dict[Build, dict[int, list[Run]]] = {b: {n: [] for n in cases} for b in found}
            for index, build in enumerate(found):  # compile and cache what the runs load
                one_run(build, 1, setting, f"w{index}", None)
            profile: Path | None = args.py_spy
            for run, label in interleaved([b.label for b in found], args.runs):
                build = next(b for b in found if b.label == label)
                index = found.index(build)
                for sessions in cases:
                    tag = f"r{run}b{index}n{sessions}"
                    spied = profile if sessions == args.sessions else None
                    results[build][sessions].append(one_run(build, sessions, setting, tag, spied))
                    if spied is not None:
                        profile = None
    finally:
        model.close()
    command = (
        "python bench/load.py"
        + "".join(
            f" {flag} {value}"
            for flag, value, default in (
                ("--sessions", args.sessions, 20),
                ("--turns", args.turns, 10),
                ("--runs", args.runs, 3),
            )
            if value != default
        )
        + "".join(f" --tree {tree}" for tree in args.tree)
    )
    text = report(results, args, command, (load_start, os.getloadavg()[0]))
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
