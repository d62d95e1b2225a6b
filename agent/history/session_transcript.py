"""A session's transcript: every write the session makes to its JSONL file goes through here.

The turn loop and the context shaper use it as an `agent.transcript.Transcript` (messages,
compactions, how calls were shown, the answers a stopped process owed). The session itself records
its settings (model, mode), title, todo list, usage totals and undo snapshots here, and `/clear`
starts a new branch here. Each write is durable before it returns (`sessions.Session.append`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import anyio

from agent.backends import Mode, ToolUi
from agent.events import TodoItem
from agent.history.replay import tool_ui_entry
from agent.todos import TodoPlan, latest_plan, todos_to_json
from agent.transcript import Compaction
from providers.logs import get_logger
from providers.types import Message, ReasoningEffort
from sessions import (
    CompactionEntry,
    Entry,
    ExtensionEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    Session,
    TitleEntry,
    UndoSnapshotEntry,
    extensions,
)

_log = get_logger(__name__)


class SessionTranscript:
    """The `Transcript` of a session, over its `sessions.Session`."""

    def __init__(self, stored: Session) -> None:
        self.stored = stored

    # --------------------------------------------------------------------- the conversation

    def history(self) -> list[Message]:
        return self.stored.history()

    def messages(self) -> list[Message]:
        return [e.message for e in self.stored.path_entries() if isinstance(e, MessageEntry)]

    def entries(self) -> list[Entry]:
        """The current branch's entries, oldest first."""
        return self.stored.path_entries()

    async def append(self, message: Message, entry_id: str | None = None) -> str:
        entry = await self.stored.append(MessageEntry(message=message, id=entry_id or ""))
        return entry.id

    async def record_compaction(self, compaction: Compaction) -> None:
        first_kept_id = self._entry_id_of(compaction.first_kept)
        if first_kept_id is None:
            raise ValueError("the first kept message is not in the session")
        await self.stored.append(
            CompactionEntry(
                summary=compaction.preamble,
                first_kept_id=first_kept_id,
                tokens_before=compaction.tokens_before,
                instructions=compaction.instructions,
            )
        )

    async def record_shown(self, shown: Mapping[str, ToolUi]) -> None:
        # How a batch's calls were shown (`agent.history.replay`): a session reopened later replays
        # the diffs as they were, not as the disk is then. Only the replay's diffs depend on it: a
        # failure to write it is logged and the turn goes on.
        record = tool_ui_entry(shown)
        if record is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await self.stored.append(record)
            except Exception:
                _log.warning("could not record how the tool calls were shown", exc_info=True)

    async def record_cancelled(self) -> None:
        with anyio.CancelScope(shield=True):
            try:
                await self.stored.append(ExtensionEntry(name=extensions.TURN_CANCELLED, data={}))
            except Exception:
                _log.warning("could not record that the turn was cancelled", exc_info=True)

    async def open_turn(self) -> None:
        await self.stored.repair()

    # ---------------------------------------------------------------- the session's own writes

    async def record_settings(
        self, *, model: str | None = None, effort: ReasoningEffort | None = None, mode: Mode | None
    ) -> None:
        """A model (with its effort) and/or a mode the session now uses."""
        if model is not None:
            await self.stored.append(ModelChangeEntry(model=model, reasoning_effort=effort))
        if mode is not None:
            await self.stored.append(ModeChangeEntry(mode=mode))

    async def record_title(self, title: str) -> None:
        with anyio.CancelScope(shield=True):
            await self.stored.append(TitleEntry(title=title))

    async def record_todos(self, items: Sequence[TodoItem]) -> str:
        """Returns the entry's id (a new list's plan id: `agent.todos.TodoPlan`)."""
        entry = ExtensionEntry(name=extensions.TODOS, data=todos_to_json(items))
        with anyio.CancelScope(shield=True):
            entry = await self.stored.append(entry)
        return entry.id

    async def record_usage(self, totals: ExtensionEntry) -> None:
        # The totals so far, one small line per model call: a resumed session continues them.
        with anyio.CancelScope(shield=True):
            await self.stored.append(totals)

    async def record_undo_snapshot(self, snapshot: str, batch_id: str, paths: list[str]) -> None:
        await self.stored.append(
            UndoSnapshotEntry(snapshot=snapshot, batch_id=batch_id, paths=paths)
        )

    async def clear(self, *, model: str, effort: ReasoningEffort | None, mode: Mode) -> None:
        """Start a new branch at the root (nothing is deleted: the old conversation stays in the
        file), carrying the current model and mode over."""
        await self.stored.rewind(None)
        await self.record_settings(model=model, effort=effort, mode=mode)

    def plan(self) -> TodoPlan:
        """The todo list (and its plan id) as the current branch last recorded it."""
        return latest_plan(self.stored.path_entries())

    def _entry_id_of(self, message: Message) -> str | None:
        """The id of the entry holding `message` on the current branch."""
        entries = self.stored.path_entries()
        for entry in reversed(entries):
            if isinstance(entry, MessageEntry) and entry.message is message:
                return entry.id
        for entry in reversed(entries):
            if isinstance(entry, MessageEntry) and entry.message == message:
                return entry.id
        return None
