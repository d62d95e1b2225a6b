"""ACP v2 (draft): session lifecycle: `session/new|load|resume|list|delete|close|set_*`.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import (
    AbsolutePath,
    AvailableCommand,
    EnvVariable,
    JsonObject,
    JsonValue,
    SessionConfigId,
    SessionConfigOption,
    SessionConfigValueId,
    SessionId,
)


@final
class NewSessionResponse(TypedDict):
    """`session/new` result from the agent. Response from creating a new session."""

    sessionId: SessionId
    configOptions: NotRequired[list[SessionConfigOption]]
    availableCommands: NotRequired[list[AvailableCommand]]
    _meta: NotRequired[JsonObject | None]


@final
class SessionInfo(TypedDict):
    """Information about a session returned by session/list"""

    sessionId: SessionId
    cwd: AbsolutePath
    additionalDirectories: NotRequired[list[AbsolutePath]]
    title: NotRequired[str | None]
    updatedAt: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


SessionListCursor: TypeAlias = str
"""An opaque cursor used to paginate `session/list` results."""


@final
class ListSessionsResponse(TypedDict):
    """`session/list` result from the agent. Response from listing sessions."""

    sessions: list[SessionInfo]
    nextCursor: NotRequired[SessionListCursor | None]
    _meta: NotRequired[JsonObject | None]


@final
class DeleteSessionResponse(TypedDict):
    """`session/delete` result from the agent. Response from deleting a session."""

    _meta: NotRequired[JsonObject | None]


@final
class ResumeSessionResponse(TypedDict):
    """`session/resume` result from the agent. Response from resuming an existing session."""

    configOptions: NotRequired[list[SessionConfigOption]]
    availableCommands: NotRequired[list[AvailableCommand]]
    _meta: NotRequired[JsonObject | None]


@final
class CloseSessionResponse(TypedDict):
    """`session/close` result from the agent. Response from closing a session."""

    _meta: NotRequired[JsonObject | None]


@final
class SetSessionConfigOptionResponse(TypedDict):
    """`session/set_config_option` result from the agent. Response to `session/set_config_option`
    method.
    """

    configOptions: list[SessionConfigOption]
    _meta: NotRequired[JsonObject | None]


@final
class HttpHeader(TypedDict):
    """An HTTP header to set when making requests to the MCP server."""

    name: str
    value: str
    _meta: NotRequired[JsonObject | None]


@final
class McpServerHttp(TypedDict):
    """HTTP transport configuration for MCP."""

    name: str
    url: str
    headers: NotRequired[list[HttpHeader]]
    _meta: NotRequired[JsonObject | None]


@final
class McpServerStdio(TypedDict):
    """Stdio transport configuration for MCP."""

    name: str
    command: AbsolutePath
    args: NotRequired[list[str]]
    env: NotRequired[list[EnvVariable]]
    _meta: NotRequired[JsonObject | None]


@final
class HttpMcpServer(TypedDict):
    """`McpServer` variant: `type: "http"`. HTTP transport configuration"""

    type: Literal["http"]
    name: str
    url: str
    headers: NotRequired[list[HttpHeader]]
    _meta: NotRequired[JsonObject | None]


@final
class StdioMcpServer(TypedDict):
    """`McpServer` variant: `type: "stdio"`. Stdio transport configuration"""

    type: Literal["stdio"]
    name: str
    command: AbsolutePath
    args: NotRequired[list[str]]
    env: NotRequired[list[EnvVariable]]
    _meta: NotRequired[JsonObject | None]


@final
class McpServerOther(TypedDict):
    """`McpServer` variant: other. Custom or future MCP server transport configuration."""

    type: str


McpServer: TypeAlias = HttpMcpServer | StdioMcpServer | McpServerOther
"""Configuration for connecting to an MCP (Model Context Protocol) server."""


@final
class NewSessionRequest(TypedDict):
    """`session/new` request to the agent. Request parameters for creating a new session."""

    cwd: AbsolutePath
    additionalDirectories: NotRequired[list[AbsolutePath]]
    mcpServers: NotRequired[list[McpServer]]
    _meta: NotRequired[JsonObject | None]


@final
class ListSessionsRequest(TypedDict):
    """`session/list` request to the agent. Request parameters for listing existing sessions."""

    cwd: NotRequired[AbsolutePath | None]
    cursor: NotRequired[SessionListCursor | None]
    _meta: NotRequired[JsonObject | None]


@final
class DeleteSessionRequest(TypedDict):
    """`session/delete` request to the agent. Request parameters for deleting an existing session
    from `session/list`.
    """

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class ReplayFromStart(TypedDict):
    """Inclusive replay cursor requesting replay from the start of retained conversation history."""

    _meta: NotRequired[JsonObject | None]


@final
class StartReplayFrom(TypedDict):
    """`ReplayFrom` variant: `type: "start"`. Replay all retained conversation history from its
    first replayable entry.
    """

    type: Literal["start"]
    _meta: NotRequired[JsonObject | None]


@final
class ReplayFromOther(TypedDict):
    """`ReplayFrom` variant: other. Custom or future replay cursor."""

    type: str


ReplayFrom: TypeAlias = StartReplayFrom | ReplayFromOther
"""Inclusive cursor describing where replayed session history should begin."""


@final
class ResumeSessionRequest(TypedDict):
    """`session/resume` request to the agent. Request parameters for resuming an existing
    session.
    """

    sessionId: SessionId
    cwd: AbsolutePath
    additionalDirectories: NotRequired[list[AbsolutePath]]
    mcpServers: NotRequired[list[McpServer]]
    replayFrom: NotRequired[ReplayFrom | None]
    _meta: NotRequired[JsonObject | None]


@final
class CloseSessionRequest(TypedDict):
    """`session/close` request to the agent. Request parameters for closing an active session."""

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class SetSessionConfigOptionRequestId(TypedDict):
    """`SetSessionConfigOptionRequest` variant: `type: "id"`. A `SessionConfigValueId` string
    value (`type: "id"`).
    """

    sessionId: SessionId
    configId: SessionConfigId
    _meta: NotRequired[JsonObject | None]
    type: Literal["id"]
    value: SessionConfigValueId


@final
class SetSessionConfigOptionRequestBoolean(TypedDict):
    """`SetSessionConfigOptionRequest` variant: `type: "boolean"`. A boolean value (`type:
    "boolean"`).
    """

    sessionId: SessionId
    configId: SessionConfigId
    _meta: NotRequired[JsonObject | None]
    type: Literal["boolean"]
    value: bool


@final
class SetSessionConfigOptionRequestOther(TypedDict):
    """`SetSessionConfigOptionRequest` variant: other. Custom or future session configuration
    option value payload.
    """

    sessionId: SessionId
    configId: SessionConfigId
    _meta: NotRequired[JsonObject | None]
    type: str
    value: JsonValue


SetSessionConfigOptionRequest: TypeAlias = (
    SetSessionConfigOptionRequestId
    | SetSessionConfigOptionRequestBoolean
    | SetSessionConfigOptionRequestOther
)
"""`session/set_config_option` request to the agent. Request parameters for setting a session
configuration option.
"""
