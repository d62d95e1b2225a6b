"""The append-only JSONL session tree: transcripts that never lose a word.

`SessionStore` finds, lists, creates, forks and deletes sessions; a `Session` is one open file:
its tree of entries, its current leaf and the request history they imply. One process writes a
session at a time (`sessions.writer_lock`; `SessionBusy` elsewhere), every append is synced before
it returns, and calls a stopped process left without results are answered when the next one
takes the session (`sessions.repair`).

The names below load on first use (PEP 562): `sessions.ids` and `sessions.reserve` alone must
stay importable without the store, because the ACP server answers `session/new` with a new id
(its file reserved) before the session machinery has loaded (`acp_server.opening`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessions.entries import (
        FORMAT_VERSION,
        CompactionEntry,
        Entry,
        ExtensionEntry,
        ForkOrigin,
        Header,
        LeafMoveEntry,
        MessageEntry,
        ModeChangeEntry,
        ModelChangeEntry,
        ParentLink,
        TitleEntry,
        UndoSnapshotEntry,
        UnknownEntry,
    )
    from sessions.errors import (
        EntryNotFound,
        Holder,
        InvalidCursor,
        SessionBusy,
        SessionNotFound,
        SessionUnreadable,
        SessionWriteFailed,
    )
    from sessions.ids import new_id
    from sessions.paths import data_dir
    from sessions.repair import INTERRUPTED_BY_STOP
    from sessions.session import Session
    from sessions.store import SessionPage, SessionStore, SessionSummary, cwd_hash

_HOMES = {
    "sessions.entries": (
        "FORMAT_VERSION",
        "INTERRUPTED_BY_STOP",
        "CompactionEntry",
        "Entry",
        "ExtensionEntry",
        "ForkOrigin",
        "Header",
        "LeafMoveEntry",
        "MessageEntry",
        "ModeChangeEntry",
        "ModelChangeEntry",
        "ParentLink",
        "TitleEntry",
        "UndoSnapshotEntry",
        "UnknownEntry",
    ),
    "sessions.errors": (
        "EntryNotFound",
        "Holder",
        "InvalidCursor",
        "SessionBusy",
        "SessionNotFound",
        "SessionUnreadable",
        "SessionWriteFailed",
    ),
    "sessions.ids": ("new_id",),
    "sessions.paths": ("data_dir",),
    "sessions.repair": ("INTERRUPTED_BY_STOP",),
    "sessions.session": ("Session",),
    "sessions.store": ("SessionPage", "SessionStore", "SessionSummary", "cwd_hash"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "FORMAT_VERSION",
    "INTERRUPTED_BY_STOP",
    "CompactionEntry",
    "Entry",
    "EntryNotFound",
    "ExtensionEntry",
    "ForkOrigin",
    "Header",
    "Holder",
    "InvalidCursor",
    "LeafMoveEntry",
    "MessageEntry",
    "ModeChangeEntry",
    "ModelChangeEntry",
    "ParentLink",
    "Session",
    "SessionBusy",
    "SessionNotFound",
    "SessionPage",
    "SessionStore",
    "SessionSummary",
    "SessionUnreadable",
    "SessionWriteFailed",
    "TitleEntry",
    "UndoSnapshotEntry",
    "UnknownEntry",
    "cwd_hash",
    "data_dir",
    "new_id",
]


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'sessions' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
