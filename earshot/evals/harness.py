"""Running a task set: locally with `--jobs N` concurrent runs, or on Ray."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import anyio

from earshot.evals.runner import TaskResult, run_task
from earshot.evals.tasks import TaskPayload


async def run_local(
    payloads: Sequence[TaskPayload],
    *,
    jobs: int = 1,
    on_result: Callable[[TaskResult], None] | None = None,
) -> list[TaskResult]:
    """Every payload, at most `jobs` at a time; results in the payloads' order."""
    limiter = anyio.CapacityLimiter(max(1, jobs))
    results: list[TaskResult | None] = [None] * len(payloads)

    async def one(index: int, task: TaskPayload) -> None:
        async with limiter:
            result = await run_task(task)
        results[index] = result
        if on_result is not None:
            on_result(result)

    async with anyio.create_task_group() as group:
        for index, task in enumerate(payloads):
            group.start_soon(one, index, task)
    return [result for result in results if result is not None]
