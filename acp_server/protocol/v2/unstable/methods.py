"""ACP v2 (draft): the stable and unstable methods: who handles each, with what params and
result; typed tables.

Generated from acp_server/schema/v2/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Literal, Protocol, TypeAlias, TypedDict, overload

from acp_server.protocol.v2.client import RequestPermissionRequest, RequestPermissionResponse
from acp_server.protocol.v2.common import CancelRequestNotification
from acp_server.protocol.v2.connection import (
    InitializeRequest,
    LoginAuthRequest,
    LoginAuthResponse,
    LogoutAuthRequest,
    LogoutAuthResponse,
)
from acp_server.protocol.v2.elicitation import (
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
)
from acp_server.protocol.v2.prompt import (
    CancelSessionNotification,
    CancelTerminalRequest,
    CancelTerminalResponse,
    CancelToolCallRequest,
    CancelToolCallResponse,
    PromptRequest,
    PromptResponse,
)
from acp_server.protocol.v2.sessions import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    NewSessionResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
)
from acp_server.protocol.v2.unstable.connection import (
    AuthStatusRequest,
    AuthStatusResponse,
    AuthStatusUpdateNotification,
    DisableProviderRequest,
    DisableProviderResponse,
    InitializeResponse,
    ListProvidersRequest,
    ListProvidersResponse,
    MessageMcpNotification,
    MessageMcpRequest,
    MessageMcpResponse,
    SetProviderRequest,
    SetProviderResponse,
)
from acp_server.protocol.v2.unstable.prompt import UpdateSessionNotification
from acp_server.protocol.v2.unstable.sessions import (
    ArchiveSessionRequest,
    ArchiveSessionResponse,
    ForkSessionRequest,
    ForkSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    NewSessionRequest,
    ResumeSessionRequest,
    SessionStatusRequest,
    SessionStatusResponse,
    SetSessionTitleRequest,
    SetSessionTitleResponse,
    UnarchiveSessionRequest,
    UnarchiveSessionResponse,
)

AGENT_REQUESTS: Final[Mapping[str, tuple[str, str]]] = {
    "initialize": ("InitializeRequest", "InitializeResponse"),
    "auth/login": ("LoginAuthRequest", "LoginAuthResponse"),
    "providers/list": ("ListProvidersRequest", "ListProvidersResponse"),
    "providers/set": ("SetProviderRequest", "SetProviderResponse"),
    "providers/disable": ("DisableProviderRequest", "DisableProviderResponse"),
    "auth/logout": ("LogoutAuthRequest", "LogoutAuthResponse"),
    "auth/status": ("AuthStatusRequest", "AuthStatusResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/list": ("ListSessionsRequest", "ListSessionsResponse"),
    "session/delete": ("DeleteSessionRequest", "DeleteSessionResponse"),
    "session/fork": ("ForkSessionRequest", "ForkSessionResponse"),
    "session/archive": ("ArchiveSessionRequest", "ArchiveSessionResponse"),
    "session/unarchive": ("UnarchiveSessionRequest", "UnarchiveSessionResponse"),
    "session/status": ("SessionStatusRequest", "SessionStatusResponse"),
    "session/set_title": ("SetSessionTitleRequest", "SetSessionTitleResponse"),
    "session/resume": ("ResumeSessionRequest", "ResumeSessionResponse"),
    "session/close": ("CloseSessionRequest", "CloseSessionResponse"),
    "tool_call/cancel": ("CancelToolCallRequest", "CancelToolCallResponse"),
    "terminal/cancel": ("CancelTerminalRequest", "CancelTerminalResponse"),
    "session/set_config_option": (
        "SetSessionConfigOptionRequest",
        "SetSessionConfigOptionResponse",
    ),
    "session/prompt": ("PromptRequest", "PromptResponse"),
}
"""Requests the agent answers: method -> (`$defs` names of its params, its result)."""

AGENT_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "session/cancel": "CancelSessionNotification",
    "mcp/message": "MessageMcpNotification",
}
"""Notifications the agent receives: method -> `$defs` name of its params."""

CLIENT_REQUESTS: Final[Mapping[str, tuple[str, str]]] = {
    "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
    "elicitation/create": ("CreateElicitationRequest", "CreateElicitationResponse"),
    "mcp/message": ("MessageMcpRequest", "MessageMcpResponse"),
}
"""Requests the client answers: method -> (`$defs` names of its params, its result)."""

CLIENT_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "session/update": "UpdateSessionNotification",
    "elicitation/complete": "CompleteElicitationNotification",
    "auth/status_update": "AuthStatusUpdateNotification",
}
"""Notifications the client receives: method -> `$defs` name of its params."""

PROXY_REQUESTS: Final[Mapping[str, tuple[str, str]]] = {
    "proxy/initialize": ("InitializeProxyRequest", "InitializeProxyResponse"),
    "proxy/successor": ("ProxySuccessorRequest", "ProxySuccessorResponse"),
}
"""Requests a proxy answers: method -> (`$defs` names of its params, its result)."""

PROXY_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "proxy/successor": "ProxySuccessorNotification",
}
"""Notifications a proxy receives: method -> `$defs` name of its params."""

PROTOCOL_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "$/cancel_request": "CancelRequestNotification",
}
"""Notifications either side may send and receive: method -> `$defs` name of its params."""

AgentRequestMethod: TypeAlias = Literal[
    "initialize",
    "auth/login",
    "providers/list",
    "providers/set",
    "providers/disable",
    "auth/logout",
    "auth/status",
    "session/new",
    "session/list",
    "session/delete",
    "session/fork",
    "session/archive",
    "session/unarchive",
    "session/status",
    "session/set_title",
    "session/resume",
    "session/close",
    "tool_call/cancel",
    "terminal/cancel",
    "session/set_config_option",
    "session/prompt",
]
"""The requests the agent answers."""

AgentNotificationMethod: TypeAlias = Literal["session/cancel", "mcp/message", "$/cancel_request"]
"""The notifications the agent receives."""

AgentRequestHandlers = TypedDict(
    "AgentRequestHandlers",
    {
        "initialize": Callable[[InitializeRequest], Awaitable[InitializeResponse]],
        "auth/login": Callable[[LoginAuthRequest], Awaitable[LoginAuthResponse]],
        "providers/list": Callable[[ListProvidersRequest], Awaitable[ListProvidersResponse]],
        "providers/set": Callable[[SetProviderRequest], Awaitable[SetProviderResponse]],
        "providers/disable": Callable[[DisableProviderRequest], Awaitable[DisableProviderResponse]],
        "auth/logout": Callable[[LogoutAuthRequest], Awaitable[LogoutAuthResponse]],
        "auth/status": Callable[[AuthStatusRequest], Awaitable[AuthStatusResponse]],
        "session/new": Callable[[NewSessionRequest], Awaitable[NewSessionResponse]],
        "session/list": Callable[[ListSessionsRequest], Awaitable[ListSessionsResponse]],
        "session/delete": Callable[[DeleteSessionRequest], Awaitable[DeleteSessionResponse]],
        "session/fork": Callable[[ForkSessionRequest], Awaitable[ForkSessionResponse]],
        "session/archive": Callable[[ArchiveSessionRequest], Awaitable[ArchiveSessionResponse]],
        "session/unarchive": Callable[
            [UnarchiveSessionRequest], Awaitable[UnarchiveSessionResponse]
        ],
        "session/status": Callable[[SessionStatusRequest], Awaitable[SessionStatusResponse]],
        "session/set_title": Callable[[SetSessionTitleRequest], Awaitable[SetSessionTitleResponse]],
        "session/resume": Callable[[ResumeSessionRequest], Awaitable[ResumeSessionResponse]],
        "session/close": Callable[[CloseSessionRequest], Awaitable[CloseSessionResponse]],
        "tool_call/cancel": Callable[[CancelToolCallRequest], Awaitable[CancelToolCallResponse]],
        "terminal/cancel": Callable[[CancelTerminalRequest], Awaitable[CancelTerminalResponse]],
        "session/set_config_option": Callable[
            [SetSessionConfigOptionRequest], Awaitable[SetSessionConfigOptionResponse]
        ],
        "session/prompt": Callable[[PromptRequest], Awaitable[PromptResponse]],
    },
    total=False,
)
"""A table of the agent's request handlers, checked method by method."""

