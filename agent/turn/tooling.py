"""What running tool calls needs from the session, for one turn: `Tooling`.

A frozen value the session builds at the start of each turn (a subagent copies its parent's with
its own read tracker and services). The loop makes each call's `ToolContext` from it, and the
executor finds the permission gate, hooks and undo snapshots in it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent.backends import (
    FileBackend,
    Interaction,
    Mode,
    PermissionOptionKind,
    ProcessBackend,
    ToolUi,
)
from agent.tools import PermissionRequest, ReadTracker, ScopeContract, ToolContext, ToolServices

if TYPE_CHECKING:
    import anyio

    from agent.files import Decided
    from agent.sandbox import Sandbox
    from agent.turn.audit_trail import AuditTrail
    from agent.turn.tool_calls import CallSinks


class GateVerdict(Protocol):
    """What the permission gate answers (`agent.permissions.gate.GateOutcome`)."""

    @property
    def allowed(self) -> bool: ...
    @property
    def cancelled(self) -> bool: ...
    @property
    def source(self) -> str: ...
    @property
    def answer(self) -> PermissionOptionKind | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def unsandboxed(self) -> bool: ...
    @property
    def rule(self) -> str | None: ...
    @property
    def rule_file(self) -> str | None: ...
    @property
    def decided(self) -> tuple[Decided, ...]: ...


class Gate(Protocol):
    """`agent.permissions.gate.PermissionGate`, as the executor calls it."""

    async def check(
        self,
        *,
        call_id: str,
        tool_name: str,
        request: PermissionRequest,
        read_only: bool,
        ui: ToolUi,
        raw_input: object,
        mode: Mode,
        interaction: Interaction,
        scope: ScopeContract,
    ) -> GateVerdict: ...


class Hooks(Protocol):
    """`agent.turn.hooks.HookRunner`, the parts the executor calls."""

    async def pre_tool_use(
        self, *, session_id: str, tool_name: str, tool_input: object, call_id: str
    ) -> Any: ...

    async def post_tool_use(
        self,
        *,
        session_id: str,
        tool_name: str,
        tool_input: object,
        call_id: str,
        result: str,
        is_error: bool,
    ) -> None: ...


class EditCheck(Protocol):
    """`agent.code.edit_checks.EditChecks`, as the executor calls it."""

    @property
    def enabled(self) -> bool: ...

    async def before_edit(self, paths: Sequence[Path], files: FileBackend) -> dict[Path, str]: ...

    async def after_edit(self, before: dict[Path, str], files: FileBackend) -> str | None: ...

    async def after_batch(
        self, touched: Sequence[Path], tooling: Tooling, call_id: str
    ) -> str | None: ...


class BatchSnapshot(Protocol):
    """The undo snapshot of one batch (`agent.history.undo_batches`)."""

    @property
    def problem(self) -> str | None:
        """Why the batch cannot be undone (no snapshot could be taken); None when it can, or
        when undo is off altogether (the session said so once)."""
        ...

    async def seal(self) -> None:
        """Once the batch's calls have run: record what they left, so that `/undo` puts back
        only what the batch changed."""
        ...


Snapshot = Callable[[Sequence[Path], bool, Sequence[str]], Awaitable[BatchSnapshot]]
"""`snapshot(paths, whole_tree, calls)`: record what a batch may change before it runs (undo);
`calls` names the batch's mutating calls (their titles), for `/undo` to say which batch it
cannot undo."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tooling:
    session_id: str
    cwd: Path
    roots: tuple[Path, ...]
    files: FileBackend
    processes: ProcessBackend
    interaction: Interaction
    """Where permission prompts and questions go (ordered after the events before them:
    `agent.turn.stream.OrderedInteraction`)."""
    gate: Gate
    mode: Callable[[], Mode]
    """The permission mode as it is now (a change applies at the next check)."""
    scope: ScopeContract
    reads: ReadTracker
    turn: anyio.CancelScope
    """The user's turn: a cancelled permission prompt cancels all of it (a subagent's too)."""
    services: ToolServices = field(default_factory=ToolServices)
    """What the tools find of the session (a security hook not given fails closed)."""
    sandbox: Sandbox | None = None
    hooks: Hooks | None = None
    snapshot: Snapshot | None = None
    checks: EditCheck | None = None
    """LSP diagnostics and verify commands after edits (`agent.code.edit_checks`)."""
    trail: AuditTrail | None = None
    """Records each decision and each call's raw output in the transcript (`earshot audit`)."""

    def context(self, sinks: CallSinks) -> ToolContext:
        """A call's `ToolContext`."""
        return ToolContext(
            session_id=self.session_id,
            call_id=sinks.call_id,
            cwd=self.cwd,
            roots=self.roots,
            files=self.files,
            processes=self.processes,
            interaction=self.interaction,
            scope=self.scope,
            reads=self.reads,
            progress=sinks.progress,
            terminal=sinks.terminal,
            services=self.services,
            sandbox=self.sandbox,
        )
