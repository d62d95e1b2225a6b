"""The OpenAI Responses API, used statelessly (providers.md section 2).

`store=False` and `include=["reasoning.encrypted_content"]`: nothing is kept server-side, so
`previous_response_id` is never used and every turn resends the whole history. Reasoning items
are captured whole from `response.output_item.done` (the `added` blob differs and is stale) and
replayed whole, in their original order with the items that followed them: a reasoning item
without its following item is a 400.

Two pure halves (`_build_params`, `_ResponsesTranslator`) and a thin `ResponsesModel.stream`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, assert_never

from providers.model import Endpoint, Model
from providers.types import (
    Finish,
    FinishReason,
    ImagePart,
    JsonValue,
    Message,
    ModelRequest,
    ProviderError,
    ProviderMetadata,
    ReasoningDelta,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolChoiceNamed,
    ToolResultContent,
    ToolResultPart,
    Usage,
    parse_tool_arguments,
)
from providers.wire._openai_common import InStreamError, image_url
from providers.wire.openai_chat import map_openai_errors, open_stream, openai_client
from providers.wire.prompt_cache import openai_cache_fields
from providers.wire.sdk_model import SdkModel
from providers.wire.streaming import StreamEndedEarly, TranslatorBase, VendorStream
from providers.wire.vendor_json import (
    HistoryError,
    JsonDict,
    arguments_text,
    as_int,
    as_list,
    as_object,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

NAMESPACE = "openai-responses"
"""Where this wire keeps its data in `provider_metadata`."""


def create_model(model_id: str, endpoint: Endpoint, *, http_client: object | None = None) -> Model:
    """A Responses API model on `endpoint`; the SDK is imported on the first `stream` call."""
    return ResponsesModel(model_id, endpoint, http_client=http_client)


class ResponsesModel(SdkModel["AsyncOpenAI"]):
    """`providers.model.Model` over `POST {base_url}/responses` with `stream=True`."""

    def _new_client(self) -> AsyncOpenAI:
        return openai_client(self._endpoint, self._http_client)

    async def _close_client(self, client: AsyncOpenAI) -> None:
        await client.close()

    async def _open(self, request: ModelRequest) -> VendorStream:
        params = _build_params(self._model_id, request, self._endpoint)
        return await open_stream(self._sdk_client(), "/responses", params)

    def _new_translator(self) -> _ResponsesTranslator:
        return _ResponsesTranslator()

    def _map_errors(self, exc: Exception) -> ProviderError:
        return _map_errors(exc, self.provider_id, self._secrets)


def warm_up() -> None:
    """Load what the first call loads (`registry.first_call_warm_up`): as Chat Completions."""
    from providers.wire import openai_chat

    openai_chat.warm_up()


def _map_errors(exc: Exception, provider: str, secrets: tuple[str, ...] = ()) -> ProviderError:
    """The one place vendor failures become `ProviderError`s (shared with Chat Completions; the
    in-stream `error` / `response.failed` events arrive as `InStreamError`)."""
    return map_openai_errors(exc, provider, secrets)


# ------------------------------------------------------------------------------ request (pure)


def _build_params(model_id: str, request: ModelRequest, endpoint: Endpoint) -> JsonDict:
    """The Responses request body for `request`. The one host quirk: only OpenAI's own API gets
    the prompt-cache key and retention (`providers.wire.prompt_cache`)."""
    params: JsonDict = {
        "model": model_id,
        "input": input_items(request.messages),
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    if request.system:
        params["instructions"] = request.system
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
                # Responses defaults to strict schemas, which our tools' schemas do not satisfy.
                "strict": False,
            }
            for tool in request.tools
        ]
        choice = request.tool_choice
        params["tool_choice"] = (
            {"type": "function", "name": choice.name}
            if isinstance(choice, ToolChoiceNamed)
            else choice
        )
    if request.reasoning_effort is not None:
        params["reasoning"] = {"effort": request.reasoning_effort, "summary": "auto"}
    if request.max_output_tokens is not None:
        params["max_output_tokens"] = request.max_output_tokens
    params.update(
        openai_cache_fields(
            model_id, request.cache, provider_id=endpoint.provider_id, base_url=endpoint.base_url
        )
    )
    return params


def input_items(messages: Sequence[Message]) -> list[JsonDict]:
    """Neutral history to Responses `input` items."""
    items: list[JsonDict] = []
    for message in messages:
        match message.role:
            case "user":
                items.append(_user_item(message))
            case "assistant":
                items.extend(_assistant_items(message))
            case "tool":
                items.extend(_tool_outputs(message))
            case _:
                assert_never(message.role)
    return items


def _image_block(image: ImagePart) -> JsonDict:
    return {"type": "input_image", "image_url": image_url(image), "detail": "auto"}


def _user_item(message: Message) -> JsonDict:
    blocks: list[JsonDict] = []
    for part in message.parts:
        match part:
            case TextPart():
                blocks.append({"type": "input_text", "text": part.text})
            case ImagePart():
                blocks.append(_image_block(part))
            case _:
                raise HistoryError(f"a user message cannot hold a {part.kind} part")
    if len(blocks) == 1 and blocks[0]["type"] == "input_text":
        return {"role": "user", "content": blocks[0]["text"]}
    return {"role": "user", "content": blocks}


def _own(metadata: ProviderMetadata) -> Mapping[str, JsonValue]:
    return metadata.get(NAMESPACE) or {}


def _assistant_items(message: Message) -> list[JsonDict]:
    items: list[JsonDict] = []
    reasoning_positions: list[int] = []
    for part in message.parts:
        match part:
            case ReasoningPart():
                item = _own(part.provider_metadata).get("item")
                # Reasoning without this wire's item (another vendor's, or text only) is dropped:
                # Responses accepts reasoning only as its own encrypted items.
                if isinstance(item, dict):
                    reasoning_positions.append(len(items))
                    items.append(dict(item))
            case TextPart():
                items.extend(_assistant_text(part))
            case ToolCallPart():
                items.append(_function_call(part))
            case ImagePart() | ToolResultPart():
                raise HistoryError(f"an assistant message cannot hold a {part.kind} part")
            case _:
                assert_never(part)
    # A reasoning item must travel with the item that followed it (400 "provided without its
    # required following item"); one left last by an interrupted turn has none, so drop it.
    return [
        item
        for position, item in enumerate(items)
        if position not in reasoning_positions
        or any(later not in reasoning_positions for later in range(position + 1, len(items)))
    ]


def _assistant_text(part: TextPart) -> list[JsonDict]:
    metadata = _own(part.provider_metadata)
    item_id = metadata.get("id")
    if not isinstance(item_id, str):
        # Text from another vendor (or a stream cut before the item ended): a plain message.
        return [{"role": "assistant", "content": part.text}] if part.text else []
    item: JsonDict = {
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "status": "completed",
        "content": [{"type": "output_text", "text": part.text, "annotations": []}],
    }
    phase = metadata.get("phase")
    if isinstance(phase, str):
        item["phase"] = phase
    return [item]


def _function_call(part: ToolCallPart) -> JsonDict:
    item: JsonDict = {
        "type": "function_call",
        "call_id": part.id,
        "name": part.name,
        "arguments": arguments_text(part),
    }
    item_id = _own(part.provider_metadata).get("item_id")
    if isinstance(item_id, str):
        item["id"] = item_id
    return item


def _tool_outputs(message: Message) -> list[JsonDict]:
    items: list[JsonDict] = []
    for part in message.parts:
        if not isinstance(part, ToolResultPart):
            raise HistoryError(f"a tool message cannot hold a {part.kind} part")
        items.append(
            {
                "type": "function_call_output",
                "call_id": part.tool_call_id,
                "output": _output(part.content),
            }
        )
    return items


def _output(content: Sequence[ToolResultContent]) -> str | list[JsonDict]:
    # Plain text unless there are images: function_call_output takes input_text/input_image
    # lists since openai 2.0.
    if all(isinstance(item, TextPart) for item in content):
        return "\n".join(item.text for item in content if isinstance(item, TextPart))
    return [
        {"type": "input_text", "text": item.text}
        if isinstance(item, TextPart)
        else _image_block(item)
        for item in content
    ]


# --------------------------------------------------------------------------- response (pure)


@dataclass(slots=True)
class _Call:
    call_id: str
    name: str
    item_id: str
    streamed: list[str] = field(default_factory=lambda: [])


_INCOMPLETE: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


class _ResponsesTranslator(TranslatorBase):
    """Responses stream events (as JSON) in, `StreamEvent`s out; one per stream. Part indices
    are the vendor's `output_index`, so each output item is its own part."""

    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[str, _Call] = {}
        self._saw_calls = False
        self._refused = False
        self._streamed_text: set[int] = set()
        self._summary_parts: dict[int, set[int]] = {}
        self._finish: Finish | None = None

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """Events for one vendor event.

        Raises:
            InStreamError: the vendor reported a failure (`error`, `response.failed`).
        """
        kind = event.get("type")
        index = as_int(event.get("output_index"))
        delta = event.get("delta")
        text = delta if isinstance(delta, str) else ""
        match kind:
            case "response.output_item.added":
                return self._item_added(as_object(event.get("item")))
            case "response.output_item.done":
                return self._item_done(as_object(event.get("item")), index)
            case "response.output_text.delta" | "response.refusal.delta":
                self._refused = self._refused or kind == "response.refusal.delta"
                self._streamed_text.add(index)
                return [TextDelta(text=text, index=index)] if text else []
            case "response.reasoning_summary_text.delta":
                seen = self._summary_parts.setdefault(index, set())
                summary = as_int(event.get("summary_index"))
                separator = "\n\n" if seen and summary not in seen else ""
                seen.add(summary)
                return [ReasoningDelta(text=separator + text, index=index)] if text else []
            case "response.reasoning_text.delta":
                # Raw reasoning (open-weight models on compatible hosts) instead of a summary.
                self._summary_parts.setdefault(index, set()).add(-1)
                return [ReasoningDelta(text=text, index=index)] if text else []
            case "response.function_call_arguments.delta":
                call = self._calls.get(str(event.get("item_id")))
                if call is None or not text:
                    return []
                call.streamed.append(text)
                return [ToolCallDelta(call_id=call.call_id, arguments_delta=text)]
            case "response.completed" | "response.incomplete":
                self._terminal(as_object(event.get("response")))
                return []
            case "response.failed":
                response = as_object(event.get("response"))
                raise InStreamError(as_object(response.get("error")) or {"message": "failed"})
            case "error":
                # The documented shape has code/message at the top level; the SDK itself raised
                # already if they were nested under "error".
                raise InStreamError(event)
            case _:
                return []

    def end(self) -> list[StreamEvent]:
        """The closing events once the stream is exhausted.

        Raises:
            StreamEndedEarly: no `response.completed` / `response.incomplete` arrived.
        """
        if self._finish is None:
            raise StreamEndedEarly
        return [*self.usage_events(), self._finish]

    def _item_added(self, item: Mapping[str, Any]) -> list[StreamEvent]:
        if item.get("type") != "function_call":
            return []
        call = _Call(
            call_id=str(item.get("call_id") or ""),
            name=str(item.get("name") or ""),
            item_id=str(item.get("id") or ""),
        )
        # Argument deltas name the item id, not the call id.
        self._calls[call.item_id] = call
        self._saw_calls = True
        return [
            ToolCallStart(
                call_id=call.call_id,
                name=call.name,
                provider_metadata={NAMESPACE: {"item_id": call.item_id}},
            )
        ]

    def _item_done(self, item: Mapping[str, Any], index: int) -> list[StreamEvent]:
        match item.get("type"):
            case "reasoning":
                # The whole `done` item, verbatim: it is replayed as is on the next turn.
                text = ""
                if index not in self._summary_parts:
                    text = "\n\n".join(
                        str(as_object(summary).get("text") or "")
                        for summary in as_list(item.get("summary"))
                    )
                metadata: ProviderMetadata = {NAMESPACE: {"item": dict(item)}}
                return [ReasoningDelta(text=text, index=index, provider_metadata=metadata)]
            case "message":
                text = ""
                if index not in self._streamed_text:
                    text = "".join(
                        str(
                            as_object(content).get("text")
                            or as_object(content).get("refusal")
                            or ""
                        )
                        for content in as_list(item.get("content"))
                    )
                bag: dict[str, JsonValue] = {}
                if isinstance(item.get("id"), str):
                    bag["id"] = item["id"]
                if isinstance(item.get("phase"), str):
                    bag["phase"] = item["phase"]
                metadata: ProviderMetadata = {NAMESPACE: bag} if bag else {}
                return [TextDelta(text=text, index=index, provider_metadata=metadata)]
            case "function_call":
                return self._end_call(item)
            case _:
                return []

    def _end_call(self, item: Mapping[str, Any]) -> list[StreamEvent]:
        item_id = str(item.get("id") or "")
        call = self._calls.pop(item_id, None)
        events: list[StreamEvent] = []
        if call is None:
            events.extend(self._item_added(item))
            call = self._calls.pop(item_id)
        raw = item.get("arguments")
        raw = raw if isinstance(raw, str) else "".join(call.streamed)
        if not call.streamed and raw:
            events.append(ToolCallDelta(call_id=call.call_id, arguments_delta=raw))
        arguments, invalid = parse_tool_arguments(raw)
        events.append(
            ToolCallEnd(
                call_id=call.call_id,
                name=call.name,
                arguments=arguments,
                raw_arguments=raw,
                invalid_reason=invalid,
                provider_metadata={NAMESPACE: {"item_id": item_id}},
            )
        )
        return events

    def _terminal(self, response: Mapping[str, Any]) -> None:
        usage = as_object(response.get("usage"))
        if usage:
            self._usage = _usage(usage)
        status = str(response.get("status") or "")
        reason: FinishReason
        if status == "incomplete":
            cause = str(as_object(response.get("incomplete_details")).get("reason") or "")
            reason = _INCOMPLETE.get(cause, "other")
            self._finish = Finish(reason=reason, raw_reason=f"incomplete:{cause}")
            return
        # There is no finish reason: tool use means the output holds function calls.
        reason = "tool_calls" if self._saw_calls else "refusal" if self._refused else "stop"
        self._finish = Finish(reason=reason, raw_reason=status or None)


def _usage(raw: Mapping[str, Any]) -> Usage:
    input_details = as_object(raw.get("input_tokens_details"))
    output_details = as_object(raw.get("output_tokens_details"))
    return Usage(
        input_tokens=as_int(raw.get("input_tokens")),
        cached_input_tokens=as_int(input_details.get("cached_tokens")),
        cache_write_tokens=as_int(input_details.get("cache_write_tokens")),
        output_tokens=as_int(raw.get("output_tokens")),
        reasoning_tokens=as_int(output_details.get("reasoning_tokens")),
    )
