"""The cheap context shapers: capping tool results and pruning old ones to stubs.

Both are pure functions over a request history: they return a new list, never touch the messages
they were given (messages are immutable; a changed one is a copy), and map messages one to one,
so position `i` of the output is always the shaped form of position `i` of the input. Stored
history is never rewritten: the model simply receives the shaped copy.

Both accept an optional memo so that a message shaped on one call comes back as the *same* object
on the next: the token counter's identity cache then keeps hitting, and a provider's prompt cache
sees a byte-identical prefix between the (rare) moments when pruning advances.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field, replace
from typing import Final

from agent.context.tokens import CHARS_PER_TOKEN, MessageEstimate, TokenCounter
from providers.records import MutableRecord, Record
from providers.types import (
    JsonValue,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultContent,
    ToolResultPart,
)

NEVER_PRUNED: Final = frozenset({"skill"})
"""Tools whose results stay verbatim: a skill's instructions are what the model works from."""
STUB_WORTHWHILE_TOKENS: Final = 64
"""A result smaller than this is left alone: its stub would save next to nothing."""
_DESCRIBED_ARGUMENTS: Final = ("path", "file_path", "command", "pattern", "url", "query", "name")
_DESCRIPTION_LIMIT: Final = 80


class ShapingLimits(Record):
    """How hard the cheap shapers squeeze, scaled to the model's window."""

    result_max_tokens: int = 10_000
    """One tool result's estimated tokens, at most."""
    result_max_bytes: int = 40_000
    """One tool result's UTF-8 size, at most (non-ASCII text is more bytes than characters)."""
    protect_tokens: int = 40_000
    """Tool output kept verbatim, newest first, before older results become stubs (opencode's
    `PRUNE_PROTECT`)."""
    prune_minimum_tokens: int = 20_000
    """Pruning advances only when it frees at least this much (opencode's `PRUNE_MINIMUM`), so
    the prefix a provider caches changes rarely rather than on every call."""

    @classmethod
    def for_window(cls, window: int | None) -> ShapingLimits:
        """Limits for a model with `window` tokens of context (None: unknown, the defaults)."""
        if window is None or window <= 0:
            return cls()
        result_tokens = max(256, min(10_000, window // 10))
        return cls(
            result_max_tokens=result_tokens,
            result_max_bytes=result_tokens * CHARS_PER_TOKEN,
            protect_tokens=max(512, min(40_000, window // 5)),
            prune_minimum_tokens=max(256, min(20_000, window // 10)),
        )


# ---------------------------------------------------------------------------------- capping


def cap_text(text: str, max_chars: int) -> str:
    """Head and tail of `text` within about `max_chars` characters, with the cut stated."""
    if len(text) <= max_chars:
        return text
    note_room = 160
    keep = max(0, max_chars - note_room)
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    note = (
        f"\n[... {cut} characters cut here: the result was {len(text)} characters, more than the "
        f"{max_chars} sent to the model; ask for a narrower range if you need the middle ...]\n"
    )
    return text[:head] + note + (text[-tail:] if tail else "")


def _char_limit(text: str, max_tokens: int, max_bytes: int) -> int | None:
    """The character limit `text` must be cut to, or None when it fits both limits."""
    limit = min(max_tokens * CHARS_PER_TOKEN, max_bytes)
    if len(text) > limit:
        return limit
    if len(text) * 4 <= max_bytes:
        return None  # even four bytes a character would fit
    size = len(text.encode("utf-8"))
    if size <= max_bytes:
        return None
    # Scale the characters kept by how many bytes an average character takes here.
    return max(1, len(text) * max_bytes // size)


def cap_result(part: ToolResultPart, *, max_tokens: int, max_bytes: int) -> ToolResultPart:
    """`part` with each text over the limits cut to its head and tail around a note saying how
    much was cut (the model must know it is not seeing everything); `part` itself when nothing
    needed cutting."""
    content: list[ToolResultContent] = []
    changed = False
    for item in part.content:
        if isinstance(item, TextPart):
            limit = _char_limit(item.text, max_tokens, max_bytes)
            if limit is not None:
                content.append(replace(item, text=cap_text(item.text, limit)))
                changed = True
                continue
        content.append(item)
    return replace(part, content=content) if changed else part


def _needs_cap(message: Message, max_tokens: int, max_bytes: int) -> bool:
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            for item in part.content:
                if isinstance(item, TextPart) and _char_limit(item.text, max_tokens, max_bytes):
                    return True
    return False


class CapMemo(MutableRecord, kw_only=False):
    """Capped copies from earlier calls, by the identity of the message they were made from."""

    limits: tuple[int, int] = (0, 0)
    shaped: dict[int, tuple[Message, Message]] = field(default_factory=lambda: {})


def cap_tool_results(
    messages: Sequence[Message],
    *,
    max_tokens: int,
    max_bytes: int,
    memo: CapMemo | None = None,
) -> list[Message]:
    """Every tool result within `max_tokens` (estimated) and `max_bytes`, with each cut stated.
    Messages that need no change are passed through as the same objects."""
    if memo is not None and memo.limits != (max_tokens, max_bytes):
        memo.limits = (max_tokens, max_bytes)
        memo.shaped.clear()
    out: list[Message] = []
    append = out.append
    for message in messages:
        if message.role != "tool":
            append(message)
            continue
        if memo is not None:
            known = memo.shaped.get(id(message))
            if known is not None and known[0] is message:
                append(known[1])
                continue
        shaped = message
        if _needs_cap(message, max_tokens, max_bytes):
            parts = [
                cap_result(part, max_tokens=max_tokens, max_bytes=max_bytes)
                if isinstance(part, ToolResultPart)
                else part
                for part in message.parts
            ]
            shaped = replace(message, parts=parts)
        if memo is not None:
            memo.shaped[id(message)] = (message, shaped)
        append(shaped)
    return out


# ---------------------------------------------------------------------------------- pruning


def describe_call(call: ToolCallPart | None, tool_name: str) -> str:
    """A few words naming what a call did: `read src/app.py`, `bash pytest -q`."""
    if call is None:
        return tool_name
    arguments = call.arguments
    if isinstance(arguments, dict):
        for key in _DESCRIBED_ARGUMENTS:
            value: JsonValue = arguments.get(key)
            if isinstance(value, str) and value.strip():
                text = " ".join(value.split())
                if len(text) > _DESCRIPTION_LIMIT:
                    text = text[: _DESCRIPTION_LIMIT - 1] + "…"
                return f"{call.name} {text}"
    return call.name


def format_size(size: int) -> str:
    """`812 B`, `12 kB`, `3.4 MB`."""
    if size < 1_000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{round(size / 1_000)} kB"
    return f"{size / 1_000_000:.1f} MB"


def stub_text(call: ToolCallPart | None, result: ToolResultPart) -> str:
    """The one line that replaces a pruned result."""
    size = sum(_utf8_size(item.text) for item in result.content if isinstance(item, TextPart))
    images = sum(1 for item in result.content if not isinstance(item, TextPart))
    what = describe_call(call, result.name)
    extent = format_size(size) + (f" and {images} image(s)" if images else "")
    failed = " (it failed)" if result.is_error else ""
    return f"[tool result pruned: {what}, {extent}{failed}; ask again if needed]"


def stub_result(call: ToolCallPart | None, result: ToolResultPart) -> ToolResultPart:
    """`result` with its content replaced by its stub line; call id, name and error flag kept."""
    # Built directly rather than with `dataclasses.replace`, which costs twice as much and runs
    # for every old result on the first call after a resume. (tests/agent/test_shaping.py
    # checks that the fields copied here are all the fields there are.)
    return ToolResultPart(
        tool_call_id=result.tool_call_id,
        name=result.name,
        content=[TextPart(text=stub_text(call, result))],
        is_error=result.is_error,
        provider_metadata=result.provider_metadata,
    )


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class PruneOutcome(Record):
    messages: list[Message]
    pruned: frozenset[str]
    """Every tool call id whose result is a stub in `messages` (pass it back next time)."""
    freed_tokens: int
    """Estimated tokens the results newly pruned by this call held."""


class PruneMemo(MutableRecord, kw_only=False):
    """Stubbed copies from earlier calls, by the identity of the message they were made from."""

    shaped: dict[int, tuple[Message, frozenset[str], Message]] = field(default_factory=lambda: {})


def _last_assistant(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index
    return -1


def prune_tool_results(
    messages: Sequence[Message],
    *,
    protect_tokens: int,
    minimum_tokens: int,
    already_pruned: frozenset[str] = frozenset(),
    counter: TokenCounter | None = None,
    memo: PruneMemo | None = None,
    accept: Callable[[int, int], bool] | None = None,
) -> PruneOutcome:
    """Replace old tool results with one-line stubs.

    Walking back from the newest, tool messages are kept verbatim until `protect_tokens` of tool
    output have been passed; the results before that are candidates. Candidates are pruned only
    when together they free at least `minimum_tokens` and `accept(freed, first)` agrees (`first`:
    the index of the first message that would change, from where a provider's prompt cache must
    be written again); results in `already_pruned` stay pruned whatever the total, so pruning
    only ever advances. Never pruned: results the model has not
    seen yet (those after the last assistant message, though they fill the recent budget),
    results inside the recent budget, results of tools in `NEVER_PRUNED`, and results too small
    for a stub to help.
    """
    estimate = (counter or TokenCounter()).estimate
    unseen_from = _last_assistant(messages) + 1
    recent = 0
    boundary = unseen_from  # tool messages from here on are kept verbatim
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "tool":
            continue
        if index < unseen_from:
            if recent >= protect_tokens:
                break
            boundary = index
        recent += estimate(message).result_tokens
    newly: list[str] = []
    freed = 0
    first = boundary
    for index in range(boundary):
        message = messages[index]
        if message.role != "tool":
            continue
        sizes = estimate(message)
        if sizes.result_ids <= already_pruned:
            continue
        for result in sizes.results:
            if (
                result.call_id in already_pruned
                or result.name in NEVER_PRUNED
                or result.tokens < STUB_WORTHWHILE_TOKENS
            ):
                continue
            first = min(first, index)
            newly.append(result.call_id)
            freed += result.tokens
    pruned = already_pruned
    if newly and freed >= minimum_tokens and (accept is None or accept(freed, first)):
        pruned = already_pruned | frozenset(newly)
    else:
        freed = 0
    if not pruned:
        return PruneOutcome(messages=list(messages), pruned=pruned, freed_tokens=0)
    return PruneOutcome(
        messages=_with_stubs(messages, pruned, boundary, estimate, memo),
        pruned=pruned,
        freed_tokens=freed,
    )


def _with_stubs(
    messages: Sequence[Message],
    pruned: frozenset[str],
    boundary: int,
    estimate: Callable[[Message], MessageEstimate],
    memo: PruneMemo | None,
) -> list[Message]:
    out = list(messages)
    shaped = memo.shaped if memo is not None else None
    for index in range(boundary):
        message = messages[index]
        if message.role != "tool":
            continue
        ids = estimate(message).result_ids
        if pruned.isdisjoint(ids):
            continue
        if shaped is not None:
            known = shaped.get(id(message))
            if known is not None and known[0] is message:
                done = known[1]
                if done is ids or done == pruned & ids:
                    out[index] = known[2]
                    continue
        hit = ids if ids <= pruned else pruned & ids
        calls = _calls_answered(messages, index)
        parts = [
            stub_result(calls.get(part.tool_call_id), part)
            if isinstance(part, ToolResultPart) and part.tool_call_id in hit
            else part
            for part in message.parts
        ]
        stubbed = Message(
            role=message.role, parts=parts, provider_metadata=message.provider_metadata
        )
        if shaped is not None:
            shaped[id(message)] = (message, hit, stubbed)
        out[index] = stubbed
    return out


def _calls_answered(messages: Sequence[Message], index: int) -> dict[str, ToolCallPart]:
    """The calls a tool message at `index` answers: those of the assistant message before it
    (the loop always answers the previous message); the whole history as a fallback."""
    if index > 0 and messages[index - 1].role == "assistant":
        calls = _calls_by_id(messages[index - 1 : index])
        if calls:
            return calls
    return _calls_by_id(messages[:index])


def _calls_by_id(messages: Sequence[Message]) -> dict[str, ToolCallPart]:
    return {
        part.id: part
        for message in messages
        if message.role == "assistant"
        for part in message.parts
        if isinstance(part, ToolCallPart)
    }
