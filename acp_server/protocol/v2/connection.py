"""ACP v2 (draft): `initialize`, `authenticate`, `logout`: capabilities, auth methods.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import EnvVariable, JsonObject, ProtocolVersion


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
class PromptImageCapabilities(TypedDict):
    """Capabilities for image content in prompt requests."""

    _meta: NotRequired[JsonObject | None]


@final
class PromptAudioCapabilities(TypedDict):
    """Capabilities for audio content in prompt requests."""

    _meta: NotRequired[JsonObject | None]


@final
class PromptEmbeddedContextCapabilities(TypedDict):
    """Capabilities for embedded context in prompt requests."""

    _meta: NotRequired[JsonObject | None]


@final
class PromptCapabilities(TypedDict):
    """Prompt capabilities supported by the agent in `session/prompt` requests."""

    image: NotRequired[PromptImageCapabilities | None]
    audio: NotRequired[PromptAudioCapabilities | None]
    embeddedContext: NotRequired[PromptEmbeddedContextCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class McpStdioCapabilities(TypedDict):
    """Capabilities for stdio MCP server transports."""

    _meta: NotRequired[JsonObject | None]


@final
class McpHttpCapabilities(TypedDict):
    """Capabilities for HTTP MCP server transports."""

    _meta: NotRequired[JsonObject | None]


@final
class McpCapabilities(TypedDict):
    """MCP capabilities supported by the agent for session lifecycle requests."""

    stdio: NotRequired[McpStdioCapabilities | None]
    http: NotRequired[McpHttpCapabilities | None]
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
class SessionCapabilities(TypedDict):
    """Session capabilities supported by the agent."""

    prompt: NotRequired[PromptCapabilities | None]
    mcp: NotRequired[McpCapabilities | None]
    delete: NotRequired[SessionDeleteCapabilities | None]
    additionalDirectories: NotRequired[SessionAdditionalDirectoriesCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class AgentAuthCapabilities(TypedDict):
    """Authentication-related extension capabilities supported by the agent."""

    _meta: NotRequired[JsonObject | None]


@final
class AgentCapabilities(TypedDict):
    """Capabilities supported by the agent."""

    session: NotRequired[SessionCapabilities | None]
    auth: NotRequired[AgentAuthCapabilities | None]
    _meta: NotRequired[JsonObject | None]


AuthMethodId: TypeAlias = str
"""Typed identifier used for auth method values on the wire."""


@final
class AuthMethodTerminal(TypedDict):
    """Terminal-based authentication method."""

    methodId: AuthMethodId
    name: str
    description: NotRequired[str | None]
    args: NotRequired[list[str]]
    env: NotRequired[list[EnvVariable]]
    _meta: NotRequired[JsonObject | None]


@final
class AuthMethodAgent(TypedDict):
    """Agent handles authentication itself through `auth/login`."""

    methodId: AuthMethodId
    name: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class TerminalAuthMethod(TypedDict):
    """`AuthMethod` variant: `type: "terminal"`. Client runs the configured agent program as a
    separate interactive process, without passing this method to `auth/login`.
    """

    type: Literal["terminal"]
    methodId: AuthMethodId
    name: str
    description: NotRequired[str | None]
    args: NotRequired[list[str]]
    env: NotRequired[list[EnvVariable]]
    _meta: NotRequired[JsonObject | None]


@final
class AgentAuthMethod(TypedDict):
    """`AuthMethod` variant: `type: "agent"`. Agent handles authentication itself through
    `auth/login`.
    """

    type: Literal["agent"]
    methodId: AuthMethodId
    name: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class AuthMethodOther(TypedDict):
    """`AuthMethod` variant: other. Custom or future authentication method."""

    type: str
    methodId: AuthMethodId
    name: str


AuthMethod: TypeAlias = TerminalAuthMethod | AgentAuthMethod | AuthMethodOther
"""Describes an available authentication method."""


@final
class InitializeResponse(TypedDict):
    """`initialize` result from the agent. Response to the `initialize` method."""

    protocolVersion: ProtocolVersion
    info: Implementation
    capabilities: NotRequired[AgentCapabilities]
    authMethods: NotRequired[list[AuthMethod]]
    _meta: NotRequired[JsonObject | None]


@final
class LoginAuthResponse(TypedDict):
    """`auth/login` result from the agent. Response to the `auth/login` method."""

    _meta: NotRequired[JsonObject | None]


@final
class LogoutAuthResponse(TypedDict):
    """`auth/logout` result from the agent. Response to the `auth/logout` method."""

    _meta: NotRequired[JsonObject | None]


@final
class TerminalAuthCapabilities(TypedDict):
    """Capabilities for terminal authentication methods."""

    _meta: NotRequired[JsonObject | None]


@final
class ClientAuthCapabilities(TypedDict):
    """Authentication capabilities supported by the client."""

    terminal: NotRequired[TerminalAuthCapabilities | None]
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

    auth: NotRequired[ClientAuthCapabilities | None]
    elicitation: NotRequired[ElicitationCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class InitializeRequest(TypedDict):
    """`initialize` request to the agent. Request parameters for the initialize method."""

    protocolVersion: ProtocolVersion
    info: Implementation
    capabilities: NotRequired[ClientCapabilities]
    _meta: NotRequired[JsonObject | None]


@final
class LoginAuthRequest(TypedDict):
    """`auth/login` request to the agent. Request parameters for the `auth/login` method."""

    methodId: AuthMethodId
    _meta: NotRequired[JsonObject | None]


@final
class LogoutAuthRequest(TypedDict):
    """`auth/logout` request to the agent. Request parameters for the `auth/logout` method."""

    _meta: NotRequired[JsonObject | None]
