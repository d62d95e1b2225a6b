"""Subagents: what the `task` tool runs (`ctx.services.subagents`).

A subagent runs the same turn loop in a session of its own (a child session: its own id and
JSONL file in the same project, whose header names the parent session and the `task` call), so
what it did can be listed, loaded and read later; the parent's transcript links the call to the
child (a `subagent` extension entry) and its `tool_call` shows the child's id. Without a session
store (a tool run outside a session) the transcript is in memory. The subagent uses the session's
current model and a restricted tool set (read-only tools unless the call names
others; never `task` or `todo`). It shares the session's `ScopeContract` and permission gate, so a
nested agent can neither escape the declared scope nor grant itself anything: its mutating calls
are gated like the parent's, and a cancelled permission prompt cancels the user's whole turn. Its
events reach the parent's stream tagged with the task call's id, its model calls count towards
the session's usage, and its final text is the task's result. When it ends (whichever way), the
parent's transcript records its calls (a `subagent_work` extension entry: each call's id, title
and outcome), so a replay of the parent shows the task's work as it was shown live.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, cast

import anyio

from agent.context import CacheSetting, ContextShaper, UsageTracker
from agent.events import (
    AgentEvent,
    Notice,
    PermissionDecided,
    ReasoningChunk,
    Retrying,
    TextChunk,
    ToolCallArguments,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallReady,
    ToolCallRunning,
    ToolCallStarted,
)
from agent.history.session_transcript import SessionTranscript
from agent.tools import ToolServices
from agent.tools.base import ReadTracker, ToolError
from agent.transcript import InMemoryTranscript, Transcript
from agent.turn.audit_trail import AuditTrail
from agent.turn.config import ToolSet, TurnConfig
from agent.turn.inbox import title_from
from agent.turn.loop import TurnLoop
from agent.turn.tooling import Tooling
from providers.logs import get_logger
from providers.types import JsonValue, Message, TextPart, Usage
from sessions import ExtensionEntry, ParentLink, Session, SessionStore, extensions

_log = get_logger(__name__)

Emit = Callable[[AgentEvent], None]

DEFAULT_SUBAGENT_TOOLS: Final = ("read", "grep", "glob", "ls", "fetch")
NEVER_SUBAGENT_TOOLS: Final = frozenset({"task", "todo"})
"""No nesting (a subagent's subagent would be invisible), and no todo list: the list is the
parent's."""

_SUBAGENT_NOTE: Final = """
You are a subagent: another agent gave you the task below. You cannot ask it questions. Work \
with your tools, then answer with a complete, self-contained report: your final message is \
the only thing the other agent sees."""

_NESTED: Final = (
    TextChunk,
    ReasoningChunk,
    ToolCallStarted,
    ToolCallArguments,
    ToolCallReady,
    ToolCallRunning,
    ToolCallProgress,
    ToolCallFinished,
    PermissionDecided,
)


class RunningChildren:
    """The subagents running in a session, by child session id: a front end can cancel one's
    work (ACP `session/cancel` on the child) while its parent's turn goes on; its `task` call
    then fails saying so."""

    def __init__(self) -> None:
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._cancelled: set[str] = set()

    def cancel(self, child_id: str) -> bool:
        """Cancel the work of child session `child_id`; False when none by that id runs."""
        scope = self._scopes.get(child_id)
        if scope is None:
            return False
        self._cancelled.add(child_id)
        scope.cancel()
        return True

    def running(self, child_id: str, scope: anyio.CancelScope) -> None:
        self._scopes[child_id] = scope

    def ended(self, child_id: str) -> bool:
        """The child's work ended; True when `cancel` ended it."""
        self._scopes.pop(child_id, None)
        cancelled = child_id in self._cancelled
        self._cancelled.discard(child_id)
        return cancelled


class SubagentRunner:
    """Runs one subagent per `task` call of the current turn."""

    def __init__(
        self,
        *,
        config: Callable[[], TurnConfig],
        tooling: Tooling,
        emit: Emit,
        usage: Callable[[Usage | None], Awaitable[None]],
        children: ChildSessions | None = None,
        running: RunningChildren | None = None,
    ) -> None:
        self._config = config
        self._tooling = tooling
        self._emit = emit
        self._usage = usage
        self._children = children
        self._running = running or RunningChildren()

    async def run(self, *, call_id: str, prompt: str, tools: Sequence[str] | None = None) -> str:
        """Run a subagent on `prompt` and return its final text.

        Raises:
            ToolError: unknown tool names, or the subagent's model call failed.
        """
        chosen = _tools(self._config().tools, tools)
        system = self._config().system_prompt + _SUBAGENT_NOTE

        def config() -> TurnConfig:
            # The session's current model (a switch applies at the subagent's next call too).
            current = self._config()
            cache = current.cache
            if cache is not None and cache.key:
                # Subagents share a prompt prefix with each other, not with the session.
                cache = dataclasses.replace(cache, key=f"{cache.key}/task")
            return dataclasses.replace(current, tools=chosen, system_prompt=system, cache=cache)

        children = self._children
        child = None if children is None else await children.open(call_id, config(), prompt)
        own = UsageTracker(model_info=config().model_info)

        async def usage(used: Usage | None, context_tokens: int) -> None:
            own.record(used, context_tokens=context_tokens)
            if child is not None:
                # The child keeps its own totals; the parent's include them.
                await SessionTranscript(child).record_usage(own.snapshot())
            await self._usage(used)

        if child is not None:
            self._emit(ToolCallProgress(call_id=call_id, child_session_id=child.id))
        work: dict[str, dict[str, str]] = {}
        transcript: Transcript = InMemoryTranscript() if child is None else SessionTranscript(child)
        scope = anyio.CancelScope()
        if child is not None:
            self._running.running(child.id, scope)
        # What of the parent's services a subagent's tools get: the `Read` checks (its grep,
        # glob and ls hide what the parent's would); no todo list, background jobs or index.
        parent = self._tooling.services
        services = ToolServices(
            read_denied=parent.read_denied, read_deny_globs=parent.read_deny_globs
        )
        loop = TurnLoop(
            config=config,
            transcript=transcript,
            shaper=ContextShaper(cache=_cache_setting(config())),
            tooling=dataclasses.replace(
                self._tooling,
                reads=ReadTracker(),
                services=services,
                # The child's decisions and outcomes go with its calls, in its own file.
                trail=self._tooling.trail if child is None else AuditTrail(child),
            ),
            usage=usage,
            emit=_forwarder(self._emit, call_id, work),
            scope=scope,
        )
        cancelled = False
        try:
            end = await loop.run(Message(role="user", parts=[TextPart(text=prompt)]))
        finally:
            if child is not None and children is not None:
                cancelled = self._running.ended(child.id)
                with anyio.CancelScope(shield=True):
                    await child.aclose()
                    await children.record_work(call_id, [dict(item) for item in work.values()])
        match end.reason:
            case "error":
                raise ToolError(f"The subagent failed: {end.message or 'model call failed'}")
            case "cancelled" if cancelled:
                raise ToolError("The user cancelled the subagent's work.")
            case "cancelled":
                raise ToolError("The subagent was interrupted.")
            case "max_turns":
                text = loop.last_text or "(no final answer)"
                return f"{text}\n\n[The subagent stopped after its maximum number of model calls.]"
            case "end_turn" | "max_tokens" | "refusal":
                return loop.last_text or "(the subagent gave no answer)"


class ChildSessions:
    """Creates the session each subagent runs in, under the same project as its parent, and
    links it from the parent's transcript."""

    def __init__(
        self, store: SessionStore, parent: SessionTranscript, model_name: Callable[[], str]
    ) -> None:
        self._store = store
        self._parent = parent
        self._model_name = model_name

    async def record_work(self, call_id: str, calls: list[JsonValue]) -> None:
        """Record in the parent's transcript what the subagent of `call_id` did (`calls`: id,
        title, state), for a replay. Only the replay depends on it: a failure is logged."""
        try:
            await self._parent.stored.append(
                ExtensionEntry(
                    name=extensions.SUBAGENT_WORK, data={"call_id": call_id, "calls": calls}
                )
            )
        except Exception:
            _log.warning("could not record the subagent's work", exc_info=True)

    async def open(self, call_id: str, config: TurnConfig, prompt: str) -> Session:
        """The child session of `call_id`, created (its header naming the parent session and
        call) with the model it runs and a title from its prompt, and linked from the parent.

        Raises:
            sessions.SessionWriteFailed: the child's file could not be written.
        """
        parent = self._parent.stored
        child = await self._store.create(
            parent.cwd,
            additional_directories=parent.header.additional_directories,
            parent=ParentLink(session_id=parent.id, call_id=call_id),
        )
        try:
            transcript = SessionTranscript(child)
            await transcript.record_settings(
                model=self._model_name(), effort=config.reasoning_effort, mode=None
            )
            await transcript.record_title(f"Subagent: {title_from(prompt) or call_id}")
            with anyio.CancelScope(shield=True):
                await parent.append(
                    ExtensionEntry(
                        name=extensions.SUBAGENT, data={"call_id": call_id, "session_id": child.id}
                    )
                )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await child.aclose()
            raise
        return child


def _tools(available: ToolSet, names: Sequence[str] | None) -> ToolSet:
    if names is None:
        return available.only(name for name in DEFAULT_SUBAGENT_TOOLS if name in available)
    unknown = [n for n in names if n not in available or n in NEVER_SUBAGENT_TOOLS]
    if unknown:
        allowed = sorted(set(available) - NEVER_SUBAGENT_TOOLS)
        raise ToolError(
            f"Subagents cannot use: {', '.join(unknown)}. Choose from: {', '.join(allowed)}."
        )
    return available.only(names)


def _forwarder(emit: Emit, call_id: str, work: dict[str, dict[str, str]]) -> Emit:
    """Passes the subagent's events on, tagged with the `task` call's id, and notes each of its
    calls in `work` (title, then how it ended; "interrupted" until it has)."""

    def forward(event: AgentEvent) -> None:
        if isinstance(event, ToolCallReady) and event.parent_call_id is None:
            work[event.call_id] = {
                "id": event.call_id,
                "title": event.ui.title,
                "state": "interrupted",
            }
        elif isinstance(event, ToolCallFinished) and event.call_id in work:
            work[event.call_id]["state"] = event.status
        if isinstance(event, _NESTED):
            if event.parent_call_id is None:
                event = dataclasses.replace(cast(Any, event), parent_call_id=call_id)
            emit(event)
        elif isinstance(event, Retrying | Notice):
            emit(event)

    return forward


def _cache_setting(config: TurnConfig) -> CacheSetting:
    """The session's `cache` setting, as its requests' hints carry it."""
    return config.cache.ttl if config.cache is not None else "off"
