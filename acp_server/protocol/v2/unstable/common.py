"""Unstable common: what is new or differs from `acp_server.protocol.v2.common`.

Generated from acp_server/schema/v2/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import JsonObject, SessionId
from acp_server.protocol.v2.prompt import (
    BackgroundWorkOther,
    BackgroundWorkTerminal,
    BackgroundWorkToolCall,
    Error,
    StateUpdateOther,
)

McpServerAcpId: TypeAlias = str
"""Unique identifier for an MCP server using the ACP transport."""


@final
class BackgroundSubagent(TypedDict):
    """A listed subagent session associated with this session through `subagent_update`."""

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class BackgroundWorkSubagent(TypedDict):
    """`BackgroundWork` variant: `type: "subagent"`. A detached subagent session that has
    anything running: its state is not `idle`, or its own `background` list is non-empty or not
    reported.
    """

    type: Literal["subagent"]
    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


BackgroundWork: TypeAlias = (
    BackgroundWorkTerminal | BackgroundWorkToolCall | BackgroundWorkSubagent | BackgroundWorkOther
)
"""One piece of work running independently of the session's foreground work."""


@final
class RunningStateUpdate(TypedDict):
    """Foreground work is in progress."""

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class Usage(TypedDict):
    """Token usage for the foreground work that just completed, not cumulative for the session."""

    totalTokens: int
    inputTokens: int
    outputTokens: int
    thoughtTokens: NotRequired[int | None]
    cachedReadTokens: NotRequired[int | None]
    cachedWriteTokens: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


@final
class IdleStateUpdateEndTurn(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "end_turn"`. The active work ended successfully.
    Includes locally handled commands that required no model call.
    """

    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["end_turn"]


@final
class IdleStateUpdateMaxTokens(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "max_tokens"`. The active work ended because the
    agent reached the maximum number of tokens.
    """

    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_tokens"]


@final
class IdleStateUpdateMaxTurnRequests(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "max_turn_requests"`. The active work ended
    because the agent reached the maximum number of model requests for the foreground work.
    """

    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["max_turn_requests"]


@final
class IdleStateUpdateRefusal(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "refusal"`. The active work ended because the
    agent refused to continue.
    """

    usage: NotRequired[Usage | None]
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

    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["cancelled"]


@final
class IdleStateUpdateError(TypedDict):
    """`IdleStateUpdate` variant: `stopReason: "error"`. The active work ended because something
    failed.
    """

    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["error"]
    error: NotRequired[Error | None]


@final
class IdleStateUpdateOther(TypedDict):
    """`IdleStateUpdate` variant: other. Custom or future stop reason."""

    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: str


@final
class IdleStateUpdateNone(TypedDict):
    """`IdleStateUpdate` variant: none. No stop reason: `stopReason` is omitted or `null`."""

    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: NotRequired[None]


@final
class RequiresActionStateUpdate(TypedDict):
    """The foreground workflow as a whole is blocked on user action."""

    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


@final
class UnknownStateUpdate(TypedDict):
    """The Agent cannot currently determine foreground activity."""

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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: Literal["cancelled"]


@final
class StateUpdateIdleError(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, `stopReason: "error"`. No foreground work is
    active. Background activity may continue. The active work ended because something failed.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
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
    usage: NotRequired[Usage | None]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]
    stopReason: str


@final
class StateUpdateIdleNone(TypedDict):
    """`StateUpdate` variant: `state: "idle"`, none. No foreground work is active. Background
    activity may continue. No stop reason: `stopReason` is omitted or `null`.
    """

    state: Literal["idle"]
    usage: NotRequired[Usage | None]
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
class StateUpdateUnknown(TypedDict):
    """`StateUpdate` variant: `state: "unknown"`. The Agent cannot currently determine foreground
    activity. This replaces previously confirmed activity without ending the work or session.
    """

    state: Literal["unknown"]
    background: NotRequired[list[BackgroundWork] | None]
    _meta: NotRequired[JsonObject | None]


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
"""A snapshot of the session's aggregate foreground activity."""


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
