"""`bash_output` and `bash_kill`, and the start of a background `bash` command
(`agent.local.background` runs them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import ToolUi
from agent.tools.base import ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, short
from providers.types import JsonValue

if TYPE_CHECKING:
    from agent.local import BackgroundJobs, JobOutput
    from agent.sandbox import Sandbox

MAX_WAIT_SECONDS = 60.0


def _jobs(ctx: ToolContext) -> BackgroundJobs:
    jobs = ctx.services.background
    if jobs is None:
        raise ToolError(
            "Background commands are not available here; run the command without `background`."
        )
    return jobs


async def start_background(command: str, ctx: ToolContext, sandbox: Sandbox | None) -> ToolOutput:
    """`bash` with `background: true`: start the command, return its handle at once."""
    from agent.local import TRACKS_DETACHED, UNTRACKED_NOTE
    from agent.sandbox import SandboxRefused

    jobs = _jobs(ctx)
    try:
        job = await jobs.start(command, confine=sandbox)
    except (RuntimeError, SandboxRefused) as error:
        raise ToolError(f"The background command was not started: {error}") from error
    except OSError as error:
        raise ToolError(f"Cannot start the command: {error.strerror or error}") from error
    terminal_id = job.running.terminal_id
    if terminal_id is not None:
        await ctx.terminal(terminal_id)
    where = " in the sandbox" if sandbox is not None else ""
    raw: dict[str, JsonValue] = {
        "handle": job.handle,
        "pid": job.running.pid,
        "terminal_id": terminal_id,
        "background": True,
    }
    if sandbox is not None:
        raw["sandbox"] = "confined"
    note = "" if TRACKS_DETACHED else f" {UNTRACKED_NOTE}"
    return ToolOutput.text(
        f"Started in the background{where} as `{job.handle}`. Read its output with "
        f'bash_output(handle="{job.handle}"); stop it with bash_kill(handle="{job.handle}").'
        + note,
        raw_output=raw,
    )


class OutputInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    handle: str = Field(description="The handle `bash` returned (e.g. `bg1`).")
    wait: float = Field(
        default=0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="Seconds to wait for new output when there is none yet (e.g. for a server "
        f"to start), at most {MAX_WAIT_SECONDS:g}.",
    )
    until_exit: bool = Field(
        default=False,
        description="With `wait`: wait for the command to end (e.g. a test run), not just for "
        "new output.",
    )


class KillInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    handle: str = Field(description="The handle `bash` returned (e.g. `bg1`).")


def _text(output: JobOutput, *, killed: bool = False) -> str:
    if output.running:
        status = "Still running."
    elif killed:
        status = "Stopped."
    elif output.signal is not None:
        status = f"Exited: killed by {output.signal}."
    else:
        status = f"Exited with code {output.exit_code}."
    parts = [status]
    if output.dropped:
        parts.append(f"[{output.dropped} earlier characters of new output left out]")
    body = output.text.rstrip("\n")
    parts.append(body if body else "(no new output)")
    return "\n".join(parts)


async def _output(params: OutputInput, ctx: ToolContext) -> ToolOutput:
    from agent.local import UnknownJob
    from agent.sandbox import Sandbox

    jobs = _jobs(ctx)
    try:
        output = await jobs.read(params.handle, wait=params.wait, until_exit=params.until_exit)
    except UnknownJob as error:
        raise ToolError(str(error)) from error
    text = _text(output)
    sandbox = jobs.get(params.handle).confine
    if not output.running and isinstance(sandbox, Sandbox):
        why = sandbox.stopped(output.text, output.exit_code)
        if why is not None:
            text += (
                f"\n\nThe sandbox stopped this command: {why}. To be asked whether it may run "
                "outside the sandbox, run it again without `background`; never try to get "
                "around the sandbox another way."
            )
    return ToolOutput.text(
        text, raw_output={"running": output.running, "exit_code": output.exit_code}
    )


async def _kill(params: KillInput, ctx: ToolContext) -> ToolOutput:
    from agent.local import UnknownJob

    try:
        output = await _jobs(ctx).kill(params.handle)
    except UnknownJob as error:
        raise ToolError(str(error)) from error
    return ToolOutput.text(_text(output, killed=True), raw_output={"running": False})


def _describe(params: OutputInput | KillInput, ctx: ToolContext, verb: str) -> ToolUi:
    jobs = ctx.services.background
    command = ""
    if jobs is not None:
        job = jobs.jobs.get(params.handle)
        command = f": {short(job.command, 60)}" if job is not None else ""
    return ToolUi(title=f"{verb} {params.handle}{command}", kind="execute")


bash_output_tool = define_tool(
    name="bash_output",
    description="Read the new output of a background command (started with `bash` and "
    "`background: true`) since the last read, and whether it still runs.",
    input_model=OutputInput,
    execute=capped(_output),
    ui=lambda params, ctx: _describe(params, ctx, "Output of"),
    read_only=True,
)

bash_kill_tool = define_tool(
    name="bash_kill",
    description="Stop a background command (its whole process group) and return its last output.",
    input_model=KillInput,
    execute=capped(_kill),
    ui=lambda params, ctx: _describe(params, ctx, "Stop"),
    # Stopping a command this session started (with the user's permission) changes nothing
    # the user has not approved: it never asks (deny rules still reach it as `BashKill`).
    read_only=True,
)
