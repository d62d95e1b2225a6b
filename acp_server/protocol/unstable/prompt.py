"""Unstable prompt: what is new or differs from `acp_server.protocol.prompt`.

Generated from acp_server/schema/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.common import ContentBlock, Error, JsonObject, SessionId
from acp_server.protocol.prompt import (
    MessageId,
    PlanEntry,
    SessionUpdateAgentMessageChunk,
    SessionUpdateAgentThoughtChunk,
    SessionUpdateAvailableCommandsUpdate,
    SessionUpdateCompactionSummaryChunk,
    SessionUpdateCompactionUpdate,
    SessionUpdateConfigOptionUpdate,
    SessionUpdateCurrentModeUpdate,
    SessionUpdateNotice,
    SessionUpdatePlan,
    SessionUpdateSessionInfoUpdate,
    SessionUpdateToolCall,
    SessionUpdateToolCallUpdate,
    SessionUpdateUsageUpdate,
    SessionUpdateUserMessageChunk,
    StopReason,
)


@final
class Usage(TypedDict):
    """Token usage information for a prompt turn."""

    totalTokens: int
    inputTokens: int
    outputTokens: int
    thoughtTokens: NotRequired[int | None]
    cachedReadTokens: NotRequired[int | None]
    cachedWriteTokens: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


@final
class PromptResponse(TypedDict):
    """`session/prompt` result from the agent. Response from processing a user prompt."""

    stopReason: StopReason
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]


PlanId: TypeAlias = str
"""Unique identifier for a plan within a session."""


@final
class PlanItems(TypedDict):
    """A plan represented as structured entries."""

    planId: PlanId
    entries: list[PlanEntry]
    _meta: NotRequired[JsonObject | None]


@final
class PlanFile(TypedDict):
    """A plan represented by a file URI."""

    planId: PlanId
    uri: str
    _meta: NotRequired[JsonObject | None]


@final
class PlanMarkdown(TypedDict):
    """A plan represented as raw markdown content."""

    planId: PlanId
    content: str
    _meta: NotRequired[JsonObject | None]


@final
class PlanUpdateContentItems(TypedDict):
    """`PlanUpdateContent` variant: `type: "items"`. Structured plan entries."""

    type: Literal["items"]
    planId: PlanId
    entries: list[PlanEntry]
    _meta: NotRequired[JsonObject | None]


@final
class PlanUpdateContentFile(TypedDict):
    """`PlanUpdateContent` variant: `type: "file"`. A URI pointing to a file containing the plan."""

    type: Literal["file"]
    planId: PlanId
    uri: str
    _meta: NotRequired[JsonObject | None]


@final
class PlanUpdateContentMarkdown(TypedDict):
    """`PlanUpdateContent` variant: `type: "markdown"`. Raw markdown content for the plan."""

    type: Literal["markdown"]
    planId: PlanId
    content: str
    _meta: NotRequired[JsonObject | None]


PlanUpdateContent: TypeAlias = (
    PlanUpdateContentItems | PlanUpdateContentFile | PlanUpdateContentMarkdown
)
"""Updated content for a plan."""


@final
class PlanUpdate(TypedDict):
    """A content update for a plan identified by ID."""

    plan: PlanUpdateContent
    _meta: NotRequired[JsonObject | None]


@final
class PlanRemoved(TypedDict):
    """Removal notice for a plan identified by ID."""

    planId: PlanId
    _meta: NotRequired[JsonObject | None]


@final
class SessionCancelCapabilities(TypedDict):
    """Capability to cancel work in a subagent session without ending that session."""

    _meta: NotRequired[JsonObject | None]


@final
class SubagentSessionCapabilities(TypedDict):
    """Client-initiated session mutations permitted for a specific subagent session."""

    cancel: NotRequired[SessionCancelCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class RunningStateUpdate(TypedDict):
    """Foreground work is in progress."""

    _meta: NotRequired[JsonObject | None]


@final
class ErrorStopReason(TypedDict):
    """Details of a failure that ended a child's foreground work."""

    error: NotRequired[Error | None]


