"""Ctrl-C for the long-running commands (`earshot --stdio`, `earshot serve`, print mode): never a
`KeyboardInterrupt`.

Python raises `KeyboardInterrupt` wherever the main thread happens to be. Raised inside an import
(and the server imports lazily, while it serves) it can leave a module's import lock held:
CPython prints "Exception ignored in: <function _get_module_lock.<locals>.cb>" and the process
hangs instead of ending. So Ctrl-C never raises:

- until the event loop watches for it (`exit_on_interrupt`), it ends the process at once with
  status 130: nothing is open yet that would need closing;
- while the loop runs (`run_interruptible`), it arrives through the loop and cancels the serving
  scope, as the editor going away would; a second Ctrl-C ends the process at once.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""


def exit_on_interrupt(message: bytes = b"") -> None:
    """From now on Ctrl-C writes `message` to stderr and ends the process, status 130 (unless
    SIGINT was ignored when the process started, as in a shell's background job: it stays so)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        return

    def exit_at_once(signum: int, frame: FrameType | None) -> None:
        if message:
            # os.write, not sys.stderr: a handler may run in the middle of a buffered write.
            os.write(2, message)
        os._exit(INTERRUPTED)

    signal.signal(signal.SIGINT, exit_at_once)


def run_interruptible(main: Callable[[], Awaitable[None]]) -> bool:
    """`anyio.run(main)` with Ctrl-C cancelling `main` (True when it did); call
    `exit_on_interrupt` first, so that no moment is left where Ctrl-C would raise."""
    import anyio

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        anyio.run(main)
        return False
    interrupted = False

    async def watched() -> None:
        nonlocal interrupted, failure
        async with anyio.create_task_group() as group:

            async def watch(*, task_status: TaskStatus[None]) -> None:
                nonlocal interrupted
                previous = signal.getsignal(signal.SIGINT)
                try:
                    with anyio.open_signal_receiver(signal.SIGINT) as signals:
                        task_status.started()
                        async for _ in signals:
                            interrupted = True
                            group.cancel_scope.cancel()
                            break
                finally:
                    # Leaving the receiver gives SIGINT to Python's default handler, which
                    # raises: put `exit_on_interrupt`'s back before anything else runs (so a
                    # second Ctrl-C, while the cancelled work winds down, ends the process).
                    signal.signal(signal.SIGINT, previous)

            await group.start(watch)
            try:
                await main()
            except Exception as exc:  # raised as itself, not wrapped in a group
                failure = exc
            group.cancel_scope.cancel()
        if failure is not None:
            raise failure

    failure: Exception | None = None
    anyio.run(watched)
    return interrupted


__all__ = ["INTERRUPTED", "exit_on_interrupt", "run_interruptible"]
