"""What every tool result goes through: the size cap; short forms for titles and paths; a call's
arguments as the user may see them (bounded, secrets masked)."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar, cast

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


# ------------------------------------------------------------------ arguments, shown to the user

_SECRET_KEY = re.compile(
    r"(?i)(pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|auth|credential|private[_-]?key"
    r"|cookie|session[_-]?id|signature)"
)
"""Argument names whose values are never shown (`x_api_key`, `githubToken`, `password`...)."""
_SHOWN_STRING = 300
"""Characters of one string argument shown in a preview; the rest is counted, not shown."""
_SHOWN_ITEMS = 20
"""Members of one object or array shown in a preview."""


def shown_arguments(arguments: object, *, depth: int = 4) -> object:
    """A call's arguments as the user may see them: values under a secret-looking name masked,
    strings with anything shaped like a key masked (`agent.tool_env.scrub`) and cut, objects
    and arrays cut to their first members, nesting cut at `depth`. JSON-valued."""
    from agent.tool_env import scrub

    if isinstance(arguments, str):
        text = scrub(arguments)
        if len(text) <= _SHOWN_STRING:
            return text
        return f"{text[:_SHOWN_STRING]}… ({len(text) - _SHOWN_STRING} more characters)"
    if isinstance(arguments, bool | int | float) or arguments is None:
        return arguments
    if depth <= 0:
        return "…"
    if isinstance(arguments, dict):
        items = list(cast("dict[object, object]", arguments).items())
        shown: dict[str, object] = {}
        for key, value in items[:_SHOWN_ITEMS]:
            name = str(key)
            shown[name] = (
                "[redacted]"
                if _SECRET_KEY.search(name)
                else shown_arguments(value, depth=depth - 1)
            )
        if len(items) > _SHOWN_ITEMS:
            shown["…"] = f"{len(items) - _SHOWN_ITEMS} more"
        return shown
    if isinstance(arguments, list | tuple):
        values = list(cast("list[object]", arguments))
        listed = [shown_arguments(value, depth=depth - 1) for value in values[:_SHOWN_ITEMS]]
        if len(values) > _SHOWN_ITEMS:
            listed.append(f"… {len(values) - _SHOWN_ITEMS} more")
        return listed
    return shown_arguments(str(arguments), depth=depth)


def argument_summary(arguments: object, limit: int = 80) -> str:
    """One line naming a call's arguments and their (shown) values, at most `limit` characters:
    `title="Fix it", labels=["bug"]`."""
    shown = shown_arguments(arguments)
    if isinstance(shown, dict):
        members = cast("dict[str, object]", shown)
        parts = [
            f"{name}={json.dumps(value, ensure_ascii=False)}" for name, value in members.items()
        ]
        return short(", ".join(parts), limit)
    return short(json.dumps(shown, ensure_ascii=False), limit) if shown is not None else ""
