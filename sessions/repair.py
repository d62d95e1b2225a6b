"""Every tool call answered, whatever happened to the process that made it.

The agent appends a tool batch's results one at a time, each as its own `tool` message, as soon
as the call finishes and before the front end is told it finished: what the user saw is on disk.
A process killed between an assistant message and its last result, or a disk that filled up,
leaves calls without results, which every vendor rejects in a request ("an assistant message with
'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"). Two things
keep such a transcript usable for good:

- Repair, append-only: `unanswered_at_leaf` finds the calls of the last assistant message on the
  current path that have no result. The process that takes the session's writer lock appends an
  "interrupted" result for each (`interrupted_result`) before anything else, and the agent does
  the same before each turn (a turn whose result could not be written leaves them behind).
- The request history (`join_results`) joins the tool messages answering one assistant message
  into one message in call order, as vendors expect; answers any call still without a result
  (left in the middle of the path by an older version) as interrupted; and leaves out results
  that answer no call of the message before them. The file is never rewritten for this.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from providers.types import Message, TextPart, ToolCallPart, ToolResultPart
from sessions.entries import Entry, MessageEntry

INTERRUPTED_BY_STOP = "interrupted: the agent stopped before this call finished"
"""The result of a call whose process stopped (killed, crashed, out of disk) before it finished."""

Memo = dict[tuple[int, ...], Message]
"""Joined tool messages by the positions they were joined from: the same object every time, so
the context shaper's identity caches keep hitting."""


def interrupted_result(call: ToolCallPart, text: str = INTERRUPTED_BY_STOP) -> ToolResultPart:
    return ToolResultPart(
        tool_call_id=call.id, name=call.name, content=[TextPart(text=text)], is_error=True
    )


def unanswered_at_leaf(newest_first: Iterable[Entry]) -> list[ToolCallPart]:
    """The calls of the newest assistant message on a path without a result after it.

    `newest_first` is the path from the leaf back. Only messages count; a user message or a
    compaction before any assistant message means nothing is open."""
    answered: set[str] = set()
    for entry in newest_first:
        if entry.kind == "compaction":
            return []
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        match message.role:
            case "tool":
                answered.update(
                    part.tool_call_id for part in message.parts if isinstance(part, ToolResultPart)
                )
            case "assistant":
                return [call for call in message.tool_calls if call.id not in answered]
            case "user":
                return []
    return []


def join_results(
    messages: Sequence[Message],
    positions: Sequence[int] | None = None,
    memo: Memo | None = None,
) -> list[Message]:
    """`messages` with exactly one tool message after each assistant message that calls tools,
    holding one result per call in call order, and no other tool message.

    `positions` (one per message, unique) key `memo`, which keeps joined messages between calls.
    A history that needs no change comes back as the same message objects. Runs on every
    request of a long session: the common case (one tool message answering its calls in order)
    is checked with as little work as possible."""
    joined: list[Message] = []
    keep = joined.append
    count = len(messages)
    index = 0
    while index < count:
        message = messages[index]
        index += 1
        role = message.role
        if role == "tool":
            continue  # answers no call of the message before it
        keep(message)
        if role != "assistant":
            continue
        calls = [part for part in message.parts if isinstance(part, ToolCallPart)]
        if not calls:
            continue
        end = index
        while end < count and messages[end].role == "tool":
            end += 1
        if end == index + 1 and _answers_exactly(messages[index], calls):
            keep(messages[index])
        else:
            key = None if positions is None else tuple(positions[index - 1 : end])
            answer = None if memo is None or key is None else memo.get(key)
            if answer is None:
                answer = _answer(calls, messages[index:end])
                if memo is not None and key is not None:
                    memo[key] = answer
            keep(answer)
        index = end
    return joined


def _answers_exactly(message: Message, calls: Sequence[ToolCallPart]) -> bool:
    parts = message.parts
    if len(parts) != len(calls):
        return False
    for part, call in zip(parts, calls, strict=True):
        if not isinstance(part, ToolResultPart) or part.tool_call_id != call.id:
            return False
    return True


def _answer(calls: Sequence[ToolCallPart], run: Sequence[Message]) -> Message:
    results: dict[str, ToolResultPart] = {}
    for message in run:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                results.setdefault(part.tool_call_id, part)
    return Message(
        role="tool",
        parts=[results.get(call.id) or interrupted_result(call) for call in calls],
    )
