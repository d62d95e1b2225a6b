"""The one vocabulary every layer above the wire adapters speaks.

These types are pure values: identity (entry ids, parent links) is a storage concern that lives in
`sessions`. They are stdlib dataclasses so that importing `providers` stays cheap; pydantic is used
only to (de)serialise them, through the lazily built adapters in `providers.codec`.

Every part carries `provider_metadata`: an opaque bag namespaced by provider id (for example
`{"anthropic": {"signature": "..."}}`). Nothing above the adapter that produced it reads it; it is
persisted verbatim and handed back to the same adapter on the next request. It is JSON-valued by
construction: a part whose metadata would not survive a JSON round trip is rejected at once, because
an unserialisable value would otherwise corrupt a transcript silently.

Text is valid Unicode by construction too: a part built with a lone surrogate in its text (from a
client's JSON, a tool's output, a transcript written before this rule) holds U+FFFD there instead
(`providers.text`), so nothing unencodable is stored or sent to a provider, whatever the source.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from providers.records import Record
from providers.text import valid_json, valid_text

if TYPE_CHECKING:
    JsonValue: TypeAlias = (
        "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
    )
    """A value that survives `json.dumps` / `json.loads` unchanged."""
else:

    class _JsonValue:
        """`JsonValue` at run time. pydantic needs a real recursive alias (`TypeAliasType`, from
        `typing_extensions` on 3.11), but importing typing_extensions costs ~2 ms of every start
        while only pydantic users need the alias. This stand-in works in annotations and generic
        aliases (`dict[str, JsonValue]`) and hands pydantic the real alias, built on first use
        (pydantic has imported typing_extensions by then)."""

        __slots__ = ()

        def __repr__(self) -> str:
            return "JsonValue"

        def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
            return handler(_json_value_alias())

    JsonValue = _JsonValue()


@cache
def _json_value_alias() -> Any:
    from typing_extensions import TypeAliasType

    # Called through `Any`: type checkers accept TypeAliasType only at module scope, and they read
    # the TYPE_CHECKING alias above anyway. The value refers back to `JsonValue` by name, resolved
    # in this module: the stand-in, which returns this alias again; pydantic makes that recursive.
    make_alias: Any = TypeAliasType
    return make_alias(
        "JsonValue", "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
    )


ProviderMetadata: TypeAlias = dict[str, dict[str, JsonValue]]
"""Opaque vendor data, namespaced by provider id: `{provider_id: {key: json_value}}`."""

Role: TypeAlias = Literal["user", "assistant", "tool"]


class NotJsonError(TypeError):
    """A value that must be JSON (provider metadata, tool arguments) is not."""


def _check_json(value: object, where: str) -> None:
    match value:
        case None | bool() | int() | str():
            return
        case float():
            if not math.isfinite(value):
                raise NotJsonError(f"{where}: {value!r} does not survive a JSON round trip")
        case list():
            items = cast("list[object]", value)
            for index, item in enumerate(items):
                _check_json(item, f"{where}[{index}]")
        case dict():
            mapping = cast("dict[object, object]", value)
            for key, item in mapping.items():
                if not isinstance(key, str):
                    raise NotJsonError(f"{where}: key {key!r} is not a string")
                _check_json(item, f"{where}.{key}")
        case _:
            raise NotJsonError(f"{where}: {type(value).__name__} is not a JSON value")


def ensure_json(value: object, where: str = "value") -> JsonValue:
    """Return `value` unchanged if it is a JSON value (no tuples, sets, bytes or NaN), else raise.

    Raises:
        NotJsonError: the value would not survive `json.loads(json.dumps(value))` unchanged.
    """
    _check_json(value, where)
    return value  # pyright: ignore[reportReturnType]


def _check_metadata(metadata: Mapping[str, object]) -> None:
    # On every streamed delta: an empty bag (nearly all of them) must cost one test.
    if not metadata:
        return
    for namespace, bag in metadata.items():
        if not isinstance(bag, dict):
            raise NotJsonError(f"provider_metadata.{namespace} must be an object")
    _check_json(dict(metadata), "provider_metadata")


def merge_metadata(base: ProviderMetadata, extra: ProviderMetadata) -> ProviderMetadata:
    """Merge two metadata bags namespace by namespace; keys in `extra` win."""
    if not extra:
        return base
    if not base:
        return extra
    merged = dict(base)
    for namespace, bag in extra.items():
        merged[namespace] = {**merged.get(namespace, {}), **bag}
    return merged


def _empty_metadata() -> ProviderMetadata:
    return {}


def _set_valid_text(part: TextPart | ReasoningPart) -> None:
    """Replace lone surrogates in a part's text (frozen: set through `object`)."""
    text = valid_text(part.text)
    if text is not part.text:
        object.__setattr__(part, "text", text)


