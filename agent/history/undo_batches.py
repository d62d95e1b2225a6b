"""Undo for a session: a snapshot before each batch of mutating calls, recorded in the transcript,
and `/undo`, which restores the last one (`agent.undo.store.UndoStore` keeps the files).

A batch whose snapshot could not be taken is recorded too (an `undo_missing` extension entry:
the batch, why, and its calls), and its calls' results say the change cannot be undone. `/undo`
then does not silently skip it for the batch before: while that batch is the newest not yet
undone, `/undo` says it has no snapshot and why, restores nothing, and records that it said so
(the same entry, `told`); the next `/undo` goes on to the batch before it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from agent.history.session_transcript import SessionTranscript
from agent.undo import SnapshotFailed, UndoResult, UndoStore
from providers.logs import get_logger
from providers.types import JsonValue
from sessions import (
    ExtensionEntry,
    SessionBusy,
    SessionWriteFailed,
    UndoSnapshotEntry,
    extensions,
    new_id,
)

_log = get_logger(__name__)


@dataclass(slots=True)
class TakenSnapshot:
    """A batch's snapshot as the executor sees it (`agent.turn.tooling.BatchSnapshot`)."""

    problem: str | None = None
    store: UndoStore | None = None
    snapshot: str | None = None
    paths: Sequence[Path] = field(default_factory=lambda: ())
    whole_tree: bool = False

    async def seal(self) -> None:
        if self.store is not None and self.snapshot is not None:
            await self.store.seal(self.snapshot, self.paths, whole_tree=self.whole_tree)


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

    async def snapshot(
        self, paths: Sequence[Path], whole_tree: bool = False, calls: Sequence[str] = ()
    ) -> TakenSnapshot:
        """Snapshot `paths` (with `whole_tree`: the work tree too) before a batch of mutating
        calls (`calls`: their titles), and record it in the transcript; or record why it could
        not be taken."""
        store = self._store
        if store is None or not store.available:
            return TakenSnapshot()
        session_id = self._transcript.stored.id
        batch_id = new_id()
        try:
            snapshot = await store.snapshot(session_id, batch_id, paths, whole_tree=whole_tree)
        except Exception as error:
            _log.warning("undo snapshot failed", batch=batch_id, exc_info=True)
            problem = str(error) if isinstance(error, SnapshotFailed) else repr(error)
        else:
            if snapshot is None:
                return TakenSnapshot()
            shown = [self._relative(path) for path in paths]
            if whole_tree:
                shown = [".", *(name for name in shown if name.startswith("/"))]
            await self._transcript.record_undo_snapshot(snapshot, batch_id, shown)
            return TakenSnapshot(None, store, snapshot, tuple(paths), whole_tree)
        data: dict[str, JsonValue] = {
            "batch": batch_id,
            "session": session_id,
            "reason": problem,
            "calls": [*calls],
        }
        await self._transcript.stored.append(
            ExtensionEntry(name=extensions.UNDO_MISSING, data=data)
        )
        return TakenSnapshot(problem)

    async def undo_last(self) -> str:
        """Restore the files changed by the last batch; says what happened."""
        return (await self.undo()).message

    async def undo(self) -> UndoResult:
        """`undo_last`, with whether anything was restored (`earshot undo`'s exit status)."""
        if self._store is None:
            return UndoResult(False, "Undo is not available in this session.")
        missing = await self._newest_missing()
        if missing is not None:
            batch = missing["batch"]
            told = ExtensionEntry(name=extensions.UNDO_MISSING, data={"batch": batch, "told": True})
            calls = cast("list[str]", missing.get("calls") or [])
            what = f" ({'; '.join(calls)})" if calls else ""
            message = (
                f"The last batch of tool calls, {batch}{what}, has no undo snapshot: "
                f"{missing.get('reason')}. It cannot be undone, so nothing was restored; "
            )
            try:
                await self._transcript.stored.append(told)
            except (SessionBusy, SessionWriteFailed):  # open in another process: it says so
                return UndoResult(False, message + "undo there to go on to the batch before.")
            return UndoResult(False, message + "run /undo again to undo the batch before it.")
        return await self._store.undo_last(self._transcript.stored.id)

    async def restore(self, snapshots: Sequence[UndoSnapshotEntry]) -> str:
        """Put back what the batches of `snapshots` (oldest first) changed, newest batch first,
        so every file ends as it was before the oldest; says what happened."""
        if self._store is None or not snapshots:
            return "No file changes to restore."
        result = await self._store.restore_snapshots(
            self._transcript.stored.id, [entry.snapshot for entry in reversed(snapshots)]
        )
        return result.message

    async def _newest_missing(self) -> Mapping[str, Any] | None:
        """The batch without a snapshot that `/undo` has not yet reported, when it is newer than
        the newest snapshot not yet undone."""
        assert self._store is not None
        session_id = self._transcript.stored.id
        entries = self._transcript.stored.entries
        missing: dict[str, tuple[int, Mapping[str, Any]]] = {}
        for position, entry in enumerate(entries):
            if (
                isinstance(entry, ExtensionEntry)
                and entry.name == extensions.UNDO_MISSING
                and isinstance(entry.data, dict)
            ):
                data = cast("dict[str, Any]", entry.data)
                if data.get("session", session_id) != session_id:
                    continue  # copied into a fork: the batch was its source's
                if data.get("told"):
                    missing.pop(str(data.get("batch")), None)
                else:
                    missing[str(data.get("batch"))] = (position, data)
        if not missing:
            return None
        position, newest = max(missing.values(), key=lambda item: item[0])
        pending = await self._store.newest_snapshot(session_id)
        snapshots = [
            index
            for index, entry in enumerate(entries)
            if isinstance(entry, UndoSnapshotEntry) and entry.snapshot == pending
        ]
        return newest if not snapshots or position > snapshots[-1] else None

    def _relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self._cwd))
        except ValueError:
            return str(path)
