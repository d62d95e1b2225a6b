"""Token usage and cost a user can see: per call, session totals, and the context against the
window.

Usage arrives already normalised by the wire adapters (`providers.types.Usage`: input includes
cached reads and cache writes, output includes reasoning). Cost comes from the catalog's prices
(`providers.catalog.cost_usd`): cached input at the cache-read price, cache writes at the
cache-write price. A price that is unknown makes the cost unknown (None) from then on; it is never
shown as zero, because "free" and "we do not know" look the same on a status line and are not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field, fields
from typing import Protocol

from agent.events import AgentEvent, UsageUpdated
from providers.catalog import ModelInfo, cost_usd
from providers.records import MutableRecord
from providers.types import JsonValue, Usage
from sessions import Entry, ExtensionEntry, extensions

_USAGE_FIELDS = tuple(f.name for f in fields(Usage))


def call_cost(info: ModelInfo | None, usage: Usage) -> float | None:
    """USD for one call: None when the model or a price this usage needs is unknown; 0.0 only
    when the call used no tokens."""
    if usage.input_tokens == 0 and usage.output_tokens == 0:
        return 0.0
    if info is None:
        return None
    return cost_usd(info, usage)


class UsageTracker(MutableRecord, kw_only=False):
    """A session's running totals; `record` turns each call into a `UsageUpdated` event.

    `model_info` is the current model's (it changes with `/model`), so each call is priced at the
    model that made it. A completed call whose provider reported no usage makes the cost unknown:
    it cost something nobody counted. (A call that failed without usage was most likely not
    billed; callers do not record it.)
    """

    model_info: ModelInfo | None = None
    total: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    """USD so far; None once any call could not be priced."""
    context_tokens: int = 0
    """What the latest request occupied, or the estimate of the next one."""
    calls: int = 0

    @property
    def context_window(self) -> int | None:
        info = self.model_info
        return info.context_window if info is not None else None

    def record(self, usage: Usage | None, *, context_tokens: int | None = None) -> UsageUpdated:
        """Account one completed model call (`usage` None: the provider reported none) and, if
        given, the context size it leaves; returns the event for the front end."""
        call = usage or Usage()
        self.calls += 1
        self.total = self.total + call
        if self.cost_usd is not None:
            price = None if usage is None else call_cost(self.model_info, usage)
            self.cost_usd = None if price is None else self.cost_usd + price
        if context_tokens is not None:
            self.context_tokens = context_tokens
        return self.event(call)

    def context_changed(self, context_tokens: int) -> UsageUpdated:
        """The context shrank or grew without a model call (a compaction): the new size."""
        self.context_tokens = context_tokens
        return self.event(Usage())

    def snapshot(self) -> ExtensionEntry:
        """The totals as a transcript entry: resuming restores them, so a cost meter continues
        instead of starting again from zero."""
        data: dict[str, JsonValue] = {name: getattr(self.total, name) for name in _USAGE_FIELDS}
        data["cost_usd"] = self.cost_usd
        data["context_tokens"] = self.context_tokens
        return ExtensionEntry(name=extensions.USAGE, data=data)

    def restore(self, entries: Sequence[Entry]) -> None:
        """Take the totals of the latest usage entry in `entries` (a session's current path);
        nothing changes without one or when it is malformed."""
        for entry in reversed(entries):
            if isinstance(entry, ExtensionEntry) and entry.name == extensions.USAGE:
                restored = _totals_from_json(entry.data)
                if restored is not None:
                    self.total, self.cost_usd, self.context_tokens = restored
                return

    def event(self, call: Usage) -> UsageUpdated:
        info = self.model_info
        return UsageUpdated(
            call=call,
            total=self.total,
            context_tokens=self.context_tokens,
            context_window=self.context_window,
            cost_usd=self.cost_usd,
            context_window_assumed=info is not None and info.window_assumed,
        )


class _Observer(Protocol):
    """`agent.context.shaper.ContextShaper.observe`: pairs a call's usage with the request it
    measured and says how much context that call occupied."""

    def __call__(self, usage: Usage | None, /) -> int: ...


class SessionUsage:
    """A session's usage as its turns report it: every model call (a subagent's too) is counted,
    announced (`UsageUpdated`) and its totals recorded in the transcript, so a resumed session
    continues them."""

    def __init__(
        self,
        tracker: UsageTracker,
        *,
        observe: _Observer,
        info: Callable[[], ModelInfo | None],
        record: Callable[[ExtensionEntry], Awaitable[None]],
        announce: Callable[[AgentEvent], None],
    ) -> None:
        self.tracker = tracker
        self._observe = observe
        self._info = info
        self._record = record
        self._announce = announce

    async def model_call(self, usage: Usage | None, context_tokens: int) -> None:
        """One of the session's own model calls."""
        # Looked up again: a server may have reported the model's window since.
        self.tracker.model_info = self._info()
        context = self._observe(usage)
        self._announce(self.tracker.record(usage, context_tokens=context))
        await self.persist()

    async def subagent_call(self, usage: Usage | None) -> None:
        """A subagent's model call: it counts towards the session's total and cost."""
        self._announce(self.tracker.record(usage))
        await self.persist()

    async def persist(self) -> None:
        await self._record(self.tracker.snapshot())

    def so_far(self) -> UsageUpdated | None:
        """The totals as they stand (restored on resume), as a model call reports them; None
        while nothing has been counted (a new session)."""
        event = self.tracker.event(Usage())
        if event.total == Usage() and event.context_tokens == 0:
            return None
        return event


def _totals_from_json(data: JsonValue) -> tuple[Usage, float | None, int] | None:
    if not isinstance(data, dict):
        return None
    counts: dict[str, int] = {}
    for name in (*_USAGE_FIELDS, "context_tokens"):
        value = data.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        counts[name] = value
    cost = data.get("cost_usd")
    if cost is not None and (not isinstance(cost, int | float) or isinstance(cost, bool)):
        return None
    context_tokens = counts.pop("context_tokens")
    total = Usage(**counts)
    return total, None if cost is None else float(cost), context_tokens


def format_tokens(count: int) -> str:
    """`812`, `12.3k`, `1.2M`: a token count short enough for a status line."""
    if count < 1_000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1_000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


def format_cost(cost_usd: float | None) -> str:
    """`$0.0123`, `$1.23`, or `cost unknown` (an unknown price is never shown as free)."""
    if cost_usd is None:
        return "cost unknown"
    return f"${cost_usd:.4f}" if cost_usd < 1 else f"${cost_usd:.2f}"


def usage_summary(event: UsageUpdated) -> str:
    """One line for a person: the session's tokens in and out, the context against the window,
    and the cost so far, e.g. `tokens 12.3k in (8k cached) / 1.2k out, context 9.9k/16k (62%),
    $0.0123`. What is unknown says so (`window unknown`, `cost unknown`)."""
    total = event.total
    cached = f" ({format_tokens(total.cached_input_tokens)} cached)"
    tokens = (
        f"tokens {format_tokens(total.input_tokens)} in"
        + (cached if total.cached_input_tokens else "")
        + f" / {format_tokens(total.output_tokens)} out"
    )
    window = event.context_window
    if window:
        share = round(100 * event.context_tokens / window)
        assumed = ", window assumed" if event.context_window_assumed else ""
        context = (
            f"context {format_tokens(event.context_tokens)}/{format_tokens(window)} "
            f"({share}%{assumed})"
        )
    else:
        context = f"context {format_tokens(event.context_tokens)} (window unknown)"
    return f"{tokens}, {context}, {format_cost(event.cost_usd)}"
