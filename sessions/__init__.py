"""The append-only JSONL session tree: transcripts that never lose a word."""

from __future__ import annotations

from sessions.entries import (
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
from sessions.ids import new_id
from sessions.paths import data_dir
from sessions.session import Session
from sessions.store import SessionNotFound, SessionPage, SessionStore, SessionSummary

__all__ = [
    "CompactionEntry",
    "Entry",
    "ExtensionEntry",
    "ForkOrigin",
    "Header",
    "LeafMoveEntry",
    "MessageEntry",
    "ModeChangeEntry",
    "ModelChangeEntry",
    "Session",
    "SessionNotFound",
    "SessionPage",
    "SessionStore",
    "SessionSummary",
    "TitleEntry",
    "UndoSnapshotEntry",
    "UnknownEntry",
    "data_dir",
    "new_id",
]
