"""A turn: `session/prompt`, `session/update` (every update kind), `session/cancel`.

Generated from acp_server/schema/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.common import (
    ContentBlock,
    JsonObject,
    JsonValue,
    SessionConfigOption,
    SessionId,
    SessionModeId,
    ToolCallContent,
    ToolCallId,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"
]
"""Reasons why an agent stops processing a prompt turn."""


@final
class PromptResponse(TypedDict):
    """`session/prompt` result from the agent. Response from processing a user prompt."""

    stopReason: StopReason
    _meta: NotRequired[JsonObject | None]


MessageId: TypeAlias = str
"""Unique identifier for a message within a session."""


@final
class ContentChunk(TypedDict):
    """A streamed item of content"""

    content: ContentBlock
    messageId: NotRequired[MessageId | None]
    _meta: NotRequired[JsonObject | None]


@final
class ToolCall(TypedDict):
    """Represents a tool call that the language model has requested."""

    toolCallId: ToolCallId
    title: str
    name: NotRequired[str | None]
    kind: NotRequired[ToolKind]
    status: NotRequired[ToolCallStatus]
    content: NotRequired[list[ToolCallContent]]
    locations: NotRequired[list[ToolCallLocation]]
    rawInput: NotRequired[JsonValue]
    rawOutput: NotRequired[JsonValue]
    _meta: NotRequired[JsonObject | None]


PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"]
"""Priority levels for plan entries."""


PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
"""Status of a plan entry in the execution flow."""


@final
class PlanEntry(TypedDict):
    """A single entry in the execution plan."""

    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus
    _meta: NotRequired[JsonObject | None]


@final
class Plan(TypedDict):
    """An execution plan for accomplishing complex tasks."""

    entries: list[PlanEntry]
    _meta: NotRequired[JsonObject | None]


@final
class UnstructuredCommandInput(TypedDict):
    """All text that was typed after the command name is provided as input."""

    hint: str
    _meta: NotRequired[JsonObject | None]


AvailableCommandInput: TypeAlias = UnstructuredCommandInput
"""The input specification for a command."""


@final
class AvailableCommand(TypedDict):
    """Information about a command."""

    name: str
    description: str
    input: NotRequired[AvailableCommandInput | None]
    _meta: NotRequired[JsonObject | None]


@final
class AvailableCommandsUpdate(TypedDict):
    """Available commands are ready or have changed"""

    availableCommands: list[AvailableCommand]
    _meta: NotRequired[JsonObject | None]


@final
class CurrentModeUpdate(TypedDict):
    """The current mode of the session has changed"""

    currentModeId: SessionModeId
    _meta: NotRequired[JsonObject | None]


@final
class ConfigOptionUpdate(TypedDict):
    """Session configuration options have been updated."""

    configOptions: list[SessionConfigOption]
    _meta: NotRequired[JsonObject | None]


@final
class SessionInfoUpdate(TypedDict):
    """Update to session metadata. All fields are optional to support partial updates."""

    title: NotRequired[str | None]
    updatedAt: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class Cost(TypedDict):
    """Cost information for a session."""

    amount: float
    currency: str
    _meta: NotRequired[JsonObject | None]


@final
class UsageUpdate(TypedDict):
    """Context window and cost update for a session."""

    used: int
    size: int
    cost: NotRequired[Cost | None]
    _meta: NotRequired[JsonObject | None]


NoticeSeverity: TypeAlias = Literal["info", "warning", "error"] | str
"""Severity hint for a session notice."""


@final
class Notice(TypedDict):
    """Fire-and-forget information for the user."""

    severity: NoticeSeverity
    title: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


CompactionId: TypeAlias = str
"""Unique identifier for a context compaction within a session."""


CompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"] | str
"""Lifecycle state of a context compaction."""


@final
class CompactionUpdate(TypedDict):
    """A context compaction upsert. The first notification fixes the compaction's timeline
    position. Later updates with the same ID patch that entity in place. Agents MUST only send
    this update when the Client advertised the `session.compaction` Client capability.
    """

    compactionId: CompactionId
    status: CompactionStatus
    summary: NotRequired[list[ContentBlock] | None]
    error: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class CompactionSummaryChunk(TypedDict):
    """A content block appended to a compaction's summary. A first-seen ID creates an in-progress
    compaction. Chunks append in receive order. Agents MUST only send this update when the Client
    advertised the `session.compaction` Client capability.
    """

    compactionId: CompactionId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateUserMessageChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "user_message_chunk"`. A chunk of the user's
    message being streamed.
    """

    sessionUpdate: Literal["user_message_chunk"]
    content: ContentBlock
    messageId: NotRequired[MessageId | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateAgentMessageChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "agent_message_chunk"`. A chunk of the agent's
    response being streamed.
    """

    sessionUpdate: Literal["agent_message_chunk"]
    content: ContentBlock
    messageId: NotRequired[MessageId | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateAgentThoughtChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "agent_thought_chunk"`. A chunk of the agent's
    internal reasoning being streamed.
    """

    sessionUpdate: Literal["agent_thought_chunk"]
    content: ContentBlock
    messageId: NotRequired[MessageId | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateToolCall(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "tool_call"`. Notification that a new tool call
    has been initiated.
    """

    sessionUpdate: Literal["tool_call"]
    toolCallId: ToolCallId
    title: str
    name: NotRequired[str | None]
    kind: NotRequired[ToolKind]
    status: NotRequired[ToolCallStatus]
    content: NotRequired[list[ToolCallContent]]
    locations: NotRequired[list[ToolCallLocation]]
    rawInput: NotRequired[JsonValue]
    rawOutput: NotRequired[JsonValue]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateToolCallUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "tool_call_update"`. Update on the status or
    results of a tool call.
    """

    sessionUpdate: Literal["tool_call_update"]
    toolCallId: ToolCallId
    kind: NotRequired[ToolKind | None]
    status: NotRequired[ToolCallStatus | None]
    title: NotRequired[str | None]
    name: NotRequired[str | None]
    content: NotRequired[list[ToolCallContent] | None]
    locations: NotRequired[list[ToolCallLocation] | None]
    rawInput: NotRequired[JsonValue]
    rawOutput: NotRequired[JsonValue]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdatePlan(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "plan"`. The agent's execution plan for complex
    tasks. See protocol docs: [Agent Plan](https://agentclientprotocol.com/protocol/v1/agent-
    plan)
    """

    sessionUpdate: Literal["plan"]
    entries: list[PlanEntry]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateAvailableCommandsUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "available_commands_update"`. Available commands
    are ready or have changed
    """

    sessionUpdate: Literal["available_commands_update"]
    availableCommands: list[AvailableCommand]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateCurrentModeUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "current_mode_update"`. The current mode of the
    session has changed
    """

    sessionUpdate: Literal["current_mode_update"]
    currentModeId: SessionModeId
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateConfigOptionUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "config_option_update"`. Session configuration
    options have been updated.
    """

    sessionUpdate: Literal["config_option_update"]
    configOptions: list[SessionConfigOption]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateSessionInfoUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "session_info_update"`. Session metadata has been
    updated (title, timestamps, custom metadata)
    """

    sessionUpdate: Literal["session_info_update"]
    title: NotRequired[str | None]
    updatedAt: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateUsageUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "usage_update"`. Context window and cost update
    for the session.
    """

    sessionUpdate: Literal["usage_update"]
    used: int
    size: int
    cost: NotRequired[Cost | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateNotice(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "notice"`. Information for the user that is not
    part of session history.
    """

    sessionUpdate: Literal["notice"]
    severity: NoticeSeverity
    title: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateCompactionUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "compaction_update"`. A context compaction has
    been created or updated.
    """

    sessionUpdate: Literal["compaction_update"]
    compactionId: CompactionId
    status: CompactionStatus
    summary: NotRequired[list[ContentBlock] | None]
    error: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateCompactionSummaryChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "compaction_summary_chunk"`. A content block
    appended to a context compaction's retained summary.
    """

    sessionUpdate: Literal["compaction_summary_chunk"]
    compactionId: CompactionId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


SessionUpdate: TypeAlias = (
    SessionUpdateUserMessageChunk
    | SessionUpdateAgentMessageChunk
    | SessionUpdateAgentThoughtChunk
    | SessionUpdateToolCall
    | SessionUpdateToolCallUpdate
    | SessionUpdatePlan
    | SessionUpdateAvailableCommandsUpdate
    | SessionUpdateCurrentModeUpdate
    | SessionUpdateConfigOptionUpdate
    | SessionUpdateSessionInfoUpdate
    | SessionUpdateUsageUpdate
    | SessionUpdateNotice
    | SessionUpdateCompactionUpdate
    | SessionUpdateCompactionSummaryChunk
)
"""Different types of updates that can be sent during session processing."""


@final
class SessionNotification(TypedDict):
    """`session/update` notification to the client. Notification containing a session update from
    the agent.
    """

    sessionId: SessionId
    update: SessionUpdate
    _meta: NotRequired[JsonObject | None]


@final
class PromptRequest(TypedDict):
    """`session/prompt` request to the agent. Request parameters for sending a user prompt to the
    agent.
    """

    sessionId: SessionId
    prompt: list[ContentBlock]
    _meta: NotRequired[JsonObject | None]


@final
class CancelNotification(TypedDict):
    """`session/cancel` notification to the agent. Notification to cancel ongoing operations for
    a session.
    """

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]