AgentNotificationHandlers = TypedDict(
    "AgentNotificationHandlers",
    {
        "session/cancel": Callable[[CancelSessionNotification], Awaitable[None]],
        "mcp/message": Callable[[MessageMcpNotification], Awaitable[None]],
        "$/cancel_request": Callable[[CancelRequestNotification], Awaitable[None]],
    },
    total=False,
)
"""A table of the agent's notification handlers."""


class AgentRequestSender(Protocol):
    """How the client sends a request the agent answers; the result fits the method."""

    @overload
    def __call__(
        self, method: Literal["initialize"], params: InitializeRequest, /
    ) -> Awaitable[InitializeResponse]: ...
    @overload
    def __call__(
        self, method: Literal["auth/login"], params: LoginAuthRequest, /
    ) -> Awaitable[LoginAuthResponse]: ...
    @overload
    def __call__(
        self, method: Literal["providers/list"], params: ListProvidersRequest, /
    ) -> Awaitable[ListProvidersResponse]: ...
    @overload
    def __call__(
        self, method: Literal["providers/set"], params: SetProviderRequest, /
    ) -> Awaitable[SetProviderResponse]: ...
    @overload
    def __call__(
        self, method: Literal["providers/disable"], params: DisableProviderRequest, /
    ) -> Awaitable[DisableProviderResponse]: ...
    @overload
    def __call__(
        self, method: Literal["auth/logout"], params: LogoutAuthRequest, /
    ) -> Awaitable[LogoutAuthResponse]: ...
    @overload
    def __call__(
        self, method: Literal["auth/status"], params: AuthStatusRequest, /
    ) -> Awaitable[AuthStatusResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/new"], params: NewSessionRequest, /
    ) -> Awaitable[NewSessionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/list"], params: ListSessionsRequest, /
    ) -> Awaitable[ListSessionsResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/delete"], params: DeleteSessionRequest, /
    ) -> Awaitable[DeleteSessionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/fork"], params: ForkSessionRequest, /
    ) -> Awaitable[ForkSessionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/archive"], params: ArchiveSessionRequest, /
    ) -> Awaitable[ArchiveSessionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/unarchive"], params: UnarchiveSessionRequest, /
    ) -> Awaitable[UnarchiveSessionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/status"], params: SessionStatusRequest, /
    ) -> Awaitable[SessionStatusResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/set_title"], params: SetSessionTitleRequest, /
    ) -> Awaitable[SetSessionTitleResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/resume"], params: ResumeSessionRequest, /
    ) -> Awaitable[ResumeSessionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/close"], params: CloseSessionRequest, /
    ) -> Awaitable[CloseSessionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["tool_call/cancel"], params: CancelToolCallRequest, /
    ) -> Awaitable[CancelToolCallResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/cancel"], params: CancelTerminalRequest, /
    ) -> Awaitable[CancelTerminalResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/set_config_option"], params: SetSessionConfigOptionRequest, /
    ) -> Awaitable[SetSessionConfigOptionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/prompt"], params: PromptRequest, /
    ) -> Awaitable[PromptResponse]: ...


