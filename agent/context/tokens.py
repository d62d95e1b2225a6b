"""How big a request is, in tokens, without a tokenizer.

Two layers. `TokenCounter` estimates messages with a characters-per-token heuristic (about four
characters a token for English and code, a flat charge per image) and remembers each message's
estimate by identity: a session's history hands back the same `Message` objects on every call, so
after the first call estimating a 2,000-message history is one dictionary lookup per message.

`ContextAccount` turns estimates into the figure context shaping acts on. What a provider reports
(the input plus output tokens of the last call) is the ground truth; only what changed since is
estimated. The estimate therefore never drifts further than one call's worth of appended
messages, however long the session. The reports also calibrate the heuristic: a model whose
tokenizer counts more than four characters a token (code on some tokenizers, non-English text)
has what was added since scaled by the ratio its last sizeable report showed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, NamedTuple

from providers.types import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

CHARS_PER_TOKEN: Final = 4
"""English prose and code average 3.5 to 4.5 characters a token across vendors' tokenizers."""
IMAGE_TOKENS: Final = 1_600
"""One image. Anthropic charges about (width x height) / 750, capped near 1,600 for a
1.15-megapixel image; OpenAI's high detail tops out lower and Gemini lower still. The largest
keeps the estimate on the side of compacting early rather than overflowing."""
MESSAGE_OVERHEAD: Final = 4
"""Role markers and separators every vendor adds around a message."""
PART_OVERHEAD: Final = 8
"""A tool call's or result's id, name and framing."""

_CACHE_SLACK: Final = 1_024
_NO_IDS: Final[frozenset[str]] = frozenset()
_COMPACT_JSON: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Built once: `json.dumps` with options builds an encoder on every call."""
CALIBRATION_MIN_TOKENS: Final = 2_000
"""Requests smaller than this do not calibrate the estimate: what a vendor adds unseen (a tool-use
system prompt of a few hundred tokens) would dominate the ratio."""
CALIBRATION_MAX: Final = 3.0
"""The largest reported/estimated ratio believed (about one character a token)."""


def text_tokens(text: str) -> int:
    """Estimated tokens of a piece of text (rounded up)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def part_tokens(part: Part) -> int:
    """Estimated tokens of one part."""
    match part:
        case TextPart():
            return text_tokens(part.text)
        case ReasoningPart():
            # Opaque blobs (signatures, encrypted reasoning) are not counted: vendors bill the
            # reasoning they stand for, if at all, not the characters of the blob.
            return text_tokens(part.text)
        case ImagePart():
            return IMAGE_TOKENS
        case ToolCallPart():
            arguments = (
                part.invalid_arguments
                if part.invalid_arguments is not None
                else _COMPACT_JSON.encode(part.arguments)
            )
            return PART_OVERHEAD + text_tokens(part.name) + text_tokens(arguments)
        case ToolResultPart():
            return PART_OVERHEAD + result_content_tokens(part)
        case _:
            return 0


def result_content_tokens(part: ToolResultPart) -> int:
    """Estimated tokens of a tool result's content (without its framing)."""
    total = 0
    for item in part.content:
        total += IMAGE_TOKENS if isinstance(item, ImagePart) else text_tokens(item.text)
    return total


def tool_spec_tokens(tools: Sequence[ToolSpec]) -> int:
    """Estimated tokens the tool definitions add to every request."""
    total = 0
    for tool in tools:
        schema = json.dumps(tool.input_schema, separators=(",", ":"))
        total += PART_OVERHEAD + text_tokens(tool.name + tool.description + schema)
    return total


# The two records below are immutable named tuples rather than frozen dataclasses: one is built
# for every message the first time it is seen (2,000 on the first call after a resume), and a
# tuple is built in a tenth of the time.


class ResultSize(NamedTuple):
    """One tool result part of a message, as the pruner sees it."""

    call_id: str
    name: str
    tokens: int
    """Content tokens (without the part's framing)."""


class MessageEstimate(NamedTuple):
    message: Message
    """Held so the id it is keyed by cannot be reused by another object while cached."""
    total: int
    results: tuple[ResultSize, ...]
    """Each tool result part, in order (empty for other messages)."""
    result_ids: frozenset[str]
    result_tokens: int
    """All tool result content tokens of the message."""


