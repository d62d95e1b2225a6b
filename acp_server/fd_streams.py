"""Bytes in and out of file descriptors on the event loop, and the input split into lines.

The transport reads and writes raw fds rather than anyio streams: stdin and stdout may be pipes,
sockets, terminals, regular files or /dev/null, and a write that the pipe takes at once must not
cost a trip through the event loop (one per text delta would cost more than the write itself).
The tests drive the same code over a socketpair.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel

if TYPE_CHECKING:
    from acp_server.first_line import ReadAhead

READ_CHUNK = 1 << 20


class FdReader:
    """Reads chunks from an fd without blocking the event loop (pipes, sockets and ttys are
    polled; regular files and /dev/null, which epoll refuses, are simply read). What was read
    before the loop ran (`ahead`: `acp_server.first_line`) comes first."""

    def __init__(self, fd: int, ahead: ReadAhead | None = None) -> None:
        self.fd = fd
        self.pollable = not stat.S_ISREG(os.fstat(fd).st_mode)
        self._ahead = ahead.data if ahead is not None else b""
        self._ended = ahead is not None and ahead.ended

    async def read(self) -> bytes:
        """The next chunk; b"" at the end of the input."""
        if self._ahead:
            chunk, self._ahead = self._ahead, b""
            return chunk
        if self._ended:
            return b""
        while True:
            if self.pollable:
                try:
                    await anyio.wait_readable(self.fd)
                except OSError:
                    self.pollable = False
            if not self.pollable:
                await anyio.lowlevel.checkpoint()
            try:
                return os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                return b""


class FdWriter:
    """Writes to an fd; only pipes and sockets are made non-blocking (on a tty the flag would
    leak into the user's shell)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        mode = os.fstat(fd).st_mode
        self.pollable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        if self.pollable:
            os.set_blocking(fd, False)

    def write_nowait(self, data: bytes) -> int:
        """Write what the fd takes without waiting; returns the byte count written."""
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
                continue
            view = view[written:]


@dataclass(frozen=True, slots=True)
class Line:
    """One line of input: its bytes (None when it exceeded the limit and was skipped) and its
    number, counted from 1, for error messages that say where."""

    data: bytes | None
    number: int


async def read_lines(reader: FdReader, limit: int, answered: int = 0) -> AsyncIterator[Line]:
    """Complete lines until the input ends (a last line without a newline counts). A line over
    `limit` bytes is skipped as it arrives (never held whole) and yielded once, with no data.
    `answered`: lines of the input answered before (numbers go on from there)."""
    buffer = bytearray()
    scanned = 0
    skipping = False
    number = answered
    while True:
        while True:
            newline = buffer.find(b"\n", scanned)
            if newline < 0:
                scanned = len(buffer)
                if len(buffer) > limit:
                    if not skipping:
                        skipping = True
                        number += 1
                        yield Line(None, number)
                    buffer.clear()
                    scanned = 0
                break
            line = bytes(buffer[:newline])
            del buffer[: newline + 1]
            scanned = 0
            if skipping:
                skipping = False
                continue
            number += 1
            yield Line(None if len(line) > limit else line, number)
        chunk = await reader.read()
        if not chunk:
            break
        buffer += chunk
    if buffer.strip() and not skipping:
        yield Line(bytes(buffer), number + 1)
