"""`write`: create a file or replace a whole file."""

from __future__ import annotations

import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Diff, Location, ToolUi
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path
from agent.tools.text_files import (
    preview_text,
    read_text_if_there,
    require_fresh_read,
    text_hash,
    unified_diff,
    write_text,
)


class WriteInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(
        description="The file to write: absolute, or relative to the working directory."
    )
    content: str = Field(description="The complete new content of the file.")


DESCRIPTION = """Write a whole file: create it (with missing parent directories) or replace it.

- To change part of an existing file, prefer `edit`: it sends only the change.
- An existing file must have been read with `read` this session, and not changed since, before \
you overwrite it.
- Do not create documentation or README files unless asked."""


def _proposed_diff(path: Path, params: WriteInput, ctx: ToolContext) -> Diff:
    old = preview_text(ctx, path) if path.is_file() else None
    return Diff(path=str(path), old_text=old, new_text=params.content)


def _permission(params: WriteInput, ctx: ToolContext) -> PermissionRequest:
    path = ctx.resolve(params.path)
    verb = "Overwrite" if path.exists() else "Create"
    return PermissionRequest(
        rule_tool="Write",
        description=f"{verb} {display_path(path, ctx)}",
        paths=(path,),
        is_file_edit=True,
        diffs=(_proposed_diff(path, params, ctx),),
    )


def _ui(params: WriteInput, ctx: ToolContext) -> ToolUi:
    path = ctx.resolve(params.path)
    return ToolUi(
        title=f"Write {display_path(path, ctx)}",
        kind="edit",
        locations=(Location(path=str(path), line=1),),
        diffs=(_proposed_diff(path, params, ctx),),
    )


async def _execute(params: WriteInput, ctx: ToolContext) -> ToolOutput:
    target = ctx.decided_path(params.path)
    path = target.path
    if target.file is not None and stat.S_ISDIR(target.file.kind):
        raise ToolError(f"{path} is a directory; give the path of a file.")
    old = await read_text_if_there(ctx, target)
    if old is not None:
        require_fresh_read(ctx, path, old, action="overwrite")
    await write_text(ctx, path, params.content)
    ctx.reads.seen[path] = text_hash(params.content)
    shown = display_path(path, ctx)
    lines = params.content.count("\n") + (0 if params.content.endswith("\n") else 1)
    lines = lines if params.content else 0
    ui = ToolUi(
        title=f"Write {shown}",
        kind="edit",
        locations=(Location(path=str(path), line=1),),
        diffs=(Diff(path=str(path), old_text=old, new_text=params.content),),
    )
    if old is None:
        return ToolOutput.text(f"Created {shown} ({lines} lines).", ui=ui)
    if old == params.content:
        return ToolOutput.text(f"{shown} already had exactly this content; nothing changed.", ui=ui)
    diff = unified_diff(old, params.content, shown)
    return ToolOutput.text(f"Overwrote {shown} ({lines} lines).\n\n{diff}", ui=ui)


write_tool = define_tool(
    name="write",
    description=DESCRIPTION,
    input_model=WriteInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=False,
    permission=_permission,
)
