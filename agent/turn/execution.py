"""Running one batch of tool calls: the permission gate, hooks, undo snapshots and the tools.

Every call that reaches `ToolExecutor.run_batch` leaves with a result: an unknown tool, arguments
that are not JSON or do not fit, a denial, a hook's block and a tool raising are all error
results the model reads. Only cancellation propagates; the loop answers whatever is left with
"interrupted". Each result is recorded (appended to the transcript) the moment its call
finishes, before the call is shown as finished.

A batch runs in emission order, in groups: consecutive read-only calls run concurrently, and each
mutating call runs alone, so a read after an edit sees the edit. Results are returned in emission
order whatever order they completed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import anyio

from agent.backends import ToolUi
from agent.events import (
    AgentEvent,
    PermissionDecided,
    ToolCallFinished,
    ToolCallRunning,
    ToolStatus,
)
from agent.tool_env import scrub
from agent.tools import PermissionRequest, ToolContext, ToolError, ToolOutput
from agent.turn.tool_calls import (
    CheckedCall,
    RejectedCall,
    ValidCall,
    error_result,
    permission_request,
)
from agent.turn.tooling import BatchSnapshot, Tooling
from providers.logs import get_logger
from providers.types import ImagePart, JsonValue, TextPart, ToolResultPart

_log = get_logger(__name__)

Emit = Callable[[AgentEvent], None]
Record = Callable[[ToolResultPart], Awaitable[bool]]
"""`record(result)`: store one finished call's result; False when it could not be stored (the
turn is then ending with that error). Awaited before the call is shown as finished."""


@dataclass(slots=True)
class BatchState:
    """What a batch has finished so far; read by the loop if the turn is cancelled."""

    results: dict[str, ToolResultPart] = field(default_factory=lambda: {})
    """Finished calls by id: each is recorded (on disk, for a session) and a ToolCallFinished
    has been emitted for it."""
    edited: list[Path] = field(default_factory=lambda: [])
    """The files the batch's successful edits changed so far (for the verify commands)."""
    last_edit: str | None = None
    """The id of the batch's last file-edit call: the verify commands run after it."""
    undo_problem: str | None = None
    """Why the batch cannot be undone (its snapshot failed): said in each mutating call's
    result."""


