"""`acp_server.session_table` in process: the slot every request for a session goes through, with
a stand-in for the session (the table only builds, cancels and closes it) and a host that holds
it as `acp_server.opening` does (without the block: the table only runs hosts)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

import anyio
import anyio.abc
import pytest

from acp_server.errors import UnknownSession
from acp_server.params import SessionSetup
from acp_server.session_table import SessionSlot, SessionTable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from acp_server.live import LiveSession

SETUP = SessionSetup(cwd=Path("/"), additional_directories=(), mcp_servers=())


class Session:
    """What the table calls on a session."""

    def __init__(self) -> None:
        self.cancelled = 0
        self.closed = False
        self.agent = self

    def cancel(self) -> None:
        self.cancelled += 1

    async def aclose(self) -> None:
        self.closed = True


def quiet(event: str, fields: Mapping[str, object], *, debug: bool = False) -> None:
    return None


def as_live(session: Session) -> LiveSession:
    return cast("LiveSession", session)


async def host(
    table: SessionTable,
    slot: SessionSlot,
    build: Callable[[], Awaitable[LiveSession]],
    *,
    keep_failure: bool,
    task_status: anyio.abc.TaskStatus[LiveSession | None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """`acp_server.opening`'s host, without the block: build, then hold until closed."""
    with slot.hosted():
        live = await table.build(slot, build, keep_failure=keep_failure)
        task_status.started(live)
        if live is not None:
            await slot.closing()
            await live.aclose()


async def test_requests_wait_while_the_session_opens_and_then_go_on() -> None:
    table = SessionTable(quiet)
    slot = SessionSlot("s1", SETUP)
    table.add(slot)
    session = Session()
    go = anyio.Event()
    got: list[object] = []

    async def build() -> LiveSession:
        await go.wait()
        return as_live(session)

    async def request() -> None:
        got.append(await table.session("s1"))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(request)
            task_group.start_soon(request)
            task_group.start_soon(lambda: table.build(slot, build, keep_failure=True))
            await anyio.wait_all_tasks_blocked()
            assert got == [] and slot.opening
            go.set()
    assert got == [session, session]
    assert not slot.opening
    assert await table.session("s1") is session  # at once now
    with pytest.raises(UnknownSession):
        await table.session("s2")


async def test_a_failed_build_is_reported_to_every_request_until_closed() -> None:
    table = SessionTable(quiet)
    slot = SessionSlot("s1", SETUP)
    table.add(slot)
    failure = OSError("cannot create the transcript")

    async def build() -> LiveSession:
        raise failure

    with anyio.fail_after(30):
        async with table.hosting():
            built = await table.host_until_built(
                partial(host, table, slot, build, keep_failure=True)
            )
            assert built is None
            for _ in range(2):
                with pytest.raises(OSError) as caught:
                    await table.session("s1")
                assert caught.value is failure
            await table.close("s1")
            with pytest.raises(UnknownSession):
                await table.session("s1")


async def test_a_failed_reopen_is_forgotten_at_once() -> None:
    table = SessionTable(quiet)
    slot = SessionSlot("s1", SETUP)
    table.add(slot)

    async def build() -> LiveSession:
        raise OSError("no such session")

    assert await table.build(slot, build, keep_failure=False) is None
    assert table.get("s1") is None


async def test_cancel_ends_only_that_sessions_prompts_in_flight() -> None:
    table = SessionTable(quiet)
    slots = {name: SessionSlot(name, SETUP) for name in ("s1", "s2")}
    for slot in slots.values():
        table.add(slot)
    outcomes: dict[str, list[str]] = {"s1": [], "s2": []}

    async def prompt(name: str, *, then_wait: bool = False) -> None:
        scope = anyio.CancelScope()  # the request's, as the transport makes it
        with slots[name].prompting(scope), scope:
            await slots[name].session()
            if then_wait:  # as a prompt waiting for its turn
                await anyio.sleep_forever()
        outcomes[name].append("cancelled" if scope.cancel_called else "ran")

    sessions = {name: Session() for name in slots}
    with anyio.fail_after(30):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(prompt, "s1")
            task_group.start_soon(prompt, "s2")
            await anyio.wait_all_tasks_blocked()
            table.cancel("s1")  # session/cancel
            await anyio.wait_all_tasks_blocked()
            assert outcomes == {"s1": ["cancelled"], "s2": []}
            for name, slot in slots.items():
                slot.opened(as_live(sessions[name]))
            await anyio.wait_all_tasks_blocked()
            assert outcomes == {"s1": ["cancelled"], "s2": ["ran"]}
            task_group.start_soon(partial(prompt, "s2", then_wait=True))
            await anyio.wait_all_tasks_blocked()
            table.cancel("s2")  # open now: its prompt in flight is cancelled
    assert outcomes == {"s1": ["cancelled"], "s2": ["ran", "cancelled"]}
    assert [session.cancelled for session in sessions.values()] == [0, 0]  # only prompts


async def test_at_the_end_every_prompt_is_cancelled_and_every_session_closed() -> None:
    table = SessionTable(quiet)
    opening, opened = SessionSlot("s1", SETUP), SessionSlot("s2", SETUP)
    table.add(opening)
    table.add(opened)
    session = Session()
    waits: list[bool] = []

    async def never_built() -> LiveSession:
        await anyio.sleep_forever()
        raise AssertionError

    async def built() -> LiveSession:
        return as_live(session)

    async def prompt() -> None:
        scope = anyio.CancelScope()
        with opening.prompting(scope), scope:
            await opening.session()
        waits.append(scope.cancel_called)

    with anyio.fail_after(30):
        async with table.hosting():
            table.host(partial(host, table, opening, never_built, keep_failure=True))
            await table.host_until_built(partial(host, table, opened, built, keep_failure=True))
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(prompt)
                await anyio.wait_all_tasks_blocked()
                table.cancel_all()  # the input closed
            assert waits == [True]
        # Leaving `hosting` closed every session and ended the build that was still running.
    assert session.closed
    assert table.slots() == []