# --------------------------------------------------------------------------------------- parts


class TextPart(Record):
    """Plain text from the user or the model."""

    text: str
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    """Opaque vendor data (e.g. a Gemini `thoughtSignature` on a text part)."""
    kind: Literal["text"] = "text"

    def __post_init__(self) -> None:
        _set_valid_text(self)
        _check_metadata(self.provider_metadata)


class ReasoningPart(Record):
    """The model's reasoning. `text` may be empty when the vendor sends only an opaque blob
    (Anthropic `redacted_thinking`, OpenAI encrypted reasoning); the blob lives in metadata."""

    text: str
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["reasoning"] = "reasoning"

    def __post_init__(self) -> None:
        _set_valid_text(self)
        _check_metadata(self.provider_metadata)


class ImagePart(Record):
    """An image: base64 `data` with its `media_type`, or an https `url` kept as a reference."""

    media_type: str
    """MIME type, e.g. `image/png`. For a URL reference it may be a guess from the extension."""
    data: str | None = None
    """Standard base64 of the image bytes."""
    url: str | None = None
    """An https URL the provider fetches itself."""
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("an image has exactly one of data or url")
        if self.url is not None and not self.url.startswith("https://"):
            raise ValueError("an image reference must be an https URL")
        _check_metadata(self.provider_metadata)


class ToolCallPart(Record):
    """A tool call the model made, with its arguments already parsed from JSON text."""

    id: str
    """The vendor's call id, or one the adapter synthesised when the vendor sent none (Gemini)."""
    name: str
    arguments: JsonValue
    """The parsed arguments; `{}` when the text was empty. Invalid JSON leaves `None` here and the
    raw text in `invalid_arguments`."""
    invalid_arguments: str | None = None
    """The raw argument text when it was not valid JSON; the loop answers such a call with an error
    result instead of running it."""
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["tool_call"] = "tool_call"

    def __post_init__(self) -> None:
        _check_json(self.arguments, f"tool call {self.name} arguments")
        # The model's JSON may spell a lone surrogate as an escape (`"\\ud800"`).
        object.__setattr__(self, "arguments", valid_json(self.arguments))
        if self.invalid_arguments is not None:
            object.__setattr__(self, "invalid_arguments", valid_text(self.invalid_arguments))
        _check_metadata(self.provider_metadata)


ToolResultContent: TypeAlias = TextPart | ImagePart


class ToolResultPart(Record):
    """The result of one tool call, sent back in a `tool` message."""

    tool_call_id: str
    name: str
    """The tool's name, repeated because Gemini matches results by name."""
    content: Sequence[ToolResultContent]
    is_error: bool = False
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["tool_result"] = "tool_result"

    def __post_init__(self) -> None:
        _check_metadata(self.provider_metadata)

    @property
    def text(self) -> str:
        """The text content joined, for logs, stubs and token estimates."""
        return "\n".join(part.text for part in self.content if isinstance(part, TextPart))


Part: TypeAlias = TextPart | ReasoningPart | ImagePart | ToolCallPart | ToolResultPart


