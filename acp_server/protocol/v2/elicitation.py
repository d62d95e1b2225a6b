"""ACP v2 (draft): `elicitation/create` and `elicitation/complete`: questions for the user.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from typing import Literal, NotRequired, TypeAlias, TypedDict, final

from acp_server.protocol.v2.common import JsonObject, JsonValue, RequestId, SessionId, ToolCallId

ElicitationSchemaType: TypeAlias = Literal["object"]
"""Type discriminator for elicitation schemas."""


StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"] | str
"""String format types for string properties in elicitation schemas."""


@final
class EnumOption(TypedDict):
    """A titled enum option with a const value, human-readable title, and optional description."""

    const: str
    title: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class StringPropertySchema(TypedDict):
    """Schema for string properties in an elicitation form."""

    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minLength: NotRequired[int | None]
    maxLength: NotRequired[int | None]
    pattern: NotRequired[str | None]
    format: NotRequired[StringFormat | None]
    default: NotRequired[str | None]
    enum: NotRequired[list[str] | None]
    oneOf: NotRequired[list[EnumOption] | None]
    _meta: NotRequired[JsonObject | None]


@final
class NumberPropertySchema(TypedDict):
    """Schema for number (floating-point) properties in an elicitation form."""

    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minimum: NotRequired[float | None]
    maximum: NotRequired[float | None]
    default: NotRequired[float | None]
    _meta: NotRequired[JsonObject | None]


@final
class IntegerPropertySchema(TypedDict):
    """Schema for integer properties in an elicitation form."""

    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minimum: NotRequired[int | None]
    maximum: NotRequired[int | None]
    default: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


@final
class BooleanPropertySchema(TypedDict):
    """Schema for boolean properties in an elicitation form."""

    title: NotRequired[str | None]
    description: NotRequired[str | None]
    default: NotRequired[bool | None]
    _meta: NotRequired[JsonObject | None]


@final
class StringMultiSelectItems(TypedDict):
    """String item schema for multi-select enum properties."""

    enum: list[str]
    _meta: NotRequired[JsonObject | None]


@final
class TitledMultiSelectItems(TypedDict):
    """Items definition for titled multi-select enum properties."""

    anyOf: list[EnumOption]
    _meta: NotRequired[JsonObject | None]


@final
class MultiSelectItemsString(TypedDict):
    """`MultiSelectItems` variant: `type: "string"`. Multi-select string items with plain string
    values.
    """

    type: Literal["string"]
    enum: list[str]
    _meta: NotRequired[JsonObject | None]


@final
class MultiSelectItemsOther(TypedDict):
    """`MultiSelectItems` variant: other. Custom or future typed multi-select items."""

    type: str


MultiSelectItems: TypeAlias = (
    MultiSelectItemsString | MultiSelectItemsOther | TitledMultiSelectItems
)
"""Items for a multi-select (array) property schema."""


@final
class MultiSelectPropertySchema(TypedDict):
    """Schema for multi-select (array) properties in an elicitation form."""

    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minItems: NotRequired[int | None]
    maxItems: NotRequired[int | None]
    items: MultiSelectItems
    default: NotRequired[list[str] | None]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationPropertySchemaString(TypedDict):
    """`ElicitationPropertySchema` variant: `type: "string"`. String property (or single-select
    enum when `enum`/`oneOf` is set).
    """

    type: Literal["string"]
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minLength: NotRequired[int | None]
    maxLength: NotRequired[int | None]
    pattern: NotRequired[str | None]
    format: NotRequired[StringFormat | None]
    default: NotRequired[str | None]
    enum: NotRequired[list[str] | None]
    oneOf: NotRequired[list[EnumOption] | None]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationPropertySchemaNumber(TypedDict):
    """`ElicitationPropertySchema` variant: `type: "number"`. Number (floating-point) property."""

    type: Literal["number"]
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minimum: NotRequired[float | None]
    maximum: NotRequired[float | None]
    default: NotRequired[float | None]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationPropertySchemaInteger(TypedDict):
    """`ElicitationPropertySchema` variant: `type: "integer"`. Integer property."""

    type: Literal["integer"]
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minimum: NotRequired[int | None]
    maximum: NotRequired[int | None]
    default: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationPropertySchemaBoolean(TypedDict):
    """`ElicitationPropertySchema` variant: `type: "boolean"`. Boolean property."""

    type: Literal["boolean"]
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    default: NotRequired[bool | None]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationPropertySchemaArray(TypedDict):
    """`ElicitationPropertySchema` variant: `type: "array"`. Multi-select array property."""

    type: Literal["array"]
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    minItems: NotRequired[int | None]
    maxItems: NotRequired[int | None]
    items: MultiSelectItems
    default: NotRequired[list[str] | None]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationPropertySchemaOther(TypedDict):
    """`ElicitationPropertySchema` variant: other. Custom or future elicitation property schema."""

    type: str


ElicitationPropertySchema: TypeAlias = (
    ElicitationPropertySchemaString
    | ElicitationPropertySchemaNumber
    | ElicitationPropertySchemaInteger
    | ElicitationPropertySchemaBoolean
    | ElicitationPropertySchemaArray
    | ElicitationPropertySchemaOther
)
"""Property schema for elicitation form fields."""


@final
class ElicitationSchema(TypedDict):
    """Type-safe elicitation schema for requesting structured user input."""

    type: ElicitationSchemaType
    title: NotRequired[str | None]
    properties: dict[str, ElicitationPropertySchema]
    required: NotRequired[list[str] | None]
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class ElicitationSessionScope(TypedDict):
    """Session-scoped elicitation, optionally tied to a specific tool call."""

    sessionId: SessionId
    toolCallId: NotRequired[ToolCallId | None]


@final
class ElicitationRequestScope(TypedDict):
    """Request-scoped elicitation, tied to a specific JSON-RPC request outside of a session
    (e.g., during auth/configuration phases before any session is started).
    """

    requestId: RequestId


@final
class ElicitationFormModeSession(TypedDict):
    """`ElicitationFormMode` variant: Session. Tied to a session, optionally to a specific tool
    call within that session.
    """

    requestedSchema: ElicitationSchema
    sessionId: SessionId
    toolCallId: NotRequired[ToolCallId | None]


@final
class ElicitationFormModeRequest(TypedDict):
    """`ElicitationFormMode` variant: Request. Tied to a specific JSON-RPC request outside of a
    session (e.g., during auth/configuration phases before any session is started).
    """

    requestedSchema: ElicitationSchema
    requestId: RequestId


ElicitationId: TypeAlias = str
"""Unique identifier for an elicitation."""


@final
class ElicitationUrlModeSession(TypedDict):
    """`ElicitationUrlMode` variant: Session. Tied to a session, optionally to a specific tool
    call within that session.
    """

    elicitationId: ElicitationId
    url: str
    sessionId: SessionId
    toolCallId: NotRequired[ToolCallId | None]


@final
class ElicitationUrlModeRequest(TypedDict):
    """`ElicitationUrlMode` variant: Request. Tied to a specific JSON-RPC request outside of a
    session (e.g., during auth/configuration phases before any session is started).
    """

    elicitationId: ElicitationId
    url: str
    requestId: RequestId


@final
class CreateElicitationRequestFormSession(TypedDict):
    """`CreateElicitationRequest` variant: `mode: "form"`, Session. Form-based elicitation where
    the client renders a form from the provided schema. Tied to a session, optionally to a
    specific tool call within that session.
    """

    message: str
    _meta: NotRequired[JsonObject | None]
    mode: Literal["form"]
    requestedSchema: ElicitationSchema
    sessionId: SessionId
    toolCallId: NotRequired[ToolCallId | None]


@final
class CreateElicitationRequestFormRequest(TypedDict):
    """`CreateElicitationRequest` variant: `mode: "form"`, Request. Form-based elicitation where
    the client renders a form from the provided schema. Tied to a specific JSON-RPC request
    outside of a session (e.g., during auth/configuration phases before any session is started).
    """

    message: str
    _meta: NotRequired[JsonObject | None]
    mode: Literal["form"]
    requestedSchema: ElicitationSchema
    requestId: RequestId


@final
class CreateElicitationRequestUrlSession(TypedDict):
    """`CreateElicitationRequest` variant: `mode: "url"`, Session. URL-based elicitation where
    the client directs the user to a URL. Tied to a session, optionally to a specific tool call
    within that session.
    """

    message: str
    _meta: NotRequired[JsonObject | None]
    mode: Literal["url"]
    elicitationId: ElicitationId
    url: str
    sessionId: SessionId
    toolCallId: NotRequired[ToolCallId | None]


@final
class CreateElicitationRequestUrlRequest(TypedDict):
    """`CreateElicitationRequest` variant: `mode: "url"`, Request. URL-based elicitation where
    the client directs the user to a URL. Tied to a specific JSON-RPC request outside of a
    session (e.g., during auth/configuration phases before any session is started).
    """

    message: str
    _meta: NotRequired[JsonObject | None]
    mode: Literal["url"]
    elicitationId: ElicitationId
    url: str
    requestId: RequestId


@final
class CreateElicitationRequestOtherSession(TypedDict):
    """`CreateElicitationRequest` variant: other, Session. Custom or future elicitation mode.
    Tied to a session, optionally to a specific tool call within that session.
    """

    message: str
    _meta: NotRequired[JsonObject | None]
    mode: str
    sessionId: SessionId
    toolCallId: NotRequired[ToolCallId | None]


@final
class CreateElicitationRequestOtherRequest(TypedDict):
    """`CreateElicitationRequest` variant: other, Request. Custom or future elicitation mode.
    Tied to a specific JSON-RPC request outside of a session (e.g., during auth/configuration
    phases before any session is started).
    """

    message: str
    _meta: NotRequired[JsonObject | None]
    mode: str
    requestId: RequestId


CreateElicitationRequest: TypeAlias = (
    CreateElicitationRequestFormSession
    | CreateElicitationRequestFormRequest
    | CreateElicitationRequestUrlSession
    | CreateElicitationRequestUrlRequest
    | CreateElicitationRequestOtherSession
    | CreateElicitationRequestOtherRequest
)
"""`elicitation/create` request to the client. Request from the agent to elicit structured user
input.
"""


ElicitationFormMode: TypeAlias = ElicitationFormModeSession | ElicitationFormModeRequest
"""Form-based elicitation mode where the client renders a form from the provided schema."""


ElicitationUrlMode: TypeAlias = ElicitationUrlModeSession | ElicitationUrlModeRequest
"""URL-based elicitation mode where the client directs the user to a URL."""


@final
class CompleteElicitationNotification(TypedDict):
    """`elicitation/complete` notification to the client. Notification sent by the agent when a
    URL-based elicitation is complete.
    """

    elicitationId: ElicitationId
    _meta: NotRequired[JsonObject | None]


ElicitationContentValue: TypeAlias = str | int | float | bool | list[str] | JsonValue
"""Allowed wire representations for `ElicitationContentValue`."""


@final
class ElicitationAcceptAction(TypedDict):
    """The user accepted the elicitation and provided content."""

    content: NotRequired[dict[str, ElicitationContentValue] | None]


@final
class CreateElicitationResponseAccept(TypedDict):
    """`CreateElicitationResponse` variant: `action: "accept"`. The user accepted and provided
    content.
    """

    _meta: NotRequired[JsonObject | None]
    action: Literal["accept"]
    content: NotRequired[dict[str, ElicitationContentValue] | None]


@final
class CreateElicitationResponseDecline(TypedDict):
    """`CreateElicitationResponse` variant: `action: "decline"`. The user declined the
    elicitation.
    """

    _meta: NotRequired[JsonObject | None]
    action: Literal["decline"]


@final
class CreateElicitationResponseCancel(TypedDict):
    """`CreateElicitationResponse` variant: `action: "cancel"`. The elicitation was cancelled."""

    _meta: NotRequired[JsonObject | None]
    action: Literal["cancel"]


@final
class CreateElicitationResponseOther(TypedDict):
    """`CreateElicitationResponse` variant: other. Custom or future elicitation action."""

    _meta: NotRequired[JsonObject | None]
    action: str


CreateElicitationResponse: TypeAlias = (
    CreateElicitationResponseAccept
    | CreateElicitationResponseDecline
    | CreateElicitationResponseCancel
    | CreateElicitationResponseOther
)
"""`elicitation/create` result from the client. Response from the client to an elicitation
request.
"""
