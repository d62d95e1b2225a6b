"""`define_tool` and what a tool receives (`ToolContext`, with its session's `ToolServices`) and
returns.

A mutating tool cannot be constructed without a `permission` function: the gate sees only a
tool's `PermissionRequest`, so a tool that forgot to describe itself would skip the gate silently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from agent.backends import Diff, FileBackend, Interaction, ProcessBackend, ToolUi
from agent.files import Decided, FileId, decided_now
from providers.records import MutableRecord, Record
from providers.types import ImagePart, JsonValue, TextPart

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agent.codeindex import CodeIndex
    from agent.events import TodoItem
    from agent.local import BackgroundJobs
    from agent.sandbox import Sandbox

InputT = TypeVar("InputT", bound="BaseModel")


class PermissionRequest(Record):
    """What a call wants to do, in the terms permission rules are written in."""

    rule_tool: str
    """The name rules use: `Bash`, `Read`, `Edit`, `Write`, `Fetch`, `Task`, `Skill`,
    `mcp__server__tool`..."""
    description: str
    """Human readable: "Run `npm test`", "Edit src/app.py"."""
    paths: tuple[Path, ...] = ()
    """Absolute paths the call reads or changes (resolved by the gate before matching)."""
    command: str | None = None
    """The shell command, for command patterns."""
    domain: str | None = None
    """The host, for `Fetch(domain:...)`."""
    specifier: str | None = None
    """The subject for any other pattern (a skill name, a subagent type)."""
    is_file_edit: bool = False
    """accept-edits mode allows these without asking when inside the roots."""
    diffs: tuple[Diff, ...] = ()
    local_network: bool = False
    """The call reaches a loopback, private or link-local address (`agent.network`): a fetch
    whose host resolved to one. The policy asks before such a call in every mode but yolo."""
    mcp_server: str | None = None
    """For an MCP tool: the server's name as configured. `rule_tool` is then
    `mcp__<server>__<tool>` with both names as configured, and `mcp__...` rules are matched
    against these names exactly (`agent.permissions.rules`)."""
    files: tuple[FileId | None, ...] = ()
    """What the caller holds open at each of `paths` (from `fstat`), when it does: the policy
    decides on that file instead of looking at the path again (which file a hard link is)."""


class ToolOutput(Record):
    """What `execute` returns; becomes the call's `ToolResultPart`."""

    content: Sequence[TextPart | ImagePart]
    is_error: bool = False
    ui: ToolUi | None = None
    """A final UI update (e.g. the applied diff); None keeps the one from `ui()`."""
    raw_output: JsonValue = None

    @classmethod
    def text(
        cls,
        text: str,
        *,
        is_error: bool = False,
        ui: ToolUi | None = None,
        raw_output: JsonValue = None,
    ) -> ToolOutput:
        return cls(content=[TextPart(text=text)], is_error=is_error, ui=ui, raw_output=raw_output)

    @classmethod
    def error(cls, text: str) -> ToolOutput:
        return cls(content=[TextPart(text=text)], is_error=True)


class ToolError(Exception):
    """Raised by a tool for an expected failure; the loop turns it into an error result whose text
    is the message (the model reads it and can react)."""


class ScopeContract(MutableRecord, kw_only=False):
    """The paths the model declared it will change (`declare_scope`). One object per top-level
    session, shared (not copied) with its subagents, so a nested agent cannot escape it."""

    declared: list[Path] = field(default_factory=lambda: [])
    """Absolute paths or directories; empty means nothing declared yet (no scope check)."""

    def covers(self, path: Path) -> bool:
        if not self.declared:
            return True
        return any(path == root or root in path.parents for root in self.declared)


class ReadTracker(MutableRecord, kw_only=False):
    """Files read this session, with the content hash seen, so `edit` can refuse a file that was
    never read or changed since."""

    seen: dict[Path, str] = field(default_factory=lambda: {})


ProgressSink = Callable[[str], Awaitable[None]]
"""Appends text to the call's live output (streamed command output)."""
TerminalSink = Callable[[str], Awaitable[None]]
"""Announces an editor terminal id to embed in the call."""


# ---------------------------------------------------------------------------- services


class ReadDenied(Protocol):
    """Whether reading a path is refused (a `Read` deny rule, or a secret no rule names: the
    session's permission gate, `PermissionGate.read_denied`), optionally given the file the caller
    holds there (a hard link is refused under any of its names)."""

    def __call__(self, path: Path, file: FileId | None = None) -> bool: ...


class Subagents(Protocol):
    async def run(self, *, call_id: str, prompt: str, tools: Sequence[str] | None = None) -> str:
        """Run a subagent on `prompt` (with the tools named, or the read-only default) and
        return its final text.

        Raises:
            agent.tools.base.ToolError: unknown tool names, or the subagent failed.
        """
        ...


class IndexSource(Protocol):
    """The session's code index (`agent.code.index_host.CodeIndexHost`)."""

    async def ready(self) -> CodeIndex:
        """The index, brought up to date first as far as a tool call may wait."""
        ...


TodoSink = Callable[[tuple["TodoItem", ...]], Awaitable[None]]
"""Publishes the complete todo list (the session records it and tells the front end)."""
Recheck = Callable[["PermissionRequest"], Awaitable[bool]]
"""The permission gate applied to a follow-up request of the running call (a fetch's redirect to
another host, a host that resolved to a local address), asking the user if the policy says so:
True when it may go ahead."""


