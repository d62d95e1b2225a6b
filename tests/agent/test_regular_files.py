"""Reading a path someone else named: regular files only, bounded, never blocked on a FIFO."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import anyio
import pytest

from agent.files.regular import NotARegularFile, read_regular, read_regular_async
from agent.local import LocalFiles
from agent.tools import ToolError
from agent.tools.read import read_tool
from tests.agent.tools_harness import harness


def test_devices_fifos_and_sockets_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer ever comes: opening it for a blocking read would hang
    with pytest.raises(NotARegularFile, match="a named pipe"):
        read_regular(fifo, 10)
    with pytest.raises(NotARegularFile, match="a character device"):
        read_regular(Path("/dev/zero"), 10)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.sock"))
        with pytest.raises(NotARegularFile, match="a socket"):
            read_regular(tmp_path / "s.sock", 10)
    finally:
        sock.close()
    with pytest.raises(IsADirectoryError):
        read_regular(tmp_path, 10)


def test_at_most_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 1000)
    assert read_regular(path, 10) == (b"x" * 10, True)
    assert read_regular(path, 1000) == (b"x" * 1000, False)
    assert read_regular(path) == (b"x" * 1000, False)


async def test_the_async_read_and_the_local_backend_refuse_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with anyio.fail_after(10), pytest.raises(NotARegularFile):
        await read_regular_async(fifo, limit=10, timeout=5)
    with anyio.fail_after(10), pytest.raises(NotARegularFile):
        await LocalFiles().read_text(fifo)


async def test_the_read_tool_refuses_a_fifo_and_a_device(tmp_path: Path) -> None:
    h = harness(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    with anyio.fail_after(10):
        with pytest.raises(ToolError, match="not a regular file: it is a named pipe"):
            await h.run(read_tool, path="pipe")
        with pytest.raises(ToolError, match="not a regular file: it is a character device"):
            await h.run(read_tool, path="/dev/zero")
