"""A separate process forking one session (run by the fork crash test).

Usage: forker.py ROOT SESSION_ID
Prints `ready`, waits for a line on stdin, then forks the session. The process kills itself with
SIGKILL in the middle of the first large write (half of it written): exactly what a kill landing
inside the copy of a long branch leaves behind, without depending on when a signal arrives.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio

from sessions import SessionStore

_LARGE = 1_000_000
_write = os.write


def _dying_write(fd: int, data: bytes | memoryview, /) -> int:
    if len(data) < _LARGE:
        return _write(fd, data)
    _write(fd, bytes(data[: len(data) // 2]))
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


async def main(root: str, session_id: str) -> None:
    store = SessionStore(Path(root))
    print("ready", flush=True)
    sys.stdin.readline()
    os.write = _dying_write
    forked = await store.fork(session_id)
    print(forked.id, flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
