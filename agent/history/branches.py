"""The session's branches as a user sees them: its user messages, numbered, and `/rewind` and
`/fork` to a point before one of them.

Both commands name a point by the number of a user message on the current branch (1 is the
first): the point is just before that message, so the conversation continues as if it had not
been sent (re-ask it differently, or ask something else). `/rewind N` moves this session's leaf
there (append-only: a leaf move entry; the old branch stays in the file); `/fork N` copies the
branch up to there into a new session and leaves this one as it is. A rewind can also put back
the files the tool calls after that point changed, from the session's undo snapshots (newest
first, so each file ends as it was before the first change after the point).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.backends import Mode
from agent.history.session_transcript import SessionTranscript
from agent.history.undo_batches import BatchUndo
from providers.types import ReasoningEffort
from sessions import Entry, ForkOrigin, MessageEntry, SessionStore, UndoSnapshotEntry

_SHOWN_CHARACTERS = 80


@dataclass(frozen=True, slots=True)
class UserMessage:
    """One user message on the current branch."""

    number: int
    """1 for the first user message of the branch."""
    entry_id: str
    before: str | None
    """The entry just before it (its parent): where a rewind or fork to it goes."""
    text: str


@dataclass(frozen=True, slots=True)
class Rewound:
    message: UserMessage
    files: str | None
    """What restoring the files did (None: the files were left as they are)."""


def user_messages(entries: Sequence[Entry]) -> list[UserMessage]:
    """The user messages of a branch (`entries`: its entries, root first), numbered from 1."""
    found: list[UserMessage] = []
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.message.role == "user":
            found.append(
                UserMessage(
                    number=len(found) + 1,
                    entry_id=entry.id,
                    before=entry.parent_id,
                    text=entry.message.text,
                )
            )
    return found


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """Where a fork's copy of a branch ends."""

    last: str | None
    """The last entry copied; None: the branch's leaf (all of it), unless `empty`."""
    empty: bool = False
    """Nothing is copied: the point is before the branch's first entry."""


def fork_point(message: UserMessage | None) -> ForkPoint:
    """Just before `message` (None: the whole branch): the one place `/fork N` and ACP's
    `session/fork` (`beforeUserMessage: N`) find where a fork ends. Before a message that is
    the branch's first entry (a transcript that starts with the user's words) is an empty fork
    that still records its origin, never the whole branch and never an error."""
    if message is None:
        return ForkPoint(last=None)
    if message.before is None:
        return ForkPoint(last=None, empty=True)
    return ForkPoint(last=message.before)


async def fork_session(store: SessionStore, source_id: str, point: ForkPoint) -> str:
    """A new session holding the current branch of `source_id` up to `point` (read from its
    file: a turn still running is copied as far as it got); returns its id. The source is not
    changed.

    Raises:
        sessions.SessionNotFound: no such source.
        sessions.SessionWriteFailed: the new file could not be written.
    """
    if point.empty:
        source = await store.open(source_id, claim=False)
        try:
            cwd, directories = source.cwd, source.header.additional_directories
        finally:
            await source.aclose()
        forked = await store.create(
            cwd,
            additional_directories=directories,
            forked_from=ForkOrigin(session_id=source_id, entry_id=None),
        )
    else:
        forked = await store.fork(source_id, at_entry=point.last, retitle=True)
    try:
        return forked.id
    finally:
        await forked.aclose()


def snapshots_from(entries: Sequence[Entry], entry_id: str) -> list[UndoSnapshotEntry]:
    """The undo snapshots taken on the branch from `entry_id` on, oldest first: what the tool
    calls after that point changed."""
    snapshots: list[UndoSnapshotEntry] = []
    reached = False
    for entry in entries:
        reached = reached or entry.id == entry_id
        if reached and isinstance(entry, UndoSnapshotEntry):
            snapshots.append(entry)
    return snapshots


def listing(messages: Sequence[UserMessage]) -> str:
    """The numbered list `/rewind` and `/fork` show without a number."""
    if not messages:
        return "There are no user messages on this branch yet."
    lines = [f"{message.number}. {shorten(message.text)}" for message in messages]
    return "\n".join(lines)


def shorten(text: str) -> str:
    line = " ".join(text.split())
    if len(line) <= _SHOWN_CHARACTERS:
        return line or "(no text)"
    return line[: _SHOWN_CHARACTERS - 1] + "…"


def parse_number(argument: str, messages: Sequence[UserMessage]) -> UserMessage | str:
    """The message `argument` (its first word) names, or why it names none."""
    word = argument.split(maxsplit=1)[0] if argument.split() else ""
    if not word.isdigit():
        return f"`{shorten(argument)}` is not a message number."
    number = int(word)
    if not 1 <= number <= len(messages):
        return f"There is no user message {number} on this branch (1 to {len(messages)})."
    return messages[number - 1]


class Branches:
    """Rewind and fork for one session (`AgentSession.branches`)."""

    def __init__(
        self,
        *,
        transcript: SessionTranscript,
        undo: BatchUndo,
        store: SessionStore | None,
        settings: Callable[[], tuple[str, ReasoningEffort | None, Mode]],
    ) -> None:
        self._transcript = transcript
        self._undo = undo
        self._store = store
        self._settings = settings
        """The session's model, effort and mode now: a rewind keeps them."""

    def user_messages(self) -> list[UserMessage]:
        return user_messages(self._transcript.entries())

    def file_changes_since(self, message: UserMessage) -> list[UndoSnapshotEntry]:
        """The undo snapshots a rewind to before `message` could restore (none when undo is
        unavailable)."""
        if not self._undo.available:
            return []
        return snapshots_from(self._transcript.entries(), message.entry_id)

    async def rewind(self, message: UserMessage, *, restore_files: bool) -> Rewound:
        """Move the leaf to just before `message` (and with `restore_files`, put the files the
        calls after it changed back as they were). The files go first: if restoring fails
        half-way the conversation is still where it was, and saying so is honest.

        Raises:
            sessions.SessionBusy, sessions.SessionWriteFailed: the leaf move could not be written.
        """
        files: str | None = None
        if restore_files:
            files = await self._undo.restore(self.file_changes_since(message))
        model, effort, mode = self._settings()
        await self._transcript.stored.rewind(message.before)
        if self._transcript.stored.model != model:
            await self._transcript.record_settings(model=model, effort=effort, mode=None)
        if self._transcript.stored.mode != mode:
            await self._transcript.record_settings(mode=mode)
        return Rewound(message=message, files=files)

    async def fork(self, message: UserMessage | None) -> str:
        """A new session holding this branch up to just before `message` (None: all of it);
        returns its id. This session is not changed.

        Raises:
            RuntimeError: there is no session store here.
            sessions.SessionWriteFailed: the new file could not be written.
        """
        if self._store is None:
            raise RuntimeError("forking needs a session store")
        return await fork_session(self._store, self._transcript.stored.id, fork_point(message))
