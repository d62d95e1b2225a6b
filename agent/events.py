"""What `run_turn` yields. Front ends (the ACP server, print mode) are consumers of this stream.

Events are plain values (no live objects), so print mode can write each one as an NDJSON line.
Events from a subagent carry the id of the `task` call that started it in `parent_call_id`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

from agent.backends import Mode, PermissionOptionKind, ToolUi
from providers.records import Record
from providers.types import JsonValue, ProviderError, ToolResultPart, Usage

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turns", "refusal", "cancelled", "error"
]
ToolStatus: TypeAlias = Literal["completed", "failed", "interrupted", "denied"]


class TurnStarted(Record):
    turn_id: str
    kind: Literal["turn_start"] = "turn_start"


class UserMessageAdded(Record):
    """A user message entered history: the prompt, or one queued mid-turn and injected."""

    entry_id: str
    text: str
    queued: bool = False
    kind: Literal["user_message"] = "user_message"


class TextChunk(Record):
    text: str
    message_id: str
    """Stable for one assistant message (ACP `messageId`)."""
    parent_call_id: str | None = None
    kind: Literal["text"] = "text"


class ReasoningChunk(Record):
    text: str
    message_id: str
    parent_call_id: str | None = None
    kind: Literal["reasoning"] = "reasoning"


class ToolCallStarted(Record):
    """The model began a call; arguments are still streaming."""

    call_id: str
    name: str
    ui: ToolUi
    parent_call_id: str | None = None
    kind: Literal["tool_call_started"] = "tool_call_started"


class ToolCallArguments(Record):
    call_id: str
    delta: str
    parent_call_id: str | None = None
    kind: Literal["tool_call_arguments"] = "tool_call_arguments"


class ToolCallReady(Record):
    """Arguments complete; `ui` is now computed from them (title, locations, diff)."""

    call_id: str
    name: str
    arguments: JsonValue
    ui: ToolUi
    parent_call_id: str | None = None
    kind: Literal["tool_call_ready"] = "tool_call_ready"


class ToolCallRunning(Record):
    call_id: str
    parent_call_id: str | None = None
    kind: Literal["tool_call_running"] = "tool_call_running"


class ToolCallProgress(Record):
    """Live output of a running call, or the editor terminal it runs in."""

    call_id: str
    text: str = ""
    terminal_id: str | None = None
    child_session_id: str | None = None
    """A `task` call's subagent runs in this (child) session."""
    parent_call_id: str | None = None
    kind: Literal["tool_call_progress"] = "tool_call_progress"


class ToolCallFinished(Record):
    call_id: str
    name: str
    status: ToolStatus
    result: ToolResultPart
    ui: ToolUi | None = None
    """Final UI (e.g. the applied diff) when it changed."""
    raw_output: JsonValue = None
    terminal_id: str | None = None
    parent_call_id: str | None = None
    kind: Literal["tool_call_finished"] = "tool_call_finished"


class PermissionDecided(Record):
    """The gate's verdict, asked or not: `source` says which step or rule decided."""

    call_id: str
    allowed: bool
    source: str
    answer: PermissionOptionKind | None = None
    """What the user picked, when they were asked."""
    parent_call_id: str | None = None
    kind: Literal["permission_decided"] = "permission_decided"


class TodoItem(Record):
    """One step of the model's todo list (the `todo` tool; ACP calls the list a "plan")."""

    content: str
    status: Literal["pending", "in_progress", "completed"] = "pending"
    priority: Literal["high", "medium", "low"] = "medium"


class TodosChanged(Record):
    """The complete todo list (front ends replace, never merge)."""

    items: tuple[TodoItem, ...]
    plan_id: str = ""
    """The list's id (`agent.todos.TodoPlan`): the same while the list lives, a new one once an
    emptied list is written again. Empty `items` remove the plan with this id."""
    kind: Literal["todos"] = "todos"


class UsageUpdated(Record):
    call: Usage
    """This model call."""
    total: Usage
    """The session so far."""
    context_tokens: int
    """Tokens the next request is estimated to occupy."""
    context_window: int | None
    cost_usd: float | None
    """The session's cost so far; None when a price is unknown (never a guessed zero)."""
    context_window_assumed: bool = False
    """`context_window` is a default, not the model's known window (see `providers.catalog`)."""
    kind: Literal["usage"] = "usage"


class CompactionStarted(Record):
    compaction_id: str
    manual: bool
    kind: Literal["compaction_started"] = "compaction_started"


class CompactionFinished(Record):
    compaction_id: str
    ok: bool
    summary: str = ""
    error: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    kind: Literal["compaction_finished"] = "compaction_finished"


class Retrying(Record):
    attempt: int
    delay: float
    error: ProviderError
    kind: Literal["retrying"] = "retrying"


class ModelChanged(Record):
    model: str
    reasoning_effort: str | None = None
    kind: Literal["model_changed"] = "model_changed"


class ModeChanged(Record):
    mode: Mode
    kind: Literal["mode_changed"] = "mode_changed"


class TitleChanged(Record):
    title: str
    kind: Literal["title_changed"] = "title_changed"


class CommandOutput(Record):
    """What a slash command says (`/mode plan` -> "Mode: plan.")."""

    text: str
    data: Mapping[str, object] | None = None
    """What it said as JSON-valued data, for a client to render (`/permissions`: the rules by
    scope); ACP sends it as the message's `_meta.earshot`."""
    branch_changed: bool = False
    """The conversation's current branch changed (`/rewind`): a front end that shows the
    conversation shows it again."""
    kind: Literal["command_output"] = "command_output"


class Notice(Record):
    """Something the user should know that is not part of the conversation (an MCP server that
    failed to start, undo unavailable...)."""

    severity: Literal["info", "warning", "error"]
    message: str
    prominent: bool = False
    """Shown even by a front end that leaves info notices out (ACP without `notices`: as agent
    text): it tells of a change the user did not ask for (an MCP server's tools joined late)."""
    kind: Literal["notice"] = "notice"


class TurnEnded(Record):
    reason: StopReason
    error: ProviderError | None = None
    """Set when `reason == "error"`: the model call that ended the turn."""
    message: str | None = None
    """A clear sentence for the user when the turn ended on an error."""
    kind: Literal["turn_end"] = "turn_end"


AgentEvent: TypeAlias = (
    TurnStarted
    | UserMessageAdded
    | TextChunk
    | ReasoningChunk
    | ToolCallStarted
    | ToolCallArguments
    | ToolCallReady
    | ToolCallRunning
    | ToolCallProgress
    | ToolCallFinished
    | PermissionDecided
    | TodosChanged
    | UsageUpdated
    | CompactionStarted
    | CompactionFinished
    | Retrying
    | ModelChanged
    | ModeChanged
    | TitleChanged
    | CommandOutput
    | Notice
    | TurnEnded
)
