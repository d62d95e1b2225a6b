"""ACP v2 (draft): a turn: `session/prompt`, `session/update` (every update kind),
`session/cancel`.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import (
    AbsolutePath,
    AvailableCommand,
    ContentBlock,
    JsonObject,
    JsonValue,
    ProtocolVersion,
    SessionConfigOption,
    SessionId,
    TerminalId,
    ToolCallCapabilities,
    ToolCallContent,
    ToolCallId,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)


@final
class CancelToolCallResponse(TypedDict):
    """`tool_call/cancel` result from the agent. Response from cancelling a tool call."""

    _meta: NotRequired[JsonObject | None]


@final
class CancelTerminalResponse(TypedDict):
    """`terminal/cancel` result from the agent. Response from cancelling a terminal."""

    _meta: NotRequired[JsonObject | None]


MessageId: TypeAlias = str
"""Identifier for a message, unique among messages of the same type within a session."""


@final
class PromptResponse(TypedDict):
    """`session/prompt` result from the agent. Response acknowledging that a user prompt was
    inserted into the ACP conversation.
    """

    messageId: MessageId
    _meta: NotRequired[JsonObject | None]


ErrorCode: TypeAlias = (
    Literal[-32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002, -32022] | int
)
"""Predefined error codes for common JSON-RPC and ACP-specific errors."""


@final
class UnsupportedProtocolVersionErrorData(TypedDict):
    """Data for the `-32022` (Unsupported protocol version) error."""

    requested: ProtocolVersion
    supported: list[ProtocolVersion]
    _meta: NotRequired[JsonObject | None]


@final
class SessionNotFoundErrorData(TypedDict):
    """Data for the `-32002` (Resource not found) error when a session-scoped request names a
    session that does not exist or is not active.
    """

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


ErrorData: TypeAlias = UnsupportedProtocolVersionErrorData | SessionNotFoundErrorData | JsonValue
"""Schema for [`Error::data`]: the shapes ACP defines, or any other value."""


@final
class Error(TypedDict):
    """JSON-RPC error object."""

    code: ErrorCode
    message: str
    data: NotRequired[ErrorData | None]


@final
class ContentChunk(TypedDict):
    """A streamed item of message content."""

    messageId: MessageId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class UserMessage(TypedDict):
    """A user message upsert."""

    messageId: MessageId
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class AgentMessage(TypedDict):
    """An agent message upsert."""

    messageId: MessageId
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class AgentThought(TypedDict):
    """An agent thought or reasoning message upsert."""

    messageId: MessageId
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class BackgroundTerminal(TypedDict):
    """A listed terminal running in the background."""

    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class BackgroundToolCall(TypedDict):
    """A listed tool call whose work continues in the background."""

    toolCallId: ToolCallId
    _meta: NotRequired[JsonObject | None]


@final
class BackgroundWorkTerminal(TypedDict):
    """`BackgroundWork` variant: `type: "terminal"`. A process that keeps running after its tool
    call returned control to the model. Live until its `terminal_update` reports `exitStatus`.
    """

    type: Literal["terminal"]
    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class BackgroundWorkToolCall(TypedDict):
    """`BackgroundWork` variant: `type: "tool_call"`. Work started by a tool call that continues
    without a process of its own, such as a watcher, a workflow, or a scheduled wakeup. `pending`
    and `paused` tool calls stay listed.
    """

    type: Literal["tool_call"]
    toolCallId: ToolCallId
    _meta: NotRequired[JsonObject | None]


@final
class BackgroundWorkOther(TypedDict):
    """`BackgroundWork` variant: other. Custom or future background work."""

    type: str


BackgroundWork: TypeAlias = BackgroundWorkTerminal | BackgroundWorkToolCall | BackgroundWorkOther
"""One piece of work running independently of the session's foreground work."""


@final
class RunningStateUpdate(TypedDict):
    """Foreground work is in progress."""

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class ErrorStopReason(TypedDict):
    """Details of a failure that ended active work."""

    error: NotRequired[Error | None]


