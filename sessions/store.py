"""Where session files live, and finding, listing, creating, forking and deleting them.

WORK IN PROGRESS: the signatures below are the committed public API; bodies are being filled in.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sessions.entries import ForkOrigin
from sessions.paths import data_dir
from sessions.session import Session


class SessionNotFound(LookupError):
    """No session with that id exists (or its file is not a readable session)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    id: str
    cwd: str
    title: str | None
    created: str
    """ISO 8601 UTC, from the header."""
    updated: str
    """ISO 8601 UTC, the file's modification time."""
    size_bytes: int
    additional_directories: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPage:
    items: builtins.list[SessionSummary]
    next_cursor: str | None


class SessionStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else data_dir() / "sessions"

    async def create(
        self,
        cwd: Path,
        *,
        additional_directories: Sequence[str] = (),
        forked_from: ForkOrigin | None = None,
    ) -> Session:
        raise NotImplementedError

    async def open(self, session_id: str) -> Session:
        raise NotImplementedError

    async def latest(self, cwd: Path) -> Session | None:
        raise NotImplementedError

    def list(
        self, cwd: Path | None = None, *, cursor: str | None = None, limit: int = 50
    ) -> SessionPage:
        raise NotImplementedError

    async def delete(self, session_id: str) -> bool:
        raise NotImplementedError

    async def fork(self, session_id: str, *, at_entry: str | None = None) -> Session:
        raise NotImplementedError
