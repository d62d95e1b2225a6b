"""An exclusive lock on a file shared by sessions, in one process or several: a lock file held
with `flock` (released by the kernel when its holder closes it or dies, so a crash never leaves
it held), polled with backoff up to a bounded wait. The lock file is never deleted: deleting a
lock file races with a process that has just opened it.

`locked` is for async code: sessions of one event loop queue on an anyio lock first (no
polling between them), then take the `flock`, which other processes and other event loops (a
session's worker thread) contend for. `locked_sync` is for a short critical section in
synchronous code (a read-modify-write of a settings file); threads contend for the `flock` too,
as each open of the lock file is a lock of its own.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import Final

import anyio
from anyio.lowlevel import RunVar

_FIRST_POLL: Final = 0.001
_MAX_POLL: Final = 0.05
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)

_loop_locks: RunVar[dict[str, anyio.Lock]] = RunVar("earshot_file_locks")
"""Per event loop (an anyio lock belongs to the loop it was made in): lock path -> its lock."""


def _loop_lock(path: Path) -> anyio.Lock:
    try:
        locks = _loop_locks.get()
    except LookupError:
        locks: dict[str, anyio.Lock] = {}
        _loop_locks.set(locks)
    return locks.setdefault(str(path), anyio.Lock())


if sys.platform == "win32":  # pragma: no cover - not exercised in CI

    def _try_flock(fd: int) -> bool:
        return True  # this process's event loop only

else:
    import fcntl

    def _try_flock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


@contextlib.asynccontextmanager
async def locked(path: Path, *, wait: float) -> AsyncGenerator[bool]:
    """Hold the lock on `path` (created if missing) for the block; yields whether it is held:
    False when `wait` seconds ran out first (or the file system cannot lock), and the caller
    decides whether to go on without it."""
    deadline = anyio.current_time() + wait
    lock = _loop_lock(path)
    taken = False
    with anyio.move_on_after(wait):
        await lock.acquire()
        taken = True
    descriptor: int | None = None
    try:
        if taken:
            descriptor = await _flock(path, deadline)
        yield descriptor is not None
    finally:
        if descriptor is not None:
            os.close(descriptor)  # releases the flock
        if taken:
            lock.release()


async def _flock(path: Path, deadline: float) -> int | None:
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o600)
    except OSError:
        return None
    delay = _FIRST_POLL
    try:
        while True:
            try:
                if _try_flock(descriptor):
                    return descriptor
            except OSError:  # a file system without flock: no lock across processes
                os.close(descriptor)
                return None
            left = deadline - anyio.current_time()
            if left <= 0:
                os.close(descriptor)
                return None
            await anyio.sleep(min(delay, left))
            delay = min(delay * 2, _MAX_POLL)
    except BaseException:
        os.close(descriptor)
        raise


@contextlib.contextmanager
def locked_sync(path: Path, *, wait: float) -> Generator[bool]:
    """`locked` for synchronous code: the calling thread sleeps between polls. Keep the block
    short (each waiter's wait is every earlier holder's block)."""
    deadline = time.monotonic() + wait
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o600)
    try:
        delay = _FIRST_POLL
        held = True
        while not _try_flock(descriptor):
            left = deadline - time.monotonic()
            if left <= 0:
                held = False
                break
            time.sleep(min(delay, left))
            delay = min(delay * 2, _MAX_POLL)
        yield held
    finally:
        os.close(descriptor)  # releases the flock