@final
class IdleStateUpdateEndTurn(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "end_turn"`. The active work ended successfully.
    Includes locally handled commands that required no model call.
    """

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["end_turn"]


@final
class IdleStateUpdateMaxTokens(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "max_tokens"`. The active work ended because the
    agent reached the maximum number of tokens.
    """

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_tokens"]


@final
class IdleStateUpdateMaxTurnRequests(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "max_turn_requests"`. The active work ended
    because the agent reached the maximum number of model requests for the foreground work.
    """

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_turn_requests"]


@final
class IdleStateUpdateRefusal(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "refusal"`. The active work ended because the
    agent refused to continue.
    """

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["refusal"]


@final
class IdleStateUpdateCancelled(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "cancelled"`. The user or client chose to stop the
    work: via `session/cancel`, by closing the session, or through an interaction the agent
    offers, such as a permission option that tells the agent to stop. Work the agent stops for
    its own reasons uses another reason, such as `error` for an internal timeout.
    """

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["cancelled"]


@final
class IdleStateUpdateError(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "error"`. The active work ended because something
    failed.
    """

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["error"]
    error: NotRequired[Error | None]


@final
class IdleStateUpdateOther(TypedDict):
    """`IdleStateUpdate` variant: other. Custom or future stop reason."""

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: str


@final
class IdleStateUpdateNone(TypedDict):
    """`IdleStateUpdate` variant: none. No stop reason: `stopReason` is omitted or `null`."""

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: NotRequired[None]


@final
class RequiresActionStateUpdate(TypedDict):
    """The foreground workflow as a whole is blocked on user action."""

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class StateUpdateRunning(TypedDict):
    """`StateUpdate` variant: `state: "running"`. Foreground work is in progress."""

    state: Literal["running"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class StateUpdateIdleEndTurn(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "end_turn"`. No foreground work is
    active. Background activity may continue. The active work ended successfully. Includes
    locally handled commands that required no model call.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["end_turn"]


@final
class StateUpdateIdleMaxTokens(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "max_tokens"`. No foreground work is
    active. Background activity may continue. The active work ended because the agent reached the
    maximum number of tokens.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_tokens"]


@final
class StateUpdateIdleMaxTurnRequests(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "max_turn_requests"`. No foreground
    work is active. Background activity may continue. The active work ended because the agent
    reached the maximum number of model requests for the foreground work.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_turn_requests"]


@final
class StateUpdateIdleRefusal(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "refusal"`. No foreground work is
    active. Background activity may continue. The active work ended because the agent refused to
    continue.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["refusal"]


@final
class StateUpdateIdleCancelled(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "cancelled"`. No foreground work is
    active. Background activity may continue. The user or client chose to stop the work: via
    `session/cancel`, by closing the session, or through an interaction the agent offers, such as
    a permission option that tells the agent to stop. Work the agent stops for its own reasons
    uses another reason, such as `error` for an internal timeout.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["cancelled"]


@final
class StateUpdateIdleError(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "error"`. No foreground work is
    active. Background activity may continue. The active work ended because something failed.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["error"]
    error: NotRequired[Error | None]


@final
class StateUpdateIdleOther(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, other. No foreground work is active. Background
    activity may continue. Custom or future stop reason.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: str


@final
class StateUpdateIdleNone(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, none. No foreground work is active. Background
    activity may continue. No stop reason: `stopReason` is omitted or `null`.
    """

    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: NotRequired[None]


@final
class StateUpdateRequiresAction(TypedDict):
    """`StateUpdate` variant: `state: "requires_action"`. Foreground work is blocked on user
    action.
    """

    state: Literal["requires_action"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class StateUpdateOther(TypedDict):
    """`StateUpdate` variant: other. Custom or future session state."""

    state: str


@final
class ToolCallContentChunk(TypedDict):
    """A streamed item of tool-call content."""

    toolCallId: ToolCallId
    content: ToolCallContent
    _meta: NotRequired[JsonObject | None]


@final
class TerminalOutput(TypedDict):
    """An authoritative replacement snapshot of terminal output bytes."""

    data: str
    _meta: NotRequired[JsonObject | None]


@final
class TerminalExitStatus(TypedDict):
    """Exit information for an agent-owned terminal."""

    exitCode: NotRequired[int | None]
    signal: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class TerminalSize(TypedDict):
    """The size of an agent-owned terminal in character cells."""

    cols: int
    rows: int
    _meta: NotRequired[JsonObject | None]


@final
class TerminalCancelCapabilities(TypedDict):
    """Capability to cancel a terminal with `terminal/cancel`."""

    _meta: NotRequired[JsonObject | None]


@final
class TerminalCapabilities(TypedDict):
    """Client-initiated controls a terminal currently supports."""

    cancel: NotRequired[TerminalCancelCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class TerminalUpdate(TypedDict):
    """An upsert for the stored state of an agent-owned terminal."""

    terminalId: TerminalId
    command: NotRequired[str | None]
    cwd: NotRequired[AbsolutePath | None]
    output: NotRequired[TerminalOutput | None]
    exitStatus: NotRequired[TerminalExitStatus | None]
    size: NotRequired[TerminalSize | None]
    capabilities: NotRequired[TerminalCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class TerminalOutputChunk(TypedDict):
    """A chunk of bytes appended to an agent-owned terminal's output."""

    terminalId: TerminalId
    data: str
    _meta: NotRequired[JsonObject | None]


PlanId: TypeAlias = str
"""Unique identifier for a plan within a session."""


PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"] | str
"""Priority levels for plan entries."""


PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed", "cancelled"] | str
"""Status of a plan entry in the execution flow."""


@final
class PlanEntry(TypedDict):
    """A single entry in the execution plan."""

    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus
    _meta: NotRequired[JsonObject | None]


@final
class PlanItems(TypedDict):
    """A plan represented as structured entries."""

    planId: PlanId
    entries: list[PlanEntry]
    _meta: NotRequired[JsonObject | None]


@final
class PlanUpdateContentItems(TypedDict):
    """`PlanUpdateContent` variant: `type: "items"`. Structured plan entries."""

    type: Literal["items"]
    planId: PlanId
    entries: list[PlanEntry]
    _meta: NotRequired[JsonObject | None]


@final
class PlanUpdateContentOther(TypedDict):
    """`PlanUpdateContent` variant: other. Custom or future plan update content."""

    type: str
    planId: PlanId


PlanUpdateContent: TypeAlias = PlanUpdateContentItems | PlanUpdateContentOther
"""Updated content for a plan."""


@final
class PlanUpdate(TypedDict):
    """A content update for a plan identified by ID."""

    plan: PlanUpdateContent
    _meta: NotRequired[JsonObject | None]


@final
class AvailableCommandsUpdate(TypedDict):
    """Available commands are ready or have changed"""

    availableCommands: list[AvailableCommand]
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
    position. Later updates with the same ID patch that entity in place.
    """

    compactionId: CompactionId
    status: CompactionStatus
    summary: NotRequired[list[ContentBlock] | None]
    error: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class CompactionSummaryChunk(TypedDict):
    """A content block appended to a compaction's summary. A first-seen ID creates an in-progress
    compaction. Chunks append in receive order.
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
    messageId: MessageId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateUserMessage(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "user_message"`. A user message has been created
    or updated.
    """

    sessionUpdate: Literal["user_message"]
    messageId: MessageId
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateAgentMessageChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "agent_message_chunk"`. A chunk of the agent's
    response being streamed.
    """

    sessionUpdate: Literal["agent_message_chunk"]
    messageId: MessageId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateAgentMessage(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "agent_message"`. An agent message has been
    created or updated.
    """

    sessionUpdate: Literal["agent_message"]
    messageId: MessageId
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateAgentThoughtChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "agent_thought_chunk"`. A chunk of the agent's
    internal reasoning being streamed.
    """

    sessionUpdate: Literal["agent_thought_chunk"]
    messageId: MessageId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateAgentThought(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "agent_thought"`. An agent thought or reasoning
    message has been created or updated.
    """

    sessionUpdate: Literal["agent_thought"]
    messageId: MessageId
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateStateUpdateRunning(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "running"`. A snapshot
    of the session's aggregate foreground activity. Foreground work is in progress.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["running"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateStateUpdateIdleEndTurn(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, `stopReason:
    "end_turn"`. A snapshot of the session's aggregate foreground activity. No foreground work is
    active. Background activity may continue. The active work ended successfully. Includes
    locally handled commands that required no model call.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["end_turn"]


@final
class SessionUpdateStateUpdateIdleMaxTokens(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, `stopReason:
    "max_tokens"`. A snapshot of the session's aggregate foreground activity. No foreground work
    is active. Background activity may continue. The active work ended because the agent reached
    the maximum number of tokens.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_tokens"]


@final
class SessionUpdateStateUpdateIdleMaxTurnRequests(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, `stopReason:
    "max_turn_requests"`. A snapshot of the session's aggregate foreground activity. No
    foreground work is active. Background activity may continue. The active work ended because
    the agent reached the maximum number of model requests for the foreground work.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_turn_requests"]


@final
class SessionUpdateStateUpdateIdleRefusal(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, `stopReason:
    "refusal"`. A snapshot of the session's aggregate foreground activity. No foreground work is
    active. Background activity may continue. The active work ended because the agent refused to
    continue.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["refusal"]


@final
class SessionUpdateStateUpdateIdleCancelled(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, `stopReason:
    "cancelled"`. A snapshot of the session's aggregate foreground activity. No foreground work
    is active. Background activity may continue. The user or client chose to stop the work: via
    `session/cancel`, by closing the session, or through an interaction the agent offers, such as
    a permission option that tells the agent to stop. Work the agent stops for its own reasons
    uses another reason, such as `error` for an internal timeout.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["cancelled"]


@final
class SessionUpdateStateUpdateIdleError(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, `stopReason:
    "error"`. A snapshot of the session's aggregate foreground activity. No foreground work is
    active. Background activity may continue. The active work ended because something failed.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["error"]
    error: NotRequired[Error | None]


@final
class SessionUpdateStateUpdateIdleOther(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, other. A
    snapshot of the session's aggregate foreground activity. No foreground work is active.
    Background activity may continue. Custom or future stop reason.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: str


@final
class SessionUpdateStateUpdateIdleNone(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "idle"`, none. A
    snapshot of the session's aggregate foreground activity. No foreground work is active.
    Background activity may continue. No stop reason: `stopReason` is omitted or `null`.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["idle"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: NotRequired[None]


@final
class SessionUpdateStateUpdateRequiresAction(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "requires_action"`. A
    snapshot of the session's aggregate foreground activity. Foreground work is blocked on user
    action.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["requires_action"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateStateUpdateOther(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, other. A snapshot of the
    session's aggregate foreground activity. Custom or future session state.
    """

    sessionUpdate: Literal["state_update"]
    state: str


@final
class SessionUpdateToolCallContentChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "tool_call_content_chunk"`. A chunk of tool-call
    content being streamed.
    """

    sessionUpdate: Literal["tool_call_content_chunk"]
    toolCallId: ToolCallId
    content: ToolCallContent
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateToolCallUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "tool_call_update"`. A tool call has been created
    or updated.
    """

    sessionUpdate: Literal["tool_call_update"]
    toolCallId: ToolCallId
    name: NotRequired[str | None]
    title: NotRequired[str | None]
    kind: NotRequired[ToolKind | None]
    status: NotRequired[ToolCallStatus | None]
    content: NotRequired[list[ToolCallContent] | None]
    locations: NotRequired[list[ToolCallLocation] | None]
    rawInput: NotRequired[JsonValue]
    rawOutput: NotRequired[JsonValue]
    capabilities: NotRequired[ToolCallCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateTerminalUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "terminal_update"`. An agent-owned terminal has
    been created or updated.
    """

    sessionUpdate: Literal["terminal_update"]
    terminalId: TerminalId
    command: NotRequired[str | None]
    cwd: NotRequired[AbsolutePath | None]
    output: NotRequired[TerminalOutput | None]
    exitStatus: NotRequired[TerminalExitStatus | None]
    size: NotRequired[TerminalSize | None]
    capabilities: NotRequired[TerminalCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateTerminalOutputChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "terminal_output_chunk"`. A chunk of bytes
    appended to an agent-owned terminal's output.
    """

    sessionUpdate: Literal["terminal_output_chunk"]
    terminalId: TerminalId
    data: str
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdatePlanUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "plan_update"`. A content update for a plan
    identified by ID. See protocol docs: [Agent
    Plan](https://agentclientprotocol.com/protocol/v2/agent-plan)
    """

    sessionUpdate: Literal["plan_update"]
    plan: PlanUpdateContent
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


@final
class SessionUpdateOther(TypedDict):
    """`SessionUpdate` variant: other. Custom or future session update."""

    sessionUpdate: str


SessionUpdate: TypeAlias = (
    SessionUpdateUserMessageChunk
    | SessionUpdateUserMessage
    | SessionUpdateAgentMessageChunk
    | SessionUpdateAgentMessage
    | SessionUpdateAgentThoughtChunk
    | SessionUpdateAgentThought
    | SessionUpdateStateUpdateRunning
    | SessionUpdateStateUpdateIdleEndTurn
    | SessionUpdateStateUpdateIdleMaxTokens
    | SessionUpdateStateUpdateIdleMaxTurnRequests
    | SessionUpdateStateUpdateIdleRefusal
    | SessionUpdateStateUpdateIdleCancelled
    | SessionUpdateStateUpdateIdleError
    | SessionUpdateStateUpdateIdleOther
    | SessionUpdateStateUpdateIdleNone
    | SessionUpdateStateUpdateRequiresAction
    | SessionUpdateStateUpdateOther
    | SessionUpdateToolCallContentChunk
    | SessionUpdateToolCallUpdate
    | SessionUpdateTerminalUpdate
    | SessionUpdateTerminalOutputChunk
    | SessionUpdatePlanUpdate
    | SessionUpdateAvailableCommandsUpdate
    | SessionUpdateConfigOptionUpdate
    | SessionUpdateSessionInfoUpdate
    | SessionUpdateUsageUpdate
    | SessionUpdateNotice
    | SessionUpdateCompactionUpdate
    | SessionUpdateCompactionSummaryChunk
    | SessionUpdateOther
)
"""Different types of updates that can be sent while a session exists."""


@final
class UpdateSessionNotification(TypedDict):
    """`session/update` notification to the client. Notification containing a session update from
    the agent.
    """

    sessionId: SessionId
    update: SessionUpdate
    _meta: NotRequired[JsonObject | None]


IdleStateUpdate: TypeAlias = (
    IdleStateUpdateEndTurn
    | IdleStateUpdateMaxTokens
    | IdleStateUpdateMaxTurnRequests
    | IdleStateUpdateRefusal
    | IdleStateUpdateCancelled
    | IdleStateUpdateError
    | IdleStateUpdateOther
    | IdleStateUpdateNone
)
"""No foreground work is active. Background activity may continue."""


StateUpdate: TypeAlias = (
    StateUpdateRunning
    | StateUpdateIdleEndTurn
    | StateUpdateIdleMaxTokens
    | StateUpdateIdleMaxTurnRequests
    | StateUpdateIdleRefusal
    | StateUpdateIdleCancelled
    | StateUpdateIdleError
    | StateUpdateIdleOther
    | StateUpdateIdleNone
    | StateUpdateRequiresAction
    | StateUpdateOther
)
"""A snapshot of the session's aggregate foreground activity."""


@final
class CancelToolCallRequest(TypedDict):
    """`tool_call/cancel` request to the agent. Request parameters for cancelling one tool call."""

    sessionId: SessionId
    toolCallId: ToolCallId
    _meta: NotRequired[JsonObject | None]


@final
class CancelTerminalRequest(TypedDict):
    """`terminal/cancel` request to the agent. Request parameters for cancelling one terminal."""

    sessionId: SessionId
    terminalId: TerminalId
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
class CancelSessionNotification(TypedDict):
    """`session/cancel` notification to the agent. Notification to cancel a session's foreground
    work and its prompts not yet inserted.
    """

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]
