"""Many sessions in one project at once (issue 29); writes the `## concurrency` section of
bench/RESULTS.md.

    .venv/bin/python -m bench.concurrency [--sessions 1,2,4,20] [--turns 5] [--processes 1,4]
                                          [--files 0] [--baseline PATH] [--no-write]

For each count N of sessions and P of processes (N >= P): P earshot servers (`python -m earshot
--stdio`, this tree's `.venv`) in one project, the N sessions spread over them, all prompted at
once, each `--turns` times in a row; every turn runs `cat calc.py` through `bash` in yolo mode
(the scripted model), so every turn takes a whole-tree undo snapshot first. Counted afterwards
from the transcripts: the bash calls, the undo snapshots recorded for them, and the calls whose
result says the change cannot be undone; and the wall-clock and CPU seconds of the turns (the
servers' and the processes they ran: git, bash). `--files` adds that many small files to the
project (the snapshots then have work to do). `--baseline` also measures another
source tree (`git archive <commit> | tar -x -C PATH`: the numbers before a change, run with this
tree's `.venv`), just before this tree at each count, so that both see the same load.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from bench.results_md import write_section

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## concurrency"
NOT_UNDOABLE = "cannot be undone"
"""What a bash call's result says when its batch has no snapshot (agent/history/undo_batches.py)."""


@dataclass
class Count:
    sessions: int
    processes: int
    bash_turns: int
    snapshots: int
    failed: int
    """Bash calls whose batch has no snapshot in the transcript."""
    told: int
    """Of those, the calls whose result told the model the change cannot be undone."""
    warnings: int
    seconds: float
    cpu: float
    """CPU seconds the servers and the processes they waited for (git, bash) spent on the
    turns: what a design costs a loaded machine, less noisy than the wall clock."""


class Server:
    """One earshot process; requests from several threads, answers read by one thread."""

    def __init__(self, workspace: Path, env: dict[str, str], log: Path) -> None:
        self._waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "earshot", "--stdio"],
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin: IO[bytes] = self.process.stdin
        self._stdout: IO[bytes] = self.process.stdout
        self._lock = threading.Lock()
        self._next = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self._stdout:
            message = json.loads(line)
            if "method" in message:
                continue  # notifications; yolo mode asks nothing
            event, box = self._waiting.pop(message["id"])
            box.append(message)
            event.set()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        event, box = threading.Event(), list[dict[str, Any]]()
        with self._lock:
            self._next += 1
            request_id = self._next
            self._waiting[request_id] = (event, box)
            line = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            self._stdin.write((json.dumps(line) + "\n").encode())
            self._stdin.flush()
        if not event.wait(300):
            raise RuntimeError(f"{method}: no answer in 300 s")
        if "error" in box[0]:
            raise RuntimeError(f"{method} failed: {box[0]['error']}")
        return box[0]["result"]

    def cpu_seconds(self) -> float:
        """This server's CPU time so far, with that of the children it has waited for."""
        stat = Path(f"/proc/{self.process.pid}/stat").read_text(encoding="ascii")
        fields = stat.rsplit(")", 1)[1].split()
        ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        return ticks / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self._stdin.close()
        self.process.wait(timeout=60)
        self._reader.join(timeout=10)
        self._log.close()


def _project(work: Path, files: int) -> Path:
    workspace = work / "project"
    workspace.mkdir()
    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    for number in range(files):
        path = workspace / f"pkg{number % 20}" / f"module{number}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"value = {number}\n" * 20, encoding="utf-8")
    return workspace


def _environment(work: Path, turns: int, tree: Path) -> dict[str, str]:
    bash = {"tool_calls": [{"name": "bash", "arguments": {"command": "cat calc.py"}}]}
    script = work / "script.json"
    script.write_text(json.dumps({"turns": [bash, {"text": "done"}] * turns}), encoding="utf-8")
    settings = {
        "providers": {"bench": {"api": "scripted", "script": str(script)}},
        "model": "bench/x",
        "mode": "yolo",
    }
    config = work / "config" / "earshot"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_DATA_HOME=str(work / "data"),
        HOME=str(work),
        PYTHONPATH=str(tree),
    )
    return env


