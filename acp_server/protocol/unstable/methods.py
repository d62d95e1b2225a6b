"""The stable and unstable methods: who handles each, with what params and result; typed tables.

Generated from acp_server/schema/schema.unstable.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Literal, Protocol, TypeAlias, TypedDict, overload

from acp_server.protocol.client import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from acp_server.protocol.common import CancelRequestNotification
from acp_server.protocol.connection import (
    AuthenticateRequest,
    AuthenticateResponse,
    LogoutRequest,
    LogoutResponse,
)
from acp_server.protocol.elicitation import (
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
)
from acp_server.protocol.prompt import CancelNotification, PromptRequest
from acp_server.protocol.sessions import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    LoadSessionResponse,
    NewSessionResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from acp_server.protocol.unstable.connection import (
    AuthStatusRequest,
    AuthStatusResponse,
    AuthStatusUpdateNotification,
    DisableProviderRequest,
    DisableProviderResponse,
    InitializeRequest,
    InitializeResponse,
    ListProvidersRequest,
    ListProvidersResponse,
    MessageMcpNotification,
    MessageMcpRequest,
    MessageMcpResponse,
    SetProviderRequest,
    SetProviderResponse,
)
from acp_server.protocol.unstable.prompt import PromptResponse, SessionNotification
from acp_server.protocol.unstable.sessions import (
    ArchiveSessionRequest,
    ArchiveSessionResponse,
    ForkSessionRequest,
    ForkSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
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
    "authenticate": ("AuthenticateRequest", "AuthenticateResponse"),
    "providers/list": ("ListProvidersRequest", "ListProvidersResponse"),
    "providers/set": ("SetProviderRequest", "SetProviderResponse"),
    "providers/disable": ("DisableProviderRequest", "DisableProviderResponse"),
    "logout": ("LogoutRequest", "LogoutResponse"),
    "auth/status": ("AuthStatusRequest", "AuthStatusResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/load": ("LoadSessionRequest", "LoadSessionResponse"),
    "session/list": ("ListSessionsRequest", "ListSessionsResponse"),
    "session/delete": ("DeleteSessionRequest", "DeleteSessionResponse"),
    "session/fork": ("ForkSessionRequest", "ForkSessionResponse"),
    "session/archive": ("ArchiveSessionRequest", "ArchiveSessionResponse"),
    "session/unarchive": ("UnarchiveSessionRequest", "UnarchiveSessionResponse"),
    "session/status": ("SessionStatusRequest", "SessionStatusResponse"),
    "session/set_title": ("SetSessionTitleRequest", "SetSessionTitleResponse"),
    "session/resume": ("ResumeSessionRequest", "ResumeSessionResponse"),
    "session/close": ("CloseSessionRequest", "CloseSessionResponse"),
    "session/set_mode": ("SetSessionModeRequest", "SetSessionModeResponse"),
    "session/set_config_option": (
        "SetSessionConfigOptionRequest",
        "SetSessionConfigOptionResponse",
    ),
    "session/prompt": ("PromptRequest", "PromptResponse"),
}
"""Requests the agent answers: method -> (`$defs` names of its params, its result)."""

AGENT_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "session/cancel": "CancelNotification",
    "mcp/message": "MessageMcpNotification",
}
"""Notifications the agent receives: method -> `$defs` name of its params."""

CLIENT_REQUESTS: Final[Mapping[str, tuple[str, str]]] = {
    "fs/write_text_file": ("WriteTextFileRequest", "WriteTextFileResponse"),
    "fs/read_text_file": ("ReadTextFileRequest", "ReadTextFileResponse"),
    "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
    "terminal/create": ("CreateTerminalRequest", "CreateTerminalResponse"),
    "terminal/output": ("TerminalOutputRequest", "TerminalOutputResponse"),
    "terminal/release": ("ReleaseTerminalRequest", "ReleaseTerminalResponse"),
    "terminal/wait_for_exit": ("WaitForTerminalExitRequest", "WaitForTerminalExitResponse"),
    "terminal/kill": ("KillTerminalRequest", "KillTerminalResponse"),
    "elicitation/create": ("CreateElicitationRequest", "CreateElicitationResponse"),
    "mcp/message": ("MessageMcpRequest", "MessageMcpResponse"),
}
"""Requests the client answers: method -> (`$defs` names of its params, its result)."""

CLIENT_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "session/update": "SessionNotification",
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
    "authenticate",
    "providers/list",
    "providers/set",
    "providers/disable",
    "logout",
    "auth/status",
    "session/new",
    "session/load",
    "session/list",
    "session/delete",
    "session/fork",
    "session/archive",
    "session/unarchive",
    "session/status",
    "session/set_title",
    "session/resume",
    "session/close",
    "session/set_mode",
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
        "authenticate": Callable[[AuthenticateRequest], Awaitable[AuthenticateResponse]],
        "providers/list": Callable[[ListProvidersRequest], Awaitable[ListProvidersResponse]],
        "providers/set": Callable[[SetProviderRequest], Awaitable[SetProviderResponse]],
        "providers/disable": Callable[[DisableProviderRequest], Awaitable[DisableProviderResponse]],
        "logout": Callable[[LogoutRequest], Awaitable[LogoutResponse]],
        "auth/status": Callable[[AuthStatusRequest], Awaitable[AuthStatusResponse]],
        "session/new": Callable[[NewSessionRequest], Awaitable[NewSessionResponse]],
        "session/load": Callable[[LoadSessionRequest], Awaitable[LoadSessionResponse]],
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
        "session/set_mode": Callable[[SetSessionModeRequest], Awaitable[SetSessionModeResponse]],
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
        "session/cancel": Callable[[CancelNotification], Awaitable[None]],
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
        self, method: Literal["authenticate"], params: AuthenticateRequest, /
    ) -> Awaitable[AuthenticateResponse]: ...
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
        self, method: Literal["logout"], params: LogoutRequest, /
    ) -> Awaitable[LogoutResponse]: ...
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
        self, method: Literal["session/load"], params: LoadSessionRequest, /
    ) -> Awaitable[LoadSessionResponse]: ...
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
        self, method: Literal["session/set_mode"], params: SetSessionModeRequest, /
    ) -> Awaitable[SetSessionModeResponse]: ...
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
        self, method: Literal["session/cancel"], params: CancelNotification, /
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
    "fs/write_text_file",
    "fs/read_text_file",
    "session/request_permission",
    "terminal/create",
    "terminal/output",
    "terminal/release",
    "terminal/wait_for_exit",
    "terminal/kill",
    "elicitation/create",
    "mcp/message",
]
"""The requests the client answers."""

ClientNotificationMethod: TypeAlias = Literal[
    "session/update", "elicitation/complete", "auth/status_update", "$/cancel_request"
]
"""The notifications the client receives."""

ClientRequestHandlers = TypedDict(
    "ClientRequestHandlers",
    {
        "fs/write_text_file": Callable[[WriteTextFileRequest], Awaitable[WriteTextFileResponse]],
        "fs/read_text_file": Callable[[ReadTextFileRequest], Awaitable[ReadTextFileResponse]],
        "session/request_permission": Callable[
            [RequestPermissionRequest], Awaitable[RequestPermissionResponse]
        ],
        "terminal/create": Callable[[CreateTerminalRequest], Awaitable[CreateTerminalResponse]],
        "terminal/output": Callable[[TerminalOutputRequest], Awaitable[TerminalOutputResponse]],
        "terminal/release": Callable[[ReleaseTerminalRequest], Awaitable[ReleaseTerminalResponse]],
        "terminal/wait_for_exit": Callable[
            [WaitForTerminalExitRequest], Awaitable[WaitForTerminalExitResponse]
        ],
        "terminal/kill": Callable[[KillTerminalRequest], Awaitable[KillTerminalResponse]],
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
        "session/update": Callable[[SessionNotification], Awaitable[None]],
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
        self, method: Literal["fs/write_text_file"], params: WriteTextFileRequest, /
    ) -> Awaitable[WriteTextFileResponse]: ...
    @overload
    def __call__(
        self, method: Literal["fs/read_text_file"], params: ReadTextFileRequest, /
    ) -> Awaitable[ReadTextFileResponse]: ...
    @overload
    def __call__(
        self, method: Literal["session/request_permission"], params: RequestPermissionRequest, /
    ) -> Awaitable[RequestPermissionResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/create"], params: CreateTerminalRequest, /
    ) -> Awaitable[CreateTerminalResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/output"], params: TerminalOutputRequest, /
    ) -> Awaitable[TerminalOutputResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/release"], params: ReleaseTerminalRequest, /
    ) -> Awaitable[ReleaseTerminalResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/wait_for_exit"], params: WaitForTerminalExitRequest, /
    ) -> Awaitable[WaitForTerminalExitResponse]: ...
    @overload
    def __call__(
        self, method: Literal["terminal/kill"], params: KillTerminalRequest, /
    ) -> Awaitable[KillTerminalResponse]: ...
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
        self, method: Literal["session/update"], params: SessionNotification, /
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
