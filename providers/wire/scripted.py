"""A deterministic in-process model for tests and demos.

It plays a list of turns, or asks a function of the request, and records every request it
receives. A turn is a `ScriptedTurn` (text, reasoning, tool calls, usage, an error...), a whole
`Message`, or a raw list of `StreamEvent`s. Settings can select it with a JSON script file:

    {"turns": [{"text": "hello"}, {"tool_calls": [{"name": "read", "arguments": {"path": "a"}}]}]}

When the script runs out the model answers with an `invalid_request` error rather than raising,
so a test that under-scripts fails loudly but the loop's error path stays the normal one.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias, cast

import anyio

from providers.types import (
    ErrorEvent,
    ErrorKind,
    Finish,
    FinishReason,
    JsonValue,
    Message,
    ModelRequest,
    ProviderError,
    ProviderMetadata,
    ReasoningDelta,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    Usage,
    UsageEvent,
    ensure_json,
    parse_tool_arguments,
)

PROVIDER_ID = "scripted"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedCall:
    name: str
    arguments: JsonValue = None
    """Parsed arguments; ignored when `raw_arguments` is given."""
    raw_arguments: str | None = None
    """Exact argument text, to script invalid JSON."""
    id: str | None = None
    provider_metadata: ProviderMetadata = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedTurn:
    text: str = ""
    reasoning: str = ""
    tool_calls: Sequence[ScriptedCall] = ()
    usage: Usage | None = None
    finish: FinishReason | None = None
    """Defaults to `tool_calls` when there are calls, else `stop`."""
    error: ProviderError | None = None
    """Emitted after the text and calls, instead of a normal finish."""
    chunk_size: int = 0
    """Split text into deltas of this many characters (0: one delta)."""
    hang: bool = False
    """After streaming, wait until cancelled (for cancellation tests)."""
    delay: float = 0.0
    """Seconds to sleep before the first event (for tests that need a turn in flight)."""


TurnSpec: TypeAlias = "ScriptedTurn | Message | Sequence[StreamEvent]"
ScriptFunction: TypeAlias = Callable[[ModelRequest], "TurnSpec | Awaitable[TurnSpec]"]


class ScriptedModel:
    """A `providers.model.Model` that plays a script."""

    def __init__(
        self,
        turns: Sequence[TurnSpec] | ScriptFunction = (),
        *,
        model_id: str = "scripted",
        provider_id: str = PROVIDER_ID,
    ) -> None:
        self._function: ScriptFunction | None = None
        self._turns: list[TurnSpec] = []
        if callable(turns):
            self._function = turns
        else:
            self._turns = list(turns)
        self._model_id = model_id
        self._provider_id = provider_id
        self._calls = 0
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    @property
    def provider_id(self) -> str:
        return self._provider_id

    @property
    def model_id(self) -> str:
        return self._model_id

    @classmethod
    def from_file(cls, path: str | Path, *, model_id: str = "scripted") -> ScriptedModel:
        """Load a JSON script (see the module docstring for its shape).

        Raises:
            OSError: the file cannot be read.
            ValueError: the file is not a valid script.
        """
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(turns_from_json(data), model_id=model_id)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        turn = await self._next_turn(request)
        self._calls += 1
        for event in _events_for(turn, self._calls, self._provider_id):
            if isinstance(event, _Sleep):
                await anyio.sleep(event.seconds)
                continue
            if isinstance(event, _Hang):
                await anyio.sleep_forever()
                continue
            yield event

    async def aclose(self) -> None:
        return None

    async def _next_turn(self, request: ModelRequest) -> TurnSpec:
        if self._function is not None:
            result = self._function(request)
            if inspect.isawaitable(result):
                result = await result
            return result
        if not self._turns:
            return ScriptedTurn(
                error=ProviderError(
                    kind="invalid_request",
                    message=f"{self._provider_id}: the script has no turn left for call "
                    f"{self._calls + 1}",
                    retryable=False,
                    provider=self._provider_id,
                )
            )
        return self._turns.pop(0)


@dataclass(frozen=True, slots=True)
class _Sleep:
    seconds: float


@dataclass(frozen=True, slots=True)
class _Hang:
    pass


def _events_for(
    turn: TurnSpec, call_number: int, provider: str
) -> list[StreamEvent | _Sleep | _Hang]:
    if isinstance(turn, Message):
        return list(_events_for_message(turn, call_number))
    if not isinstance(turn, ScriptedTurn):
        return list(_with_one_finish(turn))
    events: list[StreamEvent | _Sleep | _Hang] = []
    if turn.delay:
        events.append(_Sleep(turn.delay))
    if turn.reasoning:
        events.append(ReasoningDelta(text=turn.reasoning))
    for chunk in _chunks(turn.text, turn.chunk_size):
        events.append(TextDelta(text=chunk))
    for number, call in enumerate(turn.tool_calls, start=1):
        call_id = call.id or f"call_{call_number}_{number}"
        raw = (
            call.raw_arguments
            if call.raw_arguments is not None
            else json.dumps(call.arguments if call.arguments is not None else {})
        )
        arguments, invalid = parse_tool_arguments(raw)
        events.append(
            ToolCallStart(call_id=call_id, name=call.name, provider_metadata=call.provider_metadata)
        )
        events.append(ToolCallDelta(call_id=call_id, arguments_delta=raw))
        events.append(
            ToolCallEnd(
                call_id=call_id,
                name=call.name,
                arguments=arguments,
                raw_arguments=raw,
                invalid_reason=invalid,
            )
        )
    if turn.hang:
        events.append(_Hang())
    if turn.usage is not None:
        events.append(UsageEvent(usage=turn.usage))
    if turn.error is not None:
        events.append(ErrorEvent(error=turn.error))
        events.append(Finish(reason="error"))
        return events
    reason: FinishReason = turn.finish or ("tool_calls" if turn.tool_calls else "stop")
    events.append(Finish(reason=reason, raw_reason=reason))
    return events


def _with_one_finish(events: Sequence[StreamEvent]) -> list[StreamEvent]:
    """A raw event list as a stream: it ends at its first `Finish`; without one, a `Finish` is
    added (`error` after an error, `tool_calls` after calls, else `stop`), so the stream keeps
    the contract of exactly one `Finish`, last, whatever the script says."""
    played: list[StreamEvent] = []
    for event in events:
        played.append(event)
        if isinstance(event, Finish):
            return played
    reason: FinishReason = "stop"
    if any(isinstance(event, ErrorEvent) for event in played):
        reason = "error"
    elif any(isinstance(event, ToolCallEnd) for event in played):
        reason = "tool_calls"
    played.append(Finish(reason=reason))
    return played


def _events_for_message(message: Message, call_number: int) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for index, part in enumerate(message.parts):
        match part:
            case TextPart():
                events.append(
                    TextDelta(text=part.text, index=index, provider_metadata=part.provider_metadata)
                )
            case ReasoningPart():
                events.append(
                    ReasoningDelta(
                        text=part.text, index=index, provider_metadata=part.provider_metadata
                    )
                )
            case ToolCallPart():
                raw = (
                    part.invalid_arguments
                    if part.invalid_arguments is not None
                    else json.dumps(part.arguments)
                )
                arguments, reason = parse_tool_arguments(raw)
                events.append(
                    ToolCallStart(
                        call_id=part.id, name=part.name, provider_metadata=part.provider_metadata
                    )
                )
                events.append(ToolCallDelta(call_id=part.id, arguments_delta=raw))
                events.append(
                    ToolCallEnd(
                        call_id=part.id,
                        name=part.name,
                        arguments=arguments,
                        raw_arguments=raw,
                        invalid_reason=reason,
                    )
                )
            case _:
                raise ValueError(f"a scripted assistant message cannot contain {part.kind} parts")
    has_calls = any(isinstance(part, ToolCallPart) for part in message.parts)
    events.append(
        Finish(
            reason="tool_calls" if has_calls else "stop",
            provider_metadata=message.provider_metadata,
        )
    )
    return events


def _chunks(text: str, size: int) -> list[str]:
    if not text:
        return []
    if size <= 0:
        return [text]
    return [text[start : start + size] for start in range(0, len(text), size)]


def turns_from_json(data: object) -> list[TurnSpec]:
    """Parse a script file's content: `{"turns": [...]}` or a bare list of turns.

    Raises:
        ValueError: the data is not a script.
    """
    raw_turns = cast("dict[str, object]", data).get("turns") if isinstance(data, dict) else data
    if not isinstance(raw_turns, list):
        raise ValueError("a script is a list of turns, or an object with a 'turns' list")
    return [
        _turn_from_json(item, number)
        for number, item in enumerate(cast("list[Any]", raw_turns), start=1)
    ]


def _turn_from_json(item: object, number: int) -> ScriptedTurn:
    if not isinstance(item, dict):
        raise ValueError(f"turn {number} must be an object")
    turn = cast("dict[str, Any]", item)
    known = {
        "text",
        "reasoning",
        "tool_calls",
        "usage",
        "finish",
        "error",
        "chunk_size",
        "hang",
        "delay",
    }
    unknown = set(turn) - known
    if unknown:
        raise ValueError(f"turn {number} has unknown keys: {', '.join(sorted(unknown))}")
    calls: list[ScriptedCall] = []
    for call in cast("list[object]", turn.get("tool_calls", [])):
        call_data = cast("dict[str, Any]", call) if isinstance(call, dict) else {}
        if not isinstance(call_data.get("name"), str):
            raise ValueError(f"turn {number}: every tool call needs a name")
        calls.append(
            ScriptedCall(
                name=call_data["name"],
                arguments=ensure_json(call_data.get("arguments", {}), "arguments"),
                raw_arguments=call_data.get("raw_arguments"),
                id=call_data.get("id"),
            )
        )
    error: ProviderError | None = None
    if "error" in turn:
        raw_error = cast("dict[str, Any]", turn["error"])
        kind = cast("ErrorKind", raw_error.get("kind", "unknown"))
        error = ProviderError(
            kind=kind,
            message=str(raw_error.get("message", "scripted failure")),
            retryable=bool(raw_error.get("retryable", kind in ("rate_limit", "server", "network"))),
            retry_after=raw_error.get("retry_after"),
            status=raw_error.get("status"),
            provider=PROVIDER_ID,
        )
    usage = Usage(**cast("dict[str, int]", turn["usage"])) if "usage" in turn else None
    return ScriptedTurn(
        text=str(turn.get("text", "")),
        reasoning=str(turn.get("reasoning", "")),
        tool_calls=tuple(calls),
        usage=usage,
        finish=cast("FinishReason | None", turn.get("finish")),
        error=error,
        chunk_size=int(turn.get("chunk_size", 0)),
        hang=bool(turn.get("hang", False)),
        delay=float(turn.get("delay", 0.0)),
    )
