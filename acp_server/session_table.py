"""The sessions of one connection: session id -> slot, and each session's host.

A session lives in its block (`agent.tasks.SessionTasks`), held by a host task that the table runs
while the connection is served (`hosting`): the host builds the session, keeps the block open for
as long as the session lives, and leaves it when the session is closed, which ends what runs in
it (`acp_server.opening` writes the host). A slot exists from the moment the client knows the
session's id. `session/new` is answered from
the settings and the catalog (`SessionFactory.defaults`) and its session is built after the
answer, as a task on the event loop; `session/load` and `session/resume` build theirs before
answering. Either way the session is *opening* until its build ends, and every handler reaches a
session the same way, `await table.session(id)` (or `slot.session()`): it waits while the session
is opening, returns it once open, and raises why it could not be built. A `session/new` build
failure stays in the slot, reported to every request for the session, until the client closes
or deletes it.

The slot knows the request scope of each of its prompts in flight (`prompting`): `session/cancel`
cancels them all (`cancel`), as `$/cancel_request` cancels one; the prompt handler then answers
`cancelled` (`acp_server.live.PromptRun`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp_server.jsonrpc import Logger
    from acp_server.live import LiveSession
    from acp_server.params import SessionSetup

CLOSE_SECONDS = 2.0
"""How long closing every session at the end may take (each flushes its file)."""


class SessionSlot:
    """One session of the connection: its id and setup, whether it is built, and the session or
    why it could not be built."""

    __slots__ = (
        "_built",
        "_closing",
        "_ended",
        "_host",
        "_prompts",
        "failure",
        "live",
        "session_id",
        "setup",
    )

    def __init__(self, session_id: str, setup: SessionSetup) -> None:
        self.session_id = session_id
        self.setup = setup
        self.live: LiveSession | None = None
        self.failure: Exception | None = None
        self._built = anyio.Event()
        self._closing = anyio.Event()
        """The session is to be closed: its host leaves the block."""
        self._ended = anyio.Event()
        """Its host has left the block (the session is closed, or was never built)."""
        self._host: anyio.CancelScope | None = None
        self._prompts: set[anyio.CancelScope] = set()
        """The request scopes of the session's prompts in flight."""

    @property
    def opening(self) -> bool:
        """The session is still being built."""
        return not self._built.is_set()

    async def session(self) -> LiveSession:
        """The session, once built (at once when it is).

        Raises:
            Exception: why the session could not be built.
        """
        await self._built.wait()
        if self.live is None:
            assert self.failure is not None
            raise self.failure
        return self.live

    async def settled(self) -> None:
        """Until the build ended, whatever its outcome."""
        await self._built.wait()

    def opened(self, live: LiveSession) -> None:
        self.live = live
        self._built.set()

    def failed(self, failure: Exception) -> None:
        self.failure = failure
        self._built.set()

    @contextlib.contextmanager
    def hosted(self) -> Generator[None]:
        """Around the host's work (`acp_server.opening`): `close` waits for its end, and
        `abandon` cuts it short while the session is still being built."""
        with anyio.CancelScope() as scope:
            self._host = scope
            try:
                yield
            finally:
                self._ended.set()

    async def closing(self) -> None:
        """Until the session is to be closed (its host waits here, in the session's block)."""
        await self._closing.wait()

    async def close(self) -> None:
        """Cancel the session's prompts in flight, ask the host to close the session, and wait
        until it has left the block."""
        self.cancel()
        self._closing.set()
        await self._ended.wait()

    def abandon(self) -> None:
        """The connection is ending: a session still being built never will be (nobody waits
        for it any more)."""
        if self.opening and self._host is not None:
            self._host.cancel()

    @contextlib.contextmanager
    def prompting(self, scope: anyio.CancelScope) -> Generator[None]:
        """While a prompt is in flight: `cancel` cancels its request scope `scope`."""
        self._prompts.add(scope)
        try:
            yield
        finally:
            self._prompts.discard(scope)

    def cancel(self) -> None:
        """`session/cancel`: the session's prompts in flight (each answers `cancelled` once
        what it started has ended)."""
        for scope in self._prompts:
            scope.cancel()


