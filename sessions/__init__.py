"""The append-only JSONL session tree: transcripts that never lose a word.

`SessionStore` finds, lists, creates, forks and deletes sessions; a `Session` is one open file:
its tree of entries, its current leaf and the request history they imply.
"""

from __future__ import annotations

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
    TitleEntry,
    UndoSnapshotEntry,
    UnknownEntry,
)
from sessions.errors import EntryNotFound, InvalidCursor, SessionNotFound, SessionUnreadable
from sessions.ids import new_id
from sessions.paths import data_dir
from sessions.session import Session
from sessions.store import SessionPage, SessionStore, SessionSummary, cwd_hash

__all__ = [
    "FORMAT_VERSION",
    "CompactionEntry",
    "Entry",
    "EntryNotFound",
    "ExtensionEntry",
    "ForkOrigin",
    "Header",
    "InvalidCursor",
    "LeafMoveEntry",
    "MessageEntry",
    "ModeChangeEntry",
    "ModelChangeEntry",
    "Session",
    "SessionNotFound",
    "SessionPage",
    "SessionStore",
    "SessionSummary",
    "SessionUnreadable",
    "TitleEntry",
    "UndoSnapshotEntry",
    "UnknownEntry",
    "cwd_hash",
    "data_dir",
    "new_id",
]
