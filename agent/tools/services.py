"""What a tool finds in `ctx.services`: the session's hooks some built-in tools need, by key.

Absent keys mean "not available here" (a tool run outside a session): each tool says what it does
then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from agent.events import TodoItem
    from agent.files import FileId
    from agent.tools.base import PermissionRequest, ToolContext

SKILLS = "skills"
"""`ctx.services[SKILLS]`: the session's `agent.skills.SkillIndex` (or None)."""
TODOS = "todos"
"""`ctx.services[TODOS]`: a `TodoSink`, where the `todo` tool publishes the list."""
SUBAGENTS = "subagents"
"""`ctx.services[SUBAGENTS]`: `Subagents`, which runs the `task` tool's subagent."""
READ_DENIED = "read_denied"
"""`ctx.services[READ_DENIED]`: `ReadDenied`, whether reading a path is refused (a `Read` deny
rule, or a secret no rule names: the session's permission gate), optionally given the file the
caller holds there (a hard link is refused under any of its names). Without it nothing is
hidden."""
RECHECK_PERMISSION = "recheck_permission"
"""`ctx.services[RECHECK_PERMISSION]`: `async (PermissionRequest) -> bool`, the permission gate
applied to a follow-up request of the running call (a fetch's redirect to another host, a host
that resolved to a local address), asking the user if the policy says so. Set per call by the
executor; absent (a tool run outside a session), a tool must treat the follow-up as refused."""
BACKGROUND = "background"
"""`ctx.services[BACKGROUND]`: the session's `agent.local.background.BackgroundJobs` (`bash` with
`background: true`, `bash_output`, `bash_kill`). Without it background commands are refused."""
CODE_INDEX = "code_index"
"""`ctx.services[CODE_INDEX]`: the session's code index: an object whose `async ready()` gives
the `agent.codeindex.index.CodeIndex` (`agent.code.index_host.CodeIndexHost`), or the index."""
READ_DENY_GLOBS = "read_deny_globs"
"""`ctx.services[READ_DENY_GLOBS]`: `Callable[[], tuple[str, ...]]`, name globs ripgrep can skip
(`--glob=!<glob>`) before the results are filtered."""


def visible_filter(ctx: ToolContext) -> Callable[[Path], bool]:
    """For search results: False for a path a `Read` deny rule covers, which a result must not
    show (not its content, not that it exists). Remembers its answers for one call."""
    denied = read_denied_service(ctx)
    if denied is None:
        return lambda path: True
    answers: dict[Path, bool] = {}

    def visible(path: Path) -> bool:
        answer = answers.get(path)
        if answer is None:
            answer = answers[path] = not denied(path)
        return answer

    return visible


def read_denied_service(ctx: ToolContext) -> ReadDenied | None:
    """The session's `READ_DENIED` check, or None outside a session."""
    return cast("ReadDenied | None", ctx.services.get(READ_DENIED))


def deny_glob_args(ctx: ToolContext) -> list[str]:
    """ripgrep arguments excluding the denied name globs."""
    globs = cast("Callable[[], tuple[str, ...]] | None", ctx.services.get(READ_DENY_GLOBS))
    return [f"--glob=!{glob}" for glob in (globs() if globs is not None else ())]


TodoSink = Callable[[tuple["TodoItem", ...]], Awaitable[None]]
"""Publishes the complete todo list (the session records it and tells the front end)."""
Recheck = Callable[["PermissionRequest"], Awaitable[bool]]


class ReadDenied(Protocol):
    """`ctx.services[READ_DENIED]` (`agent.permissions.gate.PermissionGate.read_denied`)."""

    def __call__(self, path: Path, file: FileId | None = None) -> bool: ...


"""`ctx.services[RECHECK_PERMISSION]`."""


class Subagents(Protocol):
    async def run(self, *, call_id: str, prompt: str, tools: Sequence[str] | None = None) -> str:
        """Run a subagent on `prompt` (with the tools named, or the read-only default) and
        return its final text.

        Raises:
            agent.tools.base.ToolError: unknown tool names, or the subagent failed.
        """
        ...
