"""Lab runners for the command sandbox: the real bubblewrap, no mocks.

- `Bash` rows run as the `bash` tool runs a command: `agent.tools.bash` over `LocalProcesses`,
  confined by the session's `Sandbox` (guarded arm) or not (unguarded arm). When the sandbox
  stops the command, the tool asks whether to run it outside; the lab's user refuses, as print
  mode does, and the tool's result (what the model reads) is the run's output.
- `Terminal` rows run the command line an editor terminal is handed (`Sandbox.launch` with
  `scrub_env`), under a parent process that holds provider keys in its environment, as earshot's
  own process (or the editor) does: what a command could read from its parent
  (`/proc/$PPID/environ`) is really there to read, unconfined.

The sandbox's settings come from the row (`settings["sandbox"]`: `network`, `writablePaths`).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from agent.backends import DenyingInteraction
from agent.local import LocalFiles, LocalProcesses
from agent.sandbox import Sandbox, open_sandbox
from agent.sandbox.linux import scrubbing_prefix
from agent.settings import SandboxConfig
from agent.tools import ReadTracker, ScopeContract, ToolContext
from agent.tools.bash import BashInput, bash_tool
from providers.types import TextPart
from tests.security.lab import EXECUTORS, STOPPED, Defence, Lab, Row

PROVIDER_KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-lab-parent-sentinel",
    "OPENAI_API_KEY": "sk-lab-parent-sentinel",
}
"""In the environment of the process that launches a `Terminal` row's command."""
RUN_SECONDS = 30.0


def require_sandbox() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the real sandbox rows run on Linux (the macOS profile is tested as text)")
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed; scripts/test installs it")


def sandbox_config(row: Row, lab: Lab) -> SandboxConfig:
    section = cast(Mapping[str, Any], row.settings.get("sandbox", {}))
    paths = tuple(Path(lab.fill(str(path))) for path in section.get("writablePaths", ()))
    return SandboxConfig(network=bool(section.get("network", True)), writable_paths=paths)


async def open_lab_sandbox(lab: Lab, row: Row) -> Sandbox:
    require_sandbox()
    sandbox = await open_sandbox(sandbox_config(row, lab), [lab.project])
    assert sandbox.status == "active", sandbox.reason
    return sandbox


# ------------------------------------------------------------------------------ the bash tool


async def _noop(_: str) -> None:
    return None


async def run_bash_tool(lab: Lab, command: str, sandbox: Sandbox | None) -> tuple[int, str]:
    """The `bash` tool's execution of `command` in the lab (its cwd and root the project), with
    the user refusing to run a stopped command outside the sandbox."""
    ctx = ToolContext(
        session_id="lab",
        call_id="lab-call",
        cwd=lab.project,
        roots=(lab.project,),
        files=LocalFiles(),
        processes=LocalProcesses(),
        interaction=DenyingInteraction(),
        scope=ScopeContract(),
        reads=ReadTracker(),
        progress=_noop,
        terminal=_noop,
        sandbox=sandbox,
    )
    with anyio.fail_after(RUN_SECONDS):
        result = await bash_tool.execute(BashInput(command=command, timeout=RUN_SECONDS), ctx)
    text = "\n".join(part.text for part in result.content if isinstance(part, TextPart))
    raw = cast(Mapping[str, Any], result.raw_output or {})
    code = raw.get("exit_code")
    return (code if isinstance(code, int) else -1), text


def run_bash(lab: Lab, row: Row, command: str, guarded: bool) -> tuple[int, str]:
    async def run() -> tuple[int, str]:
        sandbox = await open_lab_sandbox(lab, row) if guarded else None
        try:
            return await run_bash_tool(lab, command, sandbox)
        finally:
            if sandbox is not None:
                sandbox.close()

    return anyio.run(run)


# ------------------------------------------------------------------------ an editor terminal

_PARENT = '"$@"; exit $?'
"""The launching process stays the command's parent (`sh` does not exec a command followed by
another)."""


def run_terminal(lab: Lab, row: Row, command: str, guarded: bool) -> tuple[int, str]:
    async def run() -> tuple[int, str]:
        argv = ["bash", "-c", command]
        if not guarded:
            return await _under_parent(lab, [*scrubbing_prefix(), *argv])
        sandbox = await open_lab_sandbox(lab, row)
        try:
            async with sandbox.launch(argv, cwd=lab.project, scrub_env=True) as line:
                code, output = await _under_parent(lab, list(line))
            why = sandbox.stopped(output, code)
        finally:
            sandbox.close()
        return code, output if why is None else f"{output}\n{STOPPED}: {why}"

    return anyio.run(run)


async def _under_parent(lab: Lab, line: list[str]) -> tuple[int, str]:
    with anyio.fail_after(RUN_SECONDS):
        done = await anyio.run_process(
            ["sh", "-c", _PARENT, "earshot", *line],
            cwd=lab.project,
            env=lab.process_env() | PROVIDER_KEYS,
            check=False,
        )
    output = (done.stdout + done.stderr).decode("utf-8", errors="replace")
    return done.returncode, output


EXECUTORS[("Bash", Defence.SANDBOX)] = run_bash
EXECUTORS[("Bash", Defence.CONFINED)] = run_bash
EXECUTORS[("Terminal", Defence.SANDBOX)] = run_terminal
