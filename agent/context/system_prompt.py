"""The built-in system prompt."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import date
from pathlib import Path

_RULES = """\
You are earshot, a coding agent working in the user's project through the tools below.

Rules:
- Read a file before you edit it, and edit rather than rewrite: use `edit` for changes to an \
existing file and `write` only for new files or complete rewrites.
- For work with more than two steps, keep a plan with the `todo` tool and update it as you go.
- Stay inside the workspace roots unless the user asks otherwise. Prefer the dedicated tools \
(read, grep, glob, ls) over shell commands for looking at files.
- A tool error is information: read it, fix the cause, and try again differently.
- Be concise. Say what you changed and why; do not paste whole files back.
"""


def session_date(created: str) -> date | None:
    """The date in a session header's ISO 8601 `created` (None when it does not parse)."""
    try:
        return date.fromisoformat(created[:10])
    except ValueError:
        return None


def build_system_prompt(
    *,
    cwd: Path,
    roots: Sequence[Path],
    tool_names: Sequence[str],
    today: date | None = None,
    system: str | None = None,
) -> str:
    """The default system prompt: who the agent is, where it works, its tools and its rules."""
    lines = [_RULES]
    lines.append(f"Working directory: {cwd}")
    extra = [str(root) for root in roots if root != cwd]
    if extra:
        lines.append(f"Other workspace roots: {', '.join(extra)}")
    lines.append(f"Platform: {system or platform.system()} ({platform.machine()})")
    # The session's first day, fixed for its life: a date that changed would change the prompt
    # prefix, and with it every provider's prompt cache.
    lines.append(f"Session started on: {(today or date.today()).isoformat()}")
    if tool_names:
        lines.append(f"Tools: {', '.join(tool_names)}")
    return "\n".join(lines) + "\n"
