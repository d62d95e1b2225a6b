"""Helpers shared by the Chat Completions adapter tests: an endpoint on the loopback server, a
collector that runs the real SDK, and hand-built SSE chunks."""

from __future__ import annotations

import json
from typing import Any

import anyio

from providers.assemble import MessageAssembler
from providers.model import Endpoint
from providers.types import (
    ErrorEvent,
    Finish,
    Message,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextPart,
)
from providers.wire.openai_chat import create_model


def endpoint(
    base_url: str, provider_id: str = "openai", options: dict[str, object] | None = None
) -> Endpoint:
    return Endpoint(
        provider_id=provider_id,
        api="openai-chat",
        base_url=base_url,
        api_key="test-key",
        options=options or {},
    )


async def collect(
    base_url: str, request: ModelRequest, provider_id: str = "openai", model_id: str = "gpt-4o-mini"
) -> list[StreamEvent]:
    model = create_model(model_id, endpoint(base_url, provider_id))
    try:
        with anyio.fail_after(10):
            return [event async for event in model.stream(request)]
    finally:
        await model.aclose()


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def assemble(events: list[StreamEvent]) -> Message:
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    return assembler.message()


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def only_error(events: list[StreamEvent]) -> ProviderError:
    """The error of a stream that failed before producing anything else."""
    assert len(events) == 2
    assert isinstance(events[0], ErrorEvent)
    assert events[1] == Finish(reason="error")
    return events[0].error
