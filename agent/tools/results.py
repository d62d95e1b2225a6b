"""What every tool result goes through: the size cap, and short forms for titles and paths."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from agent.tools.base import ToolContext, ToolOutput
from providers.types import TextPart

MAX_RESULT_CHARS = 30_000
"""No tool result enters history longer than this; the cut is stated in the result."""
InputT = TypeVar("InputT")


def cap_text(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """`text` cut to `limit` characters (keeping the start), saying how much was cut."""
    if len(text) <= limit:
        return text
    omitted = len(text) - limit
    return (
        text[:limit]
        + f"\n\n[Result truncated: {omitted} more characters omitted (results are capped at "
        f"{limit} characters). Narrow the request to see the rest.]"
    )


def capped(
    execute: Callable[[InputT, ToolContext], Awaitable[ToolOutput]],
) -> Callable[[InputT, ToolContext], Awaitable[ToolOutput]]:
    """Wrap a tool's `execute` so every text part of its result is capped."""

    async def run(params: InputT, ctx: ToolContext) -> ToolOutput:
        output = await execute(params, ctx)
        if all(
            not isinstance(part, TextPart) or len(part.text) <= MAX_RESULT_CHARS
            for part in output.content
        ):
            return output
        content = [
            TextPart(text=cap_text(part.text)) if isinstance(part, TextPart) else part
            for part in output.content
        ]
        return ToolOutput(
            content=content, is_error=output.is_error, ui=output.ui, raw_output=output.raw_output
        )

    return run


def display_path(path: Path, ctx: ToolContext) -> str:
    """`path` relative to the cwd when inside it (shorter titles and results), else absolute."""
    if path == ctx.cwd:
        return "."
    if ctx.cwd in path.parents:
        return str(path.relative_to(ctx.cwd))
    return str(path)


def short(text: str, limit: int = 80) -> str:
    """One line of at most `limit` characters, for titles."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"
