"""Tool calls: validation, the permission gate, hooks, and running one batch.

Every call that reaches `ToolExecutor.run_batch` leaves with a result: an unknown tool, arguments
that are not JSON or fail the schema, a denial, a hook's block and a tool raising are all error
results the model reads. Only cancellation propagates; the loop answers whatever is left with
"interrupted". Each result is recorded (appended to the session) the moment its call finishes,
before the call is shown as finished.

A batch runs in emission order, in groups: consecutive read-only calls run concurrently, and each
mutating call runs alone, so a read after an edit sees the edit. Results are returned in emission
order whatever order they completed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from agent._log import get_logger
from agent.backends import (
    Interaction,
    Mode,
    PermissionAnswer,
    PermissionOptionKind,
    PermissionPrompt,
    Question,
    QuestionAnswer,
    ToolUi,
)
from agent.events import (
    AgentEvent,
    PermissionAsked,
    PermissionDecided,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallRunning,
    ToolStatus,
)
from agent.tool_env import scrub
from agent.tools._common import RECHECK_PERMISSION
from agent.tools.base import (
    AnyTool,
    PermissionRequest,
    ScopeContract,
    ToolContext,
    ToolError,
    ToolOutput,
)
from providers.types import JsonValue, TextPart, ToolCallPart, ToolResultPart

if TYPE_CHECKING:
    from pydantic import BaseModel

    from agent.audit_trail import AuditTrail

_log = get_logger(__name__)

Emit = Callable[[AgentEvent], None]
Snapshot = Callable[[Sequence[Path], bool], Awaitable[None]]
"""`snapshot(paths, whole_tree)`: record what a batch may change before it runs."""
Record = Callable[[ToolResultPart], Awaitable[bool]]
"""`record(result)`: store one finished call's result; False when it could not be stored (the
turn is then ending with that error). Awaited before the call is shown as finished."""

INTERRUPTED_TEXT = "interrupted: the user stopped the turn before this call finished"


class GateVerdict(Protocol):
    """What the permission gate answers (`agent.permissions.GateOutcome`)."""

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


class Gate(Protocol):
    """`agent.permissions.PermissionGate`, as the executor calls it."""

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
    """`agent.hooks.HookRunner`, the parts the executor calls."""

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


@dataclass(slots=True)
class CallSinks:
    """One call's live output: progress text and the editor terminal it runs in."""

    call_id: str
    emit: Emit
    terminal_id: str | None = None

    async def progress(self, text: str) -> None:
        self.emit(ToolCallProgress(call_id=self.call_id, text=text))

    async def terminal(self, terminal_id: str) -> None:
        self.terminal_id = terminal_id
        self.emit(ToolCallProgress(call_id=self.call_id, terminal_id=terminal_id))


# ------------------------------------------------------------------------------ preparation


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedCall:
    """A call whose arguments validated: ready for the gate."""

    call: ToolCallPart
    tool: AnyTool
    args: BaseModel
    ui: ToolUi
    ctx: ToolContext
    sinks: CallSinks


@dataclass(frozen=True, slots=True, kw_only=True)
class RejectedCall:
    """A call that cannot run; `error` is the text the model gets back."""

    call: ToolCallPart
    error: str
    ui: ToolUi


Prepared = PreparedCall | RejectedCall


def error_result(call: ToolCallPart, text: str) -> ToolResultPart:
    return ToolResultPart(
        tool_call_id=call.id, name=call.name, content=[TextPart(text=text)], is_error=True
    )


def interrupted_result(call: ToolCallPart, text: str = INTERRUPTED_TEXT) -> ToolResultPart:
    return error_result(call, text)


def title_for(name: str) -> ToolUi:
    """The UI of a call whose arguments are not known (yet)."""
    return ToolUi(title=name)


