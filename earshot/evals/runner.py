"""One run of one task: a fresh copy, `earshot -p` as a subprocess, then the check.

The agent runs through the real command line (`python -m earshot -p PROMPT --output-format json
--permission-mode MODE`), so an evaluation measures exactly what a user runs; its `result` line
gives the turns, tokens, cost and time. A scripted run gets a private config and data directory
(settings that select the scripted model playing the task's file, and keep the user's own
permission rules and sandbox settings), so the user's keys, providers and sessions are not
involved; a real run uses the user's own settings (keys, providers, sessions, which can then be
replayed with `earshot sessions replay`).

Either way the agent is an ordinary print-mode session: every tool call goes through the
permission gate in the task's mode, and every command through the command sandbox. A task's mode
can be no more permissive than the user allows on the command line (`--max-mode`, default `auto`:
`earshot.evals.tasks.check_modes`), so a task set cannot give its model `yolo` by asking.

The check runs code the model wrote: it runs in the command sandbox (writable: the work copy and
the temp dir; no network) with the provider keys removed from its environment, like any command
the agent runs. Where no sandbox can run, it runs unconfined, still without the keys, and the
result says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from anyio.abc import Process

from earshot.evals.tasks import TaskError, TaskPayload, materialise

SCRIPTED_PROVIDER = "eval-script"
CHECK_OUTPUT_BYTES = 4_000
"""The tail of the check's output kept in the result."""
STDERR_KEPT = 2_000
STOP_GRACE_SECONDS = 5.0


@dataclass(slots=True, kw_only=True)
class TaskResult:
    name: str
    passed: bool
    agent_exit_code: int | None = None
    stop_reason: str | None = None
    turns: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {})
    cost_usd: float | None = None
    agent_ms: int = 0
    """The agent's run, as print mode measured it."""
    check_ms: int = 0
    total_ms: int = 0
    check_exit_code: int | None = None
    check_output: str = ""
    check_sandbox: str = ""
    """`confined`, or why the check ran unconfined."""
    session_id: str | None = None
    denied: int = 0
    error: str | None = None
    """The run itself went wrong (the agent timed out, no `result` line...)."""
    workdir: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "agent_exit_code": self.agent_exit_code,
            "stop_reason": self.stop_reason,
            "turns": self.turns,
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "agent_ms": self.agent_ms,
            "check_ms": self.check_ms,
            "total_ms": self.total_ms,
            "check_exit_code": self.check_exit_code,
            "check_output": self.check_output,
            "check_sandbox": self.check_sandbox,
            "session_id": self.session_id,
            "denied": self.denied,
            "error": self.error,
            "workdir": self.workdir,
        }


def run_task_sync(task: TaskPayload) -> TaskResult:
    """`run_task` on a fresh event loop (what a Ray worker calls)."""
    return anyio.run(run_task, task)


