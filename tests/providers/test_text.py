"""Valid Unicode by construction: lone surrogates never survive into a part, a tool spec, a
request, or a transcript loaded through the codec."""

from __future__ import annotations

import json

from providers import codec
from providers.text import valid_json, valid_text
from providers.types import (
    Message,
    ModelRequest,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)


def encodes(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_lone_surrogates_become_replacement_characters_and_split_pairs_are_joined() -> None:
    assert valid_text("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    # One emoji whose UTF-16 halves arrived in two deltas and were concatenated.
    assert valid_text("\ud83d" + "\ude00") == "\U0001f600"
    text = "plain ascii, and ünïcödé \U0001f600"
    assert valid_text(text) is text


def test_json_values_are_rebuilt_only_when_needed_keys_included() -> None:
    clean = {"a": [1, "b", {"c": None}]}
    assert valid_json(clean) is clean
    dirty = {"k\udc80": ["x\ud800", {"y": 2.5, "z": True}]}
    assert valid_json(dirty) == {"k\ufffd": ["x\ufffd", {"y": 2.5, "z": True}]}
    assert dirty == {"k\udc80": ["x\ud800", {"y": 2.5, "z": True}]}  # not mutated


def test_a_deeply_nested_value_is_cleaned_without_recursion() -> None:
    value: object = "\ud800"
    for _ in range(100_000):
        value = [value]
    cleaned = valid_json(value)
    for _ in range(100_000):
        assert isinstance(cleaned, list)
        cleaned = cleaned[0]  # pyright: ignore[reportUnknownVariableType]
    assert cleaned == "\ufffd"


def test_parts_specs_and_requests_are_built_valid() -> None:
    result = ToolResultPart(
        tool_call_id="c1", name="mcp__x", content=[TextPart(text="out \udcff put")]
    )
    message = Message(
        role="assistant",
        parts=[
            ReasoningPart(text="think \ud800"),
            TextPart(text="say \udfff"),
            ToolCallPart(id="c1", name="t", arguments={"q\ud800": ["v\udc00"]}),
            ToolCallPart(id="c2", name="t", arguments=None, invalid_arguments='{"a": "\ud800'),
        ],
    )
    spec = ToolSpec(name="t", description="d\ud800", input_schema={"title": "\udc00"})
    request = ModelRequest(system="s\ud800", messages=[message], tools=[spec])
    assert encodes(codec.part_to_json(result))
    assert encodes(codec.message_to_json(message))
    assert encodes([request.system, spec.description, spec.input_schema])
    assert message.parts[0] == ReasoningPart(text="think \ufffd")
    assert message.parts[2] == ToolCallPart(id="c1", name="t", arguments={"q\ufffd": ["v\ufffd"]})


def test_a_message_decoded_with_a_lone_surrogate_is_valid() -> None:
    stored = json.loads('{"role": "user", "parts": [{"kind": "text", "text": "x\\ud800"}]}')
    assert codec.message_from_json(stored) == Message(role="user", parts=[TextPart(text="x\ufffd")])
