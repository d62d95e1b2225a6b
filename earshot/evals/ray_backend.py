"""`earshot eval --ray ADDRESS`: the task runs fanned out over a Ray cluster.

Each task's payload (files by value, `tasks.TaskPayload`) goes to a Ray task that runs it with
the same code as a local run (`runner.run_task_sync`) on whichever worker Ray picks, one CPU
each. The workers need earshot installed (its `python -m earshot` runs the agent) and, for a
real model, the provider keys in their environment; nothing is copied but the task itself.

Ray is an optional extra (`pip install 'earshot-agent[ray]'`), imported only here and only when
`--ray` is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from earshot.evals.runner import TaskResult, run_task_sync
from earshot.evals.tasks import TaskPayload

RAY_MISSING = (
    "--ray needs Ray, which is not installed: pip install 'earshot-agent[ray]' (or `pip install "
    "ray`) in earshot's environment"
)


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


def run_on_ray(
    payloads: Sequence[TaskPayload],
    address: str,
    *,
    on_result: Callable[[TaskResult], None] | None = None,
) -> list[TaskResult]:
    """Run every payload as a Ray task; results in the payloads' order. `address` is what
    `ray.init` takes (`auto`, `ray://host:10001`...), or `local` for a Ray instance started
    here. A process that already joined a cluster (`ray.init` was called) uses it.

    Raises:
        RayUnavailable: Ray is missing or the cluster cannot be joined.
    """
    import importlib

    try:
        # By name: Ray is optional, so type checks must not need it installed.
        ray_api: Any = importlib.import_module("ray")
    except ImportError:
        raise RayUnavailable(RAY_MISSING) from None
    if not ray_api.is_initialized():
        try:
            if address == "local":
                ray_api.init(include_dashboard=False, log_to_driver=False)
            else:
                ray_api.init(address=address, log_to_driver=False)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
            raise RayUnavailable(f"cannot join the Ray cluster at {address}: {exc}") from None
    remote = ray_api.remote(num_cpus=1, max_retries=0)(run_task_sync)
    pending = {remote.remote(payload): index for index, payload in enumerate(payloads)}
    results: list[TaskResult | None] = [None] * len(payloads)
    waiting = list(pending)
    while waiting:
        done, waiting = ray_api.wait(waiting, num_returns=1)
        for ref in done:
            index = pending[ref]
            try:
                result: TaskResult = ray_api.get(ref)
            except Exception as exc:  # a worker that died: the task failed, the rest go on
                result = TaskResult(
                    name=payloads[index].name, passed=False, error=f"Ray task failed: {exc}"
                )
            results[index] = result
            if on_result is not None:
                on_result(result)
    return [result for result in results if result is not None]