class ToolExecutor:
    """Runs batches of checked calls through hooks, the gate, undo snapshots and the tools."""

    def __init__(self, tooling: Tooling, *, emit: Emit) -> None:
        self._tooling = tooling
        self._emit = emit

    async def run_batch(
        self, batch: Sequence[CheckedCall], state: BatchState, record: Record
    ) -> list[ToolResultPart]:
        """Run every call of one assistant message; results in emission order.

        Each result is passed to `record` (which stores it) as soon as its call finishes, and
        only then is the call shown as finished (`ToolCallFinished`): what the user saw finish
        is on disk. Cancellation propagates (calls finished so far are in `state`)."""
        snapshot_paths, whole_tree = _mutation_paths(batch)
        if self._tooling.checks is not None and self._tooling.checks.enabled:
            edits = [item.call.id for item in batch if _edited_paths(item)]
            state.last_edit = edits[-1] if edits else None
        taken: BatchSnapshot | None = None
        try:
            for group in _groups(batch):
                if len(group) == 1:
                    first = group[0]
                    if (
                        isinstance(first, ValidCall)
                        and not first.tool.read_only
                        and taken is None
                        and self._tooling.snapshot is not None
                    ):
                        taken = await self._take_snapshot(batch, snapshot_paths, whole_tree)
                        state.undo_problem = taken.problem
                    await self._run_one(first, state, record)
                    continue
                async with anyio.create_task_group() as group_tasks:
                    for item in group:
                        group_tasks.start_soon(self._run_one, item, state, record)
        finally:
            if taken is not None:
                with anyio.CancelScope(shield=True):  # a cancelled batch changed files too
                    await self._seal(taken)
        return [state.results[item.call.id] for item in batch if item.call.id in state.results]

    async def _take_snapshot(
        self, batch: Sequence[CheckedCall], paths: Sequence[Path], whole_tree: bool
    ) -> BatchSnapshot:
        snapshot = self._tooling.snapshot
        assert snapshot is not None
        calls = [
            item.ui.title or item.call.name
            for item in batch
            if isinstance(item, ValidCall) and not item.tool.read_only
        ]
        try:
            return await snapshot(paths, whole_tree, calls)
        except Exception as error:
            # Undo is a safety net; a failure to take one must not stop the work, and is said.
            _log.warning("undo snapshot failed", exc_info=True)
            return _Unsnapshotted(f"{type(error).__name__}: {error}")

    async def _seal(self, taken: BatchSnapshot) -> None:
        try:
            await taken.seal()
        except Exception:
            # Without it, an undo of the batch puts back its whole snapshot (as before).
            _log.warning("undo snapshot could not be sealed", exc_info=True)

    async def _run_one(self, item: CheckedCall, state: BatchState, record: Record) -> None:
        call = item.call
        if isinstance(item, RejectedCall):
            await self._finish(record, state, error_result(call, item.error), "failed")
            return
        tool = item.tool
        denied = await self._check_permission(item)
        if denied is not None:
            await self._finish(record, state, error_result(call, denied), "denied")
            return
        blocked = await self._pre_hook(item)
        if blocked is not None:
            await self._finish(record, state, error_result(call, blocked), "denied")
            return
        self._emit(ToolCallRunning(call_id=call.id))
        checks = self._tooling.checks
        edited = _edited_paths(item) if checks is not None and checks.enabled else []
        before = await checks.before_edit(edited, self._tooling.files) if checks and edited else {}
        output: ToolOutput
        try:
            output = await tool.execute(item.args, self._running_context(item))
        except ToolError as exc:
            output = ToolOutput.error(scrub(str(exc)) or type(exc).__name__)
        except Exception as exc:
            _log.warning("tool raised", tool=tool.name, exc_info=True)
            output = ToolOutput.error(scrub(f"{tool.name} failed: {type(exc).__name__}: {exc}"))
        content = list(output.content) or [TextPart(text="(no output)")]
        if state.undo_problem is not None and not tool.read_only:
            content.append(TextPart(text=_not_undoable(state.undo_problem)))
        status: ToolStatus = "failed" if output.is_error else "completed"
        finish = partial(
            self._finish,
            record,
            state,
            status=status,
            ui=output.ui,
            raw_output=output.raw_output,
            terminal_id=item.sinks.terminal_id,
        )
        if checks is not None and edited:
            try:
                notes = await self._checked(item, edited, before, output.is_error, state)
            except anyio.get_cancelled_exc_class():
                # The edit is made: the model must learn that, not "interrupted".
                with anyio.CancelScope(shield=True):
                    await finish(_result(item, content, output.is_error))
                raise
            content.extend(notes)
        result = _result(item, content, output.is_error)
        await self._post_hook(item, result)
        await finish(result)

    async def _checked(
        self,
        item: ValidCall,
        edited: list[Path],
        before: dict[Path, str],
        failed: bool,
        state: BatchState,
    ) -> list[TextPart]:
        """What the language servers and, after the batch's last edit, the verify commands
        say about the edits (`agent.code.edit_checks`): text to append to the call's result."""
        checks = self._tooling.checks
        assert checks is not None
        notes: list[str | None] = []
        try:
            if not failed:
                state.edited.extend(path for path in edited if path not in state.edited)
                notes.append(await checks.after_edit(before, self._tooling.files))
            if item.call.id == state.last_edit:
                notes.append(await checks.after_batch(state.edited, self._tooling, item.call.id))
        except Exception:
            # A check is help for the model; its failure must not cost the edit's result.
            _log.warning("edit checks failed", exc_info=True)
        return [TextPart(text=f"\n{scrub(note)}") for note in notes if note]

    async def _pre_hook(self, item: ValidCall) -> str | None:
        hooks = self._tooling.hooks
        if hooks is None:
            return None
        try:
            verdict = await hooks.pre_tool_use(
                session_id=self._tooling.session_id,
                tool_name=item.call.name,
                tool_input=item.call.arguments,
                call_id=item.call.id,
            )
        except Exception as exc:
            _log.warning("pre_tool_use hook failed", exc_info=True)
            return scrub(f"A pre_tool_use hook failed, so the call was not run: {exc}")
        if getattr(verdict, "blocked", False):
            reason = getattr(verdict, "reason", None) or "no reason given"
            if self._tooling.trail is not None:
                await self._tooling.trail.decision(
                    call_id=item.call.id,
                    tool=item.call.name,
                    request=None,
                    read_only=item.tool.read_only,
                    allowed=False,
                    source="hook",
                    mode=self._tooling.mode(),
                    reason=str(reason),
                )
            return f"Blocked by a pre_tool_use hook: {reason}"
        return None

    async def _post_hook(self, item: ValidCall, result: ToolResultPart) -> None:
        hooks = self._tooling.hooks
        if hooks is None:
            return
        try:
            await hooks.post_tool_use(
                session_id=self._tooling.session_id,
                tool_name=item.call.name,
                tool_input=item.call.arguments,
                call_id=item.call.id,
                result=result.text,
                is_error=result.is_error,
            )
        except Exception:
            _log.warning("post_tool_use hook failed", exc_info=True)

    def _running_context(self, item: ValidCall) -> ToolContext:
        """The call's context with `recheck_permission`: the gate, for a follow-up request the
        running call makes (a fetch redirected to another host)."""

        async def recheck(request: PermissionRequest) -> bool:
            return await self._check_permission(item, request) is None

        services = dataclasses.replace(item.ctx.services, recheck_permission=recheck)
        return dataclasses.replace(item.ctx, services=services)

    async def _check_permission(
        self, item: ValidCall, follow_up: PermissionRequest | None = None
    ) -> str | None:
        """None when the call (or a `follow_up` request it makes) may run, else the error text
        for the model."""
        call = item.call
        try:
            request = permission_request(item) if follow_up is None else follow_up
            tooling = self._tooling
            verdict = await tooling.gate.check(
                call_id=call.id,
                tool_name=call.name,
                request=request,
                read_only=item.tool.read_only,
                ui=item.ui,
                raw_input=call.arguments,
                mode=tooling.mode(),
                interaction=tooling.interaction,
                scope=tooling.scope,
            )
        except Exception as exc:
            _log.warning("permission check failed", tool=call.name, exc_info=True)
            self._emit(PermissionDecided(call_id=call.id, allowed=False, source="error"))
            return scrub(f"The permission check failed, so the call was not run: {exc}")
        if verdict.cancelled:
            self._emit(PermissionDecided(call_id=call.id, allowed=False, source=verdict.source))
            # The user cancelled the prompt: the whole turn stops (a subagent's user's turn).
            self._tooling.turn.cancel()
            await anyio.lowlevel.checkpoint()
            return "The user cancelled the turn."
        self._emit(
            PermissionDecided(
                call_id=call.id,
                allowed=verdict.allowed,
                source=verdict.source,
                answer=verdict.answer,
            )
        )
        if tooling.trail is not None:
            await tooling.trail.decision(
                call_id=call.id,
                tool=call.name,
                request=request,
                read_only=item.tool.read_only,
                allowed=verdict.allowed,
                source=verdict.source,
                mode=tooling.mode(),
                answer=verdict.answer,
                reason=verdict.reason,
                rule=verdict.rule,
                rule_file=verdict.rule_file,
                unsandboxed=verdict.unsandboxed,
                follow_up=follow_up is not None,
            )
        if verdict.allowed:
            if follow_up is None:
                # Only the user's answer to a prompt that said so runs a command unconfined.
                item.ctx.unsandboxed = verdict.unsandboxed
                # What the tool may use: exactly the places decided on (`agent.files.safe_paths`).
                item.ctx.decided = verdict.decided
            return None
        reason = verdict.reason or "not allowed"
        return (
            f"Permission denied: {reason}. Do not repeat this call; "
            "choose another approach or ask the user."
        )

    async def _finish(
        self,
        record: Record,
        state: BatchState,
        result: ToolResultPart,
        status: ToolStatus,
        *,
        ui: ToolUi | None = None,
        raw_output: JsonValue = None,
        terminal_id: str | None = None,
    ) -> None:
        if not await record(result):
            return
        state.results[result.tool_call_id] = result
        self._emit(
            ToolCallFinished(
                call_id=result.tool_call_id,
                name=result.name,
                status=status,
                result=result,
                ui=ui,
                raw_output=raw_output,
                terminal_id=terminal_id,
            )
        )
        trail = self._tooling.trail
        if trail is not None and raw_output is not None:
            await trail.outcome(
                call_id=result.tool_call_id, tool=result.name, status=status, raw_output=raw_output
            )


