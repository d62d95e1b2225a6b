"""`SessionWorker`: an event loop in a thread of its own, for what outlives a session's turns.

A session has no task group of its own: each turn runs in one its front end consumes, and
between turns nothing of the session runs. The language servers (kept for the session, their
reader tasks alive) and the code index's refresh (going on between turns) need one; anyio
ties a task group to the task that opened it, so they get a loop that lives as long as the
session: this thread's, reached through a `BlockingPortal`. It starts at the first use, and
`aclose` (the session's) stops it.

The thread is a daemon: a process that exits without closing its sessions does not wait for it
(a language server then sees its stdin close and exits).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

T = TypeVar("T")


class SessionWorker:
    """The loop (see the module docstring)."""

    def __init__(self, name: str = "earshot-session") -> None:
        self._name = name
        self._portal: BlockingPortal | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._contexts: list[contextlib.AbstractContextManager[Any]] = []
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._portal is not None

    def _ensure(self) -> BlockingPortal:
        with self._lock:
            if self._portal is not None:
                return self._portal
            holder: list[BlockingPortal] = []
            failure: list[BaseException] = []

            async def main() -> None:
                from anyio.from_thread import BlockingPortal

                async with BlockingPortal() as portal:
                    holder.append(portal)
                    self._started.set()
                    await portal.sleep_until_stopped()

            def run() -> None:
                try:
                    anyio.run(main)
                except BaseException as error:  # reported to the caller waiting for the start
                    failure.append(error)
                    self._started.set()

            self._thread = threading.Thread(target=run, name=self._name, daemon=True)
            self._thread.start()
            self._started.wait()
            if failure:
                raise RuntimeError("the session's worker loop did not start") from failure[0]
            self._portal = holder[0]
            return self._portal

    async def call(self, func: Callable[..., Awaitable[T] | T], *args: Any) -> T:
        """`func(*args)` run in the worker's loop (a coroutine function as a task there); a
        cancelled caller stops waiting, the call goes on."""

        def blocking() -> T:
            return cast("T", self._ensure().call(func, *args))

        return await anyio.to_thread.run_sync(blocking, abandon_on_cancel=True)

    def start_soon(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start a task in the worker's loop and return at once (from the caller's thread)."""
        self._ensure().start_task_soon(func, *args)

    async def enter(self, context: contextlib.AbstractAsyncContextManager[T]) -> T:
        """Enter an async context manager in one task of the worker's loop; it is exited there,
        last in first out, by `aclose`."""

        def blocking() -> T:
            wrapped = self._ensure().wrap_async_context_manager(context)
            value = wrapped.__enter__()
            self._contexts.append(wrapped)
            return value

        return await anyio.to_thread.run_sync(blocking)

    async def aclose(self) -> None:
        """Exit what was entered, stop the loop and wait for the thread (shielded)."""
        portal, thread = self._portal, self._thread
        if portal is None or thread is None:
            return

        def stop() -> None:
            while self._contexts:
                with contextlib.suppress(Exception):
                    self._contexts.pop().__exit__(None, None, None)
            with contextlib.suppress(Exception):
                portal.call(partial(portal.stop, cancel_remaining=True))
            thread.join()

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(stop)
        self._portal = self._thread = None
