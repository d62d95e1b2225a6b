"""Reading a file someone else named, safely: regular files only, at most so many bytes, within
a time limit, and cancellable.

A path from a client (a `resource_link`, an `@file` mention) or from the model may name anything:
`/dev/zero` (endless), `/dev/urandom`, a FIFO (an open blocks until a writer comes, maybe never),
a socket, a directory, a file on a hung network mount. So:

- the type is checked with `stat` before opening (a device is never even opened), and again with
  `fstat` on the descriptor, which is opened `O_NONBLOCK` so that a path swapped for a FIFO in
  between cannot block the open;
- at most `limit` bytes are read, however large the file says it is (or claims not to be: a
  file in /proc reports size 0);
- the read runs in a worker thread under a deadline, and a cancelled caller does not wait for it
  (the thread finishes on its own and closes its descriptor).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import anyio
import anyio.to_thread

# `check_regular` and `NotARegularFile` live in `agent.files.safe_paths` (the vocabulary layer,
# which opens paths as decided); they are re-exported here for the readers of files someone named.
from agent.files.safe_paths import NotARegularFile as NotARegularFile
from agent.files.safe_paths import check_regular as check_regular

_CHUNK = 1 << 20


def read_regular(path: Path, limit: int | None = None) -> tuple[bytes, bool]:
    """The first `limit` bytes of the regular file at `path` (all of it for None), and whether
    the file holds more. Blocking: see `read_regular_async`.

    Raises:
        OSError: missing, unreadable, a directory (`IsADirectoryError`) or not a regular file
            (`NotARegularFile`).
    """
    check_regular(path, os.stat(path).st_mode)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        check_regular(path, os.fstat(fd).st_mode)
        wanted = None if limit is None else limit + 1
        chunks: list[bytes] = []
        size = 0
        while wanted is None or size < wanted:
            chunk = os.read(fd, _CHUNK if wanted is None else min(_CHUNK, wanted - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if limit is not None and len(data) > limit:
        return data[:limit], True
    return data, False


async def read_regular_async(
    path: Path, *, limit: int | None = None, timeout: float | None = None
) -> tuple[bytes, bool]:
    """`read_regular` in a worker thread, given up after `timeout` seconds (None: no limit) or
    as soon as the caller is cancelled.

    Raises:
        OSError: as `read_regular`; `TimeoutError` when the deadline passed.
    """
    with anyio.move_on_after(timeout):
        return await anyio.to_thread.run_sync(read_regular, path, limit, abandon_on_cancel=True)
    assert timeout is not None  # only a deadline ends the scope without a result
    raise TimeoutError(errno.ETIMEDOUT, f"not read within {timeout:g} seconds", str(path))
