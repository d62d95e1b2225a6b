"""`task`: hand a self-contained job to a subagent with a fresh context.

The subagent runs the same turn loop with its own in-memory history (only the task prompt), the
same model, and a restricted tool set (read-only tools unless the call names others; never `task`
or `todo`). It shares the parent's `ScopeContract` object and permission gate, so a nested agent
can neither escape the declared scope nor grant itself anything: its mutating calls are gated
like the parent's. Its events reach the parent's stream tagged with the task call's id, and its
final text is the task's result.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio
from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Mode, ToolUi
from agent.context import ContextShaper
from agent.events import (
    AgentEvent,
    Notice,
    PermissionAsked,
    PermissionDecided,
    QuestionAsked,
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
from agent.tools.base import (
    AnyTool,
    ReadTracker,
    ToolContext,
    ToolError,
    ToolOutput,
    define_tool,
)
from providers.types import Message, ReasoningEffort, TextPart, ToolSpec, Usage
from sessions.repair import join_results

if TYPE_CHECKING:
    from agent.execution import CallSinks, ToolExecutor
    from agent.retry import RetryPolicy
    from providers.catalog import ModelInfo
    from providers.model import Model
    from sessions import Session

Emit = Callable[[AgentEvent], None]

DEFAULT_SUBAGENT_TOOLS = ("read", "grep", "glob", "ls", "fetch")
NEVER_SUBAGENT_TOOLS = frozenset({"task", "todo"})
"""No nesting (a subagent's subagent would be invisible), and no plan: the plan is the parent's."""
_INHERITED = frozenset({"skills", "read_denied", "read_deny_globs"})
"""The parent's `ctx.services` a subagent's tools get: the skill index, and the `Read` deny
rules' verdict (`agent.tools._common.READ_DENIED`...: its grep, glob and ls hide what the
parent's would)."""

_SUBAGENT_NOTE = """
You are a subagent: another agent gave you the task below. You cannot ask it questions. Work \
with your tools, then answer with a complete, self-contained report: your final message is \
the only thing the other agent sees."""

_NESTED = (
    TextChunk,
    ReasoningChunk,
    ToolCallStarted,
    ToolCallArguments,
    ToolCallReady,
    ToolCallRunning,
    ToolCallProgress,
    ToolCallFinished,
    PermissionAsked,
    PermissionDecided,
    QuestionAsked,
)


class SubagentParent(Protocol):
    """What a subagent borrows from the session that started it (an `AgentSession`)."""

    id: str
    mode: Mode

    @property
    def model(self) -> Model: ...
    @property
    def model_info(self) -> ModelInfo | None: ...
    @property
    def reasoning_effort(self) -> ReasoningEffort | None: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def tools(self) -> dict[str, AnyTool]: ...
    @property
    def max_turns(self) -> int: ...
    @property
    def retry_policy(self) -> RetryPolicy: ...

    def tool_context(self, sinks: CallSinks) -> ToolContext: ...
    def executor(self, emit: Emit, cancel_turn: Callable[[], None]) -> ToolExecutor: ...
    async def record_subagent_usage(self, usage: Usage | None) -> None: ...


class SubagentRunner:
    """`ctx.services["subagent"]`: runs one subagent per `task` call of the current turn."""

    def __init__(self, parent: SubagentParent, *, emit: Emit, cancel_turn: Callable[[], None]):
        self._parent = parent
        self._emit = emit
        self._cancel_turn = cancel_turn

    async def run(self, *, call_id: str, prompt: str, tools: Sequence[str] | None = None) -> str:
        """Run a subagent on `prompt` and return its final text.

        Raises:
            ToolError: unknown tool names, or the subagent's model call failed.
        """
        from agent.loop import TurnLoop

        chosen = self._tools(tools)
        host = _SubagentHost(self._parent, chosen, cancel_turn=self._cancel_turn)
        loop = TurnLoop(host, emit=_forwarder(self._emit, call_id), scope=anyio.CancelScope())
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

    def _tools(self, names: Sequence[str] | None) -> dict[str, AnyTool]:
        available = self._parent.tools
        if names is None:
            return {name: available[name] for name in DEFAULT_SUBAGENT_TOOLS if name in available}
        unknown = [n for n in names if n not in available or n in NEVER_SUBAGENT_TOOLS]
        if unknown:
            allowed = sorted(set(available) - NEVER_SUBAGENT_TOOLS)
            raise ToolError(
                f"Subagents cannot use: {', '.join(unknown)}. Choose from: {', '.join(allowed)}."
            )
        return {name: available[name] for name in names}


def _forwarder(emit: Emit, call_id: str) -> Emit:
    def forward(event: AgentEvent) -> None:
        if isinstance(event, _NESTED):
            if event.parent_call_id is None:
                event = dataclasses.replace(cast(Any, event), parent_call_id=call_id)
            emit(event)
        elif isinstance(event, Retrying | Notice):
            emit(event)

    return forward


class _SubagentHost:
    """`LoopHost` for a subagent: in-memory history, borrowed model, gate and backends."""

    def __init__(
        self, parent: SubagentParent, tools: dict[str, AnyTool], *, cancel_turn: Callable[[], None]
    ) -> None:
        self._parent = parent
        self._tools = tools
        self._specs = [
            ToolSpec(name=t.name, description=t.description, input_schema=t.input_schema)
            for t in tools.values()
        ]
        self._cancel_turn = cancel_turn
        self._history: list[Message] = []
        self._joined: dict[tuple[int, ...], Message] = {}
        self._reads = ReadTracker()
        self._shaper = ContextShaper()
        self._system = parent.system_prompt + _SUBAGENT_NOTE

    @property
    def model(self) -> Model:
        return self._parent.model

    @property
    def model_info(self) -> ModelInfo | None:
        return self._parent.model_info

    @property
    def reasoning_effort(self) -> ReasoningEffort | None:
        return self._parent.reasoning_effort

    @property
    def system_prompt(self) -> str:
        return self._system

    @property
    def tools(self) -> dict[str, AnyTool]:
        return self._tools

    @property
    def tool_specs(self) -> Sequence[ToolSpec]:
        return self._specs

    @property
    def max_turns(self) -> int:
        return self._parent.max_turns

    @property
    def retry_policy(self) -> RetryPolicy:
        return self._parent.retry_policy

    @property
    def shaper(self) -> ContextShaper:
        return self._shaper

    @property
    def persisted_session(self) -> Session | None:
        return None

    def history(self) -> list[Message]:
        # Results arrive one tool message each, as their calls finish: joined in call order, as
        # a session's history is (positions are list indexes: the list only grows).
        return join_results(self._history, range(len(self._history)), self._joined)

    async def append_message(self, message: Message, entry_id: str | None = None) -> str:
        self._history.append(message)
        return entry_id or uuid.uuid4().hex

    def take_queued(self) -> list[Message]:
        return []

    def has_queued(self) -> bool:
        return False

    def close_queue(self) -> None:
        return None

    async def record_usage(self, usage: Usage | None, context_tokens: int) -> None:
        await self._parent.record_subagent_usage(usage)

    def tool_context(self, sinks: CallSinks) -> ToolContext:
        ctx = self._parent.tool_context(sinks)
        services = {key: value for key, value in ctx.services.items() if key in _INHERITED}
        return dataclasses.replace(ctx, reads=self._reads, services=services)

    def executor(self, emit: Emit, cancel_turn: Callable[[], None]) -> ToolExecutor:
        # A cancelled permission prompt cancels the user's whole turn, not just this subagent.
        return self._parent.executor(emit, self._cancel_turn)

    async def accept_prompt(self, message: Message) -> str | None:
        return None

    async def prompt_appended(self, message: Message, entry_id: str) -> None:
        return None


# ----------------------------------------------------------------------------- the tool


class TaskInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    description: str = Field(
        description="A short label for the task (3-6 words), shown to the user."
    )
    prompt: str = Field(
        description="The complete task. The subagent sees nothing of this conversation: say "
        "what to find or do, where to look, and what to report back."
    )
    tools: list[str] | None = Field(
        default=None,
        description="Tools the subagent may use; default: read, grep, glob, ls, fetch.",
    )


DESCRIPTION = """Hand a self-contained task to a subagent that works in its own fresh context \
and reports back.

- Use it for broad searches or investigations whose details you do not need in your own context \
("find every place that parses the config and summarise how").
- The subagent's final answer is this tool's result; the user does not see it directly.
- Several task calls in one message run in parallel.
- By default the subagent can only read (read, grep, glob, ls, fetch)."""


def _ui(params: TaskInput, ctx: ToolContext) -> ToolUi:
    return ToolUi(title=f"Task: {params.description}", kind="think")


async def _execute(params: TaskInput, ctx: ToolContext) -> ToolOutput:
    runner = ctx.services.get("subagent")
    if not isinstance(runner, SubagentRunner):
        raise ToolError("Subagents are not available here.")
    text = await runner.run(call_id=ctx.call_id, prompt=params.prompt, tools=params.tools)
    return ToolOutput.text(text)


task_tool = define_tool(
    name="task",
    description=DESCRIPTION,
    input_model=TaskInput,
    execute=_execute,
    ui=_ui,
    read_only=True,
)
