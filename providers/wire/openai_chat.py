"""OpenAI Chat Completions, and through it every OpenAI-compatible host (OpenRouter, Groq,
DeepSeek, xAI, Mistral, Together, Fireworks, Cerebras, Moonshot, Z.AI, Ollama, LM Studio, vLLM,
llama.cpp).

Two pure halves (`_build_params`, `_ChatTranslator`) and a thin `ChatCompletionsModel.stream`
that runs the official SDK. Host quirks absorbed here (providers.md sections 1 and 5): usage in a
final chunk with `choices: []`; tool calls keyed by `index` and ended only by `finish_reason`;
reasoning in `reasoning_content` (DeepSeek, vLLM, Kimi, GLM), `reasoning` (Groq, OpenRouter) or
`reasoning_details[]` (OpenRouter), echoed back where the host needs it; errors inside a 200 stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast
from uuid import uuid4

from providers.model import Endpoint, Model
from providers.types import (
    Finish,
    FinishReason,
    ModelRequest,
    ProviderError,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    parse_tool_arguments,
)
from providers.wire._openai_common import (
    InStreamError,
    error_from_body,
    flat_error_body,
    is_openai_host,
    network_error,
)
from providers.wire.openai_chat_request import NAMESPACE, build_params
from providers.wire.sdk_model import (
    SdkKeyNotFound,
    SdkModel,
    shared_tls_context,
    with_request_url,
)
from providers.wire.streaming import StreamEndedEarly, TranslatorBase, VendorStream
from providers.wire.vendor_json import (
    HistoryError,
    JsonDict,
    as_int,
    as_list,
    as_object,
    retry_after_seconds,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI


def create_model(model_id: str, endpoint: Endpoint, *, http_client: object | None = None) -> Model:
    """A Chat Completions model on `endpoint`; the SDK is imported on the first `stream` call."""
    return ChatCompletionsModel(model_id, endpoint, http_client=http_client)


class ChatCompletionsModel(SdkModel["AsyncOpenAI"]):
    """`providers.model.Model` over `POST {base_url}/chat/completions` with `stream=True`."""

    def _new_client(self) -> AsyncOpenAI:
        return openai_client(self._endpoint, self._http_client)

    async def _close_client(self, client: AsyncOpenAI) -> None:
        await client.close()

    async def _open(self, request: ModelRequest) -> VendorStream:
        params = build_params(self._model_id, request, self._endpoint)
        return await open_stream(self._sdk_client(), "/chat/completions", params)

    def _new_translator(self) -> _ChatTranslator:
        return _ChatTranslator(self.provider_id)

    def _map_errors(self, exc: Exception) -> ProviderError:
        return _map_errors(exc, self.provider_id, self._secrets)


def warm_up() -> None:
    """Load what the first call loads (the SDK, its HTTP stack, the process's TLS context)
    (`registry.first_call_warm_up`: a worker thread, once a session is open). The typed
    resources (`client.chat`, `client.responses`: 20-45 ms each) are never used: calls go
    through `open_stream`."""
    import openai

    openai.DefaultAsyncHttpxClient(verify=shared_tls_context())


async def open_stream(client: AsyncOpenAI, path: str, body: JsonDict) -> VendorStream:
    """Start a streamed call through the SDK client's generic `post` (the SDK's documented way to
    reach an endpoint its typed methods do not fit). The SDK still builds, authenticates and
    sends the request, decodes the server-sent events and raises its errors (an `error` object
    in a 200 stream included), exactly as the typed `create` does; what it no longer does is
    walk the whole body again against the typed params on every call (`create` transforms the
    entire history each time: a third of a turn's CPU) and build a pydantic object per chunk
    that `to_dict` turned straight back into the JSON the translator reads (`cast_to=object`
    hands over each decoded chunk as it is). `build_params` already makes plain JSON, which is
    all that transform would have passed through."""
    from openai import AsyncStream

    stream = await client.post(
        path,
        cast_to=object,
        body=body,
        options={"security": {"bearer_auth": True}},  # what the typed methods ask for
        stream=True,
        stream_cls=AsyncStream[object],
    )
    return VendorStream(stream, stream.close)


def _map_errors(exc: Exception, provider: str, secrets: tuple[str, ...] = ()) -> ProviderError:
    """The one place vendor failures become `ProviderError`s (shared with Responses)."""
    return map_openai_errors(exc, provider, secrets)


def openai_client(endpoint: Endpoint, http_client: object | None) -> AsyncOpenAI:
    """The SDK client for an endpoint, SDK retries off (the agent owns the retry policy).

    Raises:
        SdkKeyNotFound: OpenAI's own API and no key given or found in the environment.
    """
    import openai

    # Local servers (Ollama, LM Studio, vLLM, llama.cpp) need no key, but the SDK refuses to
    # build a client without one.
    api_key = endpoint.api_key
    if api_key is None and not is_openai_host(endpoint.base_url):
        api_key = "unused"
    if http_client is None:
        # The SDK's own default HTTP client, but with the process's one TLS context.
        http_client = openai.DefaultAsyncHttpxClient(verify=shared_tls_context())
    try:
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=endpoint.base_url,
            default_headers=dict(endpoint.headers) or None,
            max_retries=0,
            http_client=cast("Any", http_client),
        )
    except openai.OpenAIError as exc:
        # The only failure of the constructor: no key, and none in OPENAI_API_KEY.
        raise SdkKeyNotFound(str(exc)) from exc


def map_openai_errors(
    exc: Exception, provider: str, secrets: tuple[str, ...] = ()
) -> ProviderError:
    """The one place the OpenAI adapters turn a failure into a `ProviderError`."""
    import openai

    def from_body(
        body: object, message: str, status: int | None, retry_after: float | None = None
    ) -> ProviderError:
        return error_from_body(
            provider,
            body=body,
            fallback_message=message,
            status=status,
            retry_after=retry_after,
            secrets=secrets,
        )

    match exc:
        case openai.APIConnectionError():
            # Before APIStatusError's parent: a refused or reset connection has no response.
            return network_error(provider, with_request_url(exc.message, exc), secrets)
        case openai.APIStatusError():
            # The SDK hands over the envelope's `error` object; a host whose `error` is a bare
            # string keeps its text at the top level instead (Fireworks' 429).
            body: object = exc.body
            if not isinstance(exc.body, Mapping):
                body = flat_error_body(exc.response)
            return from_body(
                body, exc.message, exc.status_code, retry_after_seconds(exc.response.headers)
            )
        case openai.APIError():
            # Raised by the SDK for a chunk carrying an `error` key under HTTP 200: OpenRouter's
            # in-band errors, Groq's `event: error` frame, a Responses `error` event with a
            # nested error (`insufficient_quota`). Its body is the inner object.
            return from_body(exc.body, exc.message, None)
        case InStreamError():
            return from_body(exc.body, str(exc), None)
        case StreamEndedEarly():
            return network_error(
                provider, "the stream ended before the response was complete", secrets
            )
        case HistoryError():
            return from_body({"type": "invalid_request_error"}, str(exc), None)
        case SdkKeyNotFound():
            return from_body({"type": "missing_credentials"}, str(exc), None)
        case _:
            # A malformed data line, or something the SDK raised that we do not know.
            return from_body(None, f"{type(exc).__name__}: {exc}", None)


# --------------------------------------------------------------------------- response (pure)


@dataclass(slots=True)
class _OpenCall:
    id: str
    name: str
    arguments: list[str] = field(default_factory=lambda: [])
    started: bool = False


_Segment = Literal["text", "reasoning", "tool"]


class _ChatTranslator(TranslatorBase):
    """Chat completion chunks (as JSON) in, `StreamEvent`s out; one per stream.

    Text and reasoning get a new part index whenever the stream switches between text,
    reasoning and tool calls, so interleaved thinking stays in order.
    """

    def __init__(self, provider_id: str) -> None:
        super().__init__()
        self._provider = provider_id
        self._index = 0
        self._segment: _Segment | None = None
        self._reasoning_fields: list[str] = []
        self._details: list[JsonDict] = []
        self._details_by_key: dict[tuple[object, object], JsonDict] = {}
        self._calls: dict[int, _OpenCall] = {}
        self._saw_calls = False
        self._refused = False
        self._finish: str | None = None

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        """Events for one chunk."""
        events: list[StreamEvent] = []
        if isinstance(chunk.get("usage"), Mapping):
            # Sent in a final chunk with `choices: []`; some hosts repeat it cumulatively.
            self._usage = _usage(as_object(chunk["usage"]))
        for choice in map(as_object, as_list(chunk.get("choices"))):
            # One choice was asked for; a missing index is that one.
            if choice.get("index", 0) == 0:
                events.extend(self._choice(choice))
        return events

    def end(self) -> list[StreamEvent]:
        """The closing events once the stream is exhausted.

        Raises:
            StreamEndedEarly: no `finish_reason` ever arrived.
        """
        if self._finish is None:
            raise StreamEndedEarly
        events = self._close_reasoning()
        events.extend(self._end_calls())
        events.extend(self.usage_events())
        events.append(Finish(reason=self._finish_reason(self._finish), raw_reason=self._finish))
        return events

    def _choice(self, choice: Mapping[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        delta = as_object(choice.get("delta"))
        events.extend(self._reasoning(delta))
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                self._refused = self._refused or key == "refusal"
                events.extend(self._switch("text"))
                events.append(TextDelta(text=text, index=self._index))
        for position, fragment in enumerate(as_list(delta.get("tool_calls"))):
            events.extend(self._tool_call(as_object(fragment), position))
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            # No per-call end event exists: a finish reason ends every open call.
            self._finish = finish
            events.extend(self._close_reasoning())
            events.extend(self._end_calls())
        return events

    def _switch(self, segment: _Segment) -> list[StreamEvent]:
        if self._segment == segment:
            return []
        events = self._close_reasoning()
        if self._segment is not None:
            self._index += 1
        self._segment = segment
        return events

    def _reasoning(self, delta: Mapping[str, Any]) -> list[StreamEvent]:
        text = ""
        fields: list[str] = []
        for name in ("reasoning_content", "reasoning"):
            value = delta.get(name)
            if isinstance(value, str) and value:
                text = text or value
                fields.append(name)
        fragments = [
            dict(detail)
            for detail in map(as_object, as_list(delta.get("reasoning_details")))
            if detail
        ]
        if fragments:
            fields.append("reasoning_details")
            if not text:
                text = "".join(_detail_text(fragment) for fragment in fragments)
        if not fields:
            return []
        events = self._switch("reasoning")
        for name in fields:
            if name not in self._reasoning_fields:
                self._reasoning_fields.append(name)
        self._merge_details(fragments)
        if text:
            events.append(ReasoningDelta(text=text, index=self._index))
        return events

    def _merge_details(self, fragments: list[JsonDict]) -> None:
        # OpenRouter streams each detail in pieces keyed by (type, index): text concatenates,
        # signatures and ids arrive once. The merged list is what it wants echoed back.
        for fragment in fragments:
            index = fragment.get("index")
            key = (fragment.get("type"), index)
            existing = self._details_by_key.get(key) if index is not None else None
            if existing is None:
                merged = dict(fragment)
                self._details.append(merged)
                if index is not None:
                    self._details_by_key[key] = merged
                continue
            for name, value in fragment.items():
                previous = existing.get(name)
                if name in ("text", "summary", "data") and isinstance(value, str):
                    existing[name] = (previous if isinstance(previous, str) else "") + value
                elif value is not None:
                    existing[name] = value

    def _close_reasoning(self) -> list[StreamEvent]:
        """Attach the raw reasoning fields to the reasoning part that is ending."""
        if self._segment != "reasoning" or not self._reasoning_fields:
            return []
        metadata: JsonDict = {"fields": self._reasoning_fields, "provider": self._provider}
        if self._details:
            metadata["reasoning_details"] = self._details
        self._reasoning_fields, self._details, self._details_by_key = [], [], {}
        return [ReasoningDelta(text="", index=self._index, provider_metadata={NAMESPACE: metadata})]

    def _tool_call(self, fragment: Mapping[str, Any], position: int) -> list[StreamEvent]:
        function = as_object(fragment.get("function"))
        call_id = _string(fragment.get("id"))
        name = _string(function.get("name"))
        arguments = _string(function.get("arguments"))
        index = fragment.get("index")
        if not isinstance(index, int):
            # A host that omits `index` sends each call whole: a new id is a new call.
            known = any(call.id == call_id for call in self._calls.values())
            index = position if call_id is None or known else len(self._calls) + position
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _OpenCall(id=call_id or "", name=name or "")
        else:
            call.id = call.id or call_id or ""
            call.name = call.name or name or ""
        events = self._switch("tool")
        new_text = arguments or ""
        if call.started:
            if new_text:
                call.arguments.append(new_text)
                events.append(ToolCallDelta(call_id=call.id, arguments_delta=new_text))
            return events
        if new_text:
            call.arguments.append(new_text)
        if call.name:
            events.extend(self._start(call))
        return events

    def _start(self, call: _OpenCall) -> list[StreamEvent]:
        if not call.id:
            call.id = f"call_{uuid4().hex[:24]}"
        call.started = True
        self._saw_calls = True
        events: list[StreamEvent] = [ToolCallStart(call_id=call.id, name=call.name)]
        if call.arguments:
            events.append(ToolCallDelta(call_id=call.id, arguments_delta="".join(call.arguments)))
        return events

    def _end_calls(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call.started:
                events.extend(self._start(call))
            raw = "".join(call.arguments)
            arguments, invalid = parse_tool_arguments(raw)
            events.append(
                ToolCallEnd(
                    call_id=call.id,
                    name=call.name,
                    arguments=arguments,
                    raw_arguments=raw,
                    invalid_reason=invalid,
                )
            )
        self._calls.clear()
        return events

    def _finish_reason(self, raw: str) -> FinishReason:
        match raw:
            case "tool_calls" | "function_call":
                return "tool_calls"
            case "stop" | "end_turn" | "eos":
                # Some hosts (Ollama, Gemini's compatibility layer) say "stop" after tool calls.
                if self._saw_calls:
                    return "tool_calls"
                return "refusal" if self._refused else "stop"
            case "length" | "max_tokens":
                return "length"
            case "content_filter":
                return "content_filter"
            case "model_context_window_exceeded":
                return "context_overflow"
            case _:
                return "tool_calls" if self._saw_calls else "other"


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _detail_text(detail: JsonDict) -> str:
    for key in ("text", "summary"):
        value = detail.get(key)
        if isinstance(value, str):
            return value
    return ""


def _usage(raw: Mapping[str, Any]) -> Usage:
    prompt = as_object(raw.get("prompt_tokens_details"))
    completion = as_object(raw.get("completion_tokens_details"))
    return Usage(
        input_tokens=as_int(raw.get("prompt_tokens")),
        # DeepSeek reports cache hits at the top level instead.
        cached_input_tokens=as_int(prompt.get("cached_tokens"))
        or as_int(raw.get("prompt_cache_hit_tokens")),
        cache_write_tokens=as_int(prompt.get("cache_write_tokens")),
        output_tokens=as_int(raw.get("completion_tokens")),
        reasoning_tokens=as_int(completion.get("reasoning_tokens")),
    )
