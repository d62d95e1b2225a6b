"""Context shapers: what the model is sent, derived from the history without rewriting it.

The loop has one call site, `await shaper.prepare(history, ctx)` before each model call, and one
recovery hook, `await shaper.compact_for_overflow(...)` when a call overflowed the window. Today
`prepare` only caps each tool result's text; pruning old results and auto-compaction belong here
too (cheapest first), and slot in behind the same two calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from providers.types import Message, ProviderError, TextPart, ToolResultContent, ToolResultPart

if TYPE_CHECKING:
    from agent.events import AgentEvent
    from providers.catalog import ModelInfo
    from providers.model import Model
    from sessions import Session

DEFAULT_TOOL_RESULT_LIMIT = 40_000
"""Characters of one tool result's text sent to the model (~10k tokens)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ShapeContext:
    """What a shaper may consult about the call about to be made."""

    model: Model
    model_info: ModelInfo | None
    context_tokens: int
    """What the previous call reported occupying (0 before the first call)."""
    emit: Callable[[AgentEvent], None]
    """For compaction events."""
    session: Session | None
    """Where a compaction is recorded; None for a subagent, whose history is not persisted."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionResult:
    ok: bool
    summary: str = ""
    error: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None


class ContextShaper:
    """Turns a session's history into the messages of the next request."""

    def __init__(self, *, tool_result_limit: int = DEFAULT_TOOL_RESULT_LIMIT) -> None:
        self.tool_result_limit = tool_result_limit

    async def prepare(self, history: Sequence[Message], ctx: ShapeContext) -> list[Message]:
        """The messages to send for the next call. The loop calls this before every call."""
        return self.shape(history)

    def shape(self, history: Sequence[Message]) -> list[Message]:
        """Cap every tool result's text at `tool_result_limit` characters, saying what was cut.
        Messages that need no change are passed through as the same objects."""
        limit = self.tool_result_limit
        shaped: list[Message] = []
        for message in history:
            if message.role != "tool" or not _any_over(message, limit):
                shaped.append(message)
                continue
            parts = [
                cap_tool_result(part, limit) if isinstance(part, ToolResultPart) else part
                for part in message.parts
            ]
            shaped.append(replace(message, parts=parts))
        return shaped

    async def compact_for_overflow(
        self, history: Sequence[Message], ctx: ShapeContext, error: ProviderError
    ) -> bool:
        """The last call overflowed the context window: shorten what `prepare` will return.

        Returns True when something was shortened (the loop then retries once), False when
        nothing could be (the turn ends with a clear error).
        """
        return False

    async def compact(
        self, history: Sequence[Message], ctx: ShapeContext, *, instructions: str | None = None
    ) -> CompactionResult:
        """Summarise the conversation now (the `/compact` command)."""
        return CompactionResult(ok=False, error="compaction is not available yet")


def _any_over(message: Message, limit: int) -> bool:
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            for content in part.content:
                if isinstance(content, TextPart) and len(content.text) > limit:
                    return True
    return False


def cap_tool_result(part: ToolResultPart, limit: int) -> ToolResultPart:
    """`part` with each text longer than `limit` cut to its head and tail around a note that
    says how much was cut (the model must know it is not seeing everything)."""
    content: list[ToolResultContent] = []
    changed = False
    for item in part.content:
        if isinstance(item, TextPart) and len(item.text) > limit:
            content.append(replace(item, text=cap_text(item.text, limit)))
            changed = True
        else:
            content.append(item)
    if not changed:
        return part
    return replace(part, content=content)


def cap_text(text: str, limit: int) -> str:
    """Head and tail of `text` within about `limit` characters, with the cut stated."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    note = (
        f"\n[... {cut} characters cut here: the result was {len(text)} characters, "
        f"more than the {limit} sent to the model ...]\n"
    )
    return text[:head] + note + (text[-tail:] if tail else "")
