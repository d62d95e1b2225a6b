"""Subagents: what the `task` tool runs (`ctx.services[SUBAGENTS]`).

A subagent runs the same turn loop over an in-memory transcript holding only the task prompt,
with the session's current model and a restricted tool set (read-only tools unless the call names
others; never `task` or `todo`). It shares the session's `ScopeContract` and permission gate, so a
nested agent can neither escape the declared scope nor grant itself anything: its mutating calls
are gated like the parent's, and a cancelled permission prompt cancels the user's whole turn. Its
events reach the parent's stream tagged with the task call's id, its model calls count towards
the session's usage, and its final text is the task's result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, cast

import anyio

from agent.context import ContextShaper
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
from agent.loop import TurnLoop
from agent.tooling import Tooling
from agent.tools.base import ReadTracker, ToolError
from agent.tools.services import READ_DENIED, READ_DENY_GLOBS, SKILLS
from agent.transcript import InMemoryTranscript
from agent.turn_config import ToolSet, TurnConfig
from providers.types import Message, TextPart, Usage

Emit = Callable[[AgentEvent], None]

DEFAULT_SUBAGENT_TOOLS: Final = ("read", "grep", "glob", "ls", "fetch")
NEVER_SUBAGENT_TOOLS: Final = frozenset({"task", "todo"})
"""No nesting (a subagent's subagent would be invisible), and no todo list: the list is the
parent's."""
_INHERITED: Final = frozenset({SKILLS, READ_DENIED, READ_DENY_GLOBS})
"""The parent's `ctx.services` a subagent's tools get: the skill index, and the `Read` deny
rules' verdict (its grep, glob and ls hide what the parent's would)."""

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


class SubagentRunner:
    """Runs one subagent per `task` call of the current turn."""

    def __init__(
        self,
        *,
        config: Callable[[], TurnConfig],
        tooling: Tooling,
        emit: Emit,
        usage: Callable[[Usage | None], Awaitable[None]],
    ) -> None:
        self._config = config
        self._tooling = tooling
        self._emit = emit
        self._usage = usage

    async def run(self, *, call_id: str, prompt: str, tools: Sequence[str] | None = None) -> str:
        """Run a subagent on `prompt` and return its final text.

        Raises:
            ToolError: unknown tool names, or the subagent's model call failed.
        """
        chosen = _tools(self._config().tools, tools)
        system = self._config().system_prompt + _SUBAGENT_NOTE

        def config() -> TurnConfig:
            # The session's current model (a switch applies at the subagent's next call too).
            return dataclasses.replace(self._config(), tools=chosen, system_prompt=system)

        async def usage(used: Usage | None, context_tokens: int) -> None:
            await self._usage(used)

        services = {k: v for k, v in self._tooling.services.items() if k in _INHERITED}
        loop = TurnLoop(
            config=config,
            transcript=InMemoryTranscript(),
            shaper=ContextShaper(),
            tooling=dataclasses.replace(self._tooling, reads=ReadTracker(), services=services),
            usage=usage,
            emit=_forwarder(self._emit, call_id),
            scope=anyio.CancelScope(),
        )
        end = await loop.run(Message(role="user", parts=[TextPart(text=prompt)]))
        match end.reason:
            case "error":
                raise ToolError(f"The subagent failed: {end.message or 'model call failed'}")
            case "cancelled":
                raise ToolError("The subagent was interrupted.")
            case "max_turns":
                text = loop.last_text or "(no final answer)"
                return f"{text}\n\n[The subagent stopped after its maximum number of model calls.]"
            case "end_turn" | "max_tokens" | "refusal":
                return loop.last_text or "(the subagent gave no answer)"


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


def _forwarder(emit: Emit, call_id: str) -> Emit:
    def forward(event: AgentEvent) -> None:
        if isinstance(event, _NESTED):
            if event.parent_call_id is None:
                event = dataclasses.replace(cast(Any, event), parent_call_id=call_id)
            emit(event)
        elif isinstance(event, Retrying | Notice):
            emit(event)

    return forward