async def run_task(task: TaskPayload) -> TaskResult:
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix=f"earshot-eval-{task.name[:40]}-"))
    work = root / "work"
    result = TaskResult(name=task.name, passed=False)
    try:
        work.mkdir()
        materialise(task.files, work)
        await _run_agent(task, root, work, result)
        if result.error is None:
            await _run_check(task, work, result)
    except (OSError, TaskError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        result.total_ms = round((time.monotonic() - started) * 1000)
        if task.keep:
            result.workdir = str(work)
        else:
            shutil.rmtree(root, ignore_errors=True)
    result.passed = result.error is None and result.check_exit_code == 0
    return result


def _environment(task: TaskPayload, root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    if task.script is None:
        return env
    config, data = root / "config", root / "data"
    (config / "earshot").mkdir(parents=True)
    data.mkdir()
    script = root / "script.json"
    script.write_bytes(task.script)
    settings: dict[str, Any] = {
        # What the user allows (their rules, their sandbox) holds for the task too.
        **(json.loads(task.user_gate) if task.user_gate else {}),
        "model": f"{SCRIPTED_PROVIDER}/{task.name}",
        "providers": {SCRIPTED_PROVIDER: {"api": "scripted", "script": str(script)}},
    }
    (config / "earshot" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env["XDG_CONFIG_HOME"] = str(config)
    env["XDG_DATA_HOME"] = str(data)
    return env


async def _run_agent(task: TaskPayload, root: Path, work: Path, result: TaskResult) -> None:
    command = [
        sys.executable, "-m", "earshot",
        "-p", task.prompt,
        "--output-format", "json",
        "--permission-mode", task.mode,
    ]  # fmt: skip
    if task.model is not None:
        command += ["--model", task.model]
    env = _environment(task, root)
    chunks: list[bytes] = []
    stderr = b""
    async with await anyio.open_process(
        command, cwd=work, env=env, stdin=subprocess.DEVNULL, start_new_session=True
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        out, err = process.stdout, process.stderr

        async def drain_out() -> None:
            async for chunk in out:
                chunks.append(chunk)

        async def drain_err() -> None:
            nonlocal stderr
            async for chunk in err:
                stderr = (stderr + chunk)[-STDERR_KEPT:]

        with anyio.move_on_after(task.timeout) as scope:
            async with anyio.create_task_group() as readers:
                readers.start_soon(drain_out)
                readers.start_soon(drain_err)
            await process.wait()
        if scope.cancelled_caught:
            with anyio.CancelScope(shield=True):
                await _stop(process)
            result.error = f"the agent did not finish within {task.timeout:g}s"
            return
        result.agent_exit_code = process.returncode
    closing = _result_line(b"".join(chunks))
    if closing is None:
        tail = stderr.decode("utf-8", errors="replace").strip()[-500:]
        result.error = f"earshot -p gave no result line (exit {result.agent_exit_code}): {tail}"
        return
    _take(closing, result)


async def _stop(process: Process) -> None:
    """SIGTERM first (print mode then cancels the turn, ending the commands it runs, and saves
    the transcript), SIGKILL to its process group after a grace period."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    with anyio.move_on_after(STOP_GRACE_SECONDS):
        await process.wait()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


def _result_line(stdout: bytes) -> dict[str, Any] | None:
    for line in reversed(stdout.decode("utf-8", errors="replace").splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and cast("dict[str, Any]", data).get("kind") == "result":
            return cast("dict[str, Any]", data)
    return None


def _take(line: dict[str, Any], result: TaskResult) -> None:
    result.session_id = line.get("session_id") if isinstance(line.get("session_id"), str) else None
    result.stop_reason = (
        line.get("stop_reason") if isinstance(line.get("stop_reason"), str) else None
    )
    result.turns = _int(line.get("turns"))
    result.denied = _int(line.get("denied"))
    result.agent_ms = _int(line.get("duration_ms"))
    usage = line.get("usage")
    if isinstance(usage, dict):
        counts = cast("dict[str, object]", usage)
        result.usage = {str(key): _int(value) for key, value in counts.items()}
    cost = line.get("cost_usd")
    result.cost_usd = float(cost) if isinstance(cost, int | float) else None
    if line.get("error"):
        result.error = f"earshot -p: {line['error']}"


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


async def _run_check(task: TaskPayload, work: Path, result: TaskResult) -> None:
    from agent.local import LocalProcesses
    from agent.sandbox import SandboxRefused, open_sandbox
    from agent.settings import SandboxConfig

    materialise(task.check_files, work)
    sandbox = await open_sandbox(SandboxConfig(network=False), [work])
    confine = sandbox if sandbox.active else None
    result.check_sandbox = "confined" if confine is not None else f"unconfined: {sandbox.reason}"
    started = time.monotonic()
    try:
        done = await LocalProcesses().run(
            task.check,
            cwd=work,
            timeout=task.check_timeout,
            output_limit=CHECK_OUTPUT_BYTES,
            confine=confine,
        )
    except SandboxRefused as exc:
        result.error = f"the check could not be confined: {exc}"
        return
    finally:
        result.check_ms = round((time.monotonic() - started) * 1000)
    result.check_exit_code = done.exit_code
    result.check_output = done.output
    if done.timed_out:
        result.check_output += f"\n(the check timed out after {task.check_timeout:g}s)"
