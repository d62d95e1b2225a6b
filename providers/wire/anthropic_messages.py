"""Wire adapter for the Anthropic Messages API, through the official `anthropic` SDK (2.x).

The SDK is imported only when the first request is made. The request builder and the stream
translator are pure; `AnthropicMessagesModel.stream` is the thin I/O shell around them.

Quirks handled here (providers.md section 3):
- A bearer token (`ANTHROPIC_AUTH_TOKEN`, for gateways and proxies) goes to the SDK as
  `auth_token`, an API key as `api_key`; `credentials` picks one.
- API version 2026-10-21 (the SDK default) rejects `temperature`/`top_p`/`top_k`, so none is sent.
- Thinking blocks and `redacted_thinking` blocks are replayed byte-identical, in their original
  order, before the `tool_use` they preceded; their opaque data rides in metadata under
  `"anthropic"` (`signature` or `redacted`).
- Empty or whitespace-only text blocks are rejected by the API and are dropped before sending.
- Consecutive messages of one role are merged (tool results become a user message).
- `message_delta.usage` is cumulative, so the last value wins; input is normalised to include
  cache reads and writes (hour-long writes counted apart: they cost more).
- Prompt caching: `cache_control` breakpoints from `providers.wire.prompt_cache` when the
  request asks for caching.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, assert_never, cast

from providers.errors import classify
from providers.model import Endpoint
from providers.types import (
    Finish,
    FinishReason,
    ImagePart,
    JsonValue,
    Message,
    ModelRequest,
    Part,
    ProviderError,
    ProviderMetadata,
    ReasoningDelta,
    ReasoningEffort,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolChoice,
    ToolChoiceNamed,
    ToolResultContent,
    ToolResultPart,
    Usage,
    parse_tool_arguments,
)
from providers.wire.prompt_cache import anthropic_breakpoints
from providers.wire.sdk_model import (
    SdkKeyNotFound,
    SdkModel,
    shared_tls_context,
    with_request_url,
)
from providers.wire.streaming import StreamEndedEarly, TranslatorBase, VendorStream
from providers.wire.vendor_json import (
    JsonDict,
    arguments_object,
    retry_after_seconds,
    strip_version_suffix,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

NAMESPACE: Final = "anthropic"
"""The provider-metadata namespace of this wire API, whichever provider id routed it."""

DEFAULT_MAX_TOKENS: Final = 8192
"""`max_tokens` is required by the API; used when the request does not set a limit."""

THINKING_BUDGETS: Final[Mapping[ReasoningEffort, int]] = {
    "low": 1024,
    "medium": 4096,
    "high": 16384,
}

_STOP_REASONS: Final[Mapping[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_overflow",
    # Server tools paused the turn; the caller must send it back to continue.
    "pause_turn": "other",
}


def create_model(
    model_id: str, endpoint: Endpoint, *, http_client: object | None = None
) -> AnthropicMessagesModel:
    """A `providers.model.Model` for `model_id` on an Anthropic Messages endpoint.

    Args:
        model_id: the vendor's model id (`claude-sonnet-4-5`...).
        endpoint: key, base URL and extra headers for the SDK client.
        http_client: an `httpx2.AsyncClient` to use instead of the SDK's own (tests).
    """
    return AnthropicMessagesModel(model_id, endpoint, http_client=http_client)


class AnthropicMessagesModel(SdkModel["AsyncAnthropic"]):
    """Streams Messages API calls; the SDK client is built on the first call."""

    def _touch(self, client: AsyncAnthropic) -> None:
        _ = client.messages  # the resource module loads on first access

    def _new_client(self) -> AsyncAnthropic:
        from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient

        api_key, auth_token = credentials(self._endpoint)
        http_client = self._http_client
        if http_client is None:
            # The SDK's own default HTTP client, but with the process's one TLS context.
            http_client = DefaultAsyncHttpxClient(verify=shared_tls_context())
        return AsyncAnthropic(
            api_key=api_key,
            auth_token=auth_token,
            base_url=sdk_base_url(self._endpoint.base_url),
            default_headers=dict(self._endpoint.headers) or None,
            # The agent owns the retry policy; SDK retries would multiply it.
            max_retries=0,
            http_client=cast("Any", http_client),
        )

    async def _close_client(self, client: AsyncAnthropic) -> None:
        await client.close()

    async def _open(self, request: ModelRequest) -> VendorStream:
        from anthropic import AsyncStream

        params = _build_params(self._model_id, request, self._endpoint)
        client = self._sdk_client()
        try:
            # The client's documented generic `post`, as `messages.create` does it: the SDK
            # sends and authenticates the request, decodes the events and raises its errors (an
            # `error` event included), but hands each event over as its JSON (`cast_to=object`)
            # rather than building a pydantic object that `to_dict` turned straight back.
            response = await client.post(
                "/v1/messages",
                cast_to=object,
                body=params,
                stream=True,
                stream_cls=AsyncStream[object],
            )
        except TypeError as exc:
            # The SDK raises "Could not resolve authentication method" before sending anything
            # when it has neither key nor token (none given, none in ANTHROPIC_API_KEY) and no
            # auth header was set: a keyless user-defined provider.
            if client.api_key is None and client.auth_token is None:
                raise SdkKeyNotFound(
                    "no API key or auth token for this provider (set its key in settings or "
                    "the environment)"
                ) from exc
            raise
        return VendorStream(response, response.close)

    def _new_translator(self) -> _StreamTranslator:
        return _StreamTranslator(self.provider_id)

    def _map_errors(self, exc: Exception) -> ProviderError:
        return _map_errors(exc, self.provider_id, self._secrets)


def warm_up() -> None:
    """Load what the first call loads (the SDK, its HTTP stack, the messages resource) by
    building a throwaway client that is never used (`registry.first_call_warm_up`)."""
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(api_key="unused", base_url="http://127.0.0.1:9", max_retries=0)
    _ = client.messages  # the resource module loads on first access


def credentials(endpoint: Endpoint) -> tuple[str | None, str | None]:
    """`(api_key, auth_token)` for the SDK client, at most one of them set. Pure.

    The registry marks a bearer token (`ANTHROPIC_AUTH_TOKEN`) with `options["credential"] ==
    "auth_token"`; the secret itself is always `endpoint.api_key`. The SDK rejects two
    credentials at once, so the other one is None.
    """
    if endpoint.options.get("credential") == "auth_token":
        return None, endpoint.api_key
    return endpoint.api_key, None


def sdk_base_url(base_url: str | None) -> str | None:
    """The SDK appends `/v1/messages` itself, while catalog URLs (the AI SDK convention) end in
    `/v1`; strip that suffix so the path is not doubled."""
    return strip_version_suffix(base_url, ("/v1",))


# ------------------------------------------------------------------------------ request


def _build_params(model_id: str, request: ModelRequest, endpoint: Endpoint) -> JsonDict:
    """The keyword arguments of `messages.create` (the JSON body) for one request. Pure."""
    del endpoint  # nothing endpoint-specific goes in the body
    max_tokens = request.max_output_tokens or DEFAULT_MAX_TOKENS
    params: JsonDict = {"model": model_id, "max_tokens": max_tokens}
    if request.system:
        params["system"] = request.system
    params["messages"] = build_messages(request.messages)
    forced_tool = request.tool_choice == "required" or isinstance(
        request.tool_choice, ToolChoiceNamed
    )
    if request.tools:
        params["tools"] = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
            for tool in request.tools
        ]
        params["tool_choice"] = _tool_choice(request.tool_choice)
    effort = request.reasoning_effort
    if effort == "minimal":
        params["thinking"] = {"type": "disabled"}
    elif effort is not None and not (forced_tool and request.tools):
        # The API refuses thinking together with a forced tool choice; the explicit choice wins.
        budget = THINKING_BUDGETS[effort]
        if max_tokens <= budget:
            # The budget is part of max_tokens: keep the requested room for the answer on top.
            params["max_tokens"] = budget + max_tokens
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if request.cache is not None:
        anthropic_breakpoints(params, model_id, request.cache)
    params["stream"] = True
    return params


def _tool_choice(choice: ToolChoice) -> JsonDict:
    match choice:
        case "auto":
            return {"type": "auto"}
        case "none":
            return {"type": "none"}
        case "required":
            return {"type": "any"}
        case ToolChoiceNamed():
            return {"type": "tool", "name": choice.name}
        case _:
            assert_never(choice)


def build_messages(messages: Sequence[Message]) -> list[JsonDict]:
    """Neutral history to Anthropic `messages`: tool results become user content, empty blocks
    and messages are dropped, and consecutive messages of one role are merged (the API wants
    roles to alternate, and the tool results right after the `tool_use` message)."""
    merged: list[JsonDict] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [block for part in message.parts for block in _blocks(part, message.role)]
        if not blocks:
            continue
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    return merged


def _blocks(part: Part, role: str) -> list[JsonDict]:
    match part:
        case TextPart():
            return _text_block(part.text)
        case ImagePart():
            return [_image_block(part)]
        case ReasoningPart():
            return _reasoning_blocks(part) if role == "assistant" else []
        case ToolCallPart():
            arguments = arguments_object(part)
            return [{"type": "tool_use", "id": part.id, "name": part.name, "input": arguments}]
        case ToolResultPart():
            return [_tool_result_block(part)]
        case _:
            assert_never(part)


def _text_block(text: str) -> list[JsonDict]:
    # "text content blocks must be non-empty" / "must contain non-whitespace text" (400).
    return [{"type": "text", "text": text}] if text.strip() else []


def _image_block(part: ImagePart) -> JsonDict:
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part.media_type, "data": part.data},
    }


def _reasoning_blocks(part: ReasoningPart) -> list[JsonDict]:
    bag = part.provider_metadata.get(NAMESPACE, {})
    redacted = bag.get("redacted")
    if isinstance(redacted, str):
        return [{"type": "redacted_thinking", "data": redacted}]
    signature = bag.get("signature")
    if isinstance(signature, str):
        return [{"type": "thinking", "thinking": part.text, "signature": signature}]
    # Reasoning from another provider (or an unsigned fragment of an interrupted stream) has no
    # signature: the API rejects an unsigned thinking block, and turning it into visible text
    # would put words in the model's mouth. It is dropped; the model does not need it.
    return []


def _tool_result_block(part: ToolResultPart) -> JsonDict:
    content = [block for item in part.content for block in _tool_result_content(item)]
    block: JsonDict = {"type": "tool_result", "tool_use_id": part.tool_call_id}
    if content:
        block["content"] = content
    if part.is_error:
        block["is_error"] = True
    return block


def _tool_result_content(item: ToolResultContent) -> list[JsonDict]:
    match item:
        case TextPart():
            return _text_block(item.text)
        case ImagePart():
            return [_image_block(item)]
        case _:
            assert_never(item)


# ------------------------------------------------------------------------------- stream


@dataclass(slots=True)
class _Block:
    type: str
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=lambda: [])
    initial_input: JsonValue = None


class _StreamTranslator(TranslatorBase):
    """Turns raw Messages stream events (as dicts) into `StreamEvent`s, one stream's state."""

    def __init__(self, provider: str = "") -> None:
        super().__init__()
        self._provider = provider
        self._blocks: dict[int, _Block] = {}
        self._counts: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._finished = False

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """Translate one event (its JSON, as the SDK decoded it)."""
        match event.get("type"):
            case "message_start":
                self._merge_usage(event.get("message", {}).get("usage"))
                return []
            case "content_block_start":
                return self._block_start(int(event["index"]), event.get("content_block", {}))
            case "content_block_delta":
                return self._block_delta(int(event["index"]), event.get("delta", {}))
            case "content_block_stop":
                return self._block_stop(int(event["index"]))
            case "message_delta":
                self._merge_usage(event.get("usage"))
                stop_reason = event.get("delta", {}).get("stop_reason")
                if stop_reason is not None:
                    self._stop_reason = stop_reason
                return []
            case "message_stop":
                self._finished = True
                return []
            case _:
                return []

    def _block_start(self, index: int, block: Mapping[str, Any]) -> list[StreamEvent]:
        kind = str(block.get("type", ""))
        self._blocks[index] = state = _Block(type=kind)
        match kind:
            case "text":
                text = block.get("text") or ""
                return [TextDelta(text=text, index=index)] if text else []
            case "thinking":
                events: list[StreamEvent] = []
                if text := block.get("thinking") or "":
                    events.append(ReasoningDelta(text=text, index=index))
                if signature := block.get("signature") or "":
                    events.append(_signature_delta(index, signature))
                return events
            case "redacted_thinking":
                metadata: ProviderMetadata = {NAMESPACE: {"redacted": str(block.get("data", ""))}}
                return [ReasoningDelta(text="", index=index, provider_metadata=metadata)]
            case "tool_use":
                state.call_id = str(block.get("id", ""))
                state.name = str(block.get("name", ""))
                state.initial_input = block.get("input")
                return [ToolCallStart(call_id=state.call_id, name=state.name)]
            case _:
                # Server tool blocks and future types carry nothing the loop can use.
                return []

    def _block_delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        state = self._blocks.get(index)
        match delta.get("type"):
            case "text_delta":
                text = delta.get("text") or ""
                return [TextDelta(text=text, index=index)] if text else []
            case "thinking_delta":
                text = delta.get("thinking") or ""
                return [ReasoningDelta(text=text, index=index)] if text else []
            case "signature_delta":
                return [_signature_delta(index, str(delta.get("signature", "")))]
            case "input_json_delta":
                fragment = delta.get("partial_json") or ""
                if state is None or not fragment:
                    return []
                state.arguments.append(fragment)
                return [ToolCallDelta(call_id=state.call_id, arguments_delta=fragment)]
            case _:
                return []

    def _block_stop(self, index: int) -> list[StreamEvent]:
        state = self._blocks.get(index)
        if state is None or state.type != "tool_use":
            return []
        raw = "".join(state.arguments)
        if not raw and isinstance(state.initial_input, dict) and state.initial_input:
            # A block that arrived whole (no deltas) carries its input in the start event.
            raw = json.dumps(state.initial_input)
        arguments, invalid = parse_tool_arguments(raw)
        return [
            ToolCallEnd(
                call_id=state.call_id,
                name=state.name,
                arguments=arguments,
                raw_arguments=raw,
                invalid_reason=invalid,
            )
        ]

    def _merge_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        fields = cast("dict[str, Any]", usage)
        for key in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "output_tokens",
        ):
            value = fields.get(key)
            if isinstance(value, int):
                self._counts[key] = value
        details = fields.get("output_tokens_details")
        if isinstance(details, dict):
            thinking = cast("dict[str, Any]", details).get("thinking_tokens")
            if isinstance(thinking, int):
                self._counts["thinking_tokens"] = thinking
        creation = fields.get("cache_creation")
        if isinstance(creation, dict):
            hour = cast("dict[str, Any]", creation).get("ephemeral_1h_input_tokens")
            if isinstance(hour, int):
                self._counts["ephemeral_1h_input_tokens"] = hour

    def usage(self) -> Usage | None:
        """The normalised usage so far (cumulative values: the last one wins)."""
        if not self._counts:
            return None
        counts = self._counts
        cache_read = counts.get("cache_read_input_tokens", 0)
        cache_write = counts.get("cache_creation_input_tokens", 0)
        return Usage(
            input_tokens=counts.get("input_tokens", 0) + cache_read + cache_write,
            cached_input_tokens=cache_read,
            cache_write_tokens=cache_write,
            output_tokens=counts.get("output_tokens", 0),
            reasoning_tokens=counts.get("thinking_tokens", 0),
            cache_write_1h_tokens=min(counts.get("ephemeral_1h_input_tokens", 0), cache_write),
        )

    def end(self) -> list[StreamEvent]:
        """The closing events once the vendor stream is exhausted.

        Raises:
            StreamEndedEarly: neither `message_stop` nor a stop reason arrived.
        """
        if not self._finished and self._stop_reason is None:
            raise StreamEndedEarly("the stream ended before message_stop")
        reason = _STOP_REASONS.get(self._stop_reason or "", "other")
        return [*self.usage_events(), Finish(reason=reason, raw_reason=self._stop_reason)]