class Validators:
    """JSON-schema validators, built once per tool (building one costs more than using it)."""

    def __init__(self) -> None:
        self._by_name: dict[str, Any] = {}

    def errors(self, tool: AnyTool, arguments: JsonValue) -> list[str]:
        validator = self._by_name.get(tool.name)
        if validator is None:
            from jsonschema.validators import validator_for

            schema = tool.input_schema
            validator = validator_for(schema)(schema)
            self._by_name[tool.name] = validator
        found = sorted(validator.iter_errors(arguments), key=lambda error: list(error.path))
        return [_schema_error_text(error) for error in found[:5]]


def _schema_error_text(error: Any) -> str:
    where = "/".join(str(item) for item in error.path)
    return f"at `{where}`: {error.message}" if where else str(error.message)


def prepare_call(
    call: ToolCallPart,
    tools: dict[str, AnyTool],
    validators: Validators,
    context: Callable[[CallSinks], ToolContext],
    emit: Emit,
) -> Prepared:
    """Validate `call` against its tool: known name, JSON arguments, the JSON schema, then the
    input model. Computes the call's UI from the validated arguments."""
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return RejectedCall(
            call=call,
            error=f"Unknown tool `{call.name}`. The available tools are: {known}.",
            ui=title_for(call.name),
        )
    if call.invalid_arguments is not None:
        raw = call.invalid_arguments
        shown = raw if len(raw) <= 500 else raw[:500] + "..."
        return RejectedCall(
            call=call,
            error=f"The arguments for `{call.name}` were not valid JSON: {shown!r}. "
            "Send them as one JSON object.",
            ui=title_for(call.name),
        )
    problems = validators.errors(tool, call.arguments)
    if problems:
        return RejectedCall(
            call=call,
            error=f"Invalid arguments for `{call.name}`: " + "; ".join(problems),
            ui=title_for(call.name),
        )
    from pydantic import ValidationError

    sinks = CallSinks(call_id=call.id, emit=emit)
    ctx = context(sinks)
    try:
        args = tool.input_model.model_validate(call.arguments)
    except ValidationError as exc:
        details = "; ".join(
            f"at `{'/'.join(str(item) for item in error['loc'])}`: {error['msg']}"
            for error in exc.errors()[:5]
        )
        return RejectedCall(
            call=call,
            error=f"Invalid arguments for `{call.name}`: {details}",
            ui=title_for(call.name),
        )
    try:
        ui = tool.ui(args, ctx)
    except Exception:
        _log.warning("tool ui failed", tool=call.name, exc_info=True)
        ui = title_for(call.name)
    return PreparedCall(call=call, tool=tool, args=args, ui=ui, ctx=ctx, sinks=sinks)


def permission_request(prepared: PreparedCall) -> PermissionRequest:
    """The call described in the gate's terms. Read-only tools may not describe themselves; they
    get a request named after the tool, so deny rules still reach them.

    Raises:
        Exception: whatever the tool's `permission` function raised.
    """
    tool = prepared.tool
    if tool.permission is not None:
        return tool.permission(prepared.args, prepared.ctx)
    return PermissionRequest(rule_tool=rule_name(tool.name), description=prepared.ui.title)


def rule_name(tool_name: str) -> str:
    """`read` -> `Read`, `declare_scope` -> `DeclareScope`; MCP names (`mcp__x__y`) unchanged."""
    if tool_name.startswith("mcp__"):
        return tool_name
    return "".join(word[:1].upper() + word[1:] for word in tool_name.split("_"))


# -------------------------------------------------------------------------------- execution


@dataclass(slots=True)
class BatchState:
    """What a batch has finished so far; read by the loop if the turn is cancelled."""

    results: dict[str, ToolResultPart] = field(default_factory=lambda: {})
    """Finished calls by id: each is recorded (on disk, for a session) and a ToolCallFinished
    has been emitted for it."""


class _AnnouncingInteraction:
    """Emits `PermissionAsked` when the gate actually asks the user."""

    def __init__(self, inner: Interaction, emit: Emit, call_id: str) -> None:
        self._inner = inner
        self._emit = emit
        self._call_id = call_id

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self._emit(PermissionAsked(call_id=self._call_id, reason=prompt.reason))
        return await self._inner.request_permission(prompt)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return await self._inner.ask_question(question)


