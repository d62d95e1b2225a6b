"""The results of a task set: a table for people, JSON for tools (`--json`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from earshot.evals.runner import TaskResult
from earshot.text_safety import terminal_safe


def summary(results: Sequence[TaskResult]) -> dict[str, Any]:
    passed = sum(1 for result in results if result.passed)
    costs = [result.cost_usd for result in results]
    tokens: dict[str, int] = {}
    for result in results:
        for key, value in result.usage.items():
            tokens[key] = tokens.get(key, 0) + value
    return {
        "tasks": len(results),
        "passed": passed,
        "pass_rate": passed / len(results) if results else 0.0,
        "turns": sum(result.turns for result in results),
        "usage": tokens,
        "cache_read_share": _share(tokens),
        "cost_usd": None if any(cost is None for cost in costs) else sum(c or 0.0 for c in costs),
        "agent_ms": sum(result.agent_ms for result in results),
        "total_ms": sum(result.total_ms for result in results),
    }


def to_json(results: Sequence[TaskResult], *, model: str) -> dict[str, Any]:
    return {
        "model": model,
        "summary": summary(results),
        "tasks": [result.to_json() for result in results],
    }


def render_table(results: Sequence[TaskResult], out: TextIO, *, model: str) -> None:
    rows = [("task", "result", "turns", "tokens in/out", "cached", "cost", "time", "note")]
    for result in results:
        note = result.error or ""
        if not note and not result.passed:
            note = _last_line(result.check_output)
        if result.denied:
            note = (note + "; " if note else "") + f"{result.denied} call(s) refused"
        rows.append(
            (
                result.name,
                "PASS" if result.passed else ("ERROR" if result.error else "FAIL"),
                str(result.turns),
                f"{_tokens(result.usage.get('input_tokens', 0))}/"
                f"{_tokens(result.usage.get('output_tokens', 0))}",
                _percent(_share(result.usage)),
                _cost(result.cost_usd),
                f"{result.agent_ms / 1000:.1f}s",
                note[:70],
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        out.write(terminal_safe("  ".join([*cells, row[-1]]).rstrip(), single_line=True) + "\n")
    total = summary(results)
    usage = total["usage"]
    out.write(
        f"\n{model}: {total['passed']}/{total['tasks']} passed ({total['pass_rate']:.0%}), "
        f"{total['turns']} turns, {_tokens(usage.get('input_tokens', 0))} input "
        f"({_percent(total['cache_read_share'])} read from the prompt cache) / "
        f"{_tokens(usage.get('output_tokens', 0))} output tokens, {_cost(total['cost_usd'])}, "
        f"agent time {total['agent_ms'] / 1000:.1f}s\n"
    )


def _last_line(text: str) -> str:
    """The line of a check's output that says what failed: node's first `not ok`, unittest's
    `FAILED (...)`, else the last line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in lines:
        if line.startswith("not ok") or line.startswith("FAILED"):
            return line
    return lines[-1] if lines else ""


def _tokens(count: int) -> str:
    if count < 1_000:
        return str(count)
    return f"{count / 1_000:.1f}k" if count < 1_000_000 else f"{count / 1_000_000:.1f}M"


def _share(usage: dict[str, int]) -> float | None:
    """The share of input tokens read from the provider's prompt cache (None: no input)."""
    sent = usage.get("input_tokens", 0)
    return round(usage.get("cached_input_tokens", 0) / sent, 4) if sent else None


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def _cost(cost: float | None) -> str:
    return "?" if cost is None else f"${cost:.4f}"
