"""Every neutral case of `tests/providers/cases.py` through the Responses adapter: the
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
from providers.wire.openai_responses import create_model
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.cases import CASES, PIXEL

_COMPLETED: dict[str, Any] = {
    "type": "response.completed",
    "response": {"id": "resp_1", "object": "response", "status": "completed", "output": []},
}
MINIMAL_STREAM = f"event: response.completed\ndata: {json.dumps(_COMPLETED)}\n\n"


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with loopback() as running:
        yield running


async def sent_body(server: LoopbackServer, case: str) -> dict[str, Any]:
    server.requests.clear()
    server.replies[:] = [Reply(body=MINIMAL_STREAM)]
    endpoint = Endpoint(
        provider_id="openai", api="openai-responses", base_url=server.url, api_key="test-key"
    )
    model = create_model("gpt-5", endpoint)
    try:
        with anyio.fail_after(10):
            events = [event async for event in model.stream(CASES[case])]
    finally:
        await model.aclose()
    assert events[-1] == Finish(reason="stop", raw_reason="completed")
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
            "model": "gpt-5",
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "input": [{"role": "user", "content": "Say hi."}],
            "instructions": "You are terse.",
            "store": False,
        }
    )


async def test_tool_round_trip(server: LoopbackServer) -> None:
    assert await sent_body(server, "tool_round_trip") == snapshot(
        {
            "model": "gpt-5",
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"role": "user", "content": "Read a.txt"},
                {"role": "assistant", "content": "Reading it."},
                {
                    "type": "function_call",
                    "call_id": "call_1",
                    "name": "read",
                    "arguments": '{"path":"a.txt"}',
                },
                {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
            ],
            "instructions": "Use tools.",
            "store": False,
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "name": "read",
                    "description": "Read a file",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                    "strict": False,
                }
            ],
        }
    )


async def test_parallel_calls(server: LoopbackServer) -> None:
    assert await sent_body(server, "parallel_calls") == snapshot(
        {
            "model": "gpt-5",
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"role": "user", "content": "Read a and b"},
                {
                    "type": "function_call",
                    "call_id": "call_a",
                    "name": "read",
                    "arguments": '{"path":"a"}',
                },
                {
                    "type": "function_call",
                    "call_id": "call_b",
                    "name": "read",
                    "arguments": '{"path":"b"}',
                },
                {"type": "function_call_output", "call_id": "call_a", "output": "A"},
                {"type": "function_call_output", "call_id": "call_b", "output": "no such file"},
            ],
            "instructions": "Use tools.",
            "store": False,
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "name": "read",
                    "description": "Read a file",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                    "strict": False,
                }
            ],
        }
    )


async def test_image(server: LoopbackServer) -> None:
    assert await sent_body(server, "image") == snapshot(
        {
            "model": "gpt-5",
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "What is this?"},
                        {
                            "type": "input_image",
                            "image_url": f"data:image/png;base64,{PIXEL}",
                            "detail": "auto",
                        },
                        {
                            "type": "input_image",
                            "image_url": "https://example.com/cat.png",
                            "detail": "auto",
                        },
                    ],
                }
            ],
            "instructions": "Describe images.",
            "store": False,
        }
    )


async def test_reasoning_foreign(server: LoopbackServer) -> None:
    assert await sent_body(server, "reasoning_foreign") == snapshot(
        {
            "model": "gpt-5",
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"role": "user", "content": "2+2?"},
                {"role": "assistant", "content": "4"},
                {"role": "user", "content": "And 3+3?"},
            ],
            "instructions": "Think.",
            "max_output_tokens": 2048,
            "reasoning": {"effort": "low", "summary": "auto"},
            "store": False,
        }
    )


async def test_reasoning_native(server: LoopbackServer) -> None:
    assert await sent_body(server, "reasoning_native") == snapshot(
        {
            "model": "gpt-5",
            "stream": True,
            "include": ["reasoning.encrypted_content"],
            "input": [
                {"role": "user", "content": "Read a.txt"},
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [{"type": "summary_text", "text": "Plan the read."}],
                    "encrypted_content": "gAAAAABo-encrypted-reasoning==",
                },
                {"role": "assistant", "content": "Reading a.txt."},
                {
                    "type": "function_call",
                    "call_id": "call_1",
                    "name": "read",
                    "arguments": '{"path":"a.txt"}',
                    "id": "fc_1",
                },
                {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
            ],
            "instructions": "Think, then use tools.",
            "store": False,
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "name": "read",
                    "description": "Read a file",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                    "strict": False,
                }
            ],
        }
    )
