"""Methods the client answers: `session/request_permission`, `fs/*`, `terminal/*`.

Generated from acp_server/schema/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.common import (
    EnvVariable,
    JsonObject,
    SessionId,
    TerminalId,
    ToolCallUpdate,
)


@final
class WriteTextFileRequest(TypedDict):
    """`fs/write_text_file` request to the client. Request to write content to a text file."""

    sessionId: SessionId
    path: str
    content: str
    _meta: NotRequired[JsonObject | None]


@final
class ReadTextFileRequest(TypedDict):
    """`fs/read_text_file` request to the client. Request to read content from a text file."""

    sessionId: SessionId
    path: str
    line: NotRequired[int | None]
    limit: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


PermissionOptionId: TypeAlias = str
"""Unique identifier for a permission option."""


PermissionOptionKind: TypeAlias = Literal[
    "allow_once", "allow_always", "reject_once", "reject_always"
]
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
    """`session/request_permission` request to the client. Request for user permission to execute
    a tool call.
    """

    sessionId: SessionId
    toolCall: ToolCallUpdate
    options: list[PermissionOption]
    _meta: NotRequired[JsonObject | None]


@final
class CreateTerminalRequest(TypedDict):
    """`terminal/create` request to the client. Request to create a new terminal and execute a
    command.
    """

    sessionId: SessionId
    command: str
    args: NotRequired[list[str]]
    env: NotRequired[list[EnvVariable]]
    cwd: NotRequired[str | None]
    outputByteLimit: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


@final
class TerminalOutputRequest(TypedDict):
    """`terminal/output` request to the client. Request to get the current output and status of a
    terminal.
    """

    sessionId: SessionId
    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class ReleaseTerminalRequest(TypedDict):
    """`terminal/release` request to the client. Request to release a terminal and free its
    resources.
    """

    sessionId: SessionId
    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class WaitForTerminalExitRequest(TypedDict):
    """`terminal/wait_for_exit` request to the client. Request to wait for a terminal command to
    exit.
    """

    sessionId: SessionId
    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class KillTerminalRequest(TypedDict):
    """`terminal/kill` request to the client. Request to kill a terminal without releasing it."""

    sessionId: SessionId
    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class WriteTextFileResponse(TypedDict):
    """`fs/write_text_file` result from the client. Response to `fs/write_text_file`"""

    _meta: NotRequired[JsonObject | None]


@final
class ReadTextFileResponse(TypedDict):
    """`fs/read_text_file` result from the client. Response containing the contents of a text
    file.
    """

    content: str
    _meta: NotRequired[JsonObject | None]


@final
class SelectedPermissionOutcome(TypedDict):
    """The user selected one of the provided options."""

    optionId: PermissionOptionId
    _meta: NotRequired[JsonObject | None]


@final
class RequestPermissionOutcomeCancelled(TypedDict):
    """`RequestPermissionOutcome` variant: `outcome: "cancelled"`. The prompt turn was cancelled
    before the user responded.
    """

    outcome: Literal["cancelled"]


@final
class RequestPermissionOutcomeSelected(TypedDict):
    """`RequestPermissionOutcome` variant: `outcome: "selected"`. The user selected one of the
    provided options.
    """

    outcome: Literal["selected"]
    optionId: PermissionOptionId
    _meta: NotRequired[JsonObject | None]


RequestPermissionOutcome: TypeAlias = (
    RequestPermissionOutcomeCancelled | RequestPermissionOutcomeSelected
)
"""The outcome of a permission request."""


@final
class RequestPermissionResponse(TypedDict):
    """`session/request_permission` result from the client. Response to a permission request."""

    outcome: RequestPermissionOutcome
    _meta: NotRequired[JsonObject | None]


@final
class CreateTerminalResponse(TypedDict):
    """`terminal/create` result from the client. Response containing the ID of the created
    terminal.
    """

    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class TerminalExitStatus(TypedDict):
    """Exit status of a terminal command."""

    exitCode: NotRequired[int | None]
    signal: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class TerminalOutputResponse(TypedDict):
    """`terminal/output` result from the client. Response containing the terminal output and exit
    status.
    """

    output: str
    truncated: bool
    exitStatus: NotRequired[TerminalExitStatus | None]
    _meta: NotRequired[JsonObject | None]


@final
class ReleaseTerminalResponse(TypedDict):
    """`terminal/release` result from the client. Response to terminal/release method"""

    _meta: NotRequired[JsonObject | None]


@final
class WaitForTerminalExitResponse(TypedDict):
    """`terminal/wait_for_exit` result from the client. Response containing the exit status of a
    terminal command.
    """

    exitCode: NotRequired[int | None]
    signal: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class KillTerminalResponse(TypedDict):
    """`terminal/kill` result from the client. Response to `terminal/kill` method"""

    _meta: NotRequired[JsonObject | None]