class SessionTable:
    """Session id -> `SessionSlot`, for one connection."""

    def __init__(self, log: Logger) -> None:
        self._slots: dict[str, SessionSlot] = {}
        self._log = log
        self._hosts: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def hosting(self) -> AsyncGenerator[None]:
        """While the connection is served: the sessions' hosts run here. At the end every
        session is closed (within `CLOSE_SECONDS`), then what is left of the hosts is cancelled."""
        async with anyio.create_task_group() as hosts:
            self._hosts = hosts
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await self.close_all()
                hosts.cancel_scope.cancel()

    def host(self, host: Callable[..., Coroutine[Any, Any, None]], *args: object) -> None:
        """Start a session's host (`hosting` runs it)."""
        assert self._hosts is not None, "not hosting"
        self._hosts.start_soon(host, *args)

    async def host_until_built(
        self, host: Callable[..., Coroutine[Any, Any, None]], *args: object
    ) -> Any:
        """Start a session's host and wait until it says the build has ended
        (`task_status.started`: the session, or None); cancelling the caller cancels the
        build."""
        assert self._hosts is not None, "not hosting"
        return await self._hosts.start(host, *args)

    def get(self, session_id: str) -> SessionSlot | None:
        return self._slots.get(session_id)

    def slot(self, session_id: str) -> SessionSlot:
        """Raises:
        UnknownSession: no session has this id here."""
        slot = self._slots.get(session_id)
        if slot is None:
            from acp_server.errors import UnknownSession

            raise UnknownSession(session_id)
        return slot

    async def session(self, session_id: str) -> LiveSession:
        """The session `session_id`, once built: the one way a handler reaches a session.

        Raises:
            UnknownSession: no session has this id here.
            Exception: why the session could not be built.
        """
        return await self.slot(session_id).session()

    def slots(self) -> list[SessionSlot]:
        return list(self._slots.values())

    def add(self, slot: SessionSlot) -> None:
        self._slots[slot.session_id] = slot

    async def build(
        self,
        slot: SessionSlot,
        make: Callable[[], Awaitable[LiveSession]],
        *,
        keep_failure: bool,
    ) -> LiveSession | None:
        """Build the session of `slot` (added to the table first); None when that failed. With
        `keep_failure` the failed slot stays, reporting why to every request for the session;
        without, it is removed (a `session/load` that failed reports it to its own request).
        A cancelled build fails the slot too, and is re-raised."""
        try:
            live = await make()
        except Exception as exc:
            slot.failed(exc)
            if not keep_failure:
                self._drop(slot)
            self._log(
                "opening a session failed",
                {"session": slot.session_id, "error": repr(exc), "exc": exc},
            )
            return None
        except BaseException:
            slot.failed(RuntimeError("the server is shutting down"))
            self._drop(slot)
            raise
        slot.opened(live)
        return live

    def _drop(self, slot: SessionSlot) -> None:
        if self._slots.get(slot.session_id) is slot:
            del self._slots[slot.session_id]

    async def close(self, session_id: str) -> None:
        """Forget `session_id` (after its build, if it is opening) and close its session."""
        slot = self._slots.get(session_id)
        if slot is None:
            return
        await slot.settled()
        self._drop(slot)
        await slot.close()

    def cancel(self, session_id: str) -> None:
        slot = self._slots.get(session_id)
        if slot is not None:
            slot.cancel()

    def cancel_all(self) -> None:
        """The input closed: every prompt is cancelled."""
        for slot in self._slots.values():
            slot.cancel()

    async def close_all(self) -> None:
        """Close every session (flushing its file), within `CLOSE_SECONDS`."""
        slots = list(self._slots.values())
        self._slots.clear()
        with anyio.move_on_after(CLOSE_SECONDS):
            async with anyio.create_task_group() as task_group:
                for slot in slots:
                    slot.abandon()
                    task_group.start_soon(slot.close)
