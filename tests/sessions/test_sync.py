"""An append is acknowledged only once its line is synced, and the sync runs off the event loop:
a slow disk holds up the session that writes, not every other session of the process. The
files, threads and locks are real; only the disk flush (`sessions.files._sync`) is watched, or
made to wait or fail."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from providers.types import Message, TextPart
from sessions import MessageEntry, SessionStore, SessionWriteFailed, files

WAIT = 10


def entry(text: str) -> MessageEntry:
    return MessageEntry(message=Message(role="user", parts=[TextPart(text=text)]))


class Disk:
    """The flush every append ends with: it notes the file's size when asked, can be held until
    released (for one file descriptor), and can fail once."""

    def __init__(self, real: Callable[[int], None]) -> None:
        self._real = real
        self.synced_sizes: list[int] = []
        self.hold_fd: int | None = None
        self.entered = threading.Event()
        self.release = threading.Event()
        self.fail_next = False

    def __call__(self, fd: int) -> None:
        if fd == self.hold_fd:
            self.entered.set()
            assert self.release.wait(WAIT)
        if self.fail_next:
            self.fail_next = False
            raise OSError(errno.EIO, "I/O error")
        self._real(fd)
        self.synced_sizes.append(os.fstat(fd).st_size)


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    watched = Disk(files._sync)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(files, "_sync", watched)
    return watched


def session_fd(path: Path) -> int:
    """The descriptor this process holds the session file open with."""
    for link in Path("/proc/self/fd").iterdir():
        try:
            if Path(os.readlink(link)) == path:
                return int(link.name)
        except OSError:
            continue
    raise AssertionError(f"{path} is not open")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
async def test_an_append_returns_only_once_its_line_is_synced(
    store: SessionStore, project: Path, disk: Disk
) -> None:
    session = await store.create(project)
    path = session.path
    disk.hold_fd = session_fd(path)
    returned = anyio.Event()

    async def append() -> None:
        await session.append(entry("hello"))
        returned.set()

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(append)
            await anyio.to_thread.run_sync(disk.entered.wait)
            # Written (another process can read it), not yet synced: not acknowledged.
            assert b"hello" in path.read_bytes()
            for _ in range(10):  # the loop runs other tasks meanwhile; the append still waits
                await anyio.lowlevel.checkpoint()
            assert not returned.is_set()
            disk.release.set()
    assert disk.synced_sizes[-1] == path.stat().st_size  # the sync covered the whole line
    await session.aclose()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
async def test_a_slow_disk_holds_up_only_the_session_that_writes(
    store: SessionStore, project: Path, disk: Disk
) -> None:
    slow, other = await store.create(project), await store.create(project)
    disk.hold_fd = session_fd(slow.path)
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(slow.append, entry("stuck behind the disk"))
            await anyio.to_thread.run_sync(disk.entered.wait)
            for n in range(3):  # the other session appends, synced, while the first one waits
                await other.append(entry(f"other {n}"))
            assert b"stuck behind the disk" not in b"".join(
                line for line in other.path.read_bytes().splitlines()
            )
            disk.release.set()
    assert [m.text for m in other.history()] == ["other 0", "other 1", "other 2"]
    assert [m.text for m in slow.history()] == ["stuck behind the disk"]
    await slow.aclose()
    await other.aclose()


async def test_a_failed_sync_leaves_nothing_and_the_next_append_is_whole(
    store: SessionStore, project: Path, disk: Disk
) -> None:
    session = await store.create(project)
    await session.append(entry("before"))
    before = session.path.read_bytes()
    disk.fail_next = True
    with pytest.raises(SessionWriteFailed):
        await session.append(entry("never acknowledged"))
    assert session.path.read_bytes() == before  # cut back off: it was never acknowledged
    await session.append(entry("after"))
    await session.aclose()
    reopened = await store.open(session.id)
    assert [m.text for m in reopened.history()] == ["before", "after"]
    await reopened.aclose()
