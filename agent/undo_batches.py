"""Undo for a session: a snapshot before each batch of mutating calls, recorded in the transcript,
and `/undo`, which restores the last one (`agent.undo.UndoStore` keeps the files)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent.session_transcript import SessionTranscript
from agent.undo import UndoStore
from sessions import UndoSnapshotEntry, new_id


class BatchUndo:
    def __init__(self, store: UndoStore | None, transcript: SessionTranscript, cwd: Path) -> None:
        self._store = store
        self._transcript = transcript
        self._cwd = cwd

    @property
    def available(self) -> bool:
        return self._store is not None and self._store.available

    def notice(self) -> str | None:
        """Why undo is off in this session, if it is (said once, at the first turn)."""
        if self._store is None or self._store.available:
            return None
        return self._store.unavailable_reason or "undo is unavailable"

    async def snapshot(self, paths: Sequence[Path], whole_tree: bool = False) -> None:
        """Snapshot `paths` (with `whole_tree`: the work tree too) before a batch of mutating
        calls, and record it in the transcript."""
        store = self._store
        if store is None or not store.available:
            return
        session_id = self._transcript.stored.id
        batch_id = new_id()
        snapshot = await store.snapshot(session_id, batch_id, paths, whole_tree=whole_tree)
        if snapshot is None:
            return
        shown = [self._relative(path) for path in paths]
        if whole_tree:
            shown = [".", *(name for name in shown if name.startswith("/"))]
        await self._transcript.record_undo_snapshot(snapshot, batch_id, shown)

    async def undo_last(self) -> str:
        """Restore the files changed by the last batch; says what happened."""
        if self._store is None:
            return "Undo is not available in this session."
        result = await self._store.undo_last(self._transcript.stored.id)
        return result.message

    async def restore(self, snapshots: Sequence[UndoSnapshotEntry]) -> str:
        """Put back what the batches of `snapshots` (oldest first) changed, newest batch first,
        so every file ends as it was before the oldest; says what happened."""
        if self._store is None or not snapshots:
            return "No file changes to restore."
        result = await self._store.restore_snapshots(
            self._transcript.stored.id, [entry.snapshot for entry in reversed(snapshots)]
        )
        return result.message

    def _relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self._cwd))
        except ValueError:
            return str(path)
