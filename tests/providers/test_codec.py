"""`providers.codec` round trips, and the run-time stand-in for the recursive `JsonValue` alias."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import codec
from providers.types import (
    ErrorEvent,
    Finish,
    ImagePart,
    JsonValue,
    Message,
    NotJsonError,
    ProviderError,
    ReasoningDelta,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResultPart,
    Usage,
    UsageEvent,
)
from tests.fixtures import ROOT

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)
metadata = st.dictionaries(
    st.sampled_from(["anthropic", "gemini", "openai-responses"]),
    st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    max_size=2,
)
texts = st.text(max_size=20)
images = st.one_of(
    st.builds(ImagePart, media_type=st.just("image/png"), data=st.just("aGk=")),
    st.builds(ImagePart, media_type=st.just("image/png"), url=st.just("https://x.example/y.png")),
)
parts = st.one_of(
    st.builds(TextPart, text=texts, provider_metadata=metadata),
    st.builds(ReasoningPart, text=texts, provider_metadata=metadata),
    images,
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
        content=st.lists(st.builds(TextPart, text=texts) | images, max_size=2),
        is_error=st.booleans(),
    ),
)
messages = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool"]),
    parts=st.lists(parts, max_size=4),
    provider_metadata=metadata,
)
events: st.SearchStrategy[StreamEvent] = st.one_of(
    st.builds(TextDelta, text=texts, index=st.integers(0, 9), provider_metadata=metadata),
    st.builds(ReasoningDelta, text=texts, index=st.integers(0, 9), provider_metadata=metadata),
    st.builds(ToolCallStart, call_id=texts, name=texts, provider_metadata=metadata),
    st.builds(ToolCallDelta, call_id=texts, arguments_delta=texts),
    st.builds(
        ToolCallEnd,
        call_id=texts,
        name=texts,
        arguments=json_values,
        raw_arguments=texts,
        invalid_reason=st.none() | texts,
        provider_metadata=metadata,
    ),
    st.builds(UsageEvent, usage=st.builds(Usage, input_tokens=st.integers(0, 10**6))),
    st.builds(Finish, reason=st.just("stop"), raw_reason=st.none() | texts),
    st.builds(
        ErrorEvent,
        error=st.builds(
            ProviderError,
            kind=st.just("rate_limit"),
            message=texts,
            retryable=st.booleans(),
            retry_after=st.none() | st.floats(0, 60),
        ),
    ),
)


def same_json(left: object, right: object) -> bool:
    """Equal and of the same types all the way down (`1 == 1.0 == True` in Python)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        left_dict, right_dict = cast("dict[str, object]", left), cast("dict[str, object]", right)
        return left_dict.keys() == right_dict.keys() and all(
            same_json(value, right_dict[key]) for key, value in left_dict.items()
        )
    if isinstance(left, list):
        left_list, right_list = cast("list[object]", left), cast("list[object]", right)
        return len(left_list) == len(right_list) and all(
            same_json(a, b) for a, b in zip(left_list, right_list, strict=True)
        )
    return left == right


@settings(max_examples=150, deadline=None)
@given(messages)
def test_messages_round_trip_losslessly(message: Message) -> None:
    data = codec.message_to_json(message)
    back = codec.message_from_json(data)
    assert back == message
    assert same_json(codec.message_to_json(back), data)


@settings(max_examples=150, deadline=None)
@given(events)
def test_events_round_trip_losslessly(event: StreamEvent) -> None:
    data = codec.event_to_json(event)
    back = codec.event_from_json(data)
    assert back == event
    assert same_json(codec.event_to_json(back), data)


def test_json_numbers_keep_their_types() -> None:
    part = ToolCallPart(id="c", name="n", arguments={"int": 1, "float": 1.0, "bool": True})
    data = codec.part_to_json(part)
    back = codec.part_from_json(data)
    assert isinstance(back, ToolCallPart) and isinstance(back.arguments, dict)
    assert [type(value) for value in back.arguments.values()] == [int, float, bool]


def test_non_json_metadata_is_rejected_when_decoding() -> None:
    # The dataclass check runs under pydantic too (`json.loads` accepts a bare NaN).
    data = {"kind": "text", "text": "x", "provider_metadata": {"gemini": {"n": float("nan")}}}
    with pytest.raises(NotJsonError, match="does not survive"):
        codec.part_from_json(data)


_EVENTS_WITH_METADATA: dict[str, Callable[[Any], object]] = {
    "text_delta": lambda bag: TextDelta(text="x", provider_metadata=bag),
    "reasoning_delta": lambda bag: ReasoningDelta(text="", provider_metadata=bag),
    "tool_call_start": lambda bag: ToolCallStart(call_id="c", name="f", provider_metadata=bag),
    "tool_call_end": lambda bag: ToolCallEnd(
        call_id="c", name="f", arguments={}, raw_arguments="{}", provider_metadata=bag
    ),
    "finish": lambda bag: Finish(reason="stop", provider_metadata=bag),
}


@pytest.mark.parametrize("kind", sorted(_EVENTS_WITH_METADATA))
def test_stream_events_reject_non_json_metadata_at_creation(kind: str) -> None:
    # Caught in the adapter that made it, not when the transcript is written.
    make = _EVENTS_WITH_METADATA[kind]
    with pytest.raises(NotJsonError, match="bytes is not a JSON value"):
        make({"gemini": {"thought_signature": b"raw"}})
    with pytest.raises(NotJsonError, match="must be an object"):
        make({"gemini": "flat"})
    make({"gemini": {"thought_signature": "cmF3"}})
    make({})


def test_other_modules_can_use_json_value_with_pydantic() -> None:
    from pydantic import TypeAdapter

    adapter = TypeAdapter(dict[str, JsonValue])
    value: dict[str, JsonValue] = {"a": [1, 2.5, None, {"b": "c"}]}
    assert adapter.validate_json(adapter.dump_json(value)) == value
    assert repr(JsonValue) == "JsonValue"


def test_importing_the_types_loads_neither_pydantic_nor_typing_extensions() -> None:
    code = (
        "import sys, providers.types\n"
        "loaded = [m for m in ('pydantic', 'typing_extensions') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_pydantic_sees_the_recursive_alias_not_any() -> None:
    from pydantic import TypeAdapter

    schema = TypeAdapter(ToolCallPart).json_schema()
    assert schema["properties"]["arguments"] == {"$ref": "#/$defs/JsonValue"}
    recursive = {"items": {"$ref": "#/$defs/JsonValue"}, "type": "array"}
    assert recursive in schema["$defs"]["JsonValue"]["anyOf"]
