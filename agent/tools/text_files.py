"""Text files as the tools read and write them: through the session's file backend inside the
roots (an editor's buffers), from disk elsewhere; size limits, binary detection, diffs, and the
rule that a file is read before it is changed."""

from __future__ import annotations

import difflib
import hashlib
import stat
from collections.abc import Sequence
from pathlib import Path

from agent.local import LocalFiles
from agent.regular_files import check_regular, read_regular
from agent.tools.base import ToolContext, ToolError

MAX_TEXT_FILE_BYTES = 20_000_000
"""Larger text files are not loaded whole (read, edit, write refuse and point at bash)."""
PREVIEW_FILE_BYTES = 2_000_000
"""Largest file `ui()` reads synchronously to show a proposed diff."""

_local_files = LocalFiles()


def inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


async def read_text(ctx: ToolContext, path: Path) -> str:
    """A text file's content. Inside the roots it goes through the session's file backend (an
    editor's unsaved buffer counts); elsewhere it is read from disk.

    Raises:
        ToolError: missing, a directory, binary, unreadable or too large.
    """
    try:
        info = path.stat()
        size = info.st_size
        if not stat.S_ISDIR(info.st_mode):
            # A FIFO or a device would block or never end (`/dev/zero`): never opened.
            check_regular(path, info.st_mode)
    except FileNotFoundError:
        size = None
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror or error}") from error
    if size is not None and size > MAX_TEXT_FILE_BYTES:
        raise ToolError(
            f"{path} is {size} bytes, too large to load whole. Use bash (e.g. `sed -n '1,200p'`, "
            "`head`, `tail`) or grep to look at parts of it."
        )
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file. Use the ls tool to list it.")
    if size is not None and looks_binary(path):
        raise ToolError(f"{path} is a binary file; it cannot be shown as text.")
    files = ctx.files if inside(path, ctx.roots) else _local_files
    try:
        return await files.read_text(path)
    except FileNotFoundError as error:
        raise ToolError(f"File not found: {path}") from error
    except IsADirectoryError as error:
        raise ToolError(
            f"{path} is a directory, not a file. Use the ls tool to list it."
        ) from error
    except UnicodeDecodeError as error:
        raise ToolError(f"{path} is not UTF-8 text (binary?); it cannot be shown.") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied reading {path}") from error


async def write_text(ctx: ToolContext, path: Path, content: str) -> None:
    """Write through the session's file backend inside the roots, to disk elsewhere."""
    files = ctx.files if inside(path, ctx.roots) else _local_files
    try:
        await files.write_text(path, content)
    except IsADirectoryError as error:
        raise ToolError(f"{path} is a directory, not a file.") from error
    except PermissionError as error:
        raise ToolError(f"Permission denied writing {path}") from error
    except NotADirectoryError as error:
        raise ToolError(f"Cannot create {path}: a parent is a file, not a directory") from error


def looks_binary(path: Path) -> bool:
    """NUL bytes in the first 8 KiB (how git and grep decide)."""
    try:
        head, _ = read_regular(path, 8192)
    except OSError:
        return False
    return b"\x00" in head


def preview_text(path: Path) -> str | None:
    """The file as on disk, for `ui()` previews (synchronous, small files only); None when it
    cannot be shown."""
    try:
        data, more = read_regular(path, PREVIEW_FILE_BYTES)
        return None if more else data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
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
