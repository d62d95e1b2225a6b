"""Unstable connection: what is new or differs from `acp_server.protocol.connection`.

Generated from acp_server/schema/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.common import JsonObject, JsonValue
from acp_server.protocol.connection import (
    AuthCapabilities,
    AuthMethod,
    ClientSessionCapabilities,
    ElicitationCapabilities,
    FileSystemCapabilities,
    Implementation,
    LogoutCapabilities,
    PromptCapabilities,
    ProtocolVersion,
    SessionAdditionalDirectoriesCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
)
from acp_server.protocol.unstable.common import McpServerAcpId

McpRequestId: TypeAlias = str
"""Identifies an inner MCP request active against a server on this ACP connection."""


@final
class MessageMcpRequest(TypedDict):
    """`mcp/message` request to the client. Request parameters for `mcp/message`."""

    serverId: McpServerAcpId
    requestId: McpRequestId
    method: str
    params: NotRequired[JsonObject | None]
    _meta: NotRequired[JsonObject | None]


@final
class McpCapabilities(TypedDict):
    """MCP capabilities supported by the agent"""

    http: NotRequired[bool]
    sse: NotRequired[bool]
    acp: NotRequired[bool]
    _meta: NotRequired[JsonObject | None]


@final
class SessionSystemPromptOverrideCapabilities(TypedDict):
    """Capabilities for the `override` system prompt mode."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionSystemPromptModeCapabilities(TypedDict):
    """System prompt delivery modes the agent supports in addition to `append`."""

    override: NotRequired[SessionSystemPromptOverrideCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionSystemPromptCapabilities(TypedDict):
    """Capabilities for client-provided system prompts."""

    mode: NotRequired[SessionSystemPromptModeCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class SessionForkCapabilities(TypedDict):
    """Capabilities for the `session/fork` method."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionArchiveCapabilities(TypedDict):
    """Capabilities for `session/archive` and `session/unarchive`."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionStatusCapabilities(TypedDict):
    """Capabilities for the `session/status` method."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionTitleCapabilities(TypedDict):
    """Capabilities for Client-set session titles."""

    _meta: NotRequired[JsonObject | None]


@final
class SessionCapabilities(TypedDict):
    """Session capabilities supported by the agent."""

    list: NotRequired[SessionListCapabilities | None]
    delete: NotRequired[SessionDeleteCapabilities | None]
    additionalDirectories: NotRequired[SessionAdditionalDirectoriesCapabilities | None]
    systemPrompt: NotRequired[SessionSystemPromptCapabilities | None]
    fork: NotRequired[SessionForkCapabilities | None]
    archive: NotRequired[SessionArchiveCapabilities | None]
    status: NotRequired[SessionStatusCapabilities | None]
    title: NotRequired[SessionTitleCapabilities | None]
    resume: NotRequired[SessionResumeCapabilities | None]
    close: NotRequired[SessionCloseCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class AuthStatusCapabilities(TypedDict):
    """Auth status capabilities supported by the agent."""

    _meta: NotRequired[JsonObject | None]


@final
class AgentAuthCapabilities(TypedDict):
    """Authentication-related capabilities supported by the agent."""

    status: NotRequired[AuthStatusCapabilities | None]
    logout: NotRequired[LogoutCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class ProvidersCapabilities(TypedDict):
    """Provider configuration capabilities supported by the agent."""

    _meta: NotRequired[JsonObject | None]


@final
class AgentCapabilities(TypedDict):
    """Capabilities supported by the agent."""

    loadSession: NotRequired[bool]
    promptCapabilities: NotRequired[PromptCapabilities]
    mcpCapabilities: NotRequired[McpCapabilities]
    sessionCapabilities: NotRequired[SessionCapabilities]
    auth: NotRequired[AgentAuthCapabilities]
    providers: NotRequired[ProvidersCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class InitializeResponse(TypedDict):
    """`initialize` result from the agent. Response to the `initialize` method."""

    protocolVersion: ProtocolVersion
    agentCapabilities: NotRequired[AgentCapabilities]
    authMethods: NotRequired[list[AuthMethod]]
    agentInfo: NotRequired[Implementation | None]
    _meta: NotRequired[JsonObject | None]


ProviderId: TypeAlias = str
"""Unique identifier for a configurable LLM provider."""


LlmProtocol: TypeAlias = Literal["anthropic", "openai", "azure", "vertex", "bedrock"] | str
"""Well-known API protocol identifiers for LLM providers."""


@final
class ProviderCurrentConfig(TypedDict):
    """Current effective non-secret routing configuration for a provider."""

    apiType: LlmProtocol
    baseUrl: str
    _meta: NotRequired[JsonObject | None]


@final
class ProviderInfo(TypedDict):
    """Information about a configurable LLM provider."""

    providerId: ProviderId
    supported: list[LlmProtocol]
    required: bool
    current: NotRequired[ProviderCurrentConfig | None]
    _meta: NotRequired[JsonObject | None]


@final
class ListProvidersResponse(TypedDict):
    """`providers/list` result from the agent. Response to `providers/list`."""

    providers: list[ProviderInfo]
    _meta: NotRequired[JsonObject | None]


@final
class SetProviderResponse(TypedDict):
    """`providers/set` result from the agent. Response to `providers/set`."""

    _meta: NotRequired[JsonObject | None]


@final
class DisableProviderResponse(TypedDict):
    """`providers/disable` result from the agent. Response to `providers/disable`."""

    _meta: NotRequired[JsonObject | None]


AuthState: TypeAlias = Literal["authenticated", "unauthenticated", "not_required", "unknown"] | str
"""The agent's overall authentication state."""


@final
class AuthAccount(TypedDict):
    """An account or credential the agent has configured, such as a signed-in user account or an
    API key.
    """

    label: str
    active: NotRequired[bool | None]
    name: NotRequired[str | None]
    email: NotRequired[str | None]
    organization: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class AuthStatusResponse(TypedDict):
    """`auth/status` result from the agent. Response to the `auth/status` method."""

    state: AuthState
    accounts: NotRequired[list[AuthAccount]]
    _meta: NotRequired[JsonObject | None]


@final
class AuthStatusUpdateNotification(TypedDict):
    """`auth/status_update` notification to the client. Notification sent by the agent when its
    authentication status changes.
    """

    state: AuthState
    accounts: NotRequired[list[AuthAccount]]
    _meta: NotRequired[JsonObject | None]


@final
class SubagentCapabilities(TypedDict):
    """Capability marker for exposing reusable child sessions as restricted ACP sessions."""

    _meta: NotRequired[JsonObject | None]


@final
class PlanCapabilities(TypedDict):
    """Capabilities for receiving `plan_update` and `plan_removed` session updates."""

    _meta: NotRequired[JsonObject | None]


@final
class ClientCapabilities(TypedDict):
    """Capabilities supported by the client."""

    fs: NotRequired[FileSystemCapabilities]
    terminal: NotRequired[bool]
    session: NotRequired[ClientSessionCapabilities | None]
    subagents: NotRequired[SubagentCapabilities | None]
    plan: NotRequired[PlanCapabilities | None]
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
class ListProvidersRequest(TypedDict):
    """`providers/list` request to the agent. Request parameters for `providers/list`."""

    _meta: NotRequired[JsonObject | None]


@final
class SetProviderRequest(TypedDict):
    """`providers/set` request to the agent. Request parameters for `providers/set`."""

    providerId: ProviderId
    apiType: LlmProtocol
    baseUrl: str
    headers: NotRequired[dict[str, str]]
    _meta: NotRequired[JsonObject | None]


@final
class DisableProviderRequest(TypedDict):
    """`providers/disable` request to the agent. Request parameters for `providers/disable`."""

    providerId: ProviderId
    _meta: NotRequired[JsonObject | None]


@final
class AuthStatusRequest(TypedDict):
    """`auth/status` request to the agent. Request parameters for the `auth/status` method."""

    _meta: NotRequired[JsonObject | None]


@final
class McpError(TypedDict):
    """An inner MCP error, distinct from an outer ACP binding or runtime error."""

    code: int
    message: str
    data: NotRequired[JsonValue]


@final
class MessageMcpResponseResult(TypedDict):
    """`MessageMcpResponse` variant: Result. An opaque inner MCP result."""

    result: JsonValue
    _meta: NotRequired[JsonObject | None]


@final
class MessageMcpResponseError(TypedDict):
    """`MessageMcpResponse` variant: Error. A structured inner MCP error."""

    error: McpError
    _meta: NotRequired[JsonObject | None]


MessageMcpResponse: TypeAlias = MessageMcpResponseResult | MessageMcpResponseError
"""`mcp/message` result from the client. The successful outer ACP `mcp/message` response carries
exactly one inner MCP outcome: an opaque result (including JSON null), or an MCP error. Outer ACP
errors are reserved for binding and runtime failures.
"""


@final
class MessageMcpNotification(TypedDict):
    """`mcp/message` notification to the agent. Notification parameters for `mcp/message`."""

    serverId: McpServerAcpId
    requestId: McpRequestId
    method: str
    params: NotRequired[JsonObject | None]
    _meta: NotRequired[JsonObject | None]


InitializeProxyRequest: TypeAlias = InitializeRequest
"""`proxy/initialize` request to the proxy. Request parameters for `proxy/initialize`."""


@final
class ProxySuccessorRequest(TypedDict):
    """`proxy/successor` request to the proxy. Parameters of a `proxy/successor` request."""

    method: str
    params: NotRequired[JsonValue]
    _meta: NotRequired[JsonObject | None]


InitializeProxyResponse: TypeAlias = InitializeResponse
"""`proxy/initialize` result from the proxy. Response to `proxy/initialize`."""


ProxySuccessorResponse: TypeAlias = JsonValue
"""`proxy/successor` result from the proxy. Result of a `proxy/successor` request: the wrapped
request's result, forwarded unchanged.
"""


@final
class ProxySuccessorNotification(TypedDict):
    """`proxy/successor` notification to the proxy. Parameters of a `proxy/successor`
    notification.
    """

    method: str
    params: NotRequired[JsonValue]
    _meta: NotRequired[JsonObject | None]
