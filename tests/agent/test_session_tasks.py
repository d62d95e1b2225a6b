"""`agent.tasks.SessionTasks`: the session's block, which owns what outlives a turn."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
import pytest

from agent.tasks import SessionTasks


async def test_what_runs_in_the_block_ends_with_it_after_the_closers_last_first() -> None:
    said: list[str] = []
    started = anyio.Event()

    async def background() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            said.append("background stopped")

    async def closer(name: str) -> None:
        said.append(f"{name} closed")

    with anyio.fail_after(10):
        async with SessionTasks() as tasks:
            tasks.on_close(lambda: closer("first"))
            tasks.on_close(lambda: closer("second"))
            tasks.start_soon(background)
            await started.wait()
            assert tasks.open
    assert said == ["second closed", "first closed", "background stopped"]
    assert not tasks.open


async def test_a_failing_task_or_closer_costs_only_itself() -> None:
    said: list[str] = []

    async def fails() -> None:
        raise OSError("a language server could not start")

    async def broken_closer() -> None:
        raise RuntimeError("closing failed")

    async def closer() -> None:
        said.append("closed")

    with anyio.fail_after(10):
        async with SessionTasks() as tasks:
            tasks.on_close(closer)
            tasks.on_close(broken_closer)
            tasks.start_soon(fails)
            await anyio.wait_all_tasks_blocked()
            said.append("the block goes on")
    assert said == ["the block goes on", "closed"]


async def test_the_blocks_own_exception_is_raised_as_it_was() -> None:
    with pytest.raises(KeyError):
        async with SessionTasks() as tasks:
            tasks.start_soon(anyio.sleep_forever)
            raise KeyError("the session could not be built")


async def test_outside_its_block_nothing_can_start() -> None:
    async def nothing() -> None:
        return None

    with pytest.raises(RuntimeError, match="not in its block"):
        SessionTasks().start_soon(nothing)


async def test_an_entered_context_is_left_in_its_own_task_when_closed_or_at_the_end() -> None:
    said: list[str] = []

    @asynccontextmanager
    async def server(name: str) -> AsyncGenerator[str]:
        # Owns a task group, as a language server manager does: left by the task that entered.
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep_forever)
            yield name
            said.append(f"{name} left")
            group.cancel_scope.cancel()

    with anyio.fail_after(10):
        async with SessionTasks() as tasks:
            first = await tasks.enter(server("one"))
            second = await tasks.enter(server("two"))
            assert (first.value, second.value) == ("one", "two")
            await first.aclose()
            assert said == ["one left"]
    assert said == ["one left", "two left"]


async def test_a_context_that_cannot_be_entered_raises_to_the_caller() -> None:
    @asynccontextmanager
    async def failing() -> AsyncGenerator[None]:
        raise FileNotFoundError("no such language server")
        yield

    with anyio.fail_after(10):
        async with SessionTasks() as tasks:
            with pytest.raises(FileNotFoundError):
                await tasks.enter(failing())
            assert tasks.open  # the block goes on


async def test_a_block_cancelled_while_closing_still_ends_what_runs_in_it() -> None:
    said: list[str] = []
    started = anyio.Event()

    async def background() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            said.append("background stopped")

    with anyio.fail_after(10), anyio.CancelScope() as outer:
        async with SessionTasks() as tasks:

            async def closer() -> None:
                outer.cancel()  # the server gave up waiting for the session to close
                await anyio.sleep_forever()

            tasks.on_close(closer)
            tasks.start_soon(background)
            await started.wait()
    assert outer.cancelled_caught
    assert said == ["background stopped"]