def _signature_delta(index: int, signature: str) -> ReasoningDelta:
    metadata: ProviderMetadata = {NAMESPACE: {"signature": signature}}
    return ReasoningDelta(text="", index=index, provider_metadata=metadata)


# ------------------------------------------------------------------------------- errors


def _map_errors(exc: Exception, provider: str, secrets: tuple[str, ...] = ()) -> ProviderError:
    """The one place vendor exceptions become `ProviderError`s."""
    import anthropic
    import httpx2

    match exc:
        case anthropic.APIStatusError():
            # `type` and `api_message` are the body's `error.type` / `error.message`.
            error_type = exc.type
            raw_body: object = exc.body
            message = exc.api_message or (raw_body[:500] if isinstance(raw_body, str) else "")
            # A mid-stream `event: error` is raised with the 200 response: the type says it all.
            status = exc.status_code if exc.status_code != 200 else None
            return classify(
                provider=provider,
                status=status,
                message=message or f"HTTP {exc.status_code}",
                code=str(error_type) if error_type else None,
                retry_after=retry_after_seconds(exc.response.headers),
                secrets=secrets,
            )
        case anthropic.APIConnectionError() | httpx2.TransportError():
            message = with_request_url(f"{type(exc).__name__}: {exc}", exc)
            return classify(
                provider=provider, status=None, message=message, network=True, secrets=secrets
            )
        case SdkKeyNotFound():
            return classify(
                provider=provider, status=None, message=str(exc), code="missing_credentials"
            )
        case StreamEndedEarly():
            message = str(exc) or "the stream ended before message_stop"
            return classify(
                provider=provider, status=None, message=message, network=True, secrets=secrets
            )
        case anthropic.APIError():
            return classify(provider=provider, status=None, message=exc.message, secrets=secrets)
        case json.JSONDecodeError():
            # The SDK parses each SSE data line; a garbled one is the vendor's (or a proxy's)
            # fault.
            return classify(provider=provider, status=None, message="unparseable stream event")
        case _:
            # Anything else the SDK (or our translator) raised: reported, not raised, with its
            # type so that a bug is still recognisable in the message.
            message = f"{type(exc).__name__}: {exc}"
            return classify(provider=provider, status=None, message=message, secrets=secrets)
