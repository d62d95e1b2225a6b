"""The scripted model keeps the stream contract (exactly one `Finish`, last) whatever the script
says, including raw event-list turns."""

from __future__ import annotations

import anyio
import pytest

from providers.types import (
    ErrorEvent,
    Finish,
    Message,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallEnd,
    ToolCallStart,
)
from providers.wire.scripted import ScriptedModel, TurnSpec

REQUEST = ModelRequest(system="", messages=[Message(role="user", parts=[TextPart(text="q")])])
FAILURE = ProviderError(kind="server", message="scripted: boom", retryable=True)
CALL = [
    ToolCallStart(call_id="c1", name="read"),
    ToolCallEnd(call_id="c1", name="read", arguments={}, raw_arguments="{}"),
]


async def play(turn: TurnSpec) -> list[StreamEvent]:
    model = ScriptedModel([turn])
    with anyio.fail_after(5):
        return [event async for event in model.stream(REQUEST)]


@pytest.mark.parametrize(
    ("turn", "finish"),
    [
        ([TextDelta(text="cut")], Finish(reason="stop")),
        ([], Finish(reason="stop")),
        (CALL, Finish(reason="tool_calls")),
        ([TextDelta(text="x"), ErrorEvent(error=FAILURE)], Finish(reason="error")),
    ],
    ids=["text", "empty", "tool_call", "error"],
)
async def test_a_raw_turn_without_finish_gets_one(turn: list[StreamEvent], finish: Finish) -> None:
    events = await play(turn)
    assert events == [*turn, finish]


async def test_a_raw_turn_with_its_own_finish_keeps_it_and_ends_there() -> None:
    own = Finish(reason="length", raw_reason="max_tokens")
    assert await play([TextDelta(text="a"), own]) == [TextDelta(text="a"), own]
    # Anything after the first Finish would break "last": it is not played.
    events = await play([TextDelta(text="a"), own, TextDelta(text="b"), Finish(reason="stop")])
    assert events == [TextDelta(text="a"), own]