def _groups(batch: Sequence[CheckedCall]) -> list[list[CheckedCall]]:
    """Consecutive read-only (or rejected) calls together; each mutating call alone."""
    groups: list[list[CheckedCall]] = []
    current: list[CheckedCall] = []
    for item in batch:
        if isinstance(item, ValidCall) and not item.tool.read_only:
            if current:
                groups.append(current)
                current = []
            groups.append([item])
        else:
            current.append(item)
    if current:
        groups.append(current)
    return groups


def _result(item: ValidCall, content: list[TextPart | ImagePart], error: bool) -> ToolResultPart:
    call = item.call
    return ToolResultPart(tool_call_id=call.id, name=call.name, content=content, is_error=error)


def _edited_paths(item: CheckedCall) -> list[Path]:
    """The files a file-edit call (`edit`, `write`) changes; empty for any other call. Once the
    gate allowed it, the places it decided on (what the language servers are shown, read exactly
    there), not the arguments resolved again."""
    if not isinstance(item, ValidCall) or item.tool.read_only:
        return []
    try:
        request = permission_request(item)
    except Exception:
        return []
    if not request.is_file_edit:
        return []
    decided = item.ctx.decided
    return [place.path for place in decided] if decided else list(request.paths)


@dataclass(frozen=True, slots=True)
class _Unsnapshotted:
    """A batch whose snapshot raised: it cannot be undone."""

    problem: str | None

    async def seal(self) -> None:
        return None


def _not_undoable(problem: str) -> str:
    return (
        f"\n(earshot could not snapshot the files before this batch, so /undo cannot undo this "
        f"change: {scrub(problem)})"
    )


def _mutation_paths(batch: Sequence[CheckedCall]) -> tuple[list[Path], bool]:
    """The paths the batch's mutating calls say they change, and whether the whole work tree
    must be snapshotted: a command (`rm`, `sed -i`, `>`) or a call that names no path (an MCP
    tool) may change any file. A fetch changes none."""
    paths: list[Path] = []
    whole_tree = False
    for item in batch:
        if isinstance(item, ValidCall) and not item.tool.read_only:
            try:
                request = permission_request(item)
            except Exception:
                whole_tree = True
                continue
            paths.extend(request.paths)
            if request.command is not None or not (request.paths or request.domain):
                whole_tree = True
    return paths, whole_tree
