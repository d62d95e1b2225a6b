"""Provider metadata through compaction, end to end: a real session on a scripted model that
emits OpenAI Responses reasoning items and Anthropic signed thinking blocks before its tool calls
and answers, compacted automatically several times. The model checks every request the way those
vendors do (providers.md sections 2-3) and rejects one that breaks their rules:

- a reasoning item must arrive with the item that followed it, right after it, and unchanged
  (OpenAI: "Item 'rs_...' of type 'reasoning' was provided without its required following
  item"; Anthropic: thinking text and signature byte-identical, before the tool use);
- an item that followed reasoning is sent with that reasoning right before it (Anthropic: the
  thinking blocks of a tool-use turn go back with it);
- every tool call is answered by the message right after it, and every result answers a call in
  the message right before it (Anthropic: "`tool_use` ids were found without `tool_result`
  blocks immediately after").

A real session talks to one vendor; both metadata shapes alternate here so that one run covers
both. The shapers are vendor-agnostic, which is what this checks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent.context.compaction import PREAMBLE_OPENING, is_summary_request
from agent.events import CompactionFinished, TurnEnded
from providers.types import (
    Finish,
    JsonValue,
    Message,
    ModelRequest,
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
    ToolResultPart,
    Usage,
    UsageEvent,
)
from providers.wire.scripted import ScriptedModel, ScriptedTurn, TurnSpec
from sessions import CompactionEntry, MessageEntry, SessionStore
from tests.agent.context_support import SUMMARY, VendorTokenizer, catalog, dump_tool
from tests.agent.loop_support import collect, env, make_session, of

WINDOW = 16_000
RESULT_CHARS = 4_000
ROUNDS = 3
LONG_ROUNDS = 12
"""Tool rounds of the one long prompt: more than the verbatim tail holds, so a compaction has to
cut inside that turn, before one of its assistant messages."""


def reasoning_key(part: ReasoningPart) -> str:
    """What identifies a reasoning part to its vendor: the item id or the signature."""
    openai = part.provider_metadata.get("openai-responses", {}).get("item")
    if isinstance(openai, dict):
        return f"rs:{openai.get('id')}"
    return f"sig:{part.provider_metadata.get('anthropic', {}).get('signature')}"


def item_key(part: Part) -> str:
    if isinstance(part, ToolCallPart):
        return f"call:{part.id}"
    if isinstance(part, TextPart):
        return f"text:{part.text}"
    return part.kind


@dataclass(frozen=True)
class Emitted:
    metadata: ProviderMetadata
    text: str
    partner: str
    """`item_key` of the part that followed it."""


def violations(messages: Sequence[Message], emitted: dict[str, Emitted]) -> list[str]:
    """What OpenAI Responses or Anthropic would reject in `messages` (empty: nothing)."""
    found: list[str] = []
    reasoned = {origin.partner: key for key, origin in emitted.items()}
    for index, message in enumerate(messages):
        parts = message.parts
        if message.role == "assistant":
            for position, part in enumerate(parts):
                before = parts[position - 1] if position else None
                wanted = reasoned.get(item_key(part))
                if wanted is not None and not (
                    isinstance(before, ReasoningPart) and reasoning_key(before) == wanted
                ):
                    found.append(f"{item_key(part)}: sent without the reasoning before it")
                if not isinstance(part, ReasoningPart):
                    continue
                key = reasoning_key(part)
                origin = emitted.get(key)
                if origin is None:
                    found.append(f"{key}: never emitted")
                    continue
                if part.provider_metadata != origin.metadata or part.text != origin.text:
                    found.append(f"{key}: changed since it was emitted")
                following = parts[position + 1] if position + 1 < len(parts) else None
                if following is None or item_key(following) != origin.partner:
                    found.append(f"{key}: provided without its required following item")
            calls = {part.id for part in parts if isinstance(part, ToolCallPart)}
            answer = messages[index + 1] if index + 1 < len(messages) else None
            answered = (
                {p.tool_call_id for p in answer.parts if isinstance(p, ToolResultPart)}
                if answer is not None and answer.role == "tool"
                else set[str]()
            )
            if calls - answered:
                found.append(f"tool_use ids without tool_result after: {sorted(calls - answered)}")
        elif message.role == "tool":
            previous = messages[index - 1] if index else None
            asked = (
                {p.id for p in previous.parts if isinstance(p, ToolCallPart)}
                if previous is not None and previous.role == "assistant"
                else set[str]()
            )
            for part in parts:
                if isinstance(part, ToolResultPart) and part.tool_call_id not in asked:
                    found.append(f"tool result {part.tool_call_id} without its call")
    return found


@dataclass
class ReasoningVendor:
    """The scripted model: each prompt gets `ROUNDS` tool rounds (`LONG_ROUNDS` for a prompt
    saying "long"), each opened by reasoning, then a reasoned final answer."""

    tokenizer: VendorTokenizer = field(default_factory=VendorTokenizer)
    emitted: dict[str, Emitted] = field(default_factory=lambda: {})
    rejected: list[str] = field(default_factory=lambda: [])
    rounds_left: int = 0
    serial: int = 0
    reasonings: int = 0

    def __call__(self, request: ModelRequest) -> TurnSpec:
        size = self.tokenizer.request(request)
        if size > WINDOW:
            self.rejected.append(f"over the window: {size}")
        problems = violations(request.messages, self.emitted)
        self.rejected += problems
        if problems or size > WINDOW:
            error = ProviderError(
                kind="invalid_request", message="; ".join(self.rejected), retryable=False
            )
            return ScriptedTurn(error=error)
        usage = Usage(input_tokens=size, output_tokens=60)
        if is_summary_request(request):
            return ScriptedTurn(text=SUMMARY, usage=usage)
        last = request.messages[-1]
        if last.role == "user":
            self.rounds_left = LONG_ROUNDS if "long" in last.text else ROUNDS
        if self.rounds_left == 0:
            return self._events([self._reasoning(), self._text()], usage, "stop")
        self.rounds_left -= 1
        items: list[Part] = [self._reasoning(), self._call()]
        if self.reasonings % 3 == 0:
            items += [self._reasoning(), self._call()]  # two reasoned calls in one response
        return self._events(items, usage, "tool_calls")

    def _reasoning(self) -> ReasoningPart:
        self.serial += 1
        self.reasonings += 1
        n = self.serial
        if self.reasonings % 2:
            item: dict[str, JsonValue] = {
                "type": "reasoning",
                "id": f"rs_{n:04d}",
                "encrypted_content": f"gAAAAB{n:04d}" + "Zm9v" * 40,
                "summary": [{"type": "summary_text", "text": f"plan step {n}"}],
            }
            return ReasoningPart(
                text=f"plan step {n}", provider_metadata={"openai-responses": {"item": item}}
            )
        signature = f"EqQBCkYIBxgCKkB{n:04d}" + "c2ln" * 40
        return ReasoningPart(
            text=f"thinking about step {n}",
            provider_metadata={"anthropic": {"signature": signature}},
        )

    def _call(self) -> ToolCallPart:
        self.serial += 1
        n = self.serial
        return ToolCallPart(
            id=f"call_{n:04d}",
            name="read",
            arguments={"path": f"src/file{n}.py", "size": RESULT_CHARS},
            provider_metadata={"openai-responses": {"item_id": f"fc_{n:04d}"}},
        )

    def _text(self) -> TextPart:
        self.serial += 1
        return TextPart(text=f"done, answer {self.serial}")

    def _events(self, items: list[Part], usage: Usage, finish: str) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for index, part in enumerate(items):
            match part:
                case ReasoningPart():
                    partner = item_key(items[index + 1])
                    self.emitted[reasoning_key(part)] = Emitted(
                        part.provider_metadata, part.text, partner
                    )
                    anthropic = part.provider_metadata.get("anthropic")
                    if anthropic is not None:
                        # As Anthropic streams it: the thinking, then the signature alone.
                        events.append(ReasoningDelta(text=part.text, index=index))
                        events.append(
                            ReasoningDelta(
                                text="", index=index, provider_metadata={"anthropic": anthropic}
                            )
                        )
                    else:
                        events.append(
                            ReasoningDelta(
                                text=part.text,
                                index=index,
                                provider_metadata=part.provider_metadata,
                            )
                        )
                case ToolCallPart():
                    raw = json.dumps(part.arguments)
                    events += [
                        ToolCallStart(
                            call_id=part.id,
                            name=part.name,
                            provider_metadata=part.provider_metadata,
                        ),
                        ToolCallDelta(call_id=part.id, arguments_delta=raw),
                        ToolCallEnd(
                            call_id=part.id,
                            name=part.name,
                            arguments=part.arguments,
                            raw_arguments=raw,
                        ),
                    ]
                case TextPart():
                    events.append(TextDelta(text=part.text, index=index))
                case _:
                    raise AssertionError(part.kind)
        events.append(UsageEvent(usage=usage))
        events.append(Finish(reason="tool_calls" if finish == "tool_calls" else "stop"))
        return events


def _reasoning_in(messages: Sequence[Message]) -> set[str]:
    """The metadata namespaces of the reasoning parts in `messages`."""
    return {
        namespace
        for message in messages
        for part in message.parts
        if isinstance(part, ReasoningPart)
        for namespace in part.provider_metadata
    }


async def test_compaction_keeps_reasoning_with_its_following_items(tmp_path: Path) -> None:
    where = env(tmp_path)
    vendor = ReasoningVendor()
    model = ScriptedModel(vendor)
    session = await make_session(
        where, model, tools=[dump_tool], catalog=catalog(WINDOW), system_prompt="You help."
    )
    prompts = [f"prompt {n}: read the files" for n in range(8)]
    prompts.insert(5, "prompt long: read every file in the tree")
    compactions: list[CompactionFinished] = []
    for prompt in prompts:
        events = await collect(session.run_turn(prompt))
        assert events[-1] == TurnEnded(reason="end_turn"), vendor.rejected
        compactions += of(CompactionFinished, events)
    assert vendor.rejected == []

    # Compacted several times, once inside the long turn (its tail starts at an assistant
    # message, reasoning first).
    assert len(compactions) >= 3 and all(c.ok for c in compactions)
    stored = session.transcript.stored
    cuts = [e for e in stored.path_entries() if isinstance(e, CompactionEntry)]
    assert len(cuts) == len(compactions)
    first_kept = [stored.get(cut.first_kept_id or "") for cut in cuts]
    assert all(isinstance(entry, MessageEntry) for entry in first_kept)
    kept_roles = [entry.message.role for entry in first_kept if isinstance(entry, MessageEntry)]
    assert "assistant" in kept_roles and "user" in kept_roles
    inside = next(
        e.message
        for e in first_kept
        if isinstance(e, MessageEntry) and e.message.role == "assistant"
    )
    assert isinstance(inside.parts[0], ReasoningPart)

    # The request after each compaction: the preamble, then a verbatim tail that carries both
    # vendors' reasoning, each item with its partner (the vendor checked every request above).
    after = [
        r
        for r in model.requests
        if not is_summary_request(r) and r.messages[0].text.startswith(PREAMBLE_OPENING)
    ]
    assert after
    assert _reasoning_in([m for r in after for m in r.messages]) == {
        "openai-responses",
        "anthropic",
    }
    first_tails = [r for r in after if len(r.messages) > 1 and r.messages[1].role == "assistant"]
    assert first_tails, "a request whose tail starts inside a turn"
    assert violations(first_tails[0].messages, vendor.emitted) == []

    # The same holds for the history a reload rebuilds.
    history = session.history()
    assert history[0].text.startswith(PREAMBLE_OPENING)
    assert violations(history, vendor.emitted) == []
    assert _reasoning_in(history) == {"openai-responses", "anthropic"}
    session_id = session.id
    await session.aclose()
    reopened = await SessionStore(where.data / "sessions").open(session_id)
    reloaded = reopened.history()
    assert reloaded == history
    assert violations(reloaded, vendor.emitted) == []
    await reopened.aclose()


def test_the_vendor_rules_reject_a_reasoning_item_cut_from_its_partner() -> None:
    vendor = ReasoningVendor()
    reasoning, call = vendor._reasoning(), vendor._call()  # pyright: ignore[reportPrivateUsage]
    vendor._events([reasoning, call], Usage(), "tool_calls")  # pyright: ignore[reportPrivateUsage]
    result = Message(
        role="tool",
        parts=[ToolResultPart(tool_call_id=call.id, name="read", content=[TextPart(text="x")])],
    )
    whole = [Message(role="assistant", parts=[reasoning, call]), result]
    assert violations(whole, vendor.emitted) == []
    alone = [Message(role="assistant", parts=[reasoning]), result]
    assert any("required following item" in v for v in violations(alone, vendor.emitted))
    assert any("without its call" in v for v in violations(alone, vendor.emitted))
    unanswered = [Message(role="assistant", parts=[reasoning, call])]
    assert any("without tool_result" in v for v in violations(unanswered, vendor.emitted))
    changed = ReasoningPart(text="edited", provider_metadata=reasoning.provider_metadata)
    edited = [Message(role="assistant", parts=[changed, call]), result]
    assert any("changed" in v for v in violations(edited, vendor.emitted))
    bare = [Message(role="assistant", parts=[call]), result]
    assert any("without the reasoning" in v for v in violations(bare, vendor.emitted))
