"""`todo`: the model's todo list for the task, shown to the user as it progresses."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import ToolUi
from agent.events import TodoItem
from agent.tools.base import ToolContext, ToolOutput, define_tool
from agent.tools.results import capped


class TodoInputItem(BaseModel):
    model_config = ConfigDict(defer_build=True)

    content: str = Field(description="The step, as a short imperative sentence.")
    status: Literal["pending", "in_progress", "completed"] = Field(
        default="pending", description="Where the step stands."
    )
    priority: Literal["high", "medium", "low"] = Field(
        default="medium", description="How important the step is."
    )


class TodoInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    todos: list[TodoInputItem] = Field(
        description="The COMPLETE plan, every step in order (it replaces the previous one)."
    )


DESCRIPTION = """Create or update your plan for the current task, shown to the user as a live \
checklist.

- Use it for work with several steps (three or more), or when the user lists several things.
- Send the complete list every time; it replaces the previous one.
- Keep exactly one step `in_progress` while working; mark a step `completed` as soon as it is \
done, not in batches at the end.
- Skip it for a single quick action or a question you can answer directly."""


def _ui(params: TodoInput, ctx: ToolContext) -> ToolUi:
    return ToolUi(title="Update plan", kind="think")


async def _execute(params: TodoInput, ctx: ToolContext) -> ToolOutput:
    entries = tuple(
        TodoItem(content=item.content.strip(), status=item.status, priority=item.priority)
        for item in params.todos
    )
    sink = ctx.services.todos
    if sink is not None:
        await sink(entries)
    counts = dict.fromkeys(("completed", "in_progress", "pending"), 0)
    for entry in entries:
        counts[entry.status] += 1
    marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
    listing = "\n".join(f"{marks[entry.status]} {entry.content}" for entry in entries)
    summary = (
        f"Plan updated: {counts['completed']} completed, {counts['in_progress']} in progress, "
        f"{counts['pending']} pending."
    )
    if not entries:
        summary = "Plan cleared."
    return ToolOutput.text(summary + ("\n" + listing if listing else ""))


todo_tool = define_tool(
    name="todo",
    description=DESCRIPTION,
    input_model=TodoInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=True,
)
