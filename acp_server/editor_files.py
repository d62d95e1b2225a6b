"""Reading and writing through the editor (`fs/read_text_file`, `fs/write_text_file`) without
letting a swapped directory redirect it (issue 24).

The editor opens the path itself, so earshot cannot hand it a descriptor. What it sends is the
REAL path the permission gate decided on (no symbolic link in it), and around the editor's
request it holds that place open and compares the directories from the workspace root down:

- a read: the file is opened exactly first (the decided file, a regular file, not binary); the
  editor's text is used only if no directory on the way changed while it read (device, inode,
  change and modification times), else the text of the file held open is used instead (what the
  decision was about; an unsaved buffer is then not seen, rarely);
- a write: the directory is opened exactly (made if missing) first; afterwards the directories
  above it must be unchanged, it must be the same directory, and the file in it must be a
  regular file holding what was written. Otherwise the write is reported as possibly redirected
  (`PathChanged`): the editor may have written through a link swapped in during its request,
  which earshot cannot undo. That window (one editor round trip, and only for a directory inside
  the workspace replaced meanwhile) is the one not closed; writes without an editor have none.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio.to_thread

from agent.files import (
    READ_FLAGS,
    Expected,
    FileId,
    PathChanged,
    check_expected,
    check_regular,
    directory_chain,
    open_directory,
    open_exact,
    open_for_reading,
    read_descriptor,
)
from providers.records import MutableRecord

_SNIFF_BYTES = 8192
Chain = tuple[tuple[int, int, int, int], ...]


class _HeldFile(MutableRecord, kw_only=False):
    fd: int
    chain: Chain
    binary: bool


def _hold_file(root: Path, path: Path, expected: Expected) -> _HeldFile:
    fd = open_for_reading(path)
    try:
        status = os.fstat(fd)
        check_regular(path, status.st_mode)
        check_expected(path, FileId.of(status), expected)
        head = os.pread(fd, _SNIFF_BYTES, 0)
        return _HeldFile(fd, directory_chain(root, path.parent), b"\0" in head)
    except BaseException:
        os.close(fd)
        raise


def _local_text(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    data, _ = read_descriptor(fd, None)
    return data.decode("utf-8")


def _unchanged(root: Path, path: Path, chain: Chain) -> bool:
    try:
        return directory_chain(root, path.parent) == chain
    except (OSError, ValueError):
        return False


async def read_through_editor(
    root: Path, path: Path, expected: Expected, ask: Callable[[], Awaitable[str | None]]
) -> str:
    """The editor's text of `path` (`ask()`; None: it has none), unless the place changed while
    it read (then the text of the file held open).

    Raises:
        PathChanged, FileNotFoundError, IsADirectoryError, NotARegularFile, UnicodeDecodeError.
    """
    held = await anyio.to_thread.run_sync(_hold_file, root, path, expected)
    try:
        if held.binary:
            raise UnicodeDecodeError("utf-8", b"\0", 0, 1, "a binary file")
        text = await ask()
        if text is None or not await anyio.to_thread.run_sync(_unchanged, root, path, held.chain):
            return await anyio.to_thread.run_sync(_local_text, held.fd)
        return text
    finally:
        os.close(held.fd)


def _prepare_directory(root: Path, path: Path) -> tuple[Chain, FileId]:
    fd = open_directory(path.parent, create=True)
    try:
        directory = FileId.of(os.fstat(fd))
        try:
            existing = os.stat(path.name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISLNK(existing.st_mode):
            raise PathChanged(path, "a symbolic link is in its place now")
    finally:
        os.close(fd)
    return directory_chain(root, path.parent)[:-1], directory


def _landed(root: Path, path: Path, before: Chain, directory: FileId, content: bytes) -> str | None:
    """None when the write is where it was meant to be; else what is wrong."""
    try:
        chain = directory_chain(root, path.parent)
    except (OSError, ValueError) as error:
        return f"its directory cannot be opened exactly now ({error})"
    if chain[:-1] != before or (chain[-1][0], chain[-1][1]) != (directory.dev, directory.ino):
        return "a directory on its way was replaced during the editor's write"
    try:
        fd = open_exact(path, READ_FLAGS)
    except OSError as error:
        return f"the file is not there as a regular file ({error.strerror or error})"
    try:
        data, _ = read_descriptor(fd, len(content) + 1)
    finally:
        os.close(fd)
    return None if data == content else "the file there does not hold what was written"


async def write_through_editor(
    root: Path, path: Path, content: str, send: Callable[[], Awaitable[None]]
) -> None:
    """Have the editor write `content` to `path` (`send()`), checking the place before and
    after (see the module docstring).

    Raises:
        PathChanged: the place changed; the editor's write may have gone elsewhere.
        OSError: the directory cannot be made or opened.
    """
    before, directory = await anyio.to_thread.run_sync(_prepare_directory, root, path)
    await send()
    wrong = await anyio.to_thread.run_sync(
        _landed, root, path, before, directory, content.encode("utf-8")
    )
    if wrong is not None:
        raise PathChanged(
            path,
            f"the editor's write may have gone elsewhere: {wrong} (a directory or link swapped "
            "in meanwhile)",
        )
