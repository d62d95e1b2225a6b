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
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
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


@contextmanager
def handlers_kept(*numbers: int) -> Generator[None]:
    """Put back the handlers of these signals on leaving: leaving anyio's signal receiver gives
    them to Python's defaults, and SIGINT's raises."""
    previous = {number: signal.getsignal(number) for number in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            if handler is not None:
                signal.signal(number, handler)


async def cancel_on_signals(cancel: Callable[[], None], *, task_status: TaskStatus[None]) -> None:
    """Print mode's turn: the first Ctrl-C (or SIGTERM) calls `cancel`, a second one ends the
    process at once."""
    import anyio

    signals = (signal.SIGINT, signal.SIGTERM)
    with handlers_kept(*signals), anyio.open_signal_receiver(*signals) as received:
        task_status.started()
        cancelled = False
        async for _ in received:
            if cancelled:
                os.write(2, b"earshot: interrupted again, exiting\n")
                os._exit(INTERRUPTED)
            cancelled = True
            cancel()


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
                # `exit_on_interrupt`'s handler is back as soon as the receiver is left, so a
                # second Ctrl-C, while the cancelled work winds down, ends the process.
                with handlers_kept(signal.SIGINT), anyio.open_signal_receiver(signal.SIGINT) as got:
                    task_status.started()
                    async for _ in got:
                        interrupted = True
                        group.cancel_scope.cancel()
                        break

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


__all__ = [
    "INTERRUPTED",
    "cancel_on_signals",
    "exit_on_interrupt",
    "handlers_kept",
    "run_interruptible",
]
