"""What the audited sessions cost: tokens in (how many read from the provider's prompt cache,
how many written to it) and out, and USD, for `earshot audit`.

From the transcripts alone: after each model call a session records its running totals (the
`usage` extension entry, `agent.context.usage`), priced then with the catalog's prices for the model
that made the call, cache reads at the cache-read price and cache writes at the cache-write
price. What a call cost is the difference from the totals recorded before it on its path, and
`--since` counts the calls recorded since. A subagent's calls are already in its parent's
totals, so only top-level sessions count. A cost some price was unknown for stays unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from earshot.transcripts import TranscriptFile
from sessions import ExtensionEntry, extensions

TOKEN_FIELDS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "reasoning_tokens",
)


@dataclass(slots=True)
class Spend:
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_FIELDS, 0))
    cost_usd: float | None = 0.0

    def add(self, other: Spend) -> None:
        for name in TOKEN_FIELDS:
            self.tokens[name] += other.tokens[name]
        if self.cost_usd is not None:
            self.cost_usd = None if other.cost_usd is None else self.cost_usd + other.cost_usd

    @property
    def cache_read_share(self) -> float | None:
        sent = self.tokens["input_tokens"]
        return round(self.tokens["cached_input_tokens"] / sent, 4) if sent else None

    def to_json(self) -> dict[str, Any]:
        return {
            "usage": dict(self.tokens),
            "cache_read_share": self.cache_read_share,
            "cost_usd": self.cost_usd,
        }

    def sentence(self) -> str:
        """`tokens: 1.2M input (91% read from the prompt cache, 40k written to it), 12k output;
        cost $1.23`."""
        t = self.tokens
        share = self.cache_read_share
        cached = "" if share is None else f"{share:.0%} read from the prompt cache, "
        cost = "unknown (a price was)" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        return (
            f"tokens: {_count(t['input_tokens'])} input ({cached}"
            f"{_count(t['cache_write_tokens'])} written to it), {_count(t['output_tokens'])} "
            f"output; cost {cost}"
        )


def _count(tokens: int) -> str:
    if tokens < 1_000:
        return str(tokens)
    return f"{tokens / 1_000:.1f}k" if tokens < 1_000_000 else f"{tokens / 1_000_000:.2f}M"


def _totals(entry: ExtensionEntry) -> Spend | None:
    data = entry.data
    if not isinstance(data, dict):
        return None
    tokens: dict[str, int] = {}
    for name in TOKEN_FIELDS:
        value = data.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        tokens[name] = value
    cost = data.get("cost_usd")
    if cost is not None and (not isinstance(cost, int | float) or isinstance(cost, bool)):
        return None
    return Spend(tokens=tokens, cost_usd=None if cost is None else float(cost))


def session_spend(
    transcript: TranscriptFile, since: str | None = None, copied: frozenset[str] = frozenset()
) -> Spend:
    """One session's spend, every branch of it (since `since`, an ISO timestamp prefix, when
    given). Each usage entry's totals continue those of the last one on its own path, so what
    it adds is the difference, and a branch left by a rewind keeps what it cost. `copied`: the
    ids of entries an earlier session holds (a fork's copy of its source), spent there."""
    spent = Spend()
    last: dict[str, Spend | None] = {}
    """The totals recorded last on the path to each entry."""
    for entry in transcript.entries:
        base = last.get(entry.parent_id) if entry.parent_id is not None else None
        if not isinstance(entry, ExtensionEntry) or entry.name != extensions.USAGE:
            last[entry.id] = base
            continue
        totals = _totals(entry)
        if totals is None:
            last[entry.id] = base
            continue
        last[entry.id] = totals
        if entry.id in copied or (since is not None and entry.ts < since):
            continue
        spent.add(_difference(totals, base))
    return spent


def _difference(totals: Spend, base: Spend | None) -> Spend:
    if base is None:
        return totals
    cost = (
        None
        if totals.cost_usd is None or base.cost_usd is None
        else max(0.0, totals.cost_usd - base.cost_usd)
    )
    tokens = {name: max(0, totals.tokens[name] - base.tokens[name]) for name in TOKEN_FIELDS}
    return Spend(tokens=tokens, cost_usd=cost)


def total_spend(transcripts: Sequence[TranscriptFile], since: str | None = None) -> Spend:
    """The top-level sessions' spend added up, oldest first (a subagent's is in its parent's;
    a fork's copied totals in its source's). `transcripts` with every entry (not deduped)."""
    total = Spend()
    seen: set[str] = set()
    for transcript in transcripts:
        ids = {entry.id for entry in transcript.entries}
        if transcript.header.parent is None:
            total.add(session_spend(transcript, since, frozenset(ids & seen)))
        seen |= ids
    return total
