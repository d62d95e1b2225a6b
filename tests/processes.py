"""Processes in tests: finding one by what it runs, not by a pid it reports (a command in the
sandbox has its own pid namespace, so `$!` and `$$` inside it are not pids out here), waiting
for them to be gone, and signalling a shell command through a named pipe instead of polling."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from pathlib import Path

import anyio


def unique_sleep(seconds: int) -> str:
    """`sleep <seconds>.<unique digits>`: the same wait, with an argument no other process has."""
    return f"sleep {seconds}.{uuid.uuid4().int % 10**12:012d}"


def running_with_argv(command: str) -> list[int]:
    """Pids (as seen here) of live, non-zombie processes whose argv is `command` split on spaces.
    Linux only (reads /proc)."""
    wanted = command.split(" ")
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")[:-1]
            with open(f"/proc/{name}/stat", encoding="utf-8") as handle:
                stat = handle.read()
        except OSError:
            continue
        state = stat[stat.rfind(")") + 2 :].split()[:1]
        if [part.decode(errors="replace") for part in argv] == wanted and state not in (
            ["Z"],
            ["X"],
        ):
            found.append(int(name))
    return found


class Fifo:
    """A named pipe through which a test and a shell command signal each other without polling:
    `echo > PATH` in the command wakes `await fifo.wait()`, and `fifo.send()` wakes a
    `read _ < PATH` in the command. The test holds the pipe open for reading and writing, so
    neither side's open blocks whoever comes first, and a line sent early waits in the pipe."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)

    async def wait(self) -> str:
        """The next line the command wrote (without its newline)."""
        data = b""
        while not data.endswith(b"\n"):
            await anyio.wait_readable(self._fd)
            try:
                data += os.read(self._fd, 1)
            except BlockingIOError:
                continue
        return data[:-1].decode()

    def send(self, line: str = "go") -> None:
        os.write(self._fd, line.encode() + b"\n")

    def close(self) -> None:
        os.close(self._fd)


async def until_gone(pids: Iterable[int], deadline: float = 30.0) -> None:
    """Return once every process in `pids` has ended. Each is watched through a pidfd, which
    becomes readable when the process exits, whoever its parent is (Linux 5.3+): an event, not
    a poll. A pid already gone is skipped. The deadline is a hang detector sized for a loaded
    machine, not a speed limit."""
    with anyio.fail_after(deadline):
        for pid in pids:
            try:
                descriptor = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                await anyio.wait_readable(descriptor)
            finally:
                os.close(descriptor)
