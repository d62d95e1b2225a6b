"""Every neutral case of `tests.providers.cases` through the Anthropic adapter and the real SDK:
the outgoing JSON body as the loopback server received it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot

from providers.model import Endpoint
from providers.wire.anthropic_messages import create_model
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.cases import CASES, PIXEL

MINIMAL_STREAM = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant",'
    b'"model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}'
    b"\n\n"
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}'
    b"\n\n"
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with loopback() as running:
        yield running


async def sent_bodies(server: LoopbackServer) -> dict[str, Any]:
    endpoint = Endpoint(
        provider_id="anthropic", api="anthropic", base_url=server.url, api_key="test-key"
    )
    model = create_model("claude-sonnet-4-5", endpoint)
    bodies: dict[str, Any] = {}
    try:
        for name, request in CASES.items():
            server.replies.append(Reply(body=MINIMAL_STREAM))
            with anyio.fail_after(10):
                events = [event async for event in model.stream(request)]
            assert events[-1].kind == "finish" and events[-1].reason == "stop", events
            bodies[name] = json.loads(server.requests[-1].body)
    finally:
        await model.aclose()
    return bodies


async def test_request_bodies(server: LoopbackServer) -> None:
    assert await sent_bodies(server) == snapshot(
        {
            "text": {
                "max_tokens": 8192,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "Say hi."}]}],
                "model": "claude-sonnet-4-5",
                "stream": True,
                "system": "You are terse.",
            },
            "tool_round_trip": {
                "max_tokens": 8192,
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Read a.txt"}]},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "Reading it."},
                            {
                                "type": "tool_use",
                                "id": "call_1",
                                "name": "read",
                                "input": {"path": "a.txt"},
                            },
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "call_1",
                                "content": [{"type": "text", "text": "hello"}],
                            }
                        ],
                    },
                ],
                "model": "claude-sonnet-4-5",
                "stream": True,
                "system": "Use tools.",
                "tool_choice": {"type": "auto"},
                "tools": [
                    {
                        "name": "read",
                        "description": "Read a file",
                        "input_schema": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        },
                    }
                ],
            },
            "parallel_calls": {
                "max_tokens": 8192,
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Read a and b"}]},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "call_a",
                                "name": "read",
                                "input": {"path": "a"},
                            },
                            {
                                "type": "tool_use",
                                "id": "call_b",
                                "name": "read",
                                "input": {"path": "b"},
                            },
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "call_a",
                                "content": [{"type": "text", "text": "A"}],
                            },
                            {
                                "type": "tool_result",
                                "tool_use_id": "call_b",
                                "content": [{"type": "text", "text": "no such file"}],
                                "is_error": True,
                            },
                        ],
                    },
                ],
                "model": "claude-sonnet-4-5",
                "stream": True,
                "system": "Use tools.",
                "tool_choice": {"type": "auto"},
                "tools": [
                    {
                        "name": "read",
                        "description": "Read a file",
                        "input_schema": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        },
                    }
                ],
            },
            "image": {
                "max_tokens": 8192,
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is this?"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PIXEL,
                                },
                            },
                            {
                                "type": "image",
                                "source": {"type": "url", "url": "https://example.com/cat.png"},
                            },
                        ],
                    }
                ],
                "model": "claude-sonnet-4-5",
                "stream": True,
                "system": "Describe images.",
            },
            "reasoning_foreign": {
                "max_tokens": 2048,
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "2+2?"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "4"}]},
                    {"role": "user", "content": [{"type": "text", "text": "And 3+3?"}]},
                ],
                "model": "claude-sonnet-4-5",
                "stream": True,
                "system": "Think.",
                "thinking": {"type": "enabled", "budget_tokens": 1024},
            },
            "reasoning_native": {
                "max_tokens": 8192,
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Read a.txt"}]},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "thinking",
                                "thinking": "Let me think.",
                                "signature": "EqQBCkYIBxgCKkBzaWduZWQtdGhpbmtpbmc=",
                            },
                            {
                                "type": "redacted_thinking",
                                "data": "EmwKAhgBEgy3va3pzGm0ZW5jcnlwdGVkLXRoaW5raW5n",
                            },
                            {"type": "text", "text": "Reading a.txt."},
                            {
                                "type": "tool_use",
                                "id": "call_1",
                                "name": "read",
                                "input": {"path": "a.txt"},
                            },
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "call_1",
                                "content": [{"type": "text", "text": "hello"}],
                            }
                        ],
                    },
                ],
                "model": "claude-sonnet-4-5",
                "stream": True,
                "system": "Think, then use tools.",
                "tool_choice": {"type": "auto"},
                "tools": [
                    {
                        "name": "read",
                        "description": "Read a file",
                        "input_schema": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        },
                    }
                ],
            },
        }
    )
