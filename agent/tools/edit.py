"""`edit`: replace an exact string in a file.

A find string matching more than once is refused rather than applied to the first occurrence:
the model cannot see which occurrence it hit, and picking one is how an edit lands in the wrong
function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Diff, Location, ToolUi
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, display_path
from agent.tools.text_files import (
    preview_text,
    read_text,
    require_fresh_read,
    text_hash,
    unified_diff,
    write_text,
)


class EditInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(
        description="The file to edit: absolute, or relative to the working directory."
    )
    old_string: str = Field(
        description="The exact text to replace, including whitespace and indentation, without "
        "the line-number prefix `read` shows. It must occur exactly once unless `replace_all` "
        "is set: include enough surrounding lines to make it unique."
    )
    new_string: str = Field(
        description="The text to put in its place (must differ from old_string)."
    )
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence (e.g. renaming a variable) instead of exactly one.",
    )


DESCRIPTION = """Replace an exact string in a file.

- Read the file with `read` first this session; the edit is refused if the file changed since.
- `old_string` must match the file exactly (whitespace and indentation included) and occur \
exactly once; add surrounding context to make it unique, or set `replace_all` to change every \
occurrence.
- Do not include the line-number prefix from `read` output in either string.
- To create a file or rewrite one entirely, use `write`."""

_LINE_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Applied:
    new_text: str
    count: int
    line: int
    """1-based line of the first replacement."""


def _apply(text: str, params: EditInput, shown: str) -> _Applied:
    """Raises: ToolError explaining why the edit cannot apply."""
    old, new = params.old_string, params.new_string
    if not old:
        raise ToolError("old_string is empty. To create a file or replace all of it, use `write`.")
    if old == new:
        raise ToolError("old_string and new_string are identical; there is nothing to change.")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        # The file uses CRLF line endings; the model writes LF.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        raise ToolError(_not_found_message(text, params.old_string, shown))
    if count > 1 and not params.replace_all:
        lines = _match_lines(text, old)
        listed = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
        raise ToolError(
            f"old_string occurs {count} times in {shown} (at lines {listed}). Include more "
            "surrounding lines so it matches exactly one place, or set replace_all to change "
            "every occurrence."
        )
    line = text.count("\n", 0, text.index(old)) + 1
    new_text = text.replace(old, new) if params.replace_all else text.replace(old, new, 1)
    return _Applied(new_text=new_text, count=count if params.replace_all else 1, line=line)


def _match_lines(text: str, needle: str) -> list[int]:
    lines: list[int] = []
    start = text.find(needle)
    while start != -1:
        lines.append(text.count("\n", 0, start) + 1)
        start = text.find(needle, start + len(needle))
    return lines


def _not_found_message(text: str, old: str, shown: str) -> str:
    message = f"old_string was not found in {shown}."
    if _LINE_PREFIX.search(old) and text.count(_LINE_PREFIX.sub("", old)) > 0:
        return (
            message + " It seems to include the line-number prefixes from `read` output; "
            "remove them."
        )
    stripped = old.strip()
    if stripped and stripped in text:
        return (
            message
            + " It matches when leading/trailing whitespace is ignored: copy the exact whitespace."
        )
    squashed_old = " ".join(old.split())
    if squashed_old and squashed_old in " ".join(text.split()):
        return (
            message + " The same words occur with different whitespace or indentation: copy the "
            "text exactly as the file has it (read it again if unsure)."
        )
    return message + " Read the file again and copy the exact text, including whitespace."


def _preview(params: EditInput, ctx: ToolContext) -> tuple[Path, str | None, _Applied | None]:
    path = ctx.resolve(params.path)
    old = preview_text(ctx, path)
    if old is None:
        return path, None, None
    try:
        return path, old, _apply(old, params, display_path(path, ctx))
    except ToolError:
        return path, old, None


def _permission(params: EditInput, ctx: ToolContext) -> PermissionRequest:
    path, old, applied = _preview(params, ctx)
    diffs = (
        ()
        if old is None or applied is None
        else (Diff(path=str(path), old_text=old, new_text=applied.new_text),)
    )
    return PermissionRequest(
        rule_tool="Edit",
        description=f"Edit {display_path(path, ctx)}",
        paths=(path,),
        is_file_edit=True,
        diffs=diffs,
    )


def _ui(params: EditInput, ctx: ToolContext) -> ToolUi:
    path, old, applied = _preview(params, ctx)
    if old is None or applied is None:
        return ToolUi(
            title=f"Edit {display_path(path, ctx)}",
            kind="edit",
            locations=(Location(path=str(path)),),
        )
    return ToolUi(
        title=f"Edit {display_path(path, ctx)}",
        kind="edit",
        locations=(Location(path=str(path), line=applied.line),),
        diffs=(Diff(path=str(path), old_text=old, new_text=applied.new_text),),
    )


async def _execute(params: EditInput, ctx: ToolContext) -> ToolOutput:
    target = ctx.decided_path(params.path)
    path = target.path
    shown = display_path(path, ctx)
    if target.file is None and path not in ctx.reads.seen:
        raise ToolError(f"File not found: {path}. To create a file, use `write`.")
    text = await read_text(ctx, target)
    require_fresh_read(ctx, path, text, action="edit")
    applied = _apply(text, params, shown)
    await write_text(ctx, path, applied.new_text)
    ctx.reads.seen[path] = text_hash(applied.new_text)
    diff = unified_diff(text, applied.new_text, shown)
    replaced = "1 replacement" if applied.count == 1 else f"{applied.count} replacements"
    ui = ToolUi(
        title=f"Edit {shown}",
        kind="edit",
        locations=(Location(path=str(path), line=applied.line),),
        diffs=(Diff(path=str(path), old_text=text, new_text=applied.new_text),),
    )
    return ToolOutput.text(f"Edited {shown} ({replaced}).\n\n{diff}", ui=ui)


edit_tool = define_tool(
    name="edit",
    description=DESCRIPTION,
    input_model=EditInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=False,
    permission=_permission,
)
