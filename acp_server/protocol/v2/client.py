"""ACP v2 (draft): methods the client answers: `session/request_permission`, `fs/*`,
`terminal/*`.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import (
    AbsolutePath,
    JsonObject,
    SessionId,
    TerminalId,
    ToolCallId,
    ToolCallUpdate,
)


@final
class ToolCallPermissionSubject(TypedDict):
    """Permission request details for a tool call."""

    toolCall: ToolCallUpdate
    _meta: NotRequired[JsonObject | None]


@final
class CommandPermissionSubject(TypedDict):
    """Permission request details for a command."""

    command: str
    cwd: AbsolutePath
    toolCallId: NotRequired[ToolCallId | None]
    terminalId: NotRequired[TerminalId | None]
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionSubjectToolCall(TypedDict):
    """`RequestPermissionSubject` variant: `type: "tool_call"`. Permission is requested before
    executing a tool call.
    """

    type: Literal["tool_call"]
    toolCall: ToolCallUpdate
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionSubjectCommand(TypedDict):
    """`RequestPermissionSubject` variant: `type: "command"`. Permission is requested before
    running a command.
    """

    type: Literal["command"]
    command: str
    cwd: AbsolutePath
    toolCallId: NotRequired[ToolCallId | None]
    terminalId: NotRequired[TerminalId | None]
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionSubjectOther(TypedDict):
    """`RequestPermissionSubject` variant: other. Custom or future permission subject."""

    type: str


RequestPermissionSubject: TypeAlias = (
    RequestPermissionSubjectToolCall
    | RequestPermissionSubjectCommand
    | RequestPermissionSubjectOther
)
"""The operation requiring permission."""


PermissionOptionId: TypeAlias = str
"""Unique identifier for a permission option."""


PermissionOptionKind: TypeAlias = (
    Literal["allow_once", "allow_always", "reject_once", "reject_always"] | str
)
"""The type of permission option being presented to the user."""


@final
class PermissionOption(TypedDict):
    """An option presented to the user when requesting permission."""

    optionId: PermissionOptionId
    name: str
    kind: PermissionOptionKind
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionRequest(TypedDict):
    """`session/request_permission` request to the client. Request for user permission to proceed
    with an operation.
    """

    sessionId: SessionId
    title: str
    description: NotRequired[str | None]
    subject: NotRequired[RequestPermissionSubject | None]
    options: list[PermissionOption]
    _meta: NotRequired[JsonObject | None]


@final
class CancelledPermissionOutcome(TypedDict):
    """The request was not approved and no option was selected."""

    _meta: NotRequired[JsonObject | None]


@final
class SelectedPermissionOutcome(TypedDict):
    """The user selected one of the provided options."""

    optionId: PermissionOptionId
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionOutcomeCancelled(TypedDict):
    """`RequestPermissionOutcome` variant: `outcome: "cancelled"`. The request was not approved
    and no option was selected: the session's work was cancelled, the user dismissed the prompt,
    or the client declined it by policy. Agents MUST NOT proceed with the operation.
    """

    outcome: Literal["cancelled"]
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionOutcomeSelected(TypedDict):
    """`RequestPermissionOutcome` variant: `outcome: "selected"`. The user selected one of the
    provided options.
    """

    outcome: Literal["selected"]
    optionId: PermissionOptionId
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionOutcomeOther(TypedDict):
    """`RequestPermissionOutcome` variant: other. Custom or future permission outcome."""

    outcome: str


RequestPermissionOutcome: TypeAlias = (
    RequestPermissionOutcomeCancelled
    | RequestPermissionOutcomeSelected
    | RequestPermissionOutcomeOther
)
"""The outcome of a permission request."""


@final
class RequestPermissionResponse(TypedDict):
    """`session/request_permission` result from the client. Response to a permission request."""

    outcome: RequestPermissionOutcome
    _meta: NotRequired[JsonObject | None]
