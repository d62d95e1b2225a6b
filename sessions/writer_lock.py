"""One writer per session: a lock a process holds for as long as it has the session open.

The lock is an exclusive `flock` on `<session-id>.lock` beside the transcript, taken without
waiting. The kernel releases it when the holder closes it or dies (SIGKILL included), so a crashed
writer never leaves a session locked; the descriptor is close-on-exec, so a tool's child process
never inherits it. The file is never deleted while the session exists (deleting a lock file races
with a process that has just opened it); what it holds is only a label, the holder's pid, what it
is and since when, for the error another process shows. The flock is the truth; the label can be
stale (a holder that died), and is then overwritten by the next holder.

The per-append `flock` on the transcript itself (`sessions.files`) stays: it keeps each line whole
even against a writer that does not take this lock (an older earshot).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from sessions.errors import Holder
from sessions.reserve import take_reserved_lock
from sessions.times import utc_now

if sys.platform == "win32":  # pragma: no cover - not exercised in CI
    import msvcrt

    def _try_lock(fd: int) -> bool:
        # Lock a byte far past the label, so reading the label is never blocked.
        os.lseek(fd, 1 << 20, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_LABEL_LIMIT = 4096
DEFAULT_PROCESS = "earshot"


def lock_path(session_path: Path) -> Path:
    return session_path.with_suffix(".lock")


class WriterLock:
    """A held writer lock; `release()` (or the process ending) lets it go."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def try_acquire(cls, session_path: Path, process: str = DEFAULT_PROCESS) -> WriterLock | None:
        """The lock, or None when another process (or another open `Session` of this process)
        holds it.

        Raises:
            OSError: the lock file cannot be created or opened (a read-only or full file system).
        """
        path = lock_path(session_path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC | _BINARY, 0o600)
        try:
            if not _try_lock(fd):
                os.close(fd)
                return None
            lock = cls(path, fd)
            lock._label(process)
        except BaseException:
            os.close(fd)
            raise
        return lock

    @classmethod
    def take_reserved(cls, session_path: Path, process: str = DEFAULT_PROCESS) -> WriterLock | None:
        """The lock this process took when it reserved the session (`sessions.reserve`), for
        the build that adopts it; None when it reserved none."""
        path = lock_path(session_path)
        fd = take_reserved_lock(path)
        if fd is None:
            return None
        lock = cls(path, fd)
        lock._label(process)
        return lock

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def release(self) -> None:
        """Idempotent. The label stays behind (harmless: the lock is free)."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def _label(self, process: str) -> None:
        label = json.dumps({"pid": os.getpid(), "process": process, "since": utc_now()})
        data = label.encode("utf-8", "replace")[:_LABEL_LIMIT]
        try:
            os.ftruncate(self._fd, 0)
            os.lseek(self._fd, 0, os.SEEK_SET)
            os.write(self._fd, data)
        except OSError:
            # A full disk: the lock is held all the same; other processes just cannot name us.
            pass


def read_holder(session_path: Path) -> Holder | None:
    """What the current (or last) holder wrote about itself; None when nothing readable is
    there."""
    try:
        with open(lock_path(session_path), "rb") as handle:
            data = handle.read(_LABEL_LIMIT)
        value = json.loads(data)
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    pid = value.get("pid")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    process = value.get("process")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    since = value.get("since")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return Holder(
        pid=pid if isinstance(pid, int) else None,
        process=process[:200] if isinstance(process, str) else None,
        since=since[:40] if isinstance(since, str) else None,
    )
