"""`initialize`, `authenticate`, `logout`: capabilities, auth methods.

Generated from acp_server/schema/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.common import JsonObject

ProtocolVersion: TypeAlias = int
"""Protocol version identifier."""


@final
class PromptCapabilities(TypedDict):
    """Prompt capabilities supported by the agent in `session/prompt` requests."""

    image: NotRequired[bool]
    audio: NotRequired[bool]
    embeddedContext: NotRequired[bool]
    _meta: NotRequired[JsonObject | None]


@final
class McpCapabilities(TypedDict):
    """MCP capabilities supported by the agent"""

    http: NotRequired[bool]
    sse: NotRequired[bool]
    _meta: NotRequired[JsonObject | None]


@final
class SessionListCapabilities(TypedDict):
    """Capabilities for the `session/list` method."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionDeleteCapabilities(TypedDict):
    """Capabilities for the `session/delete` method."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionAdditionalDirectoriesCapabilities(TypedDict):
    """Capabilities for additional session directories support."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionResumeCapabilities(TypedDict):
    """Capabilities for the `session/resume` method."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionCloseCapabilities(TypedDict):
    """Capabilities for the `session/close` method."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionCapabilities(TypedDict):
    """Session capabilities supported by the agent."""

    list: NotRequired[SessionListCapabilities | None]
    delete: NotRequired[SessionDeleteCapabilities | None]
    additionalDirectories: NotRequired[SessionAdditionalDirectoriesCapabilities | None]
    resume: NotRequired[SessionResumeCapabilities | None]
    close: NotRequired[SessionCloseCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class LogoutCapabilities(TypedDict):
    """Logout capabilities supported by the agent."""

    _meta: NotRequired[JsonObject | None]


@final
class AgentAuthCapabilities(TypedDict):
    """Authentication-related capabilities supported by the agent."""

    logout: NotRequired[LogoutCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class AgentCapabilities(TypedDict):
    """Capabilities supported by the agent."""

    loadSession: NotRequired[bool]
    promptCapabilities: NotRequired[PromptCapabilities]
    mcpCapabilities: NotRequired[McpCapabilities]
    sessionCapabilities: NotRequired[SessionCapabilities]
    auth: NotRequired[AgentAuthCapabilities]
    _meta: NotRequired[JsonObject | None]


AuthMethodId: TypeAlias = str
"""Typed identifier used for auth method values on the wire."""


@final
class AuthMethodTerminal(TypedDict):
    """Terminal-based authentication method."""

    id: AuthMethodId
    name: str
    description: NotRequired[str | None]
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]
    _meta: NotRequired[JsonObject | None]


@final
class AuthMethodAgent(TypedDict):
    """Agent handles authentication itself through `authenticate`."""

    id: AuthMethodId
    name: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class TerminalAuthMethod(TypedDict):
    """`AuthMethod` variant: `type: "terminal"`. Client runs the configured agent program as a
    separate interactive process, without passing this method to `authenticate`.
    """

    type: Literal["terminal"]
    id: AuthMethodId
    name: str
    description: NotRequired[str | None]
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]
    _meta: NotRequired[JsonObject | None]


AuthMethod: TypeAlias = TerminalAuthMethod | AuthMethodAgent
"""Describes an available authentication method."""


@final
class Implementation(TypedDict):
    """Metadata about the implementation of the client or agent. Describes the name and version
    of an ACP implementation, with an optional title for UI representation.
    """

    name: str
    title: NotRequired[str | None]
    version: str
    _meta: NotRequired[JsonObject | None]


@final
class InitializeResponse(TypedDict):
    """`initialize` result from the agent. Response to the `initialize` method."""

    protocolVersion: ProtocolVersion
    agentCapabilities: NotRequired[AgentCapabilities]
    authMethods: NotRequired[list[AuthMethod]]
    agentInfo: NotRequired[Implementation | None]
    _meta: NotRequired[JsonObject | None]


@final
class AuthenticateResponse(TypedDict):
    """`authenticate` result from the agent. Response to the `authenticate` method."""

    _meta: NotRequired[JsonObject | None]


@final
class LogoutResponse(TypedDict):
    """`logout` result from the agent. Response to the `logout` method."""

    _meta: NotRequired[JsonObject | None]


@final
class FileSystemCapabilities(TypedDict):
    """File system capabilities that a client may support."""

    readTextFile: NotRequired[bool]
    writeTextFile: NotRequired[bool]
    _meta: NotRequired[JsonObject | None]


@final
class CompactionCapabilities(TypedDict):
    """Client support for ID-addressed context compaction updates."""


@final
class BooleanConfigOptionCapabilities(TypedDict):
    """Capabilities for boolean session configuration options."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionConfigOptionsCapabilities(TypedDict):
    """Session configuration option capabilities supported by the client."""

    boolean: NotRequired[BooleanConfigOptionCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class NoticeCapabilities(TypedDict):
    """Client support for presenting live notices to the user."""


@final
class ClientSessionCapabilities(TypedDict):
    """Session-related capabilities supported by the client."""

    compaction: NotRequired[CompactionCapabilities | None]
    configOptions: NotRequired[SessionConfigOptionsCapabilities | None]
    notices: NotRequired[NoticeCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class AuthCapabilities(TypedDict):
    """Authentication capabilities supported by the client."""

    terminal: NotRequired[bool]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationFormCapabilities(TypedDict):
    """Form-based elicitation capabilities."""

    _meta: NotRequired[JsonObject | None]


@final
class ElicitationUrlCapabilities(TypedDict):
    """URL-based elicitation capabilities."""

    _meta: NotRequired[JsonObject | None]


@final
class ElicitationCapabilities(TypedDict):
    """Elicitation capabilities supported by the client."""

    form: NotRequired[ElicitationFormCapabilities | None]
    url: NotRequired[ElicitationUrlCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class ClientCapabilities(TypedDict):
    """Capabilities supported by the client."""

    fs: NotRequired[FileSystemCapabilities]
    terminal: NotRequired[bool]
    session: NotRequired[ClientSessionCapabilities | None]
    auth: NotRequired[AuthCapabilities]
    elicitation: NotRequired[ElicitationCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class InitializeRequest(TypedDict):
    """`initialize` request to the agent. Request parameters for the initialize method."""

    protocolVersion: ProtocolVersion
    clientCapabilities: NotRequired[ClientCapabilities]
    clientInfo: NotRequired[Implementation | None]
    _meta: NotRequired[JsonObject | None]


@final
class AuthenticateRequest(TypedDict):
    """`authenticate` request to the agent. Request parameters for the authenticate method."""

    methodId: AuthMethodId
    _meta: NotRequired[JsonObject | None]


@final
class LogoutRequest(TypedDict):
    """`logout` request to the agent. Request parameters for the logout method."""

    _meta: NotRequired[JsonObject | None]
