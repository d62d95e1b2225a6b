"""Session lifecycle: `session/new|load|resume|list|delete|close|set_*`.

Generated from acp_server/schema/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.common import (
    EnvVariable,
    JsonObject,
    SessionConfigId,
    SessionConfigOption,
    SessionConfigValueId,
    SessionId,
    SessionModeId,
)


@final
class SessionMode(TypedDict):
    """A mode the agent can operate in."""

    id: SessionModeId
    name: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionModeState(TypedDict):
    """The set of modes and the one currently active."""

    currentModeId: SessionModeId
    availableModes: list[SessionMode]
    _meta: NotRequired[JsonObject | None]


@final
class NewSessionResponse(TypedDict):
    """`session/new` result from the agent. Response from creating a new session."""

    sessionId: SessionId
    modes: NotRequired[SessionModeState | None]
    configOptions: NotRequired[list[SessionConfigOption] | None]
    _meta: NotRequired[JsonObject | None]


@final
class LoadSessionResponse(TypedDict):
    """`session/load` result from the agent. Response from loading an existing session."""

    modes: NotRequired[SessionModeState | None]
    configOptions: NotRequired[list[SessionConfigOption] | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionInfo(TypedDict):
    """Information about a session returned by session/list"""

    sessionId: SessionId
    cwd: str
    additionalDirectories: NotRequired[list[str]]
    title: NotRequired[str | None]
    updatedAt: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class ListSessionsResponse(TypedDict):
    """`session/list` result from the agent. Response from listing sessions."""

    sessions: list[SessionInfo]
    nextCursor: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class DeleteSessionResponse(TypedDict):
    """`session/delete` result from the agent. Response from deleting a session."""

    _meta: NotRequired[JsonObject | None]


@final
class ResumeSessionResponse(TypedDict):
    """`session/resume` result from the agent. Response from resuming an existing session."""

    modes: NotRequired[SessionModeState | None]
    configOptions: NotRequired[list[SessionConfigOption] | None]
    _meta: NotRequired[JsonObject | None]


@final
class CloseSessionResponse(TypedDict):
    """`session/close` result from the agent. Response from closing a session."""

    _meta: NotRequired[JsonObject | None]


@final
class SetSessionModeResponse(TypedDict):
    """`session/set_mode` result from the agent. Response to `session/set_mode` method."""

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
    headers: list[HttpHeader]
    _meta: NotRequired[JsonObject | None]


@final
class McpServerSse(TypedDict):
    """SSE transport configuration for MCP."""

    name: str
    url: str
    headers: list[HttpHeader]
    _meta: NotRequired[JsonObject | None]


@final
class McpServerStdio(TypedDict):
    """Stdio transport configuration for MCP."""

    name: str
    command: str
    args: list[str]
    env: list[EnvVariable]
    _meta: NotRequired[JsonObject | None]


@final
class HttpMcpServer(TypedDict):
    """`McpServer` variant: `type: "http"`. HTTP transport configuration"""

    type: Literal["http"]
    name: str
    url: str
    headers: list[HttpHeader]
    _meta: NotRequired[JsonObject | None]


@final
class SseMcpServer(TypedDict):
    """`McpServer` variant: `type: "sse"`. SSE transport configuration"""

    type: Literal["sse"]
    name: str
    url: str
    headers: list[HttpHeader]
    _meta: NotRequired[JsonObject | None]


McpServer: TypeAlias = HttpMcpServer | SseMcpServer | McpServerStdio
"""Configuration for connecting to an MCP (Model Context Protocol) server."""


@final
class NewSessionRequest(TypedDict):
    """`session/new` request to the agent. Request parameters for creating a new session."""

    cwd: str
    additionalDirectories: NotRequired[list[str]]
    mcpServers: list[McpServer]
    _meta: NotRequired[JsonObject | None]


@final
class LoadSessionRequest(TypedDict):
    """`session/load` request to the agent. Request parameters for loading an existing session."""

    mcpServers: list[McpServer]
    cwd: str
    additionalDirectories: NotRequired[list[str]]
    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class ListSessionsRequest(TypedDict):
    """`session/list` request to the agent. Request parameters for listing existing sessions."""

    cwd: NotRequired[str | None]
    cursor: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class DeleteSessionRequest(TypedDict):
    """`session/delete` request to the agent. Request parameters for deleting an existing session
    from `session/list`.
    """

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class ResumeSessionRequest(TypedDict):
    """`session/resume` request to the agent. Request parameters for resuming an existing
    session.
    """

    sessionId: SessionId
    cwd: str
    additionalDirectories: NotRequired[list[str]]
    mcpServers: NotRequired[list[McpServer]]
    _meta: NotRequired[JsonObject | None]


@final
class CloseSessionRequest(TypedDict):
    """`session/close` request to the agent. Request parameters for closing an active session."""

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class SetSessionModeRequest(TypedDict):
    """`session/set_mode` request to the agent. Request parameters for setting a session mode."""

    sessionId: SessionId
    modeId: SessionModeId
    _meta: NotRequired[JsonObject | None]


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
class SetSessionConfigOptionRequestValueId(TypedDict):
    """`SetSessionConfigOptionRequest` variant: value_id. A `SessionConfigValueId` string value."""

    sessionId: SessionId
    configId: SessionConfigId
    _meta: NotRequired[JsonObject | None]
    value: SessionConfigValueId


SetSessionConfigOptionRequest: TypeAlias = (
    SetSessionConfigOptionRequestBoolean | SetSessionConfigOptionRequestValueId
)
"""`session/set_config_option` request to the agent. Request parameters for setting a session
configuration option.
"""
