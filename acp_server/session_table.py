"""The sessions of one connection: session id -> slot.

A slot exists from the moment the client knows the session's id. `session/new` is answered from
the settings and the catalog (`Workspace.defaults`) and its session is built after the
answer, as a task on the event loop; `session/load` and `session/resume` build theirs before
answering. Either way the session is *opening* until its build ends, and every handler reaches a
session the same way, `await table.session(id)` (or `slot.session()`): it waits while the session
is opening, returns it once open, and raises why it could not be built. A `session/new` build
failure stays in the slot, reported to every request for the session, until the client closes
or deletes it.

A prompt waits inside `slot.cancellable()`: `session/cancel` cancels the session's slot (the
prompts waiting for it, and the running turn once open), `$/cancel_request` the prompt's own
scope; either way the prompt answers `cancelled`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from acp_server.jsonrpc import LogSink
    from acp_server.live import LiveSession
    from acp_server.params import OpeningParams

CLOSE_SECONDS = 2.0
"""How long closing every session at the end may take (each flushes its file)."""


class SessionSlot:
    """One session of the connection: its id and setup, whether it is built, and the session or
    why it could not be built."""

    __slots__ = ("_built", "_prompts", "failure", "live", "session_id", "setup")

    def __init__(self, session_id: str, setup: OpeningParams) -> None:
        self.session_id = session_id
        self.setup = setup
        self.live: LiveSession | None = None
        self.failure: Exception | None = None
        self._built = anyio.Event()
        self._prompts: set[anyio.CancelScope] = set()

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
    def cancellable(self) -> Generator[anyio.CancelScope]:
        """A scope that `cancel` cancels: a prompt waits for the session inside it."""
        with anyio.CancelScope() as scope:
            self._prompts.add(scope)
            try:
                yield scope
            finally:
                self._prompts.discard(scope)

    def cancel(self) -> None:
        """`session/cancel`: the prompts waiting for the session, and its running turn."""
        for scope in list(self._prompts):
            scope.cancel()
        if self.live is not None:
            self.live.cancel()


class SessionTable:
    """Session id -> `SessionSlot`, for one connection."""

    def __init__(self, log: LogSink) -> None:
        self._slots: dict[str, SessionSlot] = {}
        self._log = log

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
        if slot.live is not None:
            await slot.live.aclose()

    def cancel(self, session_id: str) -> None:
        slot = self._slots.get(session_id)
        if slot is not None:
            slot.cancel()

    def cancel_all(self) -> None:
        """The input closed: every prompt is cancelled."""
        for slot in self._slots.values():
            slot.cancel()

    async def close_all(self) -> None:
        """Close every open session (flushing its file), within `CLOSE_SECONDS`."""
        slots = list(self._slots.values())
        self._slots.clear()
        with anyio.move_on_after(CLOSE_SECONDS):
            async with anyio.create_task_group() as task_group:
                for slot in slots:
                    slot.cancel()
                    if slot.live is not None:
                        task_group.start_soon(self._close_quietly, slot.live)

    async def _close_quietly(self, live: LiveSession) -> None:
        try:
            await live.agent.aclose()
        except Exception as exc:
            self._log("closing a session failed", {"error": repr(exc), "exc": exc})
