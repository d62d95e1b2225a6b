"""Undo: per-batch snapshots of the work tree in a git object store of earshot's own, shared by
every session in a project, and putting files back exactly where they were. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.undo.repository import SnapshotFailed
    from agent.undo.store import UndoResult, UndoStore

__all__ = [
    "SnapshotFailed",
    "UndoResult",
    "UndoStore",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "repository": ("SnapshotFailed",),
            "store": ("UndoResult", "UndoStore"),
        },
    )
