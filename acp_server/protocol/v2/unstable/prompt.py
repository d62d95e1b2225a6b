"""Unstable prompt: what is new or differs from `acp_server.protocol.v2.prompt`.

Generated from acp_server/schema/v2/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import AbsolutePath, ContentBlock, JsonObject, SessionId
from acp_server.protocol.v2.prompt import (
    Error,
    MessageId,
    PlanId,
    PlanUpdateContentItems,
    PlanUpdateContentOther,
    SessionUpdateAgentMessage,
    SessionUpdateAgentMessageChunk,
    SessionUpdateAgentThought,
    SessionUpdateAgentThoughtChunk,
    SessionUpdateAvailableCommandsUpdate,
    SessionUpdateCompactionSummaryChunk,
    SessionUpdateCompactionUpdate,
    SessionUpdateConfigOptionUpdate,
    SessionUpdateNotice,
    SessionUpdateOther,
    SessionUpdateSessionInfoUpdate,
    SessionUpdateStateUpdateOther,
    SessionUpdateTerminalOutputChunk,
    SessionUpdateTerminalUpdate,
    SessionUpdateToolCallContentChunk,
    SessionUpdateToolCallUpdate,
    SessionUpdateUsageUpdate,
    SessionUpdateUserMessage,
    SessionUpdateUserMessageChunk,
)
from acp_server.protocol.v2.unstable.common import BackgroundWork, StateUpdate, Usage


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
    PlanUpdateContentItems
    | PlanUpdateContentFile
    | PlanUpdateContentMarkdown
    | PlanUpdateContentOther
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
class SubagentUpdate(TypedDict):
    """Notification that the enclosing parent session created and owns a child session."""

    sessionId: SessionId
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    capabilities: NotRequired[SubagentSessionCapabilities | None]
    state: NotRequired[StateUpdate | None]
    cwd: NotRequired[AbsolutePath | None]
    additionalDirectories: NotRequired[list[AbsolutePath] | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
class SessionUpdateStateUpdateUnknown(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "state_update"`, `state: "unknown"`. A snapshot
    of the session's aggregate foreground activity. The Agent cannot currently determine
    foreground activity. This replaces previously confirmed activity without ending the work or
    session.
    """

    sessionUpdate: Literal["state_update"]
    state: Literal["unknown"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionUpdatePlanUpdate(TypedDict):
    """`SessionUpdate` variant: `sessionUpdate: "plan_update"`. A content update for a plan
    identified by ID. See protocol docs: [Agent
    Plan](https://agentclientprotocol.com/protocol/v2/draft/agent-plan)
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
    cwd: NotRequired[AbsolutePath | None]
    additionalDirectories: NotRequired[list[AbsolutePath] | None]
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
    | SessionUpdateStateUpdateUnknown
    | SessionUpdateStateUpdateOther
    | SessionUpdateToolCallContentChunk
    | SessionUpdateToolCallUpdate
    | SessionUpdateTerminalUpdate
    | SessionUpdateTerminalOutputChunk
    | SessionUpdatePlanUpdate
    | SessionUpdatePlanRemoved
    | SessionUpdateAvailableCommandsUpdate
    | SessionUpdateConfigOptionUpdate
    | SessionUpdateSessionInfoUpdate
    | SessionUpdateUsageUpdate
    | SessionUpdateNotice
    | SessionUpdateCompactionUpdate
    | SessionUpdateCompactionSummaryChunk
    | SessionUpdateSubagentUpdate
    | SessionUpdateSessionMessage
    | SessionUpdateSessionMessageChunk
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
