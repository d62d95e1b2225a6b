"""Which files the index covers, and reading one safely.

The list comes from a real process that knows the ignore rules: `git ls-files --cached --others
--exclude-standard` in a git work tree (tracked files plus untracked ones that no ignore file
excludes), else `rg --files` (ripgrep applies `.gitignore`, `.ignore` and `.rgignore` without a
repository too). Both print paths relative to the root. Only files `agent.codeindex.languages`
indexes are kept; the rest is never opened.

A listed path may be anything by the time it is read: a symlink (perhaps to `~/.ssh/id_rsa`), a
directory on its way swapped for one, a FIFO that would block the read, a huge generated file, a
hard link to a file a deny rule names. `stat_entry` uses `lstat`, so symlinks are skipped rather
than followed, and only regular files up to `MAX_FILE_BYTES` are indexed; `read_source` opens
the file beneath the work tree's directory held open, following no link on the way
(`agent.files.safe_paths`), non-blocking, and checks the descriptor again (a regular file with one
name), so a path swapped between the two calls cannot slip through either.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent.codeindex.languages import is_indexed
from agent.files import (
    READ_FLAGS,
    open_directory,
    open_exact,
    opened_directory,
    read_descriptor,
)

MAX_FILE_BYTES: Final = 512 * 1024
"""Larger files are generated code or data: not indexed."""
LIST_TIMEOUT: Final = 120.0


class ListingFailed(Exception):
    """Neither git nor ripgrep could list the files."""


@dataclass(frozen=True, slots=True)
class StatEntry:
    """What decides whether a cached entry is still current."""

    mtime_ns: int
    size: int


def list_files(root: Path) -> list[str]:
    """The indexable files under `root`, relative POSIX paths, ignored files left out.

    Raises:
        ListingFailed: neither `git` nor `rg` could list them.
    """
    listed = _git_files(root)
    if listed is None:
        listed = _rg_files(root)
    if listed is None:
        raise ListingFailed(
            f"cannot list the files of {root}: it is not a git work tree and ripgrep (`rg`) is "
            "not installed"
        )
    return sorted({path for path in listed if path and is_indexed(path)})


def _run(args: list[str], root: Path) -> list[str] | None:
    try:
        result = subprocess.run(
            args,
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=LIST_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return [os.fsdecode(item) for item in result.stdout.split(b"\0")]


def _git_files(root: Path) -> list[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    # -z: paths as they are (no quoting of unusual characters); core.quotepath is then moot.
    return _run(
        [git, "-c", "core.fsmonitor=false", "ls-files", "-z", "--cached", "--others",
         "--exclude-standard"],
        root,
    )  # fmt: skip


def _rg_files(root: Path) -> list[str] | None:
    rg = shutil.which("rg")
    if rg is None:
        return None
    return _run(
        [rg, "--no-config", "--files", "--null", "--hidden", "--no-require-git",
         "--glob=!.git", "--no-messages"],
        root,
    )  # fmt: skip


def stat_entry(root: Path, path: str) -> StatEntry | None:
    """The file's stat if it is a regular file (not a symlink) of indexable size, else None."""
    try:
        info = os.lstat(root / path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
        return None
    return StatEntry(mtime_ns=info.st_mtime_ns, size=info.st_size)


def read_source(root: Path | int, path: str) -> tuple[bytes, StatEntry] | None:
    """The content of a regular file and its stat taken on the open descriptor (so the two
    agree), or None when it is gone, not a regular file, a symlink, too large, or has another
    name (a hard link: the other name may be one a `Read` deny rule covers). `root`: the work
    tree, or a descriptor holding it (`held_root`); the file is opened beneath it with no link
    followed on the way."""
    try:
        if isinstance(root, int):
            fd = open_exact(path, READ_FLAGS, dir_fd=root)
        else:
            with opened_directory(os.path.realpath(root)) as held:
                fd = open_exact(path, READ_FLAGS, dir_fd=held)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES or info.st_nlink > 1:
            return None
        data, more = read_descriptor(fd, MAX_FILE_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    if more:
        return None
    return data, StatEntry(mtime_ns=info.st_mtime_ns, size=info.st_size)


def held_root(root: Path) -> int | None:
    """A descriptor holding the work tree's directory (opened exactly where it resolves now),
    for `read_source`; None when it cannot be opened. The caller closes it."""
    try:
        return open_directory(os.path.realpath(root))
    except (OSError, ValueError):
        return None
