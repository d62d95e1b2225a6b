"""ACP v2 (draft): types shared by several areas: ids, content blocks, tool calls, errors, JSON.

Generated from acp_server/schema/v2/schema.json by `python -m scripts.gen_acp_types`.
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


RequestId: TypeAlias = int | str
"""A JSON-RPC request ID: a string or an integer. Unlike base JSON-RPC, it MUST NOT be `null`."""


SessionId: TypeAlias = str
"""A unique identifier for a conversation session between a client and agent."""


ToolCallId: TypeAlias = str
"""Unique identifier for a tool call within a session."""


ToolKind: TypeAlias = (
    Literal[
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    ]
    | str
)
"""Categories of tools that can be invoked."""


ToolCallStatus: TypeAlias = (
    Literal["pending", "in_progress", "paused", "completed", "failed", "cancelled"] | str
)
"""Execution status of a tool call."""


Role: TypeAlias = Literal["assistant", "user"] | str
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

    text: str
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


MediaType: TypeAlias = str
"""An Internet media type identifying the format of protocol content."""


@final
class ImageContent(TypedDict):
    """An image provided to or from an LLM."""

    data: str
    mimeType: MediaType
    uri: NotRequired[str | None]
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class AudioContent(TypedDict):
    """Audio provided to or from an LLM."""

    data: str
    mimeType: MediaType
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


IconTheme: TypeAlias = Literal["light", "dark"] | str
"""Theme an icon is designed for."""


@final
class Icon(TypedDict):
    """An optionally-sized icon that can be displayed in a user interface."""

    src: str
    mimeType: NotRequired[MediaType | None]
    sizes: NotRequired[list[str] | None]
    theme: NotRequired[IconTheme | None]
    _meta: NotRequired[JsonObject | None]


@final
class ResourceLink(TypedDict):
    """A link to a resource that the receiver may be able to read, included in a prompt or tool
    call result.
    """

    name: str
    uri: str
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    icons: NotRequired[list[Icon] | None]
    mimeType: NotRequired[MediaType | None]
    size: NotRequired[int | None]
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class TextResourceContents(TypedDict):
    """Text-based resource contents."""

    text: str
    uri: str
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]


@final
class BlobResourceContents(TypedDict):
    """Binary resource contents."""

    blob: str
    uri: str
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]


EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents
"""Resource content that can be embedded in a message."""


@final
class EmbeddedResource(TypedDict):
    """The contents of a resource, embedded into a prompt or tool call result."""

    resource: EmbeddedResourceResource
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockText(TypedDict):
    """`ContentBlock` variant: `type: "text"`. Text content. May be plain text or formatted with
    Markdown.
    """

    type: Literal["text"]
    text: str
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockImage(TypedDict):
    """`ContentBlock` variant: `type: "image"`. Images for visual context or analysis."""

    type: Literal["image"]
    data: str
    mimeType: MediaType
    uri: NotRequired[str | None]
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockAudio(TypedDict):
    """`ContentBlock` variant: `type: "audio"`. Audio data for transcription or analysis."""

    type: Literal["audio"]
    data: str
    mimeType: MediaType
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockResourceLink(TypedDict):
    """`ContentBlock` variant: `type: "resource_link"`. References to resources that the receiver
    may be able to read.
    """

    type: Literal["resource_link"]
    name: str
    uri: str
    title: NotRequired[str | None]
    description: NotRequired[str | None]
    icons: NotRequired[list[Icon] | None]
    mimeType: NotRequired[MediaType | None]
    size: NotRequired[int | None]
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockResource(TypedDict):
    """`ContentBlock` variant: `type: "resource"`. Complete resource contents embedded directly
    in the message.
    """

    type: Literal["resource"]
    resource: EmbeddedResourceResource
    annotations: NotRequired[Annotations | None]
    _meta: NotRequired[JsonObject | None]


@final
class ContentBlockOther(TypedDict):
    """`ContentBlock` variant: other. Custom or future content block."""

    type: str


ContentBlock: TypeAlias = (
    ContentBlockText
    | ContentBlockImage
    | ContentBlockAudio
    | ContentBlockResourceLink
    | ContentBlockResource
    | ContentBlockOther
)
"""Content blocks represent displayable information in the Agent Client Protocol."""


@final
class Content(TypedDict):
    """Standard content block (text, images, resources)."""

    content: ContentBlock
    _meta: NotRequired[JsonObject | None]


DiffFileType: TypeAlias = Literal["text", "binary", "directory", "symlink"] | str
"""Kind of file content represented by a diff change."""


AbsolutePath: TypeAlias = str
"""An absolute filesystem path used by the protocol."""


@final
class DiffPathChange(TypedDict):
    """Operation metadata for add, delete, and modify changes."""

    path: AbsolutePath


@final
class DiffPathPairChange(TypedDict):
    """Operation metadata for move and copy changes."""

    oldPath: AbsolutePath
    path: AbsolutePath


@final
class DiffChangeAdd(TypedDict):
    """`DiffChange` variant: `operation: "add"`. A file was added."""

    fileType: NotRequired[DiffFileType | None]
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]
    operation: Literal["add"]
    path: AbsolutePath


@final
class DiffChangeDelete(TypedDict):
    """`DiffChange` variant: `operation: "delete"`. A file was deleted."""

    fileType: NotRequired[DiffFileType | None]
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]
    operation: Literal["delete"]
    path: AbsolutePath


@final
class DiffChangeModify(TypedDict):
    """`DiffChange` variant: `operation: "modify"`. A file was modified in place."""

    fileType: NotRequired[DiffFileType | None]
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]
    operation: Literal["modify"]
    path: AbsolutePath


@final
class DiffChangeMove(TypedDict):
    """`DiffChange` variant: `operation: "move"`. A file was moved or renamed."""

    fileType: NotRequired[DiffFileType | None]
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]
    operation: Literal["move"]
    oldPath: AbsolutePath
    path: AbsolutePath


@final
class DiffChangeCopy(TypedDict):
    """`DiffChange` variant: `operation: "copy"`. A file was copied."""

    fileType: NotRequired[DiffFileType | None]
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]
    operation: Literal["copy"]
    oldPath: AbsolutePath
    path: AbsolutePath


@final
class DiffChangeOther(TypedDict):
    """`DiffChange` variant: other. Custom or future file operation."""

    fileType: NotRequired[DiffFileType | None]
    mimeType: NotRequired[MediaType | None]
    _meta: NotRequired[JsonObject | None]
    operation: str


DiffChange: TypeAlias = (
    DiffChangeAdd
    | DiffChangeDelete
    | DiffChangeModify
    | DiffChangeMove
    | DiffChangeCopy
    | DiffChangeOther
)
"""One file-level change described by a `Diff`."""


DiffPatchFormat: TypeAlias = Literal["git_patch"] | str
"""Text patch format used by `DiffPatch`."""


@final
class DiffPatch(TypedDict):
    """Renderable patch text and its format."""

    format: DiffPatchFormat
    text: str
    _meta: NotRequired[JsonObject | None]


@final
class Diff(TypedDict):
    """File changes produced by a tool call."""

    changes: list[DiffChange]
    patch: NotRequired[DiffPatch | None]
    _meta: NotRequired[JsonObject | None]


TerminalId: TypeAlias = str
"""Unique identifier for an agent-owned terminal within a session."""


@final
class Terminal(TypedDict):
    """A display-only reference to an agent-owned terminal."""

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
    changes: list[DiffChange]
    patch: NotRequired[DiffPatch | None]
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallContentTerminal(TypedDict):
    """`ToolCallContent` variant: `type: "terminal"`. A display-only reference to an agent-owned
    terminal.
    """

    type: Literal["terminal"]
    terminalId: TerminalId
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallContentOther(TypedDict):
    """`ToolCallContent` variant: other. Custom or future tool call content."""

    type: str


ToolCallContent: TypeAlias = (
    ToolCallContentContent | ToolCallContentDiff | ToolCallContentTerminal | ToolCallContentOther
)
"""Content produced by a tool call."""


@final
class ToolCallLocation(TypedDict):
    """A file location being accessed or modified by a tool."""

    path: AbsolutePath
    line: NotRequired[int | None]
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallCancelCapabilities(TypedDict):
    """Capability to cancel a tool call with `tool_call/cancel`."""

    _meta: NotRequired[JsonObject | None]


@final
class ToolCallCapabilities(TypedDict):
    """Client-initiated controls a tool call currently supports."""

    cancel: NotRequired[ToolCallCancelCapabilities | None]
    _meta: NotRequired[JsonObject | None]


@final
class ToolCallUpdate(TypedDict):
    """Represents an upsert for a tool call that the language model has requested."""

    toolCallId: ToolCallId
    name: NotRequired[str | None]
    title: NotRequired[str | None]
    kind: NotRequired[ToolKind | None]
    status: NotRequired[ToolCallStatus | None]
    content: NotRequired[list[ToolCallContent] | None]
    locations: NotRequired[list[ToolCallLocation] | None]
    rawInput: NotRequired[JsonValue]
    rawOutput: NotRequired[JsonValue]
    capabilities: NotRequired[ToolCallCapabilities | None]
    _meta: NotRequired[JsonObject | None]


ExtRequest: TypeAlias = JsonValue
"""Allows for sending an arbitrary request that is not part of the ACP spec. Extension methods
provide a way to add custom functionality while maintaining protocol compatibility.
"""


ProtocolVersion: TypeAlias = int
"""Protocol version identifier."""


@final
class EnvVariable(TypedDict):
    """An environment variable to set when launching a process."""

    name: str
    value: str
    _meta: NotRequired[JsonObject | None]


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

    groupId: SessionConfigGroupId
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

    configId: SessionConfigId
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

    configId: SessionConfigId
    name: str
    description: NotRequired[str | None]
    category: NotRequired[SessionConfigOptionCategory | None]
    _meta: NotRequired[JsonObject | None]
    type: Literal["boolean"]
    currentValue: bool


@final
class SessionConfigOptionOther(TypedDict):
    """`SessionConfigOption` variant: other. Custom or future session configuration option
    payload.
    """

    configId: SessionConfigId
    name: str
    description: NotRequired[str | None]
    category: NotRequired[SessionConfigOptionCategory | None]
    _meta: NotRequired[JsonObject | None]
    type: str


SessionConfigOption: TypeAlias = (
    SessionConfigOptionSelect | SessionConfigOptionBoolean | SessionConfigOptionOther
)
"""A session configuration option selector and its current state."""


@final
class TextCommandInput(TypedDict):
    """All text that was typed after the command name is provided as input."""

    hint: str
    _meta: NotRequired[JsonObject | None]


@final
class AvailableCommandInputText(TypedDict):
    """`AvailableCommandInput` variant: `type: "text"`. All text after the command name and the
    whitespace following it is provided as input.
    """

    type: Literal["text"]
    hint: str
    _meta: NotRequired[JsonObject | None]


@final
class AvailableCommandInputOther(TypedDict):
    """`AvailableCommandInput` variant: other. Custom or future command input specification."""

    type: str


AvailableCommandInput: TypeAlias = AvailableCommandInputText | AvailableCommandInputOther
"""The input specification for a command."""


@final
class Command(TypedDict):
    """A slash command the user can invoke by including it in a prompt."""

    name: str
    description: str
    input: NotRequired[AvailableCommandInput | None]
    _meta: NotRequired[JsonObject | None]


@final
class AvailableCommandCommand(TypedDict):
    """`AvailableCommand` variant: `type: "command"`. A slash command the user can invoke by
    including it in a prompt.
    """

    type: Literal["command"]
    name: str
    description: str
    input: NotRequired[AvailableCommandInput | None]
    _meta: NotRequired[JsonObject | None]


@final
class AvailableCommandOther(TypedDict):
    """`AvailableCommand` variant: other. Custom or future command kind."""

    type: str
    name: str
    description: str


AvailableCommand: TypeAlias = AvailableCommandCommand | AvailableCommandOther
"""A command the agent advertises to the client."""


ExtResponse: TypeAlias = JsonValue
"""Allows for sending an arbitrary response to an extension request that is not part of the ACP
spec. Extension methods provide a way to add custom functionality while maintaining protocol
compatibility.
"""


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
