"""Every neutral case of `tests/providers/cases.py` through the Chat Completions adapter: the
outgoing JSON body, captured by the loopback server, pinned as a snapshot."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot

from providers.model import Endpoint
from providers.types import Finish
from providers.wire.openai_chat import create_model
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.cases import CASES, PIXEL

MINIMAL_STREAM = (
    "data: "
    + json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
        }
    )
    + "\n\ndata: [DONE]\n\n"
)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with loopback() as running:
        yield running


async def sent_body(server: LoopbackServer, case: str) -> dict[str, Any]:
    server.requests.clear()
    server.replies[:] = [Reply(body=MINIMAL_STREAM)]
    endpoint = Endpoint(
        provider_id="deepseek", api="openai-chat", base_url=server.url, api_key="test-key"
    )
    model = create_model("some-model", endpoint)
    try:
        with anyio.fail_after(10):
            events = [event async for event in model.stream(CASES[case])]
    finally:
        await model.aclose()
    assert events[-1] == Finish(reason="stop", raw_reason="stop")
    return server.requests[0].json()


async def test_every_case_is_snapshotted(server: LoopbackServer) -> None:
    assert set(CASES) == {
        "text",
        "tool_round_trip",
        "parallel_calls",
        "image",
        "reasoning_foreign",
        "reasoning_native",
    }


async def test_text(server: LoopbackServer) -> None:
    assert await sent_body(server, "text") == snapshot(
        {
            "model": "some-model",
            "stream": True,
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Say hi."},
            ],
            "stream_options": {"include_usage": True},
        }
    )


async def test_tool_round_trip(server: LoopbackServer) -> None:
    assert await sent_body(server, "tool_round_trip") == snapshot(
        {
            "model": "some-model",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Use tools."},
                {"role": "user", "content": "Read a.txt"},
                {
                    "role": "assistant",
                    "content": "Reading it.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
            ],
            "stream_options": {"include_usage": True},
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "read",
                        "description": "Read a file",
                        "parameters": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        },
                    },
                }
            ],
        }
    )


async def test_parallel_calls(server: LoopbackServer) -> None:
    assert await sent_body(server, "parallel_calls") == snapshot(
        {
            "model": "some-model",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Use tools."},
                {"role": "user", "content": "Read a and b"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"a"}'},
                        },
                        {
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"b"}'},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "call_a", "content": "A"},
                {"role": "tool", "tool_call_id": "call_b", "content": "no such file"},
            ],
            "stream_options": {"include_usage": True},
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "read",
                        "description": "Read a file",
                        "parameters": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        },
                    },
                }
            ],
        }
    )


async def test_image(server: LoopbackServer) -> None:
    assert await sent_body(server, "image") == snapshot(
        {
            "model": "some-model",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Describe images."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:image/png;base64,{PIXEL}"},
                        },
                        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
                    ],
                },
            ],
            "stream_options": {"include_usage": True},
        }
    )


async def test_reasoning_foreign(server: LoopbackServer) -> None:
    assert await sent_body(server, "reasoning_foreign") == snapshot(
        {
            "model": "some-model",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Think."},
                {"role": "user", "content": "2+2?"},
                {"role": "assistant", "content": "4"},
                {"role": "user", "content": "And 3+3?"},
            ],
            "max_tokens": 2048,
            "reasoning_effort": "low",
            "stream_options": {"include_usage": True},
        }
    )


async def test_reasoning_native(server: LoopbackServer) -> None:
    assert await sent_body(server, "reasoning_native") == snapshot(
        {
            "model": "some-model",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Think, then use tools."},
                {"role": "user", "content": "Read a.txt"},
                {
                    "role": "assistant",
                    "content": "Reading a.txt.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                        }
                    ],
                    "reasoning_content": "Need the file.",
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
            ],
            "stream_options": {"include_usage": True},
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "read",
                        "description": "Read a file",
                        "parameters": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        },
                    },
                }
            ],
        }
    )