def every_read_denied(path: Path, file: FileId | None = None) -> bool:
    """The read check when none was given: every path is denied."""
    return True


def no_deny_globs() -> tuple[str, ...]:
    """No names for ripgrep to skip: only a pre-filter, `read_denied` still judges each path."""
    return ()


async def refuse_follow_up(request: PermissionRequest) -> bool:
    """The recheck when none was given: nothing beyond what the call was allowed."""
    return False


class ToolServices(Record):
    """What the session gives its tools (`Tooling.services`; the executor adds the per-call
    `recheck_permission`), typed.

    A security hook that was not given fails closed: without `read_denied` every path counts as
    denied (the search tools show nothing, no preview is read), without `recheck_permission`
    every follow-up request of a call is refused. A capability that was not given (`todos`,
    `subagents`, `background`, `code_index`) is None, and the tool says it is not available
    here. So a tool run outside a session, or a service forgotten where a session is wired,
    never shows more than a session would."""

    read_denied: ReadDenied = every_read_denied
    """The `Read` deny rules' and secrets' verdict on a path: `grep`, `glob`, `ls`,
    `search_code` leave denied paths out of results, `grep` refuses a hard-linked file any of
    whose names is denied, and no preview reads one."""
    read_deny_globs: Callable[[], tuple[str, ...]] = no_deny_globs
    """Name globs ripgrep can skip (`--glob=!<glob>`) before the results are filtered."""
    recheck_permission: Recheck = refuse_follow_up
    """Set per call by the executor (`agent.turn.execution`)."""
    todos: TodoSink | None = None
    """Where the `todo` tool publishes the list."""
    subagents: Subagents | None = None
    """What runs the `task` tool's subagent."""
    background: BackgroundJobs | None = None
    """The session's background commands (`bash` with `background: true`, `bash_output`,
    `bash_kill`)."""
    code_index: IndexSource | None = None
    """The session's code index (`repo_map`, `search_code`)."""


class ToolContext(MutableRecord):
    """What a running tool gets. Cancellation arrives as anyio cancellation of `execute`."""

    session_id: str
    call_id: str
    cwd: Path
    roots: tuple[Path, ...]
    """cwd first, then additional directories; all absolute and resolved."""
    files: FileBackend
    processes: ProcessBackend
    interaction: Interaction
    scope: ScopeContract
    reads: ReadTracker
    progress: ProgressSink
    terminal: TerminalSink
    services: ToolServices = field(default_factory=ToolServices)
    """What the session gives its tools (the `Read` checks, the plan sink for `todo`, the
    subagent runner for `task`...); a security hook not given fails closed."""
    sandbox: Sandbox | None = None
    """The session's command sandbox (`agent.sandbox.command_sandbox`); None: commands run
    unconfined."""
    unsandboxed: bool = False
    """The user approved running THIS call outside the sandbox (set by the executor from the
    permission prompt's answer; never from anything the model sends)."""
    decided: tuple[Decided, ...] | None = None
    """The places the permission gate decided on for THIS call, one per path of its request
    (real path, and the file found there), set by the executor once the call is allowed. A tool
    opens exactly these (`agent.files.safe_paths`), never its argument resolved again. None: no gate
    ran (a tool used outside a session), and the tool resolves its path itself."""

    def decided_path(self, path: str, index: int = 0) -> Decided:
        """The place the gate decided on for the request's `index`-th path (which the tool
        built from `path`), or, with no gate, `path` resolved now.

        Raises:
            ToolError: the gate ran but decided on no such path (nothing may be used).
        """
        if self.decided is None:
            return decided_now(self.resolve(path))
        if index < len(self.decided):
            return self.decided[index]
        raise ToolError(f"no permission decision covers {path}; nothing was done")

    def resolve(self, path: str) -> Path:
        """An absolute, normalised path for a tool argument (relative to the cwd, `~` expanded).
        Symlinks are resolved so rules and roots compare real locations."""
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.cwd / candidate
        return candidate.resolve(strict=False)


class Tool(Generic[InputT], Record):
    name: str
    description: str
    input_model: type[InputT]
    execute: Callable[[InputT, ToolContext], Awaitable[ToolOutput]]
    ui: Callable[[InputT, ToolContext], ToolUi]
    read_only: bool
    permission: Callable[[InputT, ToolContext], PermissionRequest] | None
    extra_schema: dict[str, JsonValue] | None = None
    """A ready JSON schema to use instead of the one generated from `input_model` (MCP tools
    bring their own)."""

    @cached_property
    def input_schema(self) -> dict[str, JsonValue]:
        if self.extra_schema is not None:
            return self.extra_schema
        return self.input_model.model_json_schema()


def define_tool(
    *,
    name: str,
    description: str,
    input_model: type[InputT],
    execute: Callable[[InputT, ToolContext], Awaitable[ToolOutput]],
    ui: Callable[[InputT, ToolContext], ToolUi],
    read_only: bool = False,
    permission: Callable[[InputT, ToolContext], PermissionRequest] | None = None,
    input_schema: dict[str, JsonValue] | None = None,
) -> Tool[InputT]:
    """Build a tool.

    Raises:
        ValueError: a mutating tool was defined without `permission`.
    """
    if not read_only and permission is None:
        raise ValueError(f"tool {name!r} changes things but describes no permission request")
    return Tool(
        name=name,
        description=description,
        input_model=input_model,
        execute=execute,
        ui=ui,
        read_only=read_only,
        permission=permission,
        extra_schema=input_schema,
    )


AnyTool = Tool[Any]
