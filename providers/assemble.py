"""Fold a model's stream of events into the assistant `Message` it describes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from providers.types import (
    ErrorEvent,
    Finish,
    Message,
    Part,
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
    merge_metadata,
)


@dataclass(slots=True)
class _Draft:
    kind: str
    key: object
    text: list[str] = field(default_factory=lambda: [])
    metadata: ProviderMetadata = field(default_factory=lambda: {})
    call: ToolCallPart | None = None
    name: str = ""


class MessageAssembler:
    """Consumes `StreamEvent`s in order; `message()` returns the assistant message so far.

    Parts keep the order in which they started, which is the order a vendor needs them replayed
    in (an OpenAI reasoning item before the function call that followed it).
    """

    def __init__(self) -> None:
        self._drafts: list[_Draft] = []
        self._by_key: dict[object, _Draft] = {}
        self.usage: Usage | None = None
        self.finish: Finish | None = None
        self.error: ProviderError | None = None

    def feed(self, event: StreamEvent) -> None:
        match event:
            case TextDelta() | ReasoningDelta():
                kind = "text" if isinstance(event, TextDelta) else "reasoning"
                key = (kind, event.index)
                draft = self._by_key.get(key)
                if draft is None:
                    draft = self._new(kind, key)
                draft.text.append(event.text)
                draft.metadata = merge_metadata(draft.metadata, event.provider_metadata)
            case ToolCallStart():
                draft = self._new("tool_call", ("tool_call", event.call_id))
                draft.name = event.name
                draft.metadata = event.provider_metadata
            case ToolCallDelta():
                draft = self._by_key.get(("tool_call", event.call_id))
                if draft is not None:
                    draft.text.append(event.arguments_delta)
            case ToolCallEnd():
                key = ("tool_call", event.call_id)
                draft = self._by_key.get(key) or self._new("tool_call", key)
                draft.call = ToolCallPart(
                    id=event.call_id,
                    name=event.name,
                    arguments=event.arguments,
                    invalid_arguments=event.raw_arguments if event.invalid_reason else None,
                    provider_metadata=merge_metadata(draft.metadata, event.provider_metadata),
                )
            case UsageEvent():
                self.usage = event.usage
            case Finish():
                self.finish = event
            case ErrorEvent():
                self.error = event.error
            case _:
                assert_never(event)

    def _new(self, kind: str, key: object) -> _Draft:
        draft = _Draft(kind=kind, key=key)
        self._drafts.append(draft)
        self._by_key[key] = draft
        return draft

    def parts(self) -> list[Part]:
        """Completed parts so far. A tool call that never got its end event is left out; the
        caller decides what an interrupted call becomes."""
        parts: list[Part] = []
        for draft in self._drafts:
            if draft.kind == "tool_call":
                if draft.call is not None:
                    parts.append(draft.call)
                continue
            text = "".join(draft.text)
            if draft.kind == "text":
                if text or draft.metadata:
                    parts.append(TextPart(text=text, provider_metadata=draft.metadata))
            elif text or draft.metadata:
                parts.append(ReasoningPart(text=text, provider_metadata=draft.metadata))
        return parts

    def message(self) -> Message:
        metadata = self.finish.provider_metadata if self.finish is not None else {}
        return Message(role="assistant", parts=self.parts(), provider_metadata=metadata)
