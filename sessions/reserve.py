"""A new session's file, written before the session behind it is built.

The ACP server answers `session/new` before the session behind it is built
(`acp_server.opening`). A client may hand the id to another process at once: acpx's
documented flow is `sessions new` in one process, then `prompt` in another, which sends
`session/load` or `session/resume`. That process looks the id up on disk, so "the session exists"
has to mean "its file is on disk when the answer is written", not "once this process has built
it" (which takes a few hundred milliseconds, and never happens if the client closes our input
first). So the answer is preceded by `reserve`: the header line alone, the file `SessionStore`
would have written, under the id the answer announces. The build then adopts that file
(`SessionStore.create` with the same id) and appends to it.

The reserving process takes the session's writer lock (`sessions.writer_lock`) before the file
appears, and keeps it for the build (`take_reserved_lock`): another process that loads the id at
once reads the session but cannot take it from the process that announced it.

Stdlib only, and cheap (well under a millisecond on an idle machine): it runs before the
`session/new` answer, before pydantic or the session store are loaded. If the session is never
built (the input closed first), the server lets the lock go (`take_reserved_lock`). The file
appears atomically (written under a dot name, then renamed), so a listing in another process
never sees it half-written. A session nothing was ever said in stays a header-only file:
`session/load` of it replays nothing and starts from the current settings.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

_reserved_locks: dict[str, int] = {}
"""Lock file path -> the descriptor holding the writer lock of a session reserved here, until
its build takes it (`take_reserved_lock`)."""

HEADER_FORMAT_VERSION = 1
"""`sessions.entries.FORMAT_VERSION` (which this module cannot import: it loads the message
types); `tests/sessions/test_reserve.py` keeps the two equal."""
SESSION_SUFFIX = ".jsonl"


def cwd_hash(cwd: Path | str) -> str:
    """The directory name of a cwd's sessions: a short stable hash of its absolute path."""
    absolute = os.path.abspath(cwd)
    return _sha256_hex(absolute.encode("utf-8", "surrogateescape"))[:16]


def _sha256_hex(data: bytes) -> str:
    # CPython's own SHA-256 module loads in ~0.1 ms; `hashlib` loads OpenSSL first (~2 ms, more
    # on a busy machine), and this runs before the first `session/new` is answered.
    import importlib

    for name in ("_sha2", "_sha256", "hashlib"):  # 3.12+, 3.11, anything else
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        digest: str = module.sha256(data).hexdigest()
        return digest
    raise ImportError("no SHA-256 implementation")


def _utc_now() -> str:
    """`sessions.times.utc_now` without importing `datetime`."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def reserve(
    root: Path,
    *,
    session_id: str,
    cwd: str,
    additional_directories: Sequence[str] = (),
    earshot_version: str,
) -> Path:
    """Write the header-only file of a new session under `root` (the store's root) and return
    its path. `cwd` and `additional_directories` must be absolute (`SessionStore.create` adopts
    the file only for the same cwd).

    Raises:
        FileExistsError: a session already has this id.
        OSError: the data directory cannot be written.
    """
    directory = root / cwd_hash(cwd)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / f"{session_id}{SESSION_SUFFIX}"
    if path.exists():
        raise FileExistsError(path)
    header = {
        "kind": "header",
        "version": HEADER_FORMAT_VERSION,
        "session_id": session_id,
        "cwd": cwd,
        "created": _utc_now(),
        "earshot_version": earshot_version,
        "forked_from": None,
        "additional_directories": list(additional_directories),
    }
    line = json.dumps(header, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n"
    _lock_before_it_exists(path)
    try:
        _write_header(directory / f".{session_id}.{os.getpid()}.reserve", path, line)
    except BaseException:
        fd = take_reserved_lock(path.with_suffix(".lock"))
        if fd is not None:
            os.close(fd)
        raise
    return path


def _write_header(temporary: Path, path: Path, line: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, 0o600)
    try:
        # Not synced: what must hold is that every process sees the file once the answer is out,
        # which the page cache gives. A power cut can lose an empty session, never a word said
        # (the first append is synced), and `fdatasync` measured 3-40 ms on a busy machine.
        os.write(fd, line.encode("ascii"))
    finally:
        os.close(fd)
    try:
        os.rename(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _lock_before_it_exists(path: Path) -> None:
    """Take the session's writer lock (`sessions.writer_lock`: an exclusive `flock` on
    `<id>.lock`, labelled with our pid) and keep it for the build."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the build takes the lock
        return
    lock = str(path.with_suffix(".lock"))
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        label = json.dumps({"pid": os.getpid(), "process": None, "since": _utc_now()})
        os.ftruncate(fd, 0)
        os.write(fd, label.encode("ascii"))
    except BaseException:
        os.close(fd)
        raise
    _reserved_locks[lock] = fd


def take_reserved_lock(lock_path: Path) -> int | None:
    """The descriptor holding the writer lock of a session this process reserved (it is the
    caller's to close from now on); None when there is none."""
    return _reserved_locks.pop(str(lock_path), None)
