"""What one `earshot -p` run cost: the `result` line's `turns`, `usage`, `cache_read_share`,
`cost_usd` and `duration_ms` (what `earshot eval` reports per task)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from agent.events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    ToolCallFinished,
    ToolCallRunning,
    UsageUpdated,
)
from providers.types import Usage


class RunMeter:
    """What one print-mode run cost, for the `result` line: the agent's model calls (`turns`),
    the tokens and cost of every model call of the run, and its wall time.

    A turn is a model call of the agent itself: a `UsageUpdated` outside a compaction (whose
    summary call and new context size report usage too) and outside a running top-level call (a
    subagent's calls report while its `task` call runs). Tokens and cost are the session's totals
    now minus the totals before the run (`baseline`: a resumed session starts from its own)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.turns = 0
        self.baseline: UsageUpdated | None = None
        self._compacting = 0
        self._running: set[str] = set()

    def observe(self, event: AgentEvent) -> None:
        match event:
            case CompactionStarted():
                self._compacting += 1
            case CompactionFinished():
                self._compacting = max(0, self._compacting - 1)
            case ToolCallRunning(parent_call_id=None):
                self._running.add(event.call_id)
            case ToolCallFinished(parent_call_id=None):
                self._running.discard(event.call_id)
            case UsageUpdated() if not self._compacting and not self._running:
                self.turns += 1
            case _:
                pass

    def summary(self, latest: UsageUpdated | None) -> dict[str, Any]:
        before = self.baseline
        total = latest.total if latest is not None else Usage()
        start = before.total if before is not None else Usage()
        cost: float | None = 0.0
        if latest is not None:
            earlier = 0.0 if before is None else before.cost_usd
            cost = (
                None
                if latest.cost_usd is None or earlier is None
                else round(latest.cost_usd - earlier, 10)
            )
        usage = {
            field.name: getattr(total, field.name) - getattr(start, field.name)
            for field in dataclasses.fields(Usage)
        }
        read, sent = usage["cached_input_tokens"], usage["input_tokens"]
        return {
            "turns": self.turns,
            "usage": usage,
            # How much of the input the provider read from its prompt cache (priced at its
            # cache-read price in `cost_usd`); null when nothing was sent.
            "cache_read_share": round(read / sent, 4) if sent else None,
            "cost_usd": cost,
            "duration_ms": round((time.monotonic() - self.started) * 1000),
        }
