"""`acp_server.pending.PendingSessions` in process: the waits behind a session promised at
start-up, which the subprocess tests cannot pin down (they race the real build)."""

from __future__ import annotations

import anyio
import pytest

from acp_server.pending import BuildWait, PendingSessions


async def test_requests_wait_for_the_build_and_then_go_on() -> None:
    pending = PendingSessions()
    pending.promise("s1")
    assert pending.prompt_wait("s2") is None  # not promised: nothing to wait for
    results: list[str] = []

    async def request(name: str) -> None:
        await pending.wait("s1")
        results.append(name)

    async def prompt() -> None:
        wait = pending.prompt_wait("s1")
        assert wait is not None
        results.append(f"prompt went on: {await wait.wait()}")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(request, "set_mode")
            task_group.start_soon(prompt)
            await anyio.wait_all_tasks_blocked()
            assert results == []
            pending.built("s1")
    assert sorted(results) == ["prompt went on: True", "set_mode"]
    # Built sessions are not pending any more: nothing waits.
    assert pending.prompt_wait("s1") is None
    await pending.wait("s1")


async def test_a_failed_build_is_reported_to_every_request_until_forgotten() -> None:
    pending = PendingSessions()
    pending.promise("s1")
    failure = OSError("cannot create the transcript")
    pending.failed("s1", failure)
    for _ in range(2):
        with pytest.raises(OSError) as caught:
            await pending.wait("s1")
        assert caught.value is failure
    wait = pending.prompt_wait("s1")
    assert wait is not None
    with pytest.raises(OSError):
        await wait.wait()
    pending.forget("s1")
    assert pending.prompt_wait("s1") is None
    await pending.wait("s1")


async def test_session_cancel_ends_only_that_sessions_prompt_waits() -> None:
    pending = PendingSessions()
    pending.promise("s1")
    pending.promise("s2")
    outcomes: dict[str, bool] = {}

    async def prompt(session_id: str, key: str) -> None:
        wait = pending.prompt_wait(session_id)
        assert wait is not None
        outcomes[key] = await wait.wait()

    async def other_request() -> None:
        await pending.wait("s1")
        outcomes["set_mode on s1"] = True

    with anyio.fail_after(5):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(prompt, "s1", "prompt on s1")
            task_group.start_soon(prompt, "s2", "prompt on s2")
            task_group.start_soon(other_request)
            await anyio.wait_all_tasks_blocked()
            pending.cancel_prompts("s1")
            await anyio.wait_all_tasks_blocked()
            assert outcomes == {"prompt on s1": False}
            pending.built("s1")
            pending.built("s2")
    assert outcomes == {"prompt on s1": False, "prompt on s2": True, "set_mode on s1": True}


async def test_one_prompt_wait_cancelled_alone_and_all_at_input_close() -> None:
    pending = PendingSessions()
    pending.promise("s1")
    first, second, third = (pending.prompt_wait("s1") for _ in range(3))
    assert first is not None and second is not None and third is not None
    outcomes: list[tuple[str, bool]] = []

    async def run(name: str, wait_for: BuildWait) -> None:
        outcomes.append((name, await wait_for.wait()))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(run, "first", first)
            task_group.start_soon(run, "second", second)
            task_group.start_soon(run, "third", third)
            await anyio.wait_all_tasks_blocked()
            first.cancel()  # `$/cancel_request` for that one prompt
            await anyio.wait_all_tasks_blocked()
            assert outcomes == [("first", False)]
            pending.cancel_prompts()  # the input closed
    assert sorted(outcomes) == [("first", False), ("second", False), ("third", False)]
    pending.built("s1")
    await pending.wait_all()
