"""Text files as the tools read and write them: exactly the place the permission gate decided on
(`agent.files.safe_paths`), through the session's file backend inside the roots (an editor's
buffers), from disk elsewhere; size limits, binary detection, diffs, and the rule that a file is
read before it is changed."""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from agent.files import (
    Decided,
    FileId,
    PathChanged,
    check_expected,
    check_regular,
    open_for_reading,
    read_descriptor,
    read_exact,
)
from agent.local import LocalFiles
from agent.tools.base import ToolContext, ToolError
from agent.tools.services import visible_filter

MAX_TEXT_FILE_BYTES = 20_000_000
"""Larger text files are not loaded whole (read, edit, write refuse and point at bash)."""
PREVIEW_FILE_BYTES = 2_000_000
"""Largest file `ui()` reads synchronously to show a proposed diff."""

_local_files = LocalFiles()


def inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


async def read_text(ctx: ToolContext, target: Decided) -> str:
    """The text of the file the gate decided on (`target`), opened exactly there
    (`agent.files.safe_paths`). Inside the roots it goes through the session's file backend (an
    editor's unsaved buffer counts); elsewhere it is read from disk.

    Raises:
        ToolError: missing, a directory, binary, unreadable, too large, or changed since it was
            checked.
    """
    text = await read_text_if_there(ctx, target)
    if text is None:
        raise ToolError(f"File not found: {target.path}")
    return text


async def read_text_if_there(ctx: ToolContext, target: Decided) -> str | None:
    """`read_text`, or None when nothing is at the path."""
    path = target.path
    try:
        found = _inspect(path, target)
    except FileNotFoundError:
        return None
    except PathChanged as error:
        raise changed(path, error, "read") from error
    except IsADirectoryError as error:
        raise ToolError(
            f"{path} is a directory, not a file. Use the ls tool to list it."
        ) from error
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror or error}") from error
    files = ctx.files if inside(path, ctx.roots) else _local_files
    try:
        return await files.read_text(path, expected=found)
    except FileNotFoundError:
        return None
    except PathChanged as error:
        raise changed(path, error, "read") from error
    except IsADirectoryError as error:
        raise ToolError(
            f"{path} is a directory, not a file. Use the ls tool to list it."
        ) from error
    except UnicodeDecodeError as error:
        raise ToolError(f"{path} is not UTF-8 text (binary?); it cannot be shown.") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied reading {path}") from error


def _inspect(path: Path, target: Decided) -> FileId:
    """The file exactly at `path`, checked against the decision: a regular file of a size that
    can be loaded, not binary (NUL bytes in its first 8 KiB, as git and grep decide). Opened
    non-blocking: a FIFO or a device is never read (`/dev/zero`).

    Raises:
        ToolError: too large or binary. OSError (PathChanged, IsADirectoryError...)."""
    fd = open_for_reading(path)
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        check_regular(path, status.st_mode)
        found = FileId.of(status)
        check_expected(path, found, target.file)
        if status.st_size > MAX_TEXT_FILE_BYTES:
            raise ToolError(
                f"{path} is {status.st_size} bytes, too large to load whole. Use bash (e.g. "
                "`sed -n '1,200p'`, `head`, `tail`) or grep to look at parts of it."
            )
        head, _ = read_descriptor(fd, 8192)
    finally:
        os.close(fd)
    if b"\x00" in head:
        raise ToolError(f"{path} is a binary file; it cannot be shown as text.")
    return found


async def write_text(ctx: ToolContext, path: Path, content: str) -> None:
    """Write the file exactly at `path` (a decided real path: `agent.files.safe_paths`) through the
    session's file backend inside the roots, to disk elsewhere."""
    files = ctx.files if inside(path, ctx.roots) else _local_files
    try:
        await files.write_text(path, content)
    except PathChanged as error:
        raise changed(path, error, "written") from error
    except IsADirectoryError as error:
        raise ToolError(f"{path} is a directory, not a file.") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied writing {path}") from error
    except NotADirectoryError as error:
        raise ToolError(f"Cannot create {path}: a parent is a file, not a directory") from error


def changed(path: Path, error: PathChanged, done: str) -> ToolError:
    """The error for a path that no longer leads where it was checked."""
    return ToolError(
        f"{path} changed while it was being used ({error.strerror}): a symbolic link or a "
        f"directory on its way was replaced since the permission check, so nothing was {done}. "
        "Try again."
    )


def preview_text(ctx: ToolContext, path: Path) -> str | None:
    """The file as on disk, for `ui()` previews (synchronous, small files only); None when it
    cannot be shown, or is not for reading (a `Read` deny rule, a secret)."""
    if not visible_filter(ctx)(path):
        return None
    try:
        data, more, _ = read_exact(path, limit=PREVIEW_FILE_BYTES)
        return None if more else data.decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def require_fresh_read(ctx: ToolContext, path: Path, current: str, *, action: str) -> None:
    """Refuse to change a file the model has not read this session, or that changed since.

    Raises:
        ToolError: never read, or changed since it was read.
    """
    seen = ctx.reads.seen.get(path)
    if seen is None:
        raise ToolError(
            f"You must read {path} with the read tool before you {action} it "
            "(so the change is based on its actual content)."
        )
    if seen != text_hash(current):
        raise ToolError(
            f"{path} has changed since you last read it (by the user, a formatter or another "
            f"tool). Read it again before you {action} it."
        )


def unified_diff(old: str, new: str, label: str, *, context: int = 3) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
        n=context,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
