"""The placeholders of the Linux command sandbox (`agent.sandbox.linux`): bwrap needs a mount
point for a protected place that does not exist yet (`.earshot/` in a fresh project), creates it
in the real directory, and those empty directories are removed when no command stands on them
any more, whichever earshot started the command."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from agent.sandbox.engine import SandboxRefused

DIRECTORY_LOCK_WAIT_SECONDS = 5.0
"""How long a command waits for a directory another process holds locked (`DirectoryLocks`)."""


class DirectoryLocks:
    """Shared locks (`flock`) on the directories that hold a command's protected mounts, for as
    long as the command runs.

    A placeholder may be removed only by whoever can lock its directory exclusively: then no
    command stands on it, whichever earshot started that command. The lock is the directory
    itself, so every earshot process of every user agrees on it whatever its environment (two
    `earshot eval` tasks with data dirs of their own share the home directory's start-up files,
    and one must not remove the placeholder the other's `bwrap` is about to mount)."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    async def take(self, directories: Iterable[str]) -> bool:
        """Lock these too (shared); True when any was not locked before: a lock waited for may
        have let another command change what is there, so the caller plans again."""
        added = False
        for directory in sorted(set(directories) - self._fds.keys()):
            try:
                fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue  # gone: the next plan sees that
            self._fds[directory] = fd
            await _shared(fd, directory)
            added = True
        return added

    def exclusive(self, directory: str) -> bool:
        """Whether this process alone now holds `directory` (exclusively). A refused upgrade
        may drop the shared lock (flock conversions are not atomic): call it only when done."""
        fd = self._fds.get(directory)
        if fd is None:
            try:
                fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                return False
            self._fds[directory] = fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


async def _shared(fd: int, directory: str) -> None:
    """Lock `fd` shared. An earshot removing a placeholder holds a directory exclusively for
    milliseconds, so the lock is retried briefly; a lock held longer is someone else's (any
    process that can open the directory can lock it, a sandboxed command too): the command is
    refused rather than left waiting."""
    with anyio.move_on_after(DIRECTORY_LOCK_WAIT_SECONDS):
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                await anyio.sleep(0.005)
            else:
                return
    raise SandboxRefused(
        f"another process holds a lock (flock) on {directory}, so the sandbox cannot know "
        "whether its protected places are about to change; end that process and retry"
    )


class Placeholders:
    """The empty directories bwrap creates as mount points for missing protected places, and
    their removal.

    Every sandboxed command holds `<dir>/sandbox.lock` shared while it runs, and records the
    placeholders it is about to create in `<dir>/sandbox-placeholders` (one path a line, appended
    while the lock is held, so no remover can run in between). When it ends, a command that can
    take the lock exclusively (no other sandboxed command of this data dir runs) removes every
    recorded placeholder that is still an empty directory and that no command of any earshot
    stands on (its directory can be locked exclusively, `DirectoryLocks`); the others stay
    recorded, for a later command. Only recorded directories are ever removed: an empty `.git/`
    the user made is theirs. `<dir>` is earshot's data dir, a protected place, so a command can
    neither delete the lock nor forge the record."""

    def __init__(self, directory: Path) -> None:
        self.lock = directory / "sandbox.lock"
        self.record = directory / "sandbox-placeholders"
        self.empty = directory / "sandbox-empty"

    def empty_file(self) -> Path | None:
        """`<dir>/sandbox-empty`, an empty read-only file bound over missing protected files
        (made again if it is anything else); None when it cannot be had."""
        try:
            status = os.lstat(self.empty)
            if stat.S_ISREG(status.st_mode) and status.st_size == 0:
                return self.empty
            self.empty.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            return None
        # Writable by its owner: bound read-only, a write fails with "Read-only file system",
        # which says the sandbox stopped the command (0444 would say "Permission denied").
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            os.close(os.open(self.empty, flags, 0o644))
        except OSError:
            return None
        return self.empty

    @asynccontextmanager
    async def held(self) -> AsyncGenerator[int | None]:
        """The lock, shared, for a command's lifetime; yields its descriptor (None when it cannot
        be had: then placeholders are created but never removed, which litters but is safe)."""
        try:
            self.lock.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            yield None
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                # Someone is removing placeholders (milliseconds): wait in a thread.
                await anyio.to_thread.run_sync(fcntl.flock, fd, fcntl.LOCK_SH)
            yield fd
        finally:
            os.close(fd)

    def add(self, fd: int | None, paths: Sequence[Path]) -> None:
        if fd is None or not paths:
            return
        data = "".join(f"{path}\n" for path in paths).encode("utf-8", errors="surrogateescape")
        record = os.open(self.record, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(record, data)
        finally:
            os.close(record)

    def remove(self, fd: int | None, locks: DirectoryLocks) -> None:
        """Remove the recorded placeholders no command stands on, if no other sandboxed command
        of this data dir runs."""
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another command runs: the last one to finish removes them
        try:
            recorded = self.record.read_bytes().decode("utf-8", errors="surrogateescape")
        except FileNotFoundError:
            return
        if not recorded:
            return
        kept: list[str] = []
        for line in dict.fromkeys(recorded.splitlines()):
            path = Path(line)
            if not path.is_absolute():
                continue
            if not locks.exclusive(str(path.parent)):
                kept.append(line)  # a command of another earshot stands on it
                continue
            with contextlib.suppress(OSError):
                status = os.lstat(path)
                if stat.S_ISDIR(status.st_mode):
                    path.rmdir()  # only an empty directory goes
                elif stat.S_ISREG(status.st_mode) and status.st_size == 0:
                    path.unlink()  # a missing file's mount point, still empty
        data = "".join(f"{line}\n" for line in kept)
        self.record.write_bytes(data.encode("utf-8", errors="surrogateescape"))


__all__ = ["DIRECTORY_LOCK_WAIT_SECONDS", "DirectoryLocks", "Placeholders"]
