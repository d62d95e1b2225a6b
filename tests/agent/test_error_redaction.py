"""Exception text the loop shows (the turn's end, a failed call's result) never carries a key:
neither one shaped like a key nor the configured key itself, whatever its shape."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent.backends import ToolUi
from agent.events import TurnEnded
from agent.tools import ToolContext, ToolError, ToolOutput, define_tool
from providers.types import ModelRequest, StreamEvent
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from tests.agent.loop_support import collect, env, make_session, of, results_of

SHAPED = "sk-ant-api03-AbCdEfGh1234567890"
"""Looks like a key: `redact` knows the shape."""
PLAIN = "plainlookingsecret0042"
"""Has no key shape: only knowing the configured value can mask it."""


@pytest.fixture(autouse=True)
def configured_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLAIN)


class LeakInput(BaseModel):
    how: str


async def _leak(params: LeakInput, ctx: ToolContext) -> ToolOutput:
    if params.how == "tool_error":
        raise ToolError(f"request refused for key {PLAIN}")
    raise RuntimeError(f"auth failed with {SHAPED} and {PLAIN}")


leak_tool = define_tool(
    name="leak",
    description="fails, quoting a key",
    input_model=LeakInput,
    execute=_leak,
    ui=lambda params, ctx: ToolUi(title="leak"),
    read_only=True,
)


class RaisingModel:
    """A model that breaks its contract by raising, with a key in the message."""

    def __init__(self, *, at_call: bool) -> None:
        self.at_call = at_call

    @property
    def provider_id(self) -> str:
        return "scripted"

    @property
    def model_id(self) -> str:
        return "test"

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self.at_call:
            raise RuntimeError(f"bad client for {SHAPED} / {PLAIN}")
        return self._events()

    async def _events(self) -> AsyncIterator[StreamEvent]:
        raise RuntimeError(f"stream died: Authorization: Bearer {SHAPED} {PLAIN}")
        yield  # pragma: no cover

    async def aclose(self) -> None:
        return None


def _clean(text: str | None) -> None:
    assert text is not None
    assert SHAPED not in text and "AbCdEfGh" not in text
    assert PLAIN not in text
    assert "[redacted]" in text


async def test_a_tool_exception_quoting_a_key_reaches_neither_model_nor_transcript(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    calls = [
        ScriptedCall(name="leak", arguments={"how": "exception"}),
        ScriptedCall(name="leak", arguments={"how": "tool_error"}),
    ]
    model = ScriptedModel([ScriptedTurn(tool_calls=calls), ScriptedTurn(text="ok")])
    session = await make_session(where, model, tools=[leak_tool])
    await collect(session.run_turn("go"))
    results = results_of(session.history())
    _clean(results["call_1_1"].text)
    _clean(results["call_1_2"].text)
    assert "RuntimeError" in results["call_1_1"].text
    stored = session.transcript.stored
    assert stored is not None
    await session.aclose()
    transcript = stored.path.read_text(encoding="utf-8")
    assert SHAPED not in transcript and PLAIN not in transcript


@pytest.mark.parametrize("at_call", [False, True], ids=["while streaming", "opening the stream"])
async def test_a_model_raising_with_a_key_ends_the_turn_with_the_key_masked(
    tmp_path: Path, at_call: bool
) -> None:
    session = await make_session(env(tmp_path), RaisingModel(at_call=at_call))
    events = await collect(session.run_turn("go"))
    end = of(TurnEnded, events)[-1]
    assert end.reason == "error"
    _clean(end.message)
    if end.error is not None:
        _clean(end.error.message)
    await session.aclose()
