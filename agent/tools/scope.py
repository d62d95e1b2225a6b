"""`declare_scope`: the model states up front which paths it will change.

The declaration lives in the session's shared `ScopeContract`; the permission gate asks before
changes outside it. Once declared, the scope can only be narrowed by the tool: a subagent shares
the object, and a declaration that widened it would be exactly the escape sharing prevents.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.tools.base import ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path


class ScopeInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    paths: list[str] = Field(
        min_length=1,
        description="Files and directories you will create, change or delete (a directory "
        "covers everything under it). Absolute or relative to the working directory.",
    )
    reason: str | None = Field(default=None, description="One sentence on why these paths.")


DESCRIPTION = """Declare which files and directories you are going to change, before changing \
them.

Changes outside the declared paths will need the user's approval. Declare the smallest set that \
covers the task. Once declared, a new declaration may only narrow the scope, never widen it."""


def _ui(params: ScopeInput, ctx: ToolContext) -> ToolUi:
    paths = [ctx.resolve(p) for p in params.paths]
    names = ", ".join(display_path(p, ctx) for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    return ToolUi(
        title=f"Declare scope: {names}",
        kind="think",
        locations=tuple(Location(path=str(p)) for p in paths),
    )


async def _execute(params: ScopeInput, ctx: ToolContext) -> ToolOutput:
    paths = list(dict.fromkeys(ctx.resolve(p) for p in params.paths))
    if ctx.scope.declared:
        outside = [p for p in paths if not ctx.scope.covers(p)]
        if outside:
            listed = ", ".join(str(p) for p in outside)
            current = ", ".join(str(p) for p in ctx.scope.declared)
            raise ToolError(
                f"The scope is already declared ({current}) and can only be narrowed; "
                f"{listed} lie outside it. Changing them will ask the user for approval."
            )
    ctx.scope.declared[:] = paths
    listed = "\n".join(f"- {p}" for p in paths)
    return ToolOutput.text(f"Scope declared; changes outside these paths need approval:\n{listed}")


scope_tool = define_tool(
    name="declare_scope",
    description=DESCRIPTION,
    input_model=ScopeInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=True,
)
