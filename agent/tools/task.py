"""`task`: hand a self-contained job to a subagent with a fresh context.

The tool only describes the call; the session's subagent runner (`agent.session.subagent`, found in
`ctx.services.subagents`) runs it: the same turn loop in a child session of its own (its own
file, linked from the parent), with the same model and a restricted tool set. Its final text is
the task's result.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import ToolUi
from agent.tools.base import ToolContext, ToolError, ToolOutput, define_tool


class TaskInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    description: str = Field(
        description="A short label for the task (3-6 words), shown to the user."
    )
    prompt: str = Field(
        description="The complete task. The subagent sees nothing of this conversation: say "
        "what to find or do, where to look, and what to report back."
    )
    tools: list[str] | None = Field(
        default=None,
        description="Tools the subagent may use; default: read, grep, glob, ls, fetch.",
    )


DESCRIPTION = """Hand a self-contained task to a subagent that works in its own fresh context \
and reports back.

- Use it for broad searches or investigations whose details you do not need in your own context \
("find every place that parses the config and summarise how").
- The subagent's final answer is this tool's result; the user does not see it directly.
- Several task calls in one message run in parallel.
- By default the subagent can only read (read, grep, glob, ls, fetch)."""


def _ui(params: TaskInput, ctx: ToolContext) -> ToolUi:
    return ToolUi(title=f"Task: {params.description}", kind="think")


async def _execute(params: TaskInput, ctx: ToolContext) -> ToolOutput:
    runner = ctx.services.subagents
    if runner is None:
        raise ToolError("Subagents are not available here.")
    text = await runner.run(call_id=ctx.call_id, prompt=params.prompt, tools=params.tools)
    return ToolOutput.text(text)


task_tool = define_tool(
    name="task",
    description=DESCRIPTION,
    input_model=TaskInput,
    execute=_execute,
    ui=_ui,
    read_only=True,
)