class AgentNotificationSender(Protocol):
    """How the client sends a notification the agent receives."""

    @overload
    def __call__(
        self, method: Literal["session/cancel"], params: CancelSessionNotification, /
    ) -> Awaitable[None]: ...
    @overload
    def __call__(
        self, method: Literal["mcp/message"], params: MessageMcpNotification, /
    ) -> Awaitable[None]: ...
    @overload
    def __call__(
        self, method: Literal["$/cancel_request"], params: CancelRequestNotification, /
    ) -> Awaitable[None]: ...


ClientRequestMethod: TypeAlias = Literal[
    "session/request_permission", "elicitation/create", "mcp/message"
]
"""The requests the client answers."""

ClientNotificationMethod: TypeAlias = Literal[
    "session/update", "elicitation/complete", "auth/status_update", "$/cancel_request"
]
"""The notifications the client receives."""

ClientRequestHandlers = TypedDict(
    "ClientRequestHandlers",
    {
        "session/request_permission": Callable[
            [RequestPermissionRequest], Awaitable[RequestPermissionResponse]
        ],
        "elicitation/create": Callable[
            [CreateElicitationRequest], Awaitable[CreateElicitationResponse]
        ],
        "mcp/message": Callable[[MessageMcpRequest], Awaitable[MessageMcpResponse]],
    },
    total=False,
)
"""A table of the client's request handlers, checked method by method."""

ClientNotificationHandlers = TypedDict(
    "ClientNotificationHandlers",
    {
        "session/update": Callable[[UpdateSessionNotification], Awaitable[None]],
        "elicitation/complete": Callable[[CompleteElicitationNotification], Awaitable[None]],
        "auth/status_update": Callable[[AuthStatusUpdateNotification], Awaitable[None]],
        "$/cancel_request": Callable[[CancelRequestNotification], Awaitable[None]],
    },
    total=False,
)
"""A table of the client's notification handlers."""


class ClientRequestSender(Protocol):
    """How the agent sends a request the client answers; the result fits the method."""

    @overload
    def __call__(
        self, method: Literal["session/request_permission"], params: RequestPermissionRequest, /
    ) -> Awaitable[RequestPermissionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["elicitation/create"], params: CreateElicitationRequest, /
    ) -> Awaitable[CreateElicitationResponse]: ...
    @overload
    def __call__(
        self, method: Literal["mcp/message"], params: MessageMcpRequest, /
    ) -> Awaitable[MessageMcpResponse]: ...


class ClientNotificationSender(Protocol):
    """How the agent sends a notification the client receives."""

    @overload
    def __call__(
        self, method: Literal["session/update"], params: UpdateSessionNotification, /
    ) -> Awaitable[None]: ...
    @overload
    def __call__(
        self, method: Literal["elicitation/complete"], params: CompleteElicitationNotification, /
    ) -> Awaitable[None]: ...
    @overload
    def __call__(
        self, method: Literal["auth/status_update"], params: AuthStatusUpdateNotification, /
    ) -> Awaitable[None]: ...
    @overload
    def __call__(
        self, method: Literal["$/cancel_request"], params: CancelRequestNotification, /
    ) -> Awaitable[None]: ...
