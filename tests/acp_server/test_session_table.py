"""`acp_server.session_table` in process: the slot every request for a session goes through, with
a stand-in for the session (the table only builds, cancels and closes it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import anyio
import pytest

from acp_server.errors import UnknownSession
from acp_server.params import OpeningParams
from acp_server.session_table import SessionSlot, SessionTable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from acp_server.live import LiveSession

SETUP = OpeningParams(cwd=Path("/"), additional_directories=(), mcp_servers=())


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

    assert await table.build(slot, build, keep_failure=True) is None
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


async def test_cancel_ends_only_that_sessions_prompt_waits() -> None:
    table = SessionTable(quiet)
    slots = {name: SessionSlot(name, SETUP) for name in ("s1", "s2")}
    for slot in slots.values():
        table.add(slot)
    outcomes: dict[str, str] = {}

    async def prompt(name: str) -> None:
        with slots[name].cancellable() as waiting:
            await slots[name].session()
        outcomes[name] = "cancelled" if waiting.cancel_called else "ran"

    sessions = {name: Session() for name in slots}
    with anyio.fail_after(30):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(prompt, "s1")
            task_group.start_soon(prompt, "s2")
            await anyio.wait_all_tasks_blocked()
            table.cancel("s1")  # session/cancel
            await anyio.wait_all_tasks_blocked()
            assert outcomes == {"s1": "cancelled"}
            for name, slot in slots.items():
                slot.opened(as_live(sessions[name]))
    assert outcomes == {"s1": "cancelled", "s2": "ran"}
    table.cancel("s2")  # open now: its turn is cancelled
    assert sessions["s2"].cancelled == 1


async def test_at_the_end_every_prompt_is_cancelled_and_every_session_closed() -> None:
    table = SessionTable(quiet)
    opening, opened = SessionSlot("s1", SETUP), SessionSlot("s2", SETUP)
    table.add(opening)
    table.add(opened)
    session = Session()
    opened.opened(as_live(session))
    waits: list[bool] = []

    async def prompt() -> None:
        with opening.cancellable() as waiting:
            await opening.session()
        waits.append(waiting.cancel_called)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(prompt)
            await anyio.wait_all_tasks_blocked()
            table.cancel_all()  # the input closed
    assert waits == [True]
    assert session.cancelled == 1
    await table.close_all()
    assert session.closed
    assert table.slots() == []