class Message(Record):
    """One message of a conversation: a role and its parts, in order.

    `user` messages hold text and images; `assistant` messages hold text, reasoning and tool calls
    in the order the model produced them (the order matters for reasoning replay); `tool` messages
    hold the tool results answering the preceding assistant message.
    """

    role: Role
    parts: Sequence[Part]
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    """Message-level vendor data (e.g. OpenAI Responses message `phase`)."""

    def __post_init__(self) -> None:
        _check_metadata(self.provider_metadata)

    @property
    def text(self) -> str:
        """All text parts joined."""
        return "".join(part.text for part in self.parts if isinstance(part, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [part for part in self.parts if isinstance(part, ToolCallPart)]


# ------------------------------------------------------------------------------------- request


class ToolSpec(Record):
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: dict[str, JsonValue]
    """A JSON schema (type object) for the arguments."""

    def __post_init__(self) -> None:
        # An MCP server's description is JSON from another process: it may hold lone surrogates.
        object.__setattr__(self, "description", valid_text(self.description))
        object.__setattr__(self, "input_schema", valid_json(self.input_schema))


class ToolChoiceNamed(Record):
    """Force the model to call this one tool."""

    name: str
    kind: Literal["named"] = "named"


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | ToolChoiceNamed
ReasoningEffort: TypeAlias = Literal["minimal", "low", "medium", "high"]
CacheTtl: TypeAlias = Literal["5m", "1h"]


class PromptCache(Record):
    """How the provider's prompt cache is to serve a request: what it may keep and for how long.
    Neutral: each adapter turns it into what its vendor understands (Anthropic `cache_control`
    breakpoints, OpenAI `prompt_cache_key` and retention) or ignores it (automatic caches)."""

    key: str | None = None
    """Stable for every request of one conversation (a session id): vendors that route by a
    key (OpenAI) send requests that share a prefix to the machine holding it."""
    ttl: CacheTtl = "5m"
    """How long a written prefix should live where the vendor lets us choose (Anthropic)."""


class ModelRequest(Record):
    """Everything one model call needs; the model id lives on the `Model` object."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    tool_choice: ToolChoice = "auto"
    reasoning_effort: ReasoningEffort | None = None
    """None leaves the model's default; adapters map effort onto the vendor's knob."""
    max_output_tokens: int | None = None
    cache: PromptCache | None = None
    """None sends no caching hints (automatic caches still work on their own)."""

    def __post_init__(self) -> None:
        # The system prompt gathers text from many places (instruction files, skills, MCP).
        object.__setattr__(self, "system", valid_text(self.system))


# -------------------------------------------------------------------------------------- usage


class Usage(Record):
    """Token counts of one model call, normalised across vendors.

    `input_tokens` is the WHOLE prompt: it includes cached reads and cache writes (for Anthropic the
    adapter adds `cache_read_input_tokens` and `cache_creation_input_tokens` to `input_tokens`).
    `output_tokens` includes reasoning (for Gemini the adapter adds `thoughtsTokenCount`).
    `cached_input_tokens`, `cache_write_tokens` and `reasoning_tokens` are subsets, never added on
    top, and `cache_write_1h_tokens` is a subset of `cache_write_tokens`. So the context a call
    occupied is `input_tokens + output_tokens`.
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_1h_tokens: int = 0
    """Of the cache writes, those kept for an hour (Anthropic `ttl: "1h"`), priced higher."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


# ------------------------------------------------------------------------------ stream events
#
# A model call streams these. Text and reasoning deltas carry an `index`: consecutive deltas of
# one kind with the same index belong to one part; a new index starts a new part. Metadata on a
# delta is merged into its part (an Anthropic signature arrives as an empty reasoning delta that
# carries only metadata). `providers.assemble.MessageAssembler` turns a stream into a `Message`.
# Metadata on an event is JSON-checked at creation, like on parts, so a bad value fails in the
# adapter that made it rather than when the transcript is written.


class TextDelta(Record):
    """A piece of the response text."""

    text: str
    index: int = 0
    """Which text part of the response this delta extends."""
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["text_delta"] = "text_delta"

    def __post_init__(self) -> None:
        if self.provider_metadata:  # the hot path: most deltas carry none
            _check_metadata(self.provider_metadata)


class ReasoningDelta(Record):
    """A piece of the model's reasoning (or, with empty text, only its metadata)."""

    text: str
    index: int = 0
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["reasoning_delta"] = "reasoning_delta"

    def __post_init__(self) -> None:
        if self.provider_metadata:  # the hot path: most deltas carry none
            _check_metadata(self.provider_metadata)


class ToolCallStart(Record):
    """The model began a tool call; its arguments follow as `ToolCallDelta`s."""

    call_id: str
    name: str
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["tool_call_start"] = "tool_call_start"

    def __post_init__(self) -> None:
        if self.provider_metadata:  # the hot path: most deltas carry none
            _check_metadata(self.provider_metadata)


class ToolCallDelta(Record):
    """A fragment of a tool call's JSON arguments."""

    call_id: str
    arguments_delta: str
    """A fragment of the JSON argument text."""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


class ToolCallEnd(Record):
    """The call is complete: its arguments parsed, or the parse failure described."""

    call_id: str
    name: str
    arguments: JsonValue
    """Parsed arguments (`{}` for empty text); `None` when the text was not valid JSON."""
    raw_arguments: str
    invalid_reason: str | None = None
    """Why `raw_arguments` did not parse; reported here rather than raised."""
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    kind: Literal["tool_call_end"] = "tool_call_end"

    def __post_init__(self) -> None:
        if self.provider_metadata:  # the hot path: most deltas carry none
            _check_metadata(self.provider_metadata)


class UsageEvent(Record):
    """Token counts of the call, as far as the vendor has reported them."""

    usage: Usage
    kind: Literal["usage"] = "usage"


FinishReason: TypeAlias = Literal[
    "stop",
    "tool_calls",
    "length",
    "content_filter",
    "refusal",
    "context_overflow",
    "error",
    "other",
]


class Finish(Record):
    """Exactly one per stream, always last."""

    reason: FinishReason
    raw_reason: str | None = None
    """The vendor's own value (`end_turn`, `STOP`, `incomplete:max_output_tokens`...)."""
    provider_metadata: ProviderMetadata = field(default_factory=_empty_metadata)
    """Message-level vendor data for the assistant message (e.g. a response id)."""
    kind: Literal["finish"] = "finish"

    def __post_init__(self) -> None:
        if self.provider_metadata:  # the hot path: most deltas carry none
            _check_metadata(self.provider_metadata)


class ErrorEvent(Record):
    """The call failed. It is followed by `Finish(reason="error")`."""

    error: ProviderError
    kind: Literal["error"] = "error"


# --------------------------------------------------------------------------------------- errors

ErrorKind: TypeAlias = Literal[
    "auth",
    "rate_limit",
    "context_overflow",
    "invalid_request",
    "server",
    "network",
    "abort",
    "unknown",
]


class ProviderError(Record):
    """A model call's failure, classified so the loop can act without knowing the vendor."""

    kind: ErrorKind
    message: str
    """Human-readable, never containing a credential."""
    retryable: bool
    retry_after: float | None = None
    """Seconds the vendor asked us to wait, when it said."""
    status: int | None = None
    """HTTP status; None for in-stream errors without one and for network failures."""
    code: str | None = None
    """The vendor's error code or type (`context_length_exceeded`, `overloaded_error`...)."""
    provider: str = ""
    context_limit: int | None = None
    """A context overflow: the window (in tokens) the vendor's message states, when it states
    one (`providers.errors.classify` reads it)."""


StreamEvent: TypeAlias = (
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageEvent
    | Finish
    | ErrorEvent
)


def parse_tool_arguments(raw: str) -> tuple[JsonValue, str | None]:
    """Parse streamed argument text: empty means `{}`; invalid JSON returns `(None, reason)`."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"arguments are not valid JSON: {exc}"
    try:
        return ensure_json(value, "arguments"), None
    except NotJsonError as exc:
        return None, str(exc)
