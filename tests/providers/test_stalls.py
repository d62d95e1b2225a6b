"""A model stream that goes silent is given up on, on every wire API: before any output after
`first_event` seconds, once output has started after `idle` seconds. Either way the stream ends
with a retryable `network` error (the loop's retry policy repeats the call) and the connection is
released. Real SDKs against a 127.0.0.1 server that stops sending; the timeouts are configured
small, and nothing here waits on a clock: each stall is certain (the server never sends more)."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from providers.model import Endpoint, StreamTimeouts, WireApi
from providers.types import (
    ErrorEvent,
    Finish,
    Message,
    ModelRequest,
    StreamEvent,
    TextDelta,
    TextPart,
)
from tests.providers.hanging import hanging_server


def _sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


@dataclass(frozen=True)
class Wire:
    api: WireApi
    model: str
    first_event: bytes
    """Bytes that make the adapter yield `TextDelta("Hi")`."""


WIRES = [
    Wire(
        "openai-chat",
        "gpt-test",
        b"data: "
        + json.dumps(
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}],
            }
        ).encode()
        + b"\n\n",
    ),
    Wire(
        "openai-responses",
        "gpt-test",
        _sse(
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "item_id": "m",
                "delta": "Hi",
            }
        ),
    ),
    Wire(
        "anthropic",
        "claude-test",
        _sse(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi"},
            },
        ),
    ),
    Wire(
        "gemini",
        "gemini-test",
        b"data: "
        + json.dumps(
            {"candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}, "index": 0}]}
        ).encode()
        + b"\r\n\r\n",
    ),
]


async def collect(wire: Wire, url: str, timeouts: StreamTimeouts) -> list[StreamEvent]:
    endpoint = Endpoint(
        provider_id="test",
        api=wire.api,
        base_url=url,
        api_key="test-key",
        stream_timeouts=timeouts,
    )
    model = importlib.import_module(f"providers.wire.{_MODULES[wire.api]}").create_model(
        wire.model, endpoint
    )
    request = ModelRequest(system="", messages=[Message(role="user", parts=[TextPart(text="q")])])
    try:
        with anyio.fail_after(30):
            return [event async for event in model.stream(request)]
    finally:
        await model.aclose()


_MODULES = {
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic_messages",
    "gemini": "gemini",
}


def the_stall(events: list[StreamEvent]) -> str:
    """The stall's message, after checking the stream ended with it as a retryable network
    error and one `Finish`."""
    assert isinstance(events[-1], Finish) and events[-1].reason == "error"
    [error] = [event.error for event in events if isinstance(event, ErrorEvent)]
    assert (error.kind, error.retryable, error.provider) == ("network", True, "test")
    return error.message


@pytest.mark.parametrize("wire", WIRES, ids=lambda wire: wire.api)
async def test_a_stream_silent_after_its_first_output_stalls_after_the_idle_time(
    wire: Wire,
) -> None:
    async with hanging_server(wire.first_event) as server:
        events = await collect(wire, server.url, StreamTimeouts(first_event=30, idle=0.2))
        with anyio.fail_after(10):
            await server.closed.wait()
    assert [event for event in events if isinstance(event, TextDelta)] == [TextDelta(text="Hi")]
    assert the_stall(events) == "test: the stream stalled: no data for 0.2 seconds"


@pytest.mark.parametrize("wire", WIRES, ids=lambda wire: wire.api)
@pytest.mark.parametrize("respond", [True, False], ids=["head-only", "no-response"])
async def test_a_stream_without_output_stalls_after_the_first_event_time(
    wire: Wire, respond: bool
) -> None:
    async with hanging_server(b"", respond=respond) as server:
        events = await collect(wire, server.url, StreamTimeouts(first_event=0.3, idle=30))
        # On a loaded machine the deadline may pass before the request is even sent; a request
        # that was sent has its connection released.
        if server.requests:
            with anyio.fail_after(10):
                await server.closed.wait()
    assert the_stall(events) in (
        "test: no output within 0.3 seconds",
        "test: no response within 0.3 seconds",
    )
    assert not [event for event in events if isinstance(event, TextDelta)]
