"""Archived sessions: hidden from the editor's default session list, kept whole.

Archiving is a mark beside the session file (`<session-id>.archived`, an empty file), not an
entry in it: the transcript is the conversation, and a session another process has open (its
writer lock held) can be archived without taking it over. Creating or removing the mark is one
atomic directory operation, so two processes archiving at once agree, and a listing pays one
`stat` per session it looks at. Deleting a session removes its mark with it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Literal, TypeAlias

ArchiveFilter: TypeAlias = Literal["exclude", "include", "only"]
"""Which sessions a listing keeps: the unarchived ones, all, or the archived ones."""


def archived_path(session_path: Path) -> Path:
    return session_path.with_suffix(".archived")


def is_archived(session_path: Path) -> bool:
    return archived_path(session_path).exists()


def set_archived(session_path: Path, archived: bool) -> None:
    """Mark (or unmark) the session; doing it twice is no error.

    Raises:
        OSError: the store's directory cannot be written.
    """
    mark = archived_path(session_path)
    if not archived:
        mark.unlink(missing_ok=True)
        return
    with contextlib.suppress(FileExistsError):
        # O_NOFOLLOW: a link planted at the mark's name is never written through.
        fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.close(fd)


def kept(archived: bool, wanted: ArchiveFilter) -> bool:
    match wanted:
        case "include":
            return True
        case "exclude":
            return not archived
        case "only":
            return archived


__all__ = ["ArchiveFilter", "archived_path", "is_archived", "kept", "set_archived"]
