from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import codec
from providers.types import (
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from sessions.lines import (
    FAST_FIELDS,
    MalformedLine,
    _fast_message,  # pyright: ignore[reportPrivateUsage]
    _NotFast,  # pyright: ignore[reportPrivateUsage]
    dumps_line,
    message_from_json,
)


def test_fast_fields_match_the_provider_types() -> None:
    classes = {
        "message": Message,
        "text": TextPart,
        "reasoning": ReasoningPart,
        "image": ImagePart,
        "tool_call": ToolCallPart,
        "tool_result": ToolResultPart,
    }
    for kind, cls in classes.items():
        assert FAST_FIELDS[kind] == {field.name for field in dataclasses.fields(cls)}, kind


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
metadata = st.dictionaries(
    st.sampled_from(["anthropic", "openai", "google"]),
    st.dictionaries(st.text(max_size=5), json_values, max_size=2),
    max_size=2,
)
texts = st.text(max_size=30)
text_parts = st.builds(TextPart, text=texts, provider_metadata=metadata)
image_parts = st.one_of(
    st.builds(ImagePart, media_type=st.just("image/png"), data=st.just("aGk=")),
    st.builds(ImagePart, media_type=st.just("image/png"), url=st.just("https://x/y.png")),
)
parts = st.one_of(
    text_parts,
    image_parts,
    st.builds(ReasoningPart, text=texts, provider_metadata=metadata),
    st.builds(
        ToolCallPart,
        id=texts,
        name=texts,
        arguments=json_values,
        invalid_arguments=st.none() | texts,
        provider_metadata=metadata,
    ),
    st.builds(
        ToolResultPart,
        tool_call_id=texts,
        name=texts,
        content=st.lists(text_parts | image_parts, max_size=3),
        is_error=st.booleans(),
        provider_metadata=metadata,
    ),
)
messages = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool"]),
    parts=st.lists(parts, max_size=4),
    provider_metadata=metadata,
)


@settings(max_examples=150, deadline=None)
@given(messages)
def test_fast_decoding_agrees_with_the_codec(message: Message) -> None:
    data = codec.message_to_json(message)
    assert message_from_json(data) == codec.message_from_json(data) == message


def test_unknown_fields_leave_the_fast_path_for_the_codec() -> None:
    data = codec.message_to_json(Message(role="user", parts=[TextPart(text="hi")]))
    parts = data["parts"]
    assert isinstance(parts, list) and isinstance(parts[0], dict)
    parts[0]["future"] = 1
    with pytest.raises(_NotFast):
        _fast_message(data)
    # The codec decides (today it ignores the field, pydantic's default for dataclasses).
    assert message_from_json(data) == Message(role="user", parts=[TextPart(text="hi")])


def test_not_a_message_is_malformed() -> None:
    with pytest.raises(MalformedLine):
        message_from_json({"role": "user", "parts": "nope"})


def test_lines_are_ascii_and_one_line() -> None:
    line = dumps_line({"text": "a\nb\u2028c\udce9é"})
    assert line.count(b"\n") == 1 and line.endswith(b"\n")
    assert line.isascii()
