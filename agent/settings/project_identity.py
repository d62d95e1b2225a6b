"""Which project a directory holds, beyond its path: what the user's remembered answers are keyed
to (`agent.settings.trust.remembered_file_name`), so that an "always allow `npm run test`" given in
one repository does not apply to another that later takes its path (the directory deleted and
another repository cloned there, a `/tmp/work` reused).

The identity is the directory's inode number and its birth time, and the same of its `.git`
when it has one: a `.git` file (a worktree's pointer) or a `.git` directory holding a `HEAD`. An
empty `.git` directory is no repository: it is what the command sandbox mounts its read-only
placeholder on while a command runs in a project without one (`agent.sandbox.linux`), and a
session that read its settings then must find the same answers as one that read them a moment
before. Why these:

- They survive ordinary work: editing, building, `git checkout`, `git pull`, renaming the
  directory's contents, a reboot. Nothing in the work replaces the directory itself or its
  `.git`.
- They change when the project is replaced: a new directory gets a new birth time, even where
  the file system hands out the freed inode number again (ext4 and tmpfs do, at once), and a
  `rm -rf .git && git init` (another repository in the same directory) gets a new `.git`. Nobody
  can set a birth time (no `utime` for it), so a directory cannot be made to look like another.
- They cost one `statx` per name, on the path that opens a session. A git repository's root
  commit, which would also survive a fresh clone of the same repository, would need a `git`
  process (or reading the object store) before every session, and walking the whole history.
  A fresh clone therefore starts without the old answers, which is the safe side.
- Not the device number: btrfs subvolumes, NFS and other mounts are numbered when they are
  mounted, so it can change at a reboot, and every answer would be lost with it. It is used only
  where no birth time can be had.

Birth time: `statx(2)` on Linux (through the C library; kernel 4.11 and glibc 2.28, and a file
system that records it: ext4, xfs, btrfs, tmpfs...), `st_birthtime` on macOS and the BSDs.
Without one, the identity is the inode and device numbers.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

_STATX_BTIME = 0x800
_AT_FDCWD = -100
_AT_SYMLINK_NOFOLLOW = 0x100
_STATX_SIZE = 256
"""`struct statx`: the mask at 0, the inode at 32, the birth time (seconds, nanoseconds) at 80."""


def directory_identity(directory: Path) -> str:
    """A short text naming the project `directory` holds (see the module docstring); the same
    while the directory and its `.git` are the same objects."""
    own = _identity(directory)
    if own is None:
        return "absent"
    git = directory / ".git"
    mark = _identity(git) if _is_repository(git) else None
    return own if mark is None else f"{own} git {mark}"


def _is_repository(git: Path) -> bool:
    """Whether `git` (a `.git`, not followed) is a repository's: a file, or a directory that holds
    a `HEAD` (see the module docstring for the empty directory that is not)."""
    try:
        status = os.lstat(git)
    except OSError:
        return False
    if stat.S_ISREG(status.st_mode):
        return True
    return stat.S_ISDIR(status.st_mode) and os.path.lexists(git / "HEAD")


def _identity(path: Path) -> str | None:
    """`ino:<n> born:<s>.<ns>` (or `ino:<n> dev:<n>`) of `path` itself (a link is not followed);
    None when it does not exist."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    born = _birth_time(path)
    if born is None:
        return f"ino:{status.st_ino} dev:{status.st_dev}"
    return f"ino:{status.st_ino} born:{born}"


def _birth_time(path: Path) -> str | None:
    if sys.platform.startswith("linux"):
        return _statx_birth_time(path)
    born = getattr(os.lstat(path), "st_birthtime", None)
    return None if born is None else repr(born)


def _statx_birth_time(path: Path) -> str | None:
    import ctypes  # here: only a session's first settings read needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        statx = libc.statx
    except (OSError, AttributeError):  # no C library symbol (an old glibc, another libc)
        return None
    buffer = ctypes.create_string_buffer(_STATX_SIZE)
    name = os.fsencode(path)
    if statx(_AT_FDCWD, name, _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buffer) != 0:
        return None
    mask = int.from_bytes(buffer.raw[0:4], sys.byteorder)
    if not mask & _STATX_BTIME:
        return None  # the file system does not record it
    seconds = int.from_bytes(buffer.raw[80:88], sys.byteorder, signed=True)
    nanoseconds = int.from_bytes(buffer.raw[88:92], sys.byteorder)
    return f"{seconds}.{nanoseconds:09d}"
