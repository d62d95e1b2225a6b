"""`SessionTasks`: a session's own task group, the one owner of what outlives a turn.

A session lives inside one `async with SessionTasks() as tasks:` block (the ACP server's session
host, `acp_server.opening`; print mode's run, `earshot.print_mode`). What must go on between
turns starts in it and ends with it: the language servers and the code index's refreshes
(`agent.code`), the MCP clients (`earshot.mcp_connections`), and the front end's own background
work (the warm-up, the model list refresh). At the end of the block, what was registered with
`on_close` runs, last first (the session's own `aclose`: `agent.session.create_session`
registers it), then whatever still runs is cancelled. No second event loop and no thread running
one: blocking work is a bounded `anyio.to_thread.run_sync` call (an import, a sqlite write).

A failing background task is logged and costs only itself: it never tears the block down (and
with it the session and its other tasks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

import anyio

from providers.logs import get_logger

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus

T = TypeVar("T")

_log = get_logger(__name__)


class SessionTasks:
    """The session's block (see the module docstring)."""

    __slots__ = ("_closers", "_group")

    def __init__(self) -> None:
        self._group: TaskGroup | None = None
        self._closers: list[Callable[[], Awaitable[None]]] = []

    @property
    def open(self) -> bool:
        """The block is running: tasks can start."""
        return self._group is not None

    async def __aenter__(self) -> Self:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        group = self._group
        assert group is not None, "the block was not entered"
        closing: BaseException | None = None
        try:
            await self._close_all()
        except BaseException as error:  # cancelled while closing: the group is left with it
            closing = error
            exc_type, exc, traceback = type(error), error, error.__traceback__
        group.cancel_scope.cancel()
        self._group = None
        try:
            suppressed = await group.__aexit__(exc_type, exc, traceback)
        except BaseExceptionGroup as raised:
            # The block's own exception, as it was raised (the group only wrapped it: the
            # background tasks never raise into it).
            if exc is not None and list(raised.exceptions) == [exc]:
                raise exc  # noqa: B904 (the group was only a wrapper)
            raise
        if closing is not None and not suppressed:
            raise closing
        return suppressed

    async def _close_all(self) -> None:
        while self._closers:
            close = self._closers.pop()
            try:
                await close()
            except Exception:
                _log.warning("closing part of a session failed", exc_info=True)

    def on_close(self, close: Callable[[], Awaitable[None]]) -> None:
        """Run `close` at the end of the block, before what still runs is cancelled (the last
        registered runs first)."""
        self._closers.append(close)

    def start_soon(self, function: Callable[..., Awaitable[Any]], *args: object) -> None:
        """Run `function(*args)` in the background until it returns or the session ends; a
        failure is logged, never raised into the block.

        Raises:
            RuntimeError: the session is not in its block (nothing could run it).
        """
        self._running().start_soon(_guarded, function, args, name=_name(function))

    async def enter(self, context: AbstractAsyncContextManager[T]) -> Held[T]:
        """Enter `context` in a task of its own in the block (an anyio context that owns a task
        group must be left by the task that entered it: a language server's reader), and leave
        it when the holder is closed (`Held.aclose`), or at the end of the block (as a closer,
        registered now: `on_close`).

        Raises:
            Exception: what entering `context` raised.
            RuntimeError: the session is not in its block.
        """
        release, left = anyio.Event(), anyio.Event()

        async def hold(*, task_status: TaskStatus[T]) -> None:
            entered = False
            try:
                async with context as value:
                    task_status.started(value)
                    entered = True
                    await release.wait()
            except Exception:
                if not entered:
                    raise  # to `enter`'s caller
                _log.warning("leaving a session's context failed", exc_info=True)
            finally:
                left.set()

        value: T = await self._running().start(hold, name=f"hold {type(context).__name__}")
        held = Held(value, release, left)
        self.on_close(held.aclose)
        return held

    def _running(self) -> TaskGroup:
        if self._group is None:
            raise RuntimeError(
                "the session is not in its block (`async with SessionTasks()`): "
                "nothing can run in the background"
            )
        return self._group


class Held(Generic[T]):
    """A context entered in the session's block (`SessionTasks.enter`)."""

    __slots__ = ("_left", "_release", "value")

    def __init__(self, value: T, release: anyio.Event, left: anyio.Event) -> None:
        self.value = value
        self._release = release
        self._left = left

    async def aclose(self) -> None:
        """Leave the context now and wait until it is left (shielded: what it runs stops)."""
        self._release.set()
        with anyio.CancelScope(shield=True):
            await self._left.wait()


async def _guarded(function: Callable[..., Awaitable[Any]], args: tuple[object, ...]) -> None:
    try:
        await function(*args)
    except Exception:
        _log.warning("a session's background task failed", task=_name(function), exc_info=True)


def _name(function: Callable[..., object]) -> str:
    return getattr(function, "__qualname__", None) or type(function).__name__


__all__ = ["Held", "SessionTasks"]
