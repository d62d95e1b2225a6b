"""One undo store, many sessions: its lock, and the private index copy each operation works on.

Every session in a project (threads of one editor window, subagents, other earshot processes)
snapshots into the same store, `<data>/undo/<cwd-hash>.git`, whose index remembers what the last
snapshot hashed. Two git processes staging into one index race for git's `index.lock`, and the
loser dies at once ("Unable to create '...index.lock': File exists"), before reading the paths
piped to it: issue 29's `BrokenResourceError`, 65 snapshots lost of 100 with 20 sessions. Two
rules keep every snapshot:

- **No shared index file.** Each operation works on its own copy (`private_index`: a unique name
  beside the store's index, modification time kept, since git's check for racily clean entries
  compares with it) and, when it succeeded, renames it over the store's index, atomically: the
  next operation starts from what this one hashed. No two git processes ever write one index, and
  a git killed mid-way leaves a lock file on a name nobody uses again (removed with its copy, or,
  its process gone, by the next process to open the store: `remove_dead_copies`).
- **The store's lock where it saves work** (`store_lock`, over `agent.files.lock`: an anyio lock
  per store for the sessions of this process, then an `flock` on `<key>.lock` for other
  processes, a bounded wait). Undos take it (they restore files, and retire refs under git's
  `packed-refs.lock`), and so does staging a work tree with much to hash (the first snapshot
  of a large project): the twentieth session then stats what the first just hashed instead of
  hashing it all again. Staging little (the usual snapshot: a few files changed since the last
  one) runs without it, side by side: measured with 20 sessions (`bench/concurrency.py`),
  queueing every staging cost more than the hashing it saved. Recording a snapshot (objects, a
  new ref) needs no lock, as git writes objects and creates refs safely by itself.
  Correctness never rests on the lock: a wait that runs out (a holder stuck on a hung file
  system) goes on without it, and the private index keeps that safe. Under it, git lock files
  a killed git left in the store are removed (`remove_stale_git_locks`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import time
from collections.abc import AsyncGenerator, Generator
from contextvars import ContextVar
from pathlib import Path
from typing import Final

from agent.files import locked
from providers.logs import get_logger

_log = get_logger(__name__)

LOCK_WAIT: Final = 30.0
"""Seconds an operation waits for the store's lock before going on without it."""
STALE_GIT_LOCK_SECONDS: Final = 60.0
"""A git lock file in the store this old, found while holding the store's lock, was left by a
git that was killed: no git of ours holds one for more than a moment."""

_operation_index: ContextVar[Path | None] = ContextVar("earshot_undo_index", default=None)
_operation_exclusive: ContextVar[bool] = ContextVar("earshot_undo_exclusive", default=False)


@contextlib.asynccontextmanager
async def store_lock(path: Path, *, wait: float = LOCK_WAIT) -> AsyncGenerator[bool]:
    """Hold the store's lock (`path`) for the block (`agent.files.lock.locked`); yields whether
    it is held: when `wait` seconds ran out first, the block runs without it."""
    async with locked(path, wait=wait) as held:
        if not held:
            _log.warning("undo store busy: going on without its lock", lock=str(path), wait=wait)
        yield held


@contextlib.asynccontextmanager
async def store_operation(
    lock: Path, index: Path, git_dir: Path, wait: float = LOCK_WAIT, *, exclusive: bool = True
) -> AsyncGenerator[Path]:
    """One operation on the store, on its own copy of `index` (`private_index`), which
    `operation_index()` returns inside the block (in this task, and tasks it starts); if
    `exclusive`, under the store's lock too (`store_lock` on `lock`; git's leftover lock files
    removed once held), which `operation_exclusive()` then says."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    async with contextlib.AsyncExitStack() as stack:
        if exclusive and await stack.enter_async_context(store_lock(lock, wait=wait)):
            remove_stale_git_locks(git_dir)
        private = stack.enter_context(private_index(index))
        tokens = (_operation_index.set(private), _operation_exclusive.set(exclusive))
        try:
            yield private
        finally:
            _operation_exclusive.reset(tokens[1])
            _operation_index.reset(tokens[0])


def operation_exclusive() -> bool:
    """Whether the operation running in this task holds (or waited for) the store's lock."""
    return _operation_exclusive.get()


def operation_index() -> Path | None:
    """The index copy of the operation running in this task (`store_operation`), if any."""
    return _operation_index.get()


@contextlib.contextmanager
def private_index(shared: Path) -> Generator[Path]:
    """A copy of the index at `shared` for one operation (`<name>.<pid>.<random>`; an empty
    index when there is none yet). When the block ends without an exception the copy replaces
    `shared` (atomically: a concurrent copy reads the old file or the new one); otherwise it is
    removed, with any lock file git left beside it."""
    private = shared.with_name(f"{shared.name}.{os.getpid()}.{secrets.token_hex(4)}")
    with contextlib.suppress(FileNotFoundError):
        shutil.copy2(shared, private)  # keeps the mtime, which git's racy-entry check reads
    try:
        yield private
        if private.exists():
            os.replace(private, shared)
    finally:
        for leftover in (private, Path(f"{private}.lock")):
            with contextlib.suppress(OSError):
                leftover.unlink()


def remove_dead_copies(shared: Path) -> None:
    """Remove the index copies (and their lock files) of processes that are gone: a process
    killed during an operation leaves its copy behind."""
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) would end the process
        return
    prefix = f"{shared.name}."
    with contextlib.suppress(OSError):
        for entry in shared.parent.iterdir():
            name = entry.name
            if not name.startswith(prefix) or entry == shared:
                continue
            parts = name[len(prefix) :].split(".")
            if len(parts) < 2 or not parts[0].isdigit() or _running(int(parts[0])):
                continue
            with contextlib.suppress(OSError):
                entry.unlink()


def remove_stale_git_locks(git_dir: Path) -> None:
    """Remove the lock files of git processes killed in the store (call it holding the store's
    lock, so that no git of ours is running there; the age covers an older earshot without it)."""
    now = time.time()
    for name in ("packed-refs.lock", "config.lock", "HEAD.lock"):
        path = git_dir / name
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > STALE_GIT_LOCK_SECONDS:
                path.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: running
    return True
