"""The `Read` checks of a tool's session (`ctx.services`, `agent.tools.base.ToolServices`) as the
search tools apply them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.tools.base import ToolContext


def visible_filter(ctx: ToolContext) -> Callable[[Path], bool]:
    """For search results: False for a path a `Read` deny rule covers, which a result must not
    show (not its content, not that it exists). Remembers its answers for one call."""
    denied = ctx.services.read_denied
    answers: dict[Path, bool] = {}

    def visible(path: Path) -> bool:
        answer = answers.get(path)
        if answer is None:
            answer = answers[path] = not denied(path)
        return answer

    return visible


def deny_glob_args(ctx: ToolContext) -> list[str]:
    """ripgrep arguments excluding the denied name globs."""
    return [f"--glob=!{glob}" for glob in ctx.services.read_deny_globs()]
