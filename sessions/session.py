"""One open session: its tree of entries and its write queue.

WORK IN PROGRESS: the signatures below are the committed public API; bodies are being filled in.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from providers.types import Message, ReasoningEffort
from sessions.entries import Entry, Header, LeafMoveEntry, MessageEntry

E = TypeVar("E", bound=Entry)


class Session:
    id: str
    cwd: Path
    path: Path
    header: Header

    @property
    def entries(self) -> Sequence[Entry]:
        raise NotImplementedError

    @property
    def leaf_id(self) -> str | None:
        raise NotImplementedError

    @property
    def title(self) -> str | None:
        raise NotImplementedError

    @property
    def model(self) -> str | None:
        raise NotImplementedError

    @property
    def reasoning_effort(self) -> ReasoningEffort | None:
        raise NotImplementedError

    @property
    def mode(self) -> str | None:
        raise NotImplementedError

    def path_entries(self) -> list[Entry]:
        raise NotImplementedError

    def history(self) -> list[Message]:
        raise NotImplementedError

    def get(self, entry_id: str) -> Entry | None:
        raise NotImplementedError

    async def append(self, entry: E) -> E:
        raise NotImplementedError

    async def append_message(self, message: Message) -> MessageEntry:
        raise NotImplementedError

    async def rewind(self, entry_id: str | None) -> LeafMoveEntry:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError
