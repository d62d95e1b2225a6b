"""Neutral histories that every wire adapter must translate; their outgoing bodies are snapshot
tested per adapter (kosong's COMMON_CASES idea)."""

from __future__ import annotations

from providers.types import (
    ImagePart,
    JsonValue,
    Message,
    ModelRequest,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

READ_TOOL = ToolSpec(
    name="read",
    description="Read a file",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)

PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwAD"
    "hgGAWjR9awAAAABJRU5ErkJggg=="
)

# Opaque vendor data for `reasoning_native`, one per wire namespace (made up, shaped like the real
# thing). The Gemini signatures are base64 of `sig-gemini-text` / `sig-gemini-call`.
ANTHROPIC_SIGNATURE = "EqQBCkYIBxgCKkBzaWduZWQtdGhpbmtpbmc="
ANTHROPIC_REDACTED = "EmwKAhgBEgy3va3pzGm0ZW5jcnlwdGVkLXRoaW5raW5n"
RESPONSES_REASONING_ITEM: dict[str, JsonValue] = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Plan the read."}],
    "encrypted_content": "gAAAAABo-encrypted-reasoning==",
}
GEMINI_TEXT_SIGNATURE = "c2lnLWdlbWluaS10ZXh0"
GEMINI_CALL_SIGNATURE = "c2lnLWdlbWluaS1jYWxs"

CASES: dict[str, ModelRequest] = {
    "text": ModelRequest(
        system="You are terse.",
        messages=[Message(role="user", parts=[TextPart(text="Say hi.")])],
    ),
    "tool_round_trip": ModelRequest(
        system="Use tools.",
        tools=[READ_TOOL],
        messages=[
            Message(role="user", parts=[TextPart(text="Read a.txt")]),
            Message(
                role="assistant",
                parts=[
                    TextPart(text="Reading it."),
                    ToolCallPart(id="call_1", name="read", arguments={"path": "a.txt"}),
                ],
            ),
            Message(
                role="tool",
                parts=[
                    ToolResultPart(
                        tool_call_id="call_1", name="read", content=[TextPart(text="hello")]
                    )
                ],
            ),
        ],
    ),
    "parallel_calls": ModelRequest(
        system="Use tools.",
        tools=[READ_TOOL],
        messages=[
            Message(role="user", parts=[TextPart(text="Read a and b")]),
            Message(
                role="assistant",
                parts=[
                    ToolCallPart(id="call_a", name="read", arguments={"path": "a"}),
                    ToolCallPart(id="call_b", name="read", arguments={"path": "b"}),
                ],
            ),
            Message(
                role="tool",
                parts=[
                    ToolResultPart(
                        tool_call_id="call_a", name="read", content=[TextPart(text="A")]
                    ),
                    ToolResultPart(
                        tool_call_id="call_b",
                        name="read",
                        content=[TextPart(text="no such file")],
                        is_error=True,
                    ),
                ],
            ),
        ],
    ),
    "image": ModelRequest(
        system="Describe images.",
        messages=[
            Message(
                role="user",
                parts=[
                    TextPart(text="What is this?"),
                    ImagePart(media_type="image/png", data=PIXEL),
                    ImagePart(media_type="image/png", url="https://example.com/cat.png"),
                ],
            )
        ],
    ),
    "reasoning_foreign": ModelRequest(
        # Reasoning produced by ANOTHER provider (no metadata for this adapter): adapters must
        # not send it as their own signed reasoning; text-only reasoning may be dropped.
        system="Think.",
        reasoning_effort="low",
        max_output_tokens=2048,
        messages=[
            Message(role="user", parts=[TextPart(text="2+2?")]),
            Message(
                role="assistant",
                parts=[ReasoningPart(text="Simple sum."), TextPart(text="4")],
            ),
            Message(role="user", parts=[TextPart(text="And 3+3?")]),
        ],
    ),
    "reasoning_native": ModelRequest(
        # An assistant turn carrying every wire's own reasoning data, then a tool round trip:
        # each adapter must send back exactly its own data, byte-identical, and drop the rest.
        system="Think, then use tools.",
        tools=[READ_TOOL],
        messages=[
            Message(role="user", parts=[TextPart(text="Read a.txt")]),
            Message(
                role="assistant",
                parts=[
                    ReasoningPart(
                        text="Let me think.",
                        provider_metadata={"anthropic": {"signature": ANTHROPIC_SIGNATURE}},
                    ),
                    ReasoningPart(
                        text="", provider_metadata={"anthropic": {"redacted": ANTHROPIC_REDACTED}}
                    ),
                    ReasoningPart(
                        text="Plan the read.",
                        provider_metadata={"openai-responses": {"item": RESPONSES_REASONING_ITEM}},
                    ),
                    ReasoningPart(
                        text="Need the file.",
                        provider_metadata={
                            "openai-chat": {"fields": ["reasoning_content"], "provider": "deepseek"}
                        },
                    ),
                    TextPart(
                        text="Reading a.txt.",
                        provider_metadata={"gemini": {"thought_signature": GEMINI_TEXT_SIGNATURE}},
                    ),
                    ToolCallPart(
                        id="call_1",
                        name="read",
                        arguments={"path": "a.txt"},
                        provider_metadata={
                            "gemini": {"thought_signature": GEMINI_CALL_SIGNATURE},
                            "openai-responses": {"item_id": "fc_1"},
                        },
                    ),
                ],
            ),
            Message(
                role="tool",
                parts=[
                    ToolResultPart(
                        tool_call_id="call_1", name="read", content=[TextPart(text="hello")]
                    )
                ],
            ),
        ],
    ),
}
