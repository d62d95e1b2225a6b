"""Every neutral case of `tests.providers.cases` through the Gemini adapter and the real SDK:
the outgoing JSON body as the loopback server received it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from inline_snapshot import snapshot

from providers.model import Endpoint
from providers.wire.gemini import create_model
from tests.loopback import LoopbackServer, Reply, loopback
from tests.providers.cases import CASES, PIXEL

# The SDK sends inline bytes as URL-safe base64.
URLSAFE_PIXEL = PIXEL.replace("+", "-").replace("/", "_")

MINIMAL_STREAM = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}, '
    b'"finishReason": "STOP", "index": 0}]}\r\n\r\n'
)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with loopback() as running:
        yield running


async def sent_bodies(server: LoopbackServer) -> dict[str, Any]:
    endpoint = Endpoint(provider_id="google", api="gemini", base_url=server.url, api_key="test-key")
    model = create_model("gemini-3-flash-preview", endpoint)
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
                "contents": [{"parts": [{"text": "Say hi."}], "role": "user"}],
                "systemInstruction": {"parts": [{"text": "You are terse."}], "role": "user"},
                "generationConfig": {},
            },
            "tool_round_trip": {
                "contents": [
                    {"parts": [{"text": "Read a.txt"}], "role": "user"},
                    {
                        "parts": [
                            {"text": "Reading it."},
                            {
                                "functionCall": {
                                    "id": "call_1",
                                    "args": {"path": "a.txt"},
                                    "name": "read",
                                }
                            },
                        ],
                        "role": "model",
                    },
                    {
                        "parts": [
                            {
                                "functionResponse": {
                                    "id": "call_1",
                                    "name": "read",
                                    "response": {"output": "hello"},
                                }
                            }
                        ],
                        "role": "user",
                    },
                ],
                "systemInstruction": {"parts": [{"text": "Use tools."}], "role": "user"},
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "description": "Read a file",
                                "name": "read",
                                "parameters_json_schema": {
                                    "type": "object",
                                    "properties": {"path": {"type": "string"}},
                                    "required": ["path"],
                                },
                            }
                        ]
                    }
                ],
                "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
                "generationConfig": {},
            },
            "parallel_calls": {
                "contents": [
                    {"parts": [{"text": "Read a and b"}], "role": "user"},
                    {
                        "parts": [
                            {
                                "functionCall": {
                                    "id": "call_a",
                                    "args": {"path": "a"},
                                    "name": "read",
                                }
                            },
                            {
                                "functionCall": {
                                    "id": "call_b",
                                    "args": {"path": "b"},
                                    "name": "read",
                                }
                            },
                        ],
                        "role": "model",
                    },
                    {
                        "parts": [
                            {
                                "functionResponse": {
                                    "id": "call_a",
                                    "name": "read",
                                    "response": {"output": "A"},
                                }
                            },
                            {
                                "functionResponse": {
                                    "id": "call_b",
                                    "name": "read",
                                    "response": {"error": "no such file"},
                                }
                            },
                        ],
                        "role": "user",
                    },
                ],
                "systemInstruction": {"parts": [{"text": "Use tools."}], "role": "user"},
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "description": "Read a file",
                                "name": "read",
                                "parameters_json_schema": {
                                    "type": "object",
                                    "properties": {"path": {"type": "string"}},
                                    "required": ["path"],
                                },
                            }
                        ]
                    }
                ],
                "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
                "generationConfig": {},
            },
            "image": {
                "contents": [
                    {
                        "parts": [
                            {"text": "What is this?"},
                            {
                                "inlineData": {
                                    "data": URLSAFE_PIXEL,
                                    "mime_type": "image/png",
                                }
                            },
                            {
                                "fileData": {
                                    "file_uri": "https://example.com/cat.png",
                                    "mime_type": "image/png",
                                }
                            },
                        ],
                        "role": "user",
                    }
                ],
                "systemInstruction": {"parts": [{"text": "Describe images."}], "role": "user"},
                "generationConfig": {},
            },
            "reasoning_foreign": {
                "contents": [
                    {"parts": [{"text": "2+2?"}], "role": "user"},
                    {"parts": [{"text": "4"}], "role": "model"},
                    {"parts": [{"text": "And 3+3?"}], "role": "user"},
                ],
                "systemInstruction": {"parts": [{"text": "Think."}], "role": "user"},
                "generationConfig": {
                    "maxOutputTokens": 2048,
                    "thinkingConfig": {"include_thoughts": True, "thinking_level": "LOW"},
                },
            },
            "reasoning_native": {
                "contents": [
                    {"parts": [{"text": "Read a.txt"}], "role": "user"},
                    {
                        "parts": [
                            {"text": "Reading a.txt.", "thoughtSignature": "c2lnLWdlbWluaS10ZXh0"},
                            {
                                "functionCall": {
                                    "id": "call_1",
                                    "args": {"path": "a.txt"},
                                    "name": "read",
                                },
                                "thoughtSignature": "c2lnLWdlbWluaS1jYWxs",
                            },
                        ],
                        "role": "model",
                    },
                    {
                        "parts": [
                            {
                                "functionResponse": {
                                    "id": "call_1",
                                    "name": "read",
                                    "response": {"output": "hello"},
                                }
                            }
                        ],
                        "role": "user",
                    },
                ],
                "systemInstruction": {
                    "parts": [{"text": "Think, then use tools."}],
                    "role": "user",
                },
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "description": "Read a file",
                                "name": "read",
                                "parameters_json_schema": {
                                    "type": "object",
                                    "properties": {"path": {"type": "string"}},
                                    "required": ["path"],
                                },
                            }
                        ]
                    }
                ],
                "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
                "generationConfig": {},
            },
        }
    )