class ToolExecutor:
    """Runs batches of prepared calls through hooks, the gate, undo snapshots and the tools."""

    def __init__(
        self,
        *,
        session_id: str,
        gate: Gate,
        interaction: Interaction,
        scope: ScopeContract,
        mode: Callable[[], Mode],
        emit: Emit,
        cancel_turn: Callable[[], None],
        hooks: Hooks | None = None,
        snapshot: Snapshot | None = None,
        trail: AuditTrail | None = None,
    ) -> None:
        self._session_id = session_id
        self._gate = gate
        self._interaction = interaction
        self._scope = scope
        self._mode = mode
        self._emit = emit
        self._cancel_turn = cancel_turn
        self._hooks = hooks
        self._snapshot = snapshot
        self._trail = trail
        """Records each decision and each call's raw output in the transcript (`earshot audit`)."""

    async def run_batch(
        self, batch: Sequence[Prepared], state: BatchState, record: Record
    ) -> list[ToolResultPart]:
        """Run every call of one assistant message; results in emission order.

        Each result is passed to `record` (which stores it) as soon as its call finishes, and
        only then is the call shown as finished (`ToolCallFinished`): what the user saw finish
        is on disk. Cancellation propagates (calls finished so far are in `state`)."""
        snapshot_paths, whole_tree = _mutation_paths(batch)
        snapshot_taken = False
        for group in _groups(batch):
            if len(group) == 1:
                first = group[0]
                if (
                    isinstance(first, PreparedCall)
                    and not first.tool.read_only
                    and not snapshot_taken
                    and self._snapshot is not None
                ):
                    snapshot_taken = True
                    await self._take_snapshot(snapshot_paths, whole_tree)
                await self._run_one(first, state, record)
                continue
            async with anyio.create_task_group() as group_tasks:
                for item in group:
                    group_tasks.start_soon(self._run_one, item, state, record)
        return [state.results[item.call.id] for item in batch if item.call.id in state.results]

    async def _take_snapshot(self, paths: Sequence[Path], whole_tree: bool) -> None:
        assert self._snapshot is not None
        try:
            await self._snapshot(paths, whole_tree)
        except Exception:
            # Undo is a safety net; a failure to take one must not stop the work.
            _log.warning("undo snapshot failed", exc_info=True)

    async def _run_one(self, item: Prepared, state: BatchState, record: Record) -> None:
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
        output: ToolOutput
        try:
            output = await tool.execute(item.args, self._running_context(item))
        except ToolError as exc:
            output = ToolOutput.error(scrub(str(exc)) or type(exc).__name__)
        except Exception as exc:
            _log.warning("tool raised", tool=tool.name, exc_info=True)
            output = ToolOutput.error(scrub(f"{tool.name} failed: {type(exc).__name__}: {exc}"))
        content = list(output.content) or [TextPart(text="(no output)")]
        result = ToolResultPart(
            tool_call_id=call.id, name=call.name, content=content, is_error=output.is_error
        )
        await self._post_hook(item, result)
        await self._finish(
            record,
            state,
            result,
            "failed" if output.is_error else "completed",
            ui=output.ui,
            raw_output=output.raw_output,
            terminal_id=item.sinks.terminal_id,
        )

    async def _pre_hook(self, item: PreparedCall) -> str | None:
        if self._hooks is None:
            return None
        try:
            verdict = await self._hooks.pre_tool_use(
                session_id=self._session_id,
                tool_name=item.call.name,
                tool_input=item.call.arguments,
                call_id=item.call.id,
            )
        except Exception as exc:
            _log.warning("pre_tool_use hook failed", exc_info=True)
            return scrub(f"A pre_tool_use hook failed, so the call was not run: {exc}")
        if getattr(verdict, "blocked", False):
            reason = getattr(verdict, "reason", None) or "no reason given"
            if self._trail is not None:
                await self._trail.decision(
                    call_id=item.call.id,
                    tool=item.call.name,
                    request=None,
                    read_only=item.tool.read_only,
                    allowed=False,
                    source="hook",
                    mode=self._mode(),
                    reason=str(reason),
                )
            return f"Blocked by a pre_tool_use hook: {reason}"
        return None

    async def _post_hook(self, item: PreparedCall, result: ToolResultPart) -> None:
        if self._hooks is None:
            return
        try:
            await self._hooks.post_tool_use(
                session_id=self._session_id,
                tool_name=item.call.name,
                tool_input=item.call.arguments,
                call_id=item.call.id,
                result=result.text,
                is_error=result.is_error,
            )
        except Exception:
            _log.warning("post_tool_use hook failed", exc_info=True)

    def _running_context(self, item: PreparedCall) -> ToolContext:
        """The call's context with `RECHECK_PERMISSION`: the gate, for a follow-up request the
        running call makes (a fetch redirected to another host)."""

        async def recheck(request: PermissionRequest) -> bool:
            return await self._check_permission(item, request) is None

        services = {**item.ctx.services, RECHECK_PERMISSION: recheck}
        return dataclasses.replace(item.ctx, services=services)

    async def _check_permission(
        self, item: PreparedCall, follow_up: PermissionRequest | None = None
    ) -> str | None:
        """None when the call (or a `follow_up` request it makes) may run, else the error text
        for the model."""
        call = item.call
        try:
            request = permission_request(item) if follow_up is None else follow_up
            verdict = await self._gate.check(
                call_id=call.id,
                tool_name=call.name,
                request=request,
                read_only=item.tool.read_only,
                ui=item.ui,
                raw_input=call.arguments,
                mode=self._mode(),
                interaction=_AnnouncingInteraction(self._interaction, self._emit, call.id),
                scope=self._scope,
            )
        except Exception as exc:
            _log.warning("permission check failed", tool=call.name, exc_info=True)
            self._emit(PermissionDecided(call_id=call.id, allowed=False, source="error"))
            return scrub(f"The permission check failed, so the call was not run: {exc}")
        if verdict.cancelled:
            self._emit(PermissionDecided(call_id=call.id, allowed=False, source=verdict.source))
            self._cancel_turn()
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
        if self._trail is not None:
            await self._trail.decision(
                call_id=call.id,
                tool=call.name,
                request=request,
                read_only=item.tool.read_only,
                allowed=verdict.allowed,
                source=verdict.source,
                mode=self._mode(),
                answer=verdict.answer,
                reason=verdict.reason,
                rule=verdict.rule,
                rule_file=verdict.rule_file,
                unsandboxed=verdict.unsandboxed,
                follow_up=follow_up is not None,
            )
        if verdict.allowed:
            # Only the user's answer to a prompt that said so runs a command unconfined.
            item.ctx.unsandboxed = verdict.unsandboxed
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
        if self._trail is not None and raw_output is not None:
            await self._trail.outcome(
                call_id=result.tool_call_id, tool=result.name, status=status, raw_output=raw_output
            )


def _groups(batch: Sequence[Prepared]) -> list[list[Prepared]]:
    """Consecutive read-only (or rejected) calls together; each mutating call alone."""
    groups: list[list[Prepared]] = []
    current: list[Prepared] = []
    for item in batch:
        if isinstance(item, PreparedCall) and not item.tool.read_only:
            if current:
                groups.append(current)
                current = []
            groups.append([item])
        else:
            current.append(item)
    if current:
        groups.append(current)
    return groups


def _mutation_paths(batch: Sequence[Prepared]) -> tuple[list[Path], bool]:
    """The paths the batch's mutating calls say they change, and whether the whole work tree
    must be snapshotted: a command (`rm`, `sed -i`, `>`) or a call that names no path (an MCP
    tool) may change any file. A fetch changes none."""
    paths: list[Path] = []
    whole_tree = False
    for item in batch:
        if isinstance(item, PreparedCall) and not item.tool.read_only:
            try:
                request = permission_request(item)
            except Exception:
                whole_tree = True
                continue
            paths.extend(request.paths)
            if request.command is not None or not (request.paths or request.domain):
                whole_tree = True
    return paths, whole_tree
