"""Types shared by several areas: ids, content blocks, tool calls, errors, JSON.

Generated from acp_server/schema/schema.json by `python -m scripts.gen_acp_types`.
Do not edit: change the generator and run it again.
Usage and design: acp_server/protocol/__init__.py.
"""

from collections.abc import Mapping, Sequence
from typing import Literal, NotRequired, TypeAlias, TypedDict, final

JsonValue: TypeAlias = (
    Mapping[str, "JsonValue"] | Sequence["JsonValue"] | str | int | float | bool | None
)
"""Any JSON value. Read-only containers, so a `dict[str, str]` or a tuple is one too."""

JsonObject: TypeAlias = Mapping[str, JsonValue]
"""A JSON object with any members: `_meta`, `rawInput`, extension params."""


RequestId: TypeAlias = int | str | None
"""JSON RPC Request Id"""


SessionId: TypeAlias = str
"""A unique identifier for a conversation session between a client and agent."""


ToolCallId: TypeAlias = str
"""Unique identifier for a tool call within a session."""


ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
"""Categories of tools that can be invoked."""


ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed"]
"""Execution status of a tool call."""


Role: TypeAlias = Literal["assistant", "user"]
"""The sender or recipient of messages and data in a conversation."""


@final
class Annotations(TypedDict):
    """Optional annotations for the client. The client can use annotations to inform how objects
    are used or displayed
    """

    audience: NotRequired[list[Role] | None]
    lastModified: NotRequired[str | None]
    priority: NotRequired[float | None]
    _meta: NotRequired[JsonObject | None]


@final
class TextContent(TypedDict):
    """Text provided to or from an LLM."""

    annotations: NotRequired[Annotations | None]
    text: str
    _meta: NotRequired[JsonObject | None]


@final
class ImageContent(TypedDict):
    """An image provided to or from an LLM."""

    annotations: NotRequired[Annotations | None]
    data: str
    mimeType: str
    uri: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class AudioContent(TypedDict):
    """Audio provided to or from an LLM."""

    annotations: NotRequired[Annotations | None]
    data: str
    mimeType: str
    _meta: NotRequired[JsonObject | None]


@final
class ResourceLink(TypedDict):
    """A resource that the server is capable of reading, included in a prompt or tool call
    result.
    """

    annotations: NotRequired[Annotations | None]
    description: NotRequired[str | None]
    mimeType: NotRequired[str | None]
    name: str
    size: NotRequired[int | None]
    title: NotRequired[str | None]
    uri: str
    _meta: NotRequired[JsonObject | None]


@final
class TextResourceContents(TypedDict):
    """Text-based resource contents."""

    mimeType: NotRequired[str | None]
    text: str
    uri: str
    _meta: NotRequired[JsonObject | None]


@final
class BlobResourceContents(TypedDict):
    """Binary resource contents."""

    blob: str
    mimeType: NotRequired[str | None]
    uri: str
    _meta: NotRequired[JsonObject | None]


EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents
"""Resource content that can be embedded in a message."""


@final
class EmbeddedResource(TypedDict):
    """The contents of a resource, embedded into a prompt or tool call result."""

    annotations: NotRequired[Annotations | None]
    resource: EmbeddedResourceResource
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockText(TypedDict):
    """`ContentBlock` variant: `type: "text"`. Text content. May be plain text or formatted with
    Markdown.
    """

    type: Literal["text"]
    annotations: NotRequired[Annotations | None]
    text: str
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockImage(TypedDict):
    """`ContentBlock` variant: `type: "image"`. Images for visual context or analysis."""

    type: Literal["image"]
    annotations: NotRequired[Annotations | None]
    data: str
    mimeType: str
    uri: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockAudio(TypedDict):
    """`ContentBlock` variant: `type: "audio"`. Audio data for transcription or analysis."""

    type: Literal["audio"]
    annotations: NotRequired[Annotations | None]
    data: str
    mimeType: str
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockResourceLink(TypedDict):
    """`ContentBlock` variant: `type: "resource_link"`. References to resources that the agent
    can access.
    """

    type: Literal["resource_link"]
    annotations: NotRequired[Annotations | None]
    description: NotRequired[str | None]
    mimeType: NotRequired[str | None]
    name: str
    size: NotRequired[int | None]
    title: NotRequired[str | None]
    uri: str
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockResource(TypedDict):
    """`ContentBlock` variant: `type: "resource"`. Complete resource contents embedded directly
    in the message.
    """

    type: Literal["resource"]
    annotations: NotRequired[Annotations | None]
    resource: EmbeddedResourceResource
    _meta: NotRequired[JsonObject | None]


ContentBlock: TypeAlias = (
    ContentBlockText
    | ContentBlockImage
    | ContentBlockAudio
    | ContentBlockResourceLink
    | ContentBlockResource
)
"""Content blocks represent displayable information in the Agent Client Protocol."""


@final
class Content(TypedDict):
    """Standard content block (text, images, resources)."""

    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class Diff(TypedDict):
    """A diff representing file modifications."""

    path: str
    oldText: NotRequired[str | None]
    newText: str
    _meta: NotRequired[JsonObject | None]


TerminalId: TypeAlias = str
"""Typed identifier used for terminal values on the wire."""


