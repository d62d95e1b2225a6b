"""Prompt caching on the wire (pure: no SDK, no I/O): Anthropic `cache_control` breakpoints, on
the Messages API and on chat bodies a host hands on to Anthropic (OpenRouter), and OpenAI's
`prompt_cache_key` and retention.

Anthropic caches only where a request asks (platform.claude.com, "Prompt caching"): a block
marked `cache_control` writes the prefix up to it (tools, then system, then messages, in that
order); a later request reads a written prefix when one of its breakpoints is at the same
place, or up to 20 blocks after it (the lookback). At most 4 breakpoints (a 400 past that); no
breakpoint on a thinking block or an empty text; a prefix shorter than the model's minimum is
not cached at all. So each request carries:

1. one on the last tool and one on the system prompt (what survives a rewritten history);
2. one on the last block of the request, which writes everything for the next request;
3. one where the previous request ended: the last block before the newest assistant message.
   That is exactly where the previous request's (2) stood, so it reads the longest prefix the
   previous request wrote even when more than 20 blocks were appended since (a batch of
   parallel tool calls).

Every marker carries the session's TTL (`5m`, or `1h` for long, slow sessions). Breakpoints
whose prefix is under the model's minimum are left out.

OpenAI caches every prompt of 1,024 tokens or more by itself (developers.openai.com, "Prompt
caching"); `prompt_cache_key` makes requests with one prefix land where it is cached, and
`prompt_cache_retention: "24h"` keeps it a day on the models that offer both retentions (the
newer ones keep 24 h by default and take nothing else).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, cast
from urllib.parse import urlparse

from providers.types import PromptCache
from providers.wire.vendor_json import JsonDict

MAX_BREAKPOINTS: Final = 4
"""The API answers 400 to a request with more."""
LOOKBACK_BLOCKS: Final = 20
"""How far before a breakpoint the cache looks for a prefix written earlier."""
DEFAULT_MINIMUM_TOKENS: Final = 1024
"""A model the table below does not know: the most common minimum. Guessing low only risks
a breakpoint that caches nothing; guessing high would leave a cacheable prefix uncached."""
_CHARS_PER_TOKEN_GENEROUS: Final = 3
"""Prefix sizes are estimated from JSON characters, generously (fewer characters a token than
text usually takes): a breakpoint on a prefix just under the minimum costs nothing, one left
off a prefix just over it costs a whole prefix."""

_MINIMUM_TOKENS: Final[tuple[tuple[re.Pattern[str], int], ...]] = tuple(
    (re.compile(pattern), tokens)
    for pattern, tokens in (
        # platform.claude.com "Prompt caching", cache limitations (2026-12): the minimum
        # cacheable prompt length per model (dotted: OpenRouter's spelling of the ids).
        (r"claude-(opus|fable|mythos)-5", 512),
        (r"claude-(opus-4[-.][56]|haiku-4[-.]5)", 4096),
        (r"claude-opus-4[-.]7", 2048),
        (r"claude-(3[-.]5-haiku|3-haiku|haiku-3)", 2048),
    )
)

_EXTENDED_RETENTION: Final = re.compile(
    # developers.openai.com "Prompt caching", prompt cache retention: the models that take
    # both `in_memory` and `24h` (gpt-5.5 and later keep 24 h and refuse `in_memory`).
    r"(gpt-5\.4|gpt-5\.3-codex|gpt-5\.2|gpt-5\.1-codex-max|gpt-5\.1|gpt-5\.1-codex"
    r"|gpt-5\.1-codex-mini|gpt-5\.1-chat-latest|gpt-5\.1-chat|gpt-5|gpt-5-codex|gpt-4\.1)"
    r"(-\d{4}-\d{2}-\d{2})?"
)
_UNCACHEABLE_BLOCKS: Final = frozenset({"thinking", "redacted_thinking"})


def minimum_cacheable_tokens(model_id: str) -> int:
    """The shortest prefix `model_id` caches (Anthropic's table; OpenRouter ids too)."""
    for pattern, tokens in _MINIMUM_TOKENS:
        if pattern.search(model_id):
            return tokens
    return DEFAULT_MINIMUM_TOKENS


def cache_control(cache: PromptCache) -> JsonDict:
    """One breakpoint's marker."""
    return {"type": "ephemeral", "ttl": cache.ttl}


def _size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


class _Prefix:
    """The estimated size of the prompt up to each place a breakpoint may go, counted only as
    far as the model's minimum needs (a long history is not serialised for this)."""

    def __init__(self, minimum_tokens: int) -> None:
        self._needed = minimum_tokens * _CHARS_PER_TOKEN_GENEROUS
        self._chars = 0

    def add(self, value: object) -> None:
        if self._chars < self._needed:
            self._chars += _size(value)

    @property
    def enough(self) -> bool:
        return self._chars >= self._needed


# ----------------------------------------------------------------------- the Messages API


def anthropic_breakpoints(params: JsonDict, model_id: str, cache: PromptCache) -> None:
    """Mark the breakpoints of a Messages API body, in place (`params` was built for this one
    request). The system prompt becomes a one-block list so that it can carry a marker."""
    marker = cache_control(cache)
    prefix = _Prefix(minimum_cacheable_tokens(model_id))
    marks: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = params.get("tools") or []
    for tool in tools:
        prefix.add(tool)
    if tools and prefix.enough:
        marks.append(tools[-1])
    system = params.get("system")
    if isinstance(system, str) and system:
        block: dict[str, Any] = {"type": "text", "text": system}
        params["system"] = [block]
        prefix.add(block)
        if prefix.enough:
            marks.append(block)
    messages: list[dict[str, Any]] = params.get("messages") or []
    anchors = _message_anchors(messages, lambda message: message["content"], prefix)
    for anchor in anchors[: MAX_BREAKPOINTS - len(marks)]:
        marks.append(anchor)
    for mark in marks:
        mark["cache_control"] = dict(marker)


def _message_anchors(
    messages: Sequence[dict[str, Any]],
    blocks_of: Callable[[dict[str, Any]], list[dict[str, Any]]],
    prefix: _Prefix,
) -> list[dict[str, Any]]:
    """The blocks that take the sliding breakpoints, newest first: the last block of the request
    and the last block before its newest assistant message (where the previous request ended).
    Each only where its prefix is long enough to cache."""
    wanted: list[int] = []
    if messages:
        wanted.append(len(messages) - 1)
    roles = [message.get("role") for message in messages]
    if "assistant" in roles:
        last_assistant = len(roles) - 1 - roles[::-1].index("assistant")
        previous_end = next(
            (i for i in range(last_assistant - 1, -1, -1) if roles[i] != "assistant"), None
        )
        if previous_end is not None and previous_end not in wanted:
            wanted.append(previous_end)
    anchors: list[tuple[int, dict[str, Any]]] = []
    for index in sorted(wanted):
        block = _last_cacheable(blocks_of(messages[index]))
        if block is not None:
            anchors.append((index, block))
    if not anchors:
        return []
    # Only the prefix up to the later anchor matters for the minimum; count in order.
    ok: list[dict[str, Any]] = []
    position = 0
    for index, block in anchors:
        while position <= index:
            prefix.add(messages[position].get("content"))
            position += 1
        if prefix.enough:
            ok.append(block)
    ok.reverse()
    return ok


def _last_cacheable(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last block that may carry a marker (no thinking block, no empty text)."""
    for block in reversed(blocks):
        if block.get("type") in _UNCACHEABLE_BLOCKS:
            continue
        if block.get("type") == "text" and not str(block.get("text") or "").strip():
            continue
        return block
    return None


# ------------------------------------------------------------- chat bodies for Anthropic


def is_anthropic_via_chat(model_id: str, provider_id: str, base_url: str | None) -> bool:
    """A Claude model behind an OpenAI-compatible host that hands `cache_control` on content
    parts through to Anthropic (OpenRouter: openrouter.ai/docs, "Prompt caching")."""
    host = (urlparse(base_url).hostname or "") if base_url else ""
    via_openrouter = provider_id == "openrouter" or host == "openrouter.ai"
    return via_openrouter and model_id.startswith("anthropic/")


def chat_breakpoints(params: JsonDict, model_id: str, cache: PromptCache) -> None:
    """Mark the breakpoints of a Chat Completions body bound for Anthropic, in place: on the
    system message and the two sliding anchors (Anthropic puts the tools before the system
    prompt, so the system breakpoint caches them too). String contents become one text part,
    the form that can carry a marker."""
    marker = cache_control(cache)
    prefix = _Prefix(minimum_cacheable_tokens(model_id))
    tools: list[dict[str, Any]] = params.get("tools") or []
    for tool in tools:
        prefix.add(tool)
    messages: list[dict[str, Any]] = params.get("messages") or []
    marks: list[dict[str, Any]] = []
    start = 0
    if messages and messages[0].get("role") == "system":
        prefix.add(messages[0].get("content"))
        part = _parts(messages[0])[-1:]
        if part and prefix.enough:
            marks.append(part[0])
        start = 1
    rest = messages[start:]
    anchors = _message_anchors(rest, _parts, prefix)
    marks.extend(anchors[: MAX_BREAKPOINTS - len(marks)])
    for mark in marks:
        mark["cache_control"] = dict(marker)


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The message's content as a list of parts, converting a string in place."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return []
        parts: list[dict[str, Any]] = [{"type": "text", "text": content}]
        message["content"] = parts
        return parts
    return cast("list[dict[str, Any]]", content) if isinstance(content, list) else []


# ----------------------------------------------------------------------------- OpenAI


def openai_cache_fields(
    model_id: str, cache: PromptCache | None, *, provider_id: str, base_url: str | None
) -> JsonDict:
    """`prompt_cache_key`, and the 24 h retention where the model offers it: for OpenAI only
    (the `openai` provider, wherever its base URL points, or OpenAI's own host), since other
    compatible hosts may reject parameters they do not know."""
    if cache is None:
        return {}
    host = (urlparse(base_url).hostname or "") if base_url else "api.openai.com"
    if provider_id != "openai" and host != "api.openai.com":
        return {}
    fields: JsonDict = {}
    if cache.key:
        fields["prompt_cache_key"] = cache.key
    if _EXTENDED_RETENTION.fullmatch(model_id):
        fields["prompt_cache_retention"] = "24h"
    return fields
