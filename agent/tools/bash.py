"""`bash`: run a shell command in the working directory."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import (
    PermissionOption,
    PermissionPrompt,
    ProcessResult,
    ToolUi,
    command_title,
)
from agent.sandbox import Sandbox, SandboxRefused
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import MAX_RESULT_CHARS, capped
from providers.types import JsonValue

DEFAULT_TIMEOUT_SECONDS = 120.0
MAX_TIMEOUT_SECONDS = 600.0
OUTPUT_LIMIT_BYTES = MAX_RESULT_CHARS - 1000
"""The command's output kept (its tail); leaves room for the status lines."""


class BashInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    command: str = Field(description="The bash command to run.")
    timeout: float = Field(
        default=DEFAULT_TIMEOUT_SECONDS,
        gt=0,
        le=MAX_TIMEOUT_SECONDS,
        description=f"Seconds before the command is killed (default {DEFAULT_TIMEOUT_SECONDS:g}, "
        f"at most {MAX_TIMEOUT_SECONDS:g}).",
    )
    description: str | None = Field(
        default=None,
        description="What the command does in 5-10 words, shown to the user "
        "(e.g. 'Run the unit tests').",
    )
    background: bool = Field(
        default=False,
        description="Start the command and return at once with a handle (a dev server, a test "
        "watcher); read its output with bash_output, stop it with bash_kill. `timeout` does "
        "not apply.",
    )


DESCRIPTION = f"""Run a bash command (`bash -c`) in the working directory and return its output.

- Each call starts a fresh shell in the working directory: `cd` and variables do not carry over \
to the next call; chain with `&&` instead.
- stdin is empty: commands must not wait for input (use non-interactive flags such as `-y`, \
`--no-edit`, `git --no-pager`).
- stdout and stderr are merged; long output keeps its last {OUTPUT_LIMIT_BYTES} bytes.
- The command is killed after `timeout` seconds (default {DEFAULT_TIMEOUT_SECONDS:g}, max \
{MAX_TIMEOUT_SECONDS:g}), and any background processes it started are ended when it finishes.
- A non-zero exit code comes back as an error together with the output.
- The environment has no model-provider API keys or tokens (`OPENAI_API_KEY`, \
`ANTHROPIC_API_KEY`, ...): earshot removes them; do not try to find them.
- Commands usually run in a sandbox: they may write only inside the workspace and the temp dir, \
and never to `.git/` or `.earshot/` (so `git add`/`git commit` are stopped too). When the \
sandbox stops a command, the result says so and the user is asked whether to run it outside \
the sandbox; never try to get around the sandbox another way.
- `background: true` starts a long-running command (a dev server, a watcher) and returns a \
handle at once; `bash_output` reads its new output, `bash_kill` stops it. Background commands \
end when the session closes.
- Prefer the read, grep, glob, ls and edit tools over cat, grep, find, ls and sed: they are \
faster and their results are easier to use."""


def _permission(params: BashInput, ctx: ToolContext) -> PermissionRequest:
    return PermissionRequest(
        rule_tool="Bash", description=f"Run `{params.command}`", command=params.command
    )


def _ui(params: BashInput, ctx: ToolContext) -> ToolUi:
    # The exact command, never a summary: clients show the title, and the user approves it.
    return ToolUi(title=command_title(params.command, params.description), kind="execute")


RUN_OUTSIDE = "run_outside_sandbox"
KEEP_FAILURE = "keep_sandbox_failure"


async def _execute(params: BashInput, ctx: ToolContext) -> ToolOutput:
    if not params.command.strip():
        raise ToolError("The command is empty.")
    sandbox = ctx.sandbox if ctx.sandbox is not None and ctx.sandbox.active else None
    if params.background:
        from agent.tools.background_tools import start_background

        return await start_background(params.command, ctx, None if ctx.unsandboxed else sandbox)
    if sandbox is None or ctx.unsandboxed:
        result = await _run(params, ctx, None)
        return _output(result, params.timeout, sandbox="outside" if sandbox else None)
    try:
        result = await _run(params, ctx, sandbox)
        why = sandbox.stopped(result.output, result.exit_code)
    except SandboxRefused as refusal:
        result, why = None, f"it cannot confine this command: {refusal}"
    if why is None:
        assert result is not None
        return _output(result, params.timeout, sandbox="confined")
    first = format_result(result, params.timeout) if result else "The command did not run."
    stopped = f"The sandbox stopped this command: {why}."
    if not await _approved_outside(params, ctx, why):
        return ToolOutput.text(
            f"{first}\n\n{stopped} The user did not approve running it outside the sandbox. "
            "Do not try to get around the sandbox; choose another approach or ask the user.",
            is_error=True,
            raw_output=_raw(result, sandbox="stopped"),
        )
    again = await _run(params, ctx, None)
    return ToolOutput.text(
        f"{first}\n\n{stopped} The user approved running it again outside the sandbox, "
        f"which gave:\n{format_result(again, params.timeout)}",
        is_error=again.timed_out or again.exit_code != 0,
        raw_output=_raw(again, sandbox="outside"),
    )


