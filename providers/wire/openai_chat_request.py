"""The Chat Completions request body for a `ModelRequest` (pure: no SDK, no I/O), for
`providers.wire.openai_chat`. Reasoning is echoed back in the field the host wants it in
(`reasoning_content`, `reasoning` or `reasoning_details`, or not at all). Prompt caching
(`providers.wire.prompt_cache`): OpenAI's own API gets `prompt_cache_key` and, where the model
offers it, 24 h retention; a Claude model through OpenRouter gets `cache_control` breakpoints on
content parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, assert_never

from providers.model import Endpoint
from providers.types import (
    ImagePart,
    Message,
    ModelRequest,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from providers.wire._openai_common import chat_tool_choice, image_url, is_openai_host
from providers.wire.prompt_cache import (
    chat_breakpoints,
    is_anthropic_via_chat,
    openai_cache_fields,
)
from providers.wire.vendor_json import HistoryError, JsonDict, arguments_text

NAMESPACE = "openai-chat"
"""Where this wire keeps its data in `provider_metadata`, whichever host produced it."""
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
"""Where hosts put the model's reasoning in a message (and want it back)."""


def build_params(model_id: str, request: ModelRequest, endpoint: Endpoint) -> JsonDict:
    """The Chat Completions request body for `request`."""
    params: JsonDict = {
        "model": model_id,
        "messages": _messages(request, endpoint),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                },
            }
            for tool in request.tools
        ]
        params["tool_choice"] = chat_tool_choice(request.tool_choice)
    if request.max_output_tokens is not None:
        params[_max_tokens_field(endpoint)] = request.max_output_tokens
    if request.reasoning_effort is not None:
        params["reasoning_effort"] = request.reasoning_effort
    cache = request.cache
    if cache is not None:
        if is_anthropic_via_chat(model_id, endpoint.provider_id, endpoint.base_url):
            chat_breakpoints(params, model_id, cache)
        else:
            params.update(
                openai_cache_fields(
                    model_id, cache, provider_id=endpoint.provider_id, base_url=endpoint.base_url
                )
            )
    return params


def _max_tokens_field(endpoint: Endpoint) -> str:
    # OpenAI deprecated `max_tokens` (its reasoning models reject it), but most compatible
    # hosts only know `max_tokens`. A host can say otherwise with the `max_tokens_field` option.
    configured = endpoint.options.get("max_tokens_field")
    if isinstance(configured, str) and configured:
        return configured
    return "max_completion_tokens" if is_openai_host(endpoint.base_url) else "max_tokens"


def _messages(request: ModelRequest, endpoint: Endpoint) -> list[JsonDict]:
    messages: list[JsonDict] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        match message.role:
            case "user":
                messages.append(_user_message(message))
            case "assistant":
                assistant = _assistant_message(message, endpoint)
                if assistant is not None:
                    messages.append(assistant)
            case "tool":
                messages.extend(_tool_messages(message))
            case _:
                assert_never(message.role)
    return messages


def _image_block(image: ImagePart) -> JsonDict:
    return {"type": "image_url", "image_url": {"url": image_url(image)}}


def _user_message(message: Message) -> JsonDict:
    blocks: list[JsonDict] = []
    for part in message.parts:
        match part:
            case TextPart():
                blocks.append({"type": "text", "text": part.text})
            case ImagePart():
                blocks.append(_image_block(part))
            case _:
                raise HistoryError(f"a user message cannot hold a {part.kind} part")
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        # The plain string form is the one every compatible host accepts.
        return {"role": "user", "content": blocks[0]["text"]}
    return {"role": "user", "content": blocks}


def _assistant_message(message: Message, endpoint: Endpoint) -> JsonDict | None:
    texts: list[str] = []
    calls: list[JsonDict] = []
    reasoning: list[ReasoningPart] = []
    for part in message.parts:
        match part:
            case TextPart():
                texts.append(part.text)
            case ReasoningPart():
                reasoning.append(part)
            case ToolCallPart():
                calls.append(
                    {
                        "id": part.id,
                        "type": "function",
                        "function": {"name": part.name, "arguments": arguments_text(part)},
                    }
                )
            case ImagePart() | ToolResultPart():
                raise HistoryError(f"an assistant message cannot hold a {part.kind} part")
            case _:
                assert_never(part)
    text = "".join(texts)
    result: JsonDict = {"role": "assistant", "content": text or None}
    if calls:
        result["tool_calls"] = calls
    result.update(_reasoning_fields(reasoning, endpoint))
    if not text and not calls:
        # An empty assistant turn (e.g. only foreign reasoning) is invalid on most hosts.
        return None
    return result


def _reasoning_fields(parts: Sequence[ReasoningPart], endpoint: Endpoint) -> JsonDict:
    """Reasoning to echo on an assistant message, in the field the host reads it from.

    DeepSeek's thinking mode rejects a tool-call turn without its `reasoning_content`; OpenRouter
    wants `reasoning_details` back to continue reasoning across tool calls. But strict hosts
    (Groq, Cerebras) reject unknown assistant properties with a 400 ("property 'reasoning_content'
    is unsupported"), so reasoning goes back only where the host asked for a field
    (`reasoning_field` option, from the catalog) or to the very provider that produced it, in the
    fields it came in. Reasoning without this wire's metadata (another vendor's) is dropped: chat
    has no slot for it, and as plain text the model would read its own thoughts as said aloud.
    """
    option = endpoint.options.get("reasoning_field")
    requested = option if isinstance(option, str) and option in REASONING_FIELDS else None
    texts: list[str] = []
    details: list[Any] = []
    fields: set[str] = set()
    for part in parts:
        metadata = part.provider_metadata.get(NAMESPACE)
        if metadata is None:
            continue
        if requested is None and metadata.get("provider") != endpoint.provider_id:
            continue
        texts.append(part.text)
        raw_details = metadata.get("reasoning_details")
        if isinstance(raw_details, list):
            details.extend(raw_details)
        raw_fields = metadata.get("fields")
        if isinstance(raw_fields, list):
            fields.update(name for name in raw_fields if isinstance(name, str))
    text = "".join(texts)
    if requested is not None:
        fields = {requested}
    echoed: JsonDict = {}
    for name in REASONING_FIELDS:
        if name not in fields:
            continue
        if name == "reasoning_details":
            if not details and text:
                details = [{"type": "reasoning.text", "text": text, "index": 0}]
            if details:
                echoed[name] = details
        elif text:
            echoed[name] = text
    return echoed


def _tool_messages(message: Message) -> list[JsonDict]:
    messages: list[JsonDict] = []
    images: list[ImagePart] = []
    for part in message.parts:
        if not isinstance(part, ToolResultPart):
            raise HistoryError(f"a tool message cannot hold a {part.kind} part")
        text = part.text
        part_images = [item for item in part.content if isinstance(item, ImagePart)]
        if part_images:
            # Tool messages are text-only on most hosts: the images follow in a user message.
            note = f"[{len(part_images)} image(s) attached in the next user message]"
            text = f"{text}\n{note}" if text else note
            images.extend(part_images)
        messages.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": text})
    if images:
        blocks: list[JsonDict] = [{"type": "text", "text": "Images returned by the tools:"}]
        blocks.extend(_image_block(image) for image in images)
        messages.append({"role": "user", "content": blocks})
    return messages