@final
class IdleStateUpdateEndTurn(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "end_turn"`. The work ended successfully."""

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["end_turn"]


@final
class IdleStateUpdateMaxTokens(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "max_tokens"`. The work ended because the agent
    reached the maximum number of tokens.
    """

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_tokens"]


@final
class IdleStateUpdateMaxTurnRequests(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "max_turn_requests"`. The work ended because the
    agent reached the maximum number of allowed agent requests.
    """

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_turn_requests"]


@final
class IdleStateUpdateRefusal(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "refusal"`. The work ended because the agent
    refused to continue.
    """

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["refusal"]


@final
class IdleStateUpdateCancelled(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "cancelled"`. The work was cancelled."""

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["cancelled"]


@final
class IdleStateUpdateError(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "error"`. The work ended because something failed."""

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["error"]
    error: NotRequired[Error | None]


@final
class IdleStateUpdateOther(TypedDict):
    """`IdleStateUpdate` variant: other. Custom or future stop reason."""

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: str


@final
class IdleStateUpdateNone(TypedDict):
    """`IdleStateUpdate` variant: none. No stop reason: `stopReason` is omitted or `null`."""

    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: NotRequired[None]


@final
class RequiresActionStateUpdate(TypedDict):
    """Foreground work is blocked on user action."""

    _meta: NotRequired[JsonObject | None]


@final
class UnknownStateUpdate(TypedDict):
    """The Agent cannot currently determine foreground activity."""

    _meta: NotRequired[JsonObject | None]


@final
class StateUpdateRunning(TypedDict):
    """`StateUpdate` variant: `state: "running"`. Foreground work is in progress."""

    state: Literal["running"]
    _meta: NotRequired[JsonObject | None]


@final
class StateUpdateIdleEndTurn(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "end_turn"`. The child is ready to
    process another prompt. The work ended successfully.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["end_turn"]


@final
class StateUpdateIdleMaxTokens(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "max_tokens"`. The child is ready to
    process another prompt. The work ended because the agent reached the maximum number of
    tokens.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_tokens"]


@final
class StateUpdateIdleMaxTurnRequests(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "max_turn_requests"`. The child is
    ready to process another prompt. The work ended because the agent reached the maximum number
    of allowed agent requests.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_turn_requests"]


@final
class StateUpdateIdleRefusal(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "refusal"`. The child is ready to
    process another prompt. The work ended because the agent refused to continue.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["refusal"]


@final
class StateUpdateIdleCancelled(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "cancelled"`. The child is ready to
    process another prompt. The work was cancelled.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["cancelled"]


@final
class StateUpdateIdleError(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "error"`. The child is ready to
    process another prompt. The work ended because something failed.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["error"]
    error: NotRequired[Error | None]


@final
class StateUpdateIdleOther(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, other. The child is ready to process another
    prompt. Custom or future stop reason.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: str


@final
class StateUpdateIdleNone(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, none. The child is ready to process another
    prompt. No stop reason: `stopReason` is omitted or `null`.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: NotRequired[None]


@final
class StateUpdateRequiresAction(TypedDict):
    """`StateUpdate` variant: `state: "requires_action"`. Foreground work is blocked on user
    action.
    """

    state: Literal["requires_action"]
    _meta: NotRequired[JsonObject | None]


@final
class StateUpdateUnknown(TypedDict):
    """`StateUpdate` variant: `state: "unknown"`. The Agent cannot currently determine foreground
    activity.
    """

    state: Literal["unknown"]
    _meta: NotRequired[JsonObject | None]


@final
class StateUpdateOther(TypedDict):
    """`StateUpdate` variant: other. Custom or future state."""

    state: str


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
    | StateUpdateUnknown
    | StateUpdateOther
)
"""Current foreground-work state of a reusable child session."""


@final
class SubagentUpdate(TypedDict):
    """Notification that the enclosing parent session created and owns a child session."""

    sessionId: SessionId
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    capabilities: NotRequired[SubagentSessionCapabilities | None]
    state: NotRequired[StateUpdate | None]
    cwd: NotRequired[str | None]
    additionalDirectories: NotRequired[list[str] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionMessage(TypedDict):
    """An upsert for an inter-session message."""

    messageId: MessageId
    senderSessionId: NotRequired[SessionId | None]
    recipientSessionId: NotRequired[SessionId | None]
    senderMessageId: NotRequired[MessageId | None]
    recipientMessageId: NotRequired[MessageId | None]
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionMessageChunk(TypedDict):
    """A streamed content block of an inter-session message."""

    messageId: MessageId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdatePlanUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "plan_update"`. A content update for a plan
    identified by ID.
    """

    sessionUpdate: Literal["plan_update"]
    plan: PlanUpdateContent
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdatePlanRemoved(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "plan_removed"`. Removal notice for a plan
    identified by ID.
    """

    sessionUpdate: Literal["plan_removed"]
    planId: PlanId
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateSubagentUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "subagent_update"`. Announces a child session
    created and owned by this session, or updates that ownership association's metadata.
    """

    sessionUpdate: Literal["subagent_update"]
    sessionId: SessionId
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    capabilities: NotRequired[SubagentSessionCapabilities | None]
    state: NotRequired[StateUpdate | None]
    cwd: NotRequired[str | None]
    additionalDirectories: NotRequired[list[str] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateSessionMessage(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "session_message"`. A message upsert observed in
    this session's transcript, sent to or received from another session.
    """

    sessionUpdate: Literal["session_message"]
    messageId: MessageId
    senderSessionId: NotRequired[SessionId | None]
    recipientSessionId: NotRequired[SessionId | None]
    senderMessageId: NotRequired[MessageId | None]
    recipientMessageId: NotRequired[MessageId | None]
    content: NotRequired[list[ContentBlock] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdateSessionMessageChunk(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "session_message_chunk"`. One content block
    appended to a sent or received session message.
    """

    sessionUpdate: Literal["session_message_chunk"]
    messageId: MessageId
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


SessionUpdate: TypeAlias = (
    SessionUpdateUserMessageChunk
    | SessionUpdateAgentMessageChunk
    | SessionUpdateAgentThoughtChunk
    | SessionUpdateToolCall
    | SessionUpdateToolCallUpdate
    | SessionUpdatePlan
    | SessionUpdatePlanUpdate
    | SessionUpdatePlanRemoved
    | SessionUpdateAvailableCommandsUpdate
    | SessionUpdateCurrentModeUpdate
    | SessionUpdateConfigOptionUpdate
    | SessionUpdateSessionInfoUpdate
    | SessionUpdateUsageUpdate
    | SessionUpdateNotice
    | SessionUpdateCompactionUpdate
    | SessionUpdateCompactionSummaryChunk
    | SessionUpdateSubagentUpdate
    | SessionUpdateSessionMessage
    | SessionUpdateSessionMessageChunk
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
"""The child is ready to process another prompt."""