class TokenCounter:
    """Estimates messages, remembering each message's estimate by identity.

    Messages are immutable, so an estimate never goes stale; a different object with equal
    content is simply estimated again. The cache keeps the messages it has seen alive, and is
    trimmed to the current history when it grows well beyond it.
    """

    def __init__(self) -> None:
        self._cache: dict[int, MessageEstimate] = {}

    def message(self, message: Message) -> int:
        """Estimated tokens of one message."""
        cached = self._cache.get(id(message))
        if cached is not None and cached.message is message:
            return cached.total
        return self._estimate(message).total

    def result_tokens(self, message: Message) -> tuple[int, ...]:
        """Content tokens of each tool result part of `message`, in order."""
        return tuple(result.tokens for result in self.estimate(message).results)

    def estimate(self, message: Message) -> MessageEstimate:
        """Everything known about `message`'s size (cached)."""
        cached = self._cache.get(id(message))
        if cached is not None and cached.message is message:
            return cached
        return self._estimate(message)

    def messages(self, messages: Sequence[Message]) -> int:
        """Estimated tokens of a list of messages."""
        cache = self._cache
        total = 0
        for message in messages:
            cached = cache.get(id(message))
            if cached is not None and cached.message is message:
                total += cached.total
            else:
                total += self._estimate(message).total
        if len(cache) > 2 * len(messages) + _CACHE_SLACK:
            self._trim(messages)
        return total

    def _estimate(self, message: Message) -> MessageEstimate:
        total = MESSAGE_OVERHEAD
        results: list[ResultSize] = []
        result_tokens = 0
        for part in message.parts:
            if type(part) is TextPart:  # the common case first, without the match below
                total += (len(part.text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
            elif isinstance(part, ToolResultPart):
                content = result_content_tokens(part)
                results.append(ResultSize(part.tool_call_id, part.name, content))
                result_tokens += content
                total += PART_OVERHEAD + content
            else:
                total += part_tokens(part)
        if results:
            estimate = MessageEstimate(
                message,
                total,
                tuple(results),
                frozenset([r.call_id for r in results]),
                result_tokens,
            )
        else:
            estimate = MessageEstimate(message, total, (), _NO_IDS, 0)
        self._cache[id(message)] = estimate
        return estimate

    def _trim(self, keep: Sequence[Message]) -> None:
        wanted = {id(message) for message in keep}
        self._cache = {key: value for key, value in self._cache.items() if key in wanted}


def request_overhead(system: str, tools: Sequence[ToolSpec]) -> int:
    """Estimated tokens of what every request carries besides its messages."""
    return text_tokens(system) + tool_spec_tokens(tools)


class ContextAccount:
    """How many tokens the next request will occupy: the last reported usage, corrected by an
    estimate of what changed since.

    `record` is told about every call (the messages sent and what the provider reported). For
    the next request, `estimate` takes the reported `input + output` of that call and adds the
    estimated difference between the messages now and the messages then, except the reply to
    that call, which its output tokens already counted. Shaping maps messages one to one (a
    capped or pruned result replaces its message in place), so "the reply" is simply the message
    at the position after the last one sent. Without a usable report (none yet, none given, or
    the history no longer extends what was sent) it is a plain estimate.

    Either way the estimated part is scaled by `ratio`: the provider's count of the last sizeable
    request over the estimate of it (never below 1, so a tokenizer that counts less than the
    heuristic only makes compaction a little early, never late).
    """

    def __init__(self, counter: TokenCounter | None = None) -> None:
        self.counter = counter or TokenCounter()
        self._reported: int | None = None
        self._sent_count = 0
        self._sent_last: Message | None = None
        self._sent_tokens = 0
        self.ratio = 1.0
        """The provider's tokens per estimated token, learned from reports (1.0 until then)."""

    def record(self, sent: Sequence[Message], usage: Usage | None, *, overhead: int = 0) -> int:
        """Account one model call: `sent` is the request's messages, `overhead` the estimated
        tokens of its system prompt and tools. Returns the context the call occupied (reported,
        or estimated when the provider reported nothing)."""
        sent_tokens = self.counter.messages(sent) + overhead
        if usage is None or usage.input_tokens <= 0:
            # No report (or a failure before any): keep the older anchor, it is still sound.
            return self.scaled(sent_tokens)
        if sent_tokens >= CALIBRATION_MIN_TOKENS:
            self.ratio = min(CALIBRATION_MAX, max(1.0, usage.input_tokens / sent_tokens))
        self._reported = usage.input_tokens + usage.output_tokens
        self._sent_count = len(sent)
        self._sent_last = sent[-1] if sent else None
        self._sent_tokens = sent_tokens
        return self._reported

    def estimate(self, messages: Sequence[Message], *, overhead: int = 0) -> int:
        """Tokens `messages` (plus `overhead`) are expected to occupy, in the provider's count."""
        counter = self.counter
        current = counter.messages(messages) + overhead
        reported = self._reported
        count = self._sent_count
        if reported is None or len(messages) < count:
            return self.scaled(current)
        if count and messages[count - 1] is not self._sent_last:
            return self.scaled(current)
        delta = current - self._sent_tokens
        if len(messages) > count and messages[count].role == "assistant":
            delta -= counter.message(messages[count])
        return max(0, reported + self.scaled(delta))

    def scaled(self, tokens: int) -> int:
        """`tokens` of the heuristic in the provider's count, as far as reports have shown it."""
        return tokens if self.ratio == 1.0 else int(tokens * self.ratio + 0.5)

    def reset(self) -> None:
        """Forget the last report (after a compaction, the request it measured is gone). The
        ratio is kept: it describes the model's tokenizer, not one request."""
        self._reported = None
        self._sent_count = 0
        self._sent_last = None
        self._sent_tokens = 0

    def forget(self) -> None:
        """Forget everything reports taught (another model, another tokenizer)."""
        self.reset()
        self.ratio = 1.0