def measure(sessions: int, processes: int, turns: int, files: int, tree: Path) -> Count:
    with tempfile.TemporaryDirectory(prefix="earshot-bench-concurrency-") as temp:
        work = Path(temp)
        workspace = _project(work, files)
        env = _environment(work, turns, tree)
        servers = [
            Server(workspace, env, work / f"server-{n}.log")
            for n in range(min(processes, sessions))
        ]
        try:
            for server in servers:
                server.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            params: dict[str, Any] = {"cwd": str(workspace), "mcpServers": []}
            opened = [
                (server, server.call("session/new", params)["sessionId"])
                for number in range(sessions)
                for server in [servers[number % len(servers)]]
            ]
            barrier = threading.Barrier(sessions)

            def run(server: Server, session_id: str) -> None:
                barrier.wait()
                for _ in range(turns):
                    prompt: list[dict[str, Any]] = [{"type": "text", "text": "show calc.py"}]
                    server.call("session/prompt", {"sessionId": session_id, "prompt": prompt})

            started = time.perf_counter()
            cpu_before = sum(server.cpu_seconds() for server in servers)
            threads = [threading.Thread(target=run, args=pair) for pair in opened]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            seconds = time.perf_counter() - started
            cpu = sum(server.cpu_seconds() for server in servers) - cpu_before
        finally:
            for server in servers:
                server.close()
        warnings = sum(
            (work / f"server-{n}.log").read_text(errors="replace").count("undo snapshot failed")
            for n in range(len(servers))
        )
        count = _count(work / "data" / "earshot" / "sessions", sessions, len(servers), warnings)
        return dataclasses.replace(count, seconds=seconds, cpu=cpu)


def _count(store: Path, sessions: int, processes: int, warnings: int) -> Count:
    """Bash calls and their batches' snapshots, from the transcripts: a snapshot entry is
    appended before the calls of its batch run, so a bash call with no snapshot entry since the
    assistant message that made it has none."""
    calls = snapshots = told = 0
    for path in store.rglob("*.jsonl"):
        pending_snapshot = False
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            entry = json.loads(line)
            kind = entry.get("kind")
            if kind == "message" and entry["message"]["role"] == "assistant":
                pending_snapshot = False
                calls += sum(
                    1 for part in entry["message"]["parts"] if part.get("kind") == "tool_call"
                )
            elif kind == "undo_snapshot":
                pending_snapshot = True
                snapshots += 1
            elif kind == "message" and entry["message"]["role"] == "tool":
                texts = json.dumps(entry["message"]["parts"])
                if not pending_snapshot and NOT_UNDOABLE in texts:
                    told += 1
    return Count(sessions, processes, calls, snapshots, calls - snapshots, told, warnings, 0, 0)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", default="1,2,4,20")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--processes", default="1,4", help="counts: each with every session count")
    parser.add_argument("--files", type=int, default=0)
    parser.add_argument("--baseline", type=Path, help="a source tree to measure first, each time")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    baseline = cast("Path | None", args.baseline)
    rows: list[str] = []
    ok = True
    runs = [
        (sessions, processes)
        for processes in (int(n) for n in cast("str", args.processes).split(","))
        for sessions in (int(n) for n in cast("str", args.sessions).split(","))
        if sessions >= processes
    ]
    for sessions, processes in runs:
        before = None
        if baseline is not None:
            before = measure(sessions, processes, args.turns, args.files, baseline.resolve())
        after = measure(sessions, processes, args.turns, args.files, ROOT)
        ok = ok and after.failed == 0
        rows.append(_row(after, before))
        print(rows[-1], flush=True)
    command = "python -m bench.concurrency" + "".join(
        f" --{name} {value}"
        for name, value, default in (
            ("sessions", args.sessions, "1,2,4,20"),
            ("turns", args.turns, 5),
            ("processes", args.processes, "1,4"),
            ("files", args.files, 0),
            ("baseline", baseline, None),
        )
        if value != default
    )
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}`. Machine: CPython {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f} at the end. Date: {time.strftime('%Y-%m-%d')}. "
            "Each turn runs `cat calc.py` through `bash` in yolo mode (a whole-tree undo "
            "snapshot first); a failed snapshot is a bash call whose batch has no snapshot in "
            "the transcript. Before: the `--baseline` tree; after: this one.",
            "",
            "| sessions at once | processes | bash turns | failed snapshots (before / after) | "
            'told "cannot be undone" (after) | seconds (before / after) | CPU seconds '
            "(before / after) |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0 if ok else 1


def _row(after: Count, before: Count | None) -> str:
    def pair(value: Callable[[Count], str]) -> str:
        return value(after) if before is None else f"{value(before)} / {value(after)}"

    return (
        f"| {after.sessions} | {after.processes} | {after.bash_turns} | "
        f"{pair(lambda c: str(c.failed))} | {after.told} | {pair(lambda c: f'{c.seconds:.1f}')} | "
        f"{pair(lambda c: f'{c.cpu:.1f}')} |"
    )


if __name__ == "__main__":
    sys.exit(main())