@final
class Terminal(TypedDict):
    """Embed a terminal created with `terminal/create` by its id."""

    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallContentContent(TypedDict):
    """`ToolCallContent` variant: `type: "content"`. Standard content block (text, images,
    resources).
    """

    type: Literal["content"]
    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallContentDiff(TypedDict):
    """`ToolCallContent` variant: `type: "diff"`. File modification shown as a diff."""

    type: Literal["diff"]
    path: str
    oldText: NotRequired[str | None]
    newText: str
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallContentTerminal(TypedDict):
    """`ToolCallContent` variant: `type: "terminal"`. Embed a terminal created with
    `terminal/create` by its id.
    """

    type: Literal["terminal"]
    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


ToolCallContent: TypeAlias = ToolCallContentContent | ToolCallContentDiff | ToolCallContentTerminal
"""Content produced by a tool call."""


@final
class ToolCallLocation(TypedDict):
    """A file location being accessed or modified by a tool."""

    path: str
    line: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallUpdate(TypedDict):
    """An update to an existing tool call."""

    toolCallId: ToolCallId
    kind: NotRequired[ToolKind | None]
    status: NotRequired[ToolCallStatus | None]
    title: NotRequired[str | None]
    name: NotRequired[str | None]
    content: NotRequired[list[ToolCallContent] | None]
    locations: NotRequired[list[ToolCallLocation] | None]
    rawInput: NotRequired[JsonValue]
    rawOutput: NotRequired[JsonValue]
    _meta: NotRequired[JsonObject | None]


@final
class EnvVariable(TypedDict):
    """An environment variable to set when launching an MCP server."""

    name: str
    value: str
    _meta: NotRequired[JsonObject | None]


ExtRequest: TypeAlias = JsonValue
"""Allows for sending an arbitrary request that is not part of the ACP spec. Extension methods
provide a way to add custom functionality while maintaining protocol compatibility.
"""


SessionModeId: TypeAlias = str
"""Unique identifier for a Session Mode."""


SessionConfigId: TypeAlias = str
"""Unique identifier for a session configuration option."""


SessionConfigOptionCategory: TypeAlias = (
    Literal["mode", "model", "model_config", "thought_level"] | str
)
"""Semantic category for a session configuration option."""


SessionConfigValueId: TypeAlias = str
"""Unique identifier for a session configuration option value."""


@final
class SessionConfigSelectOption(TypedDict):
    """A possible value for a session configuration option."""

    value: SessionConfigValueId
    name: str
    description: NotRequired[str | None]
    _meta: NotRequired[JsonObject | None]


SessionConfigGroupId: TypeAlias = str
"""Unique identifier for a session configuration option value group."""


@final
class SessionConfigSelectGroup(TypedDict):
    """A group of possible values for a session configuration option."""

    group: SessionConfigGroupId
    name: str
    options: list[SessionConfigSelectOption]
    _meta: NotRequired[JsonObject | None]


SessionConfigSelectOptions: TypeAlias = (
    list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]
)
"""Possible values for a session configuration option."""


@final
class SessionConfigSelect(TypedDict):
    """A single-value selector (dropdown) session configuration option payload."""

    currentValue: SessionConfigValueId
    options: SessionConfigSelectOptions


@final
class SessionConfigBoolean(TypedDict):
    """A boolean on/off toggle session configuration option payload."""

    currentValue: bool


@final
class SessionConfigOptionSelect(TypedDict):
    """`SessionConfigOption` variant: `type: "select"`. Single-value selector (dropdown)."""

    id: SessionConfigId
    name: str
    description: NotRequired[str | None]
    category: NotRequired[SessionConfigOptionCategory | None]
    _meta: NotRequired[JsonObject | None]
    type: Literal["select"]
    currentValue: SessionConfigValueId
    options: SessionConfigSelectOptions


@final
class SessionConfigOptionBoolean(TypedDict):
    """`SessionConfigOption` variant: `type: "boolean"`. Boolean on/off toggle."""

    id: SessionConfigId
    name: str
    description: NotRequired[str | None]
    category: NotRequired[SessionConfigOptionCategory | None]
    _meta: NotRequired[JsonObject | None]
    type: Literal["boolean"]
    currentValue: bool


SessionConfigOption: TypeAlias = SessionConfigOptionSelect | SessionConfigOptionBoolean
"""A session configuration option selector and its current state."""


ExtResponse: TypeAlias = JsonValue
"""Allows for sending an arbitrary response to an extension request that is not part of the ACP
spec. Extension methods provide a way to add custom functionality while maintaining protocol
compatibility.
"""


ErrorCode: TypeAlias = Literal[-32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002] | int
"""Predefined error codes for common JSON-RPC and ACP-specific errors."""


@final
class Error(TypedDict):
    """JSON-RPC error object."""

    code: ErrorCode
    message: str
    data: NotRequired[JsonValue]


ExtNotification: TypeAlias = JsonValue
"""Allows either side to send an arbitrary notification that is not part of the ACP spec.
Extension notifications provide a way to send one-way messages for custom functionality while
maintaining protocol compatibility.
"""


@final
class CancelRequestNotification(TypedDict):
    """`$/cancel_request` notification to either side. Notification to cancel an ongoing request."""

    requestId: RequestId
    _meta: NotRequired[JsonObject | None]
