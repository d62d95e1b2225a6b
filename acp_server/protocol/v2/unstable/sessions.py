"""Unstable sessions: what is new or differs from `acp_server.protocol.v2.sessions`.

Generated from acp_server/schema/v2/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import (
    AbsolutePath,
    AvailableCommand,
    ContentBlock,
    JsonObject,
    SessionConfigOption,
    SessionId,
)
from acp_server.protocol.v2.sessions import (
    HttpMcpServer,
    McpServerOther,
    ReplayFrom,
    SessionListCursor,
    StdioMcpServer,
)
from acp_server.protocol.v2.unstable.common import McpServerAcpId, StateUpdate


@final
class SessionInfo(TypedDict):
    """Information about a session returned by session/list"""

    sessionId: SessionId
    cwd: AbsolutePath
    additionalDirectories: NotRequired[list[AbsolutePath]]
    title: NotRequired[str | None]
    updatedAt: NotRequired[str | None]
    archived: NotRequired[bool | None]
    _meta: NotRequired[JsonObject | None]


@final
class ListSessionsResponse(TypedDict):
    """`session/list` result from the agent. Response from listing sessions."""

    sessions: list[SessionInfo]
    nextCursor: NotRequired[SessionListCursor | None]
    _meta: NotRequired[JsonObject | None]


@final
class ForkSessionResponse(TypedDict):
    """`session/fork` result from the agent. Response from forking an existing session."""

    sessionId: SessionId
    configOptions: NotRequired[list[SessionConfigOption]]
    availableCommands: NotRequired[list[AvailableCommand]]
    _meta: NotRequired[JsonObject | None]


@final
class ArchiveSessionResponse(TypedDict):
    """`session/archive` result from the agent. Response from archiving a session."""

    _meta: NotRequired[JsonObject | None]


@final
class UnarchiveSessionResponse(TypedDict):
    """`session/unarchive` result from the agent. Response from unarchiving a session."""

    _meta: NotRequired[JsonObject | None]


SessionStatus: TypeAlias = Literal["open", "saved"] | str
"""Whether the Agent has a session in memory, as reported by `session/status`."""


@final
class SessionStatusResponse(TypedDict):
    """`session/status` result from the agent. Response from checking the status of a session."""

    status: SessionStatus
    state: NotRequired[StateUpdate | None]
    _meta: NotRequired[JsonObject | None]


@final
class SetSessionTitleResponse(TypedDict):
    """`session/set_title` result from the agent. Response from setting the title of a session."""

    title: str
    _meta: NotRequired[JsonObject | None]


@final
class McpServerAcp(TypedDict):
    """ACP transport configuration for MCP."""

    name: str
    serverId: McpServerAcpId
    _meta: NotRequired[JsonObject | None]


@final
class AcpMcpServer(TypedDict):
    """`McpServer` variant: `type: "acp"`. ACP transport configuration"""

    type: Literal["acp"]
    name: str
    serverId: McpServerAcpId
    _meta: NotRequired[JsonObject | None]


McpServer: TypeAlias = HttpMcpServer | AcpMcpServer | StdioMcpServer | McpServerOther
"""Configuration for connecting to an MCP (Model Context Protocol) server."""


SystemPromptMode: TypeAlias = Literal["append", "override"] | str
"""How the Agent combines a client-provided system prompt with its own instructions."""


@final
class SystemPrompt(TypedDict):
    """Client-provided system-level instructions for a session."""

    mode: SystemPromptMode
    content: list[ContentBlock]
    _meta: NotRequired[JsonObject | None]


@final
class NewSessionRequest(TypedDict):
    """`session/new` request to the agent. Request parameters for creating a new session."""

    cwd: AbsolutePath
    additionalDirectories: NotRequired[list[AbsolutePath]]
    mcpServers: NotRequired[list[McpServer]]
    systemPrompt: NotRequired[SystemPrompt | None]
    _meta: NotRequired[JsonObject | None]


SessionArchiveFilter: TypeAlias = Literal["exclude", "include", "only"] | str
"""Which sessions `session/list` returns based on their archive state."""


@final
class ListSessionsRequest(TypedDict):
    """`session/list` request to the agent. Request parameters for listing existing sessions."""

    cwd: NotRequired[AbsolutePath | None]
    cursor: NotRequired[SessionListCursor | None]
    archived: NotRequired[SessionArchiveFilter | None]
    _meta: NotRequired[JsonObject | None]


@final
class ForkSessionRequest(TypedDict):
    """`session/fork` request to the agent. Request parameters for forking an existing session."""

    sessionId: SessionId
    cwd: AbsolutePath
    additionalDirectories: NotRequired[list[AbsolutePath]]
    mcpServers: NotRequired[list[McpServer]]
    systemPrompt: NotRequired[SystemPrompt | None]
    _meta: NotRequired[JsonObject | None]


@final
class ArchiveSessionRequest(TypedDict):
    """`session/archive` request to the agent. Request parameters for archiving a session."""

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class UnarchiveSessionRequest(TypedDict):
    """`session/unarchive` request to the agent. Request parameters for unarchiving a session."""

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class SessionStatusRequest(TypedDict):
    """`session/status` request to the agent. Request parameters for checking the status of a
    session.
    """

    sessionId: SessionId
    _meta: NotRequired[JsonObject | None]


@final
class SetSessionTitleRequest(TypedDict):
    """`session/set_title` request to the agent. Request parameters for setting the title of a
    session.
    """

    sessionId: SessionId
    title: str
    _meta: NotRequired[JsonObject | None]


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
    systemPrompt: NotRequired[SystemPrompt | None]
    _meta: NotRequired[JsonObject | None]
