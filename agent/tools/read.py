"""`read`: a text file with line numbers (a range of it for long files), or an image."""

from __future__ import annotations

import base64
from functools import partial
from pathlib import Path

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.files import Decided, PathChanged, read_exact
from agent.tools.base import PermissionRequest, ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import MAX_RESULT_CHARS, capped, display_path
from agent.tools.text_files import changed, read_text, text_hash
from providers.types import ImagePart, TextPart

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_IMAGE_BYTES = 5_000_000
"""Vendors reject larger images (Anthropic's limit is 5 MB)."""
_TEXT_BUDGET = MAX_RESULT_CHARS - 500
"""Room left for the trailing note, so a full page is never cut by the result cap."""

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


class ReadInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(
        description="The file to read: absolute, or relative to the working directory."
    )
    offset: int | None = Field(
        default=None,
        ge=1,
        description="1-based line number to start reading from. Only for files too long to "
        "read at once.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"How many lines to read (at most {MAX_LINES}). Only for long files.",
    )


DESCRIPTION = f"""Read a file from the local filesystem.

- Text comes back numbered like `cat -n` (line number, tab, line). The numbers are not part of the \
file: never include them in edit strings.
- By default up to {MAX_LINES} lines from the start; pass `offset` and `limit` to read other parts \
of long files. Lines longer than {MAX_LINE_CHARS} characters are cut.
- Images (PNG, JPEG, GIF, WebP) are returned as images you can see.
- Binary files cannot be read; directories cannot be read (use `ls`).
- Read a file before you edit or overwrite it. Reading several files at once in parallel is fine."""


def _permission(params: ReadInput, ctx: ToolContext) -> PermissionRequest:
    path = ctx.resolve(params.path)
    return PermissionRequest(
        rule_tool="Read", description=f"Read {display_path(path, ctx)}", paths=(path,)
    )


def _ui(params: ReadInput, ctx: ToolContext) -> ToolUi:
    path = ctx.resolve(params.path)
    title = f"Read {display_path(path, ctx)}"
    if params.offset is not None or params.limit is not None:
        start = params.offset or 1
        end = f"{start + params.limit - 1}" if params.limit else ""
        title += f" (lines {start}-{end})"
    return ToolUi(
        title=title, kind="read", locations=(Location(path=str(path), line=params.offset or 1),)
    )


async def _execute(params: ReadInput, ctx: ToolContext) -> ToolOutput:
    target = ctx.decided_path(params.path)
    path = target.path
    media_type = IMAGE_TYPES.get(path.suffix.lower())
    if media_type is not None:
        return await _read_image(target, ctx)
    text = await read_text(ctx, target)
    ctx.reads.seen[path] = text_hash(text)
    return ToolOutput.text(_numbered(text, path, offset=params.offset or 1, limit=params.limit))


def _numbered(text: str, path: Path, *, offset: int, limit: int | None) -> str:
    if not text:
        return f"({path} is empty)"
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    total = len(lines)
    if offset > total:
        return (
            f"{path} has only {total} line{'s' if total != 1 else ''}; offset {offset} is past "
            "the end."
        )
    wanted = min(limit or MAX_LINES, MAX_LINES)
    out: list[str] = []
    used = 0
    cut_lines = 0
    last = offset - 1
    for number in range(offset, min(offset - 1 + wanted, total) + 1):
        line = lines[number - 1].removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"\u2026 [line cut: {len(line)} characters]"
            cut_lines += 1
        rendered = f"{number:>6}\t{line}"
        if out and used + len(rendered) + 1 > _TEXT_BUDGET:
            break
        out.append(rendered)
        used += len(rendered) + 1
        last = number
    notes: list[str] = []
    if last < total:
        notes.append(
            f"[Showing lines {offset}-{last} of {total}. Use offset={last + 1} to read more.]"
        )
    if cut_lines:
        notes.append(
            f"[{cut_lines} line{'s' if cut_lines != 1 else ''} longer than {MAX_LINE_CHARS} "
            "characters were cut; use bash (e.g. `cut -c`) or grep to see them whole.]"
        )
    return "\n".join(out + ([""] if notes else []) + notes)


async def _read_image(target: Decided, ctx: ToolContext) -> ToolOutput:
    path = target.path
    read = partial(read_exact, path, limit=MAX_IMAGE_BYTES, expected=target.file)
    try:
        data, more, _ = await anyio.to_thread.run_sync(read, abandon_on_cancel=True)
    except FileNotFoundError as error:
        raise ToolError(f"File not found: {path}") from error
    except IsADirectoryError as error:
        raise ToolError(f"{path} is a directory. Use the ls tool to list it.") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied reading {path}") from error
    except PathChanged as error:
        raise changed(path, error, "read") from error
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror or error}") from error
    if more:
        raise ToolError(
            f"{path} is larger than {MAX_IMAGE_BYTES} bytes; images that large cannot be sent "
            "to the model."
        )
    media_type = sniff_image(data)
    if media_type is None:
        raise ToolError(f"{path} does not contain a PNG, JPEG, GIF or WebP image.")
    image = ImagePart(media_type=media_type, data=base64.b64encode(data).decode("ascii"))
    note = TextPart(text=f"Image {display_path(path, ctx)} ({media_type}, {len(data)} bytes)")
    return ToolOutput(content=[note, image])


def sniff_image(data: bytes) -> str | None:
    """The image type from its magic bytes (the extension may lie)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


read_tool = define_tool(
    name="read",
    description=DESCRIPTION,
    input_model=ReadInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=True,
    permission=_permission,
)
