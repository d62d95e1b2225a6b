"""ACP v2 (draft): the stable methods: who handles each, with what params and result; typed
tables.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Literal, Protocol, TypeAlias, TypedDict, overload

from acp_server.protocol.v2.client import RequestPermissionRequest, RequestPermissionResponse
from acp_server.protocol.v2.common import CancelRequestNotification
from acp_server.protocol.v2.connection import (
    InitializeRequest,
    InitializeResponse,
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
    UpdateSessionNotification,
)
from acp_server.protocol.v2.sessions import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    NewSessionRequest,
    NewSessionResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
)

AGENT_REQUESTS: Final[Mapping[str, tuple[str, str]]] = {
    "initialize": ("InitializeRequest", "InitializeResponse"),
    "auth/login": ("LoginAuthRequest", "LoginAuthResponse"),
    "auth/logout": ("LogoutAuthRequest", "LogoutAuthResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/list": ("ListSessionsRequest", "ListSessionsResponse"),
    "session/delete": ("DeleteSessionRequest", "DeleteSessionResponse"),
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
}
"""Notifications the agent receives: method -> `$defs` name of its params."""

CLIENT_REQUESTS: Final[Mapping[str, tuple[str, str]]] = {
    "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
    "elicitation/create": ("CreateElicitationRequest", "CreateElicitationResponse"),
}
"""Requests the client answers: method -> (`$defs` names of its params, its result)."""

CLIENT_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "session/update": "UpdateSessionNotification",
    "elicitation/complete": "CompleteElicitationNotification",
}
"""Notifications the client receives: method -> `$defs` name of its params."""

PROTOCOL_NOTIFICATIONS: Final[Mapping[str, str]] = {
    "$/cancel_request": "CancelRequestNotification",
}
"""Notifications either side may send and receive: method -> `$defs` name of its params."""

AgentRequestMethod: TypeAlias = Literal[
    "initialize",
    "auth/login",
    "auth/logout",
    "session/new",
    "session/list",
    "session/delete",
    "session/resume",
    "session/close",
    "tool_call/cancel",
    "terminal/cancel",
    "session/set_config_option",
    "session/prompt",
]
"""The requests the agent answers."""

AgentNotificationMethod: TypeAlias = Literal["session/cancel", "$/cancel_request"]
"""The notifications the agent receives."""

AgentRequestHandlers = TypedDict(
    "AgentRequestHandlers",
    {
        "initialize": Callable[[InitializeRequest], Awaitable[InitializeResponse]],
        "auth/login": Callable[[LoginAuthRequest], Awaitable[LoginAuthResponse]],
        "auth/logout": Callable[[LogoutAuthRequest], Awaitable[LogoutAuthResponse]],
        "session/new": Callable[[NewSessionRequest], Awaitable[NewSessionResponse]],
        "session/list": Callable[[ListSessionsRequest], Awaitable[ListSessionsResponse]],
        "session/delete": Callable[[DeleteSessionRequest], Awaitable[DeleteSessionResponse]],
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
        self, method: Literal["auth/logout"], params: LogoutAuthRequest, /
    ) -> Awaitable[LogoutAuthResponse]: ...
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
        self, method: Literal["$/cancel_request"], params: CancelRequestNotification, /
    ) -> Awaitable[None]: ...


ClientRequestMethod: TypeAlias = Literal["session/request_permission", "elicitation/create"]
"""The requests the client answers."""

ClientNotificationMethod: TypeAlias = Literal[
    "session/update", "elicitation/complete", "$/cancel_request"
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
    },
    total=False,
)
"""A table of the client's request handlers, checked method by method."""

ClientNotificationHandlers = TypedDict(
    "ClientNotificationHandlers",
    {
        "session/update": Callable[[UpdateSessionNotification], Awaitable[None]],
        "elicitation/complete": Callable[[CompleteElicitationNotification], Awaitable[None]],
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
        self, method: Literal["$/cancel_request"], params: CancelRequestNotification, /
    ) -> Awaitable[None]: ...