async def _approved_outside(params: BashInput, ctx: ToolContext, why: str) -> bool:
    """Ask whether to run the call again outside the sandbox: this call only, never "always"
    (a headless front end cannot ask, and its refusal leaves the failure standing)."""
    prompt = PermissionPrompt(
        call_id=ctx.call_id,
        tool_name="bash",
        ui=ToolUi(
            title=command_title(params.command, "stopped by the sandbox: run it outside?"),
            kind="execute",
        ),
        raw_input={"command": params.command},
        reason=f"the sandbox stopped this command: {why}",
        options=(
            PermissionOption(
                id=RUN_OUTSIDE,
                label="Run it again OUTSIDE the sandbox, unconfined (this call only)",
                kind="allow_once",
                unsandboxed=True,
            ),
            PermissionOption(
                id=KEEP_FAILURE, label="Don't: keep it in the sandbox", kind="reject_once"
            ),
        ),
        command=params.command,
    )
    answer = await ctx.interaction.request_permission(prompt)
    return answer.option_id == RUN_OUTSIDE


def _output(result: ProcessResult, timeout: float, *, sandbox: str | None) -> ToolOutput:
    return ToolOutput.text(
        format_result(result, timeout),
        is_error=result.timed_out or result.exit_code != 0,
        raw_output=_raw(result, sandbox=sandbox),
    )


def _raw(result: ProcessResult | None, *, sandbox: str | None) -> dict[str, JsonValue]:
    raw: dict[str, JsonValue] = {}
    if result is not None:
        raw = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "signal": result.signal,
            "truncated": result.truncated,
            "terminal_id": result.terminal_id,
        }
    if sandbox is not None:
        raw["sandbox"] = sandbox
    return raw


async def _run(params: BashInput, ctx: ToolContext, sandbox: Sandbox | None) -> ProcessResult:
    try:
        return await ctx.processes.run(
            params.command,
            cwd=ctx.cwd,
            timeout=params.timeout,
            output_limit=OUTPUT_LIMIT_BYTES,
            on_output=ctx.progress,
            on_terminal=ctx.terminal,
            confine=sandbox,
        )
    except FileNotFoundError as error:
        if error.filename is not None and str(error.filename) == str(ctx.cwd):
            raise ToolError(f"The working directory {ctx.cwd} no longer exists.") from error
        raise ToolError(
            f"Cannot run the command: {error.strerror or error} ({error.filename}). bash must be "
            "installed (on Windows: Git Bash, https://git-scm.com/download/win)."
        ) from error


def format_result(result: ProcessResult, timeout: float) -> str:
    parts: list[str] = []
    if result.timed_out:
        parts.append(
            f"Command timed out after {timeout:g}s and was killed. Output so far:"
            if result.output
            else f"Command timed out after {timeout:g}s and was killed (no output)."
        )
    elif result.exit_code is None:
        parts.append(f"Command was killed by {result.signal or 'a signal'}.")
    elif result.exit_code != 0:
        parts.append(f"Command failed with exit code {result.exit_code}.")
    if result.truncated:
        parts.append(f"[Output truncated: showing only the last {OUTPUT_LIMIT_BYTES} bytes.]")
    output = result.output.rstrip("\n")
    if output:
        parts.append(output)
    elif not result.timed_out:
        parts.append("(no output)")
    return "\n".join(parts)


bash_tool = define_tool(
    name="bash",
    description=DESCRIPTION,
    input_model=BashInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=False,
    permission=_permission,
)
