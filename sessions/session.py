"""One open session: its tree of entries, its write queue and its writer lock.

One writer per session: a process appends to a session only while it holds the session's writer
lock (`sessions.writer_lock`), taken when the session is created or opened for writing, or by the
first append, and held until `aclose()` or the process ends. A process that finds it held gets
the session read-only: it reads it (and `refresh()` shows what the writer added since), and every
append raises `SessionBusy` naming the holder, until the holder lets go; the next append (or
`claim()`) then takes the session over. Taking the lock first reads everything the previous
writer appended, then answers the calls it left open (`sessions.repair`).

Every append goes through one queue per `Session` (an anyio lock) and, inside it, an exclusive
lock on the file. Inside both, the session first reads whatever was appended since it last looked,
then takes the current leaf as the new entry's parent, so concurrent appends from tasks of this
process form one chain instead of siblings of a stale leaf.

Durability: `append` returns once the line is written and synced (the sync in a worker thread:
a slow disk holds up this session's write queue, not the event loop). What a caller shows as
done (a tool call finished, a turn ended) it shows after the append that records it has
returned, so whatever a user saw is on disk whatever happens next; an append that fails raises
`SessionWriteFailed` and leaves the file as it was (no partial line).

Damage is never fatal: a line that is not JSON is skipped with a warning, and a torn last line
(a writer killed mid-write) is skipped with a warning and closed with a newline by the next
append.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from providers.logs import get_logger
from providers.types import JsonValue, Message, ReasoningEffort, ToolResultPart
from sessions._gc import gc_paused
from sessions.entries import (
    Entry,
    Header,
    LeafMoveEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    TitleEntry,
    UnknownEntry,
)
from sessions.errors import (
    EntryNotFound,
    Holder,
    SessionBusy,
    SessionUnreadable,
    SessionWriteFailed,
)
from sessions.files import SessionFile, replace_file
from sessions.ids import new_id
from sessions.lines import JsonObject, MalformedLine, dumps_line, entry_to_json, header_from_json
from sessions.repair import interrupted_result, unanswered_at_leaf
from sessions.times import utc_now
from sessions.tree import Tree, parse_lines
from sessions.writer_lock import DEFAULT_PROCESS, WriterLock, read_holder

E = TypeVar("E", bound=Entry)
_log = get_logger(__name__)


def title_path(session_path: Path) -> Path:
    """The sidecar holding a session's latest title, so listings need not read whole files."""
    return session_path.with_suffix(".title")


class Session:
    """An open session file. Build one through `SessionStore`, close it with `aclose()`."""

    id: str
    cwd: Path
    path: Path
    header: Header

    def __init__(
        self,
        *,
        header: Header,
        file: SessionFile,
        tree: Tree,
        offset: int,
        lines: int,
        writer: WriterLock | None = None,
        process: str = DEFAULT_PROCESS,
    ) -> None:
        self.id = header.session_id
        self.cwd = Path(header.cwd)
        self.path = file.path
        self.header = header
        self._tree = tree
        self._log = FileLog(
            session_id=self.id,
            file=file,
            tree=tree,
            offset=offset,
            lines=lines,
            writer=writer,
            process=process,
        )
        self._queue = anyio.Lock()
        """The write queue: one append (or claim, repair, refresh) at a time."""
        self.process = process
        """How this process names itself to others in the writer lock (e.g. "earshot --stdio")."""

    # --------------------------------------------------------------------------------- state

    @property
    def entries(self) -> Sequence[Entry]:
        """Every entry in file order, all branches included."""
        return self._tree.entries()

    @property
    def leaf_id(self) -> str | None:
        """The entry the next append will hang under (None: an empty session or a rewind to the
        start)."""
        return self._tree.leaf_id

    @property
    def title(self) -> str | None:
        """The latest title on the current path."""
        entry = self._tree.latest_on_path("title")
        return entry.title if isinstance(entry, TitleEntry) else None

    @property
    def model(self) -> str | None:
        """The latest `provider/model` chosen on the current path."""
        entry = self._tree.latest_on_path("model_change")
        return entry.model if isinstance(entry, ModelChangeEntry) else None

    @property
    def reasoning_effort(self) -> ReasoningEffort | None:
        """The reasoning effort of the latest model change on the current path."""
        entry = self._tree.latest_on_path("model_change")
        return entry.reasoning_effort if isinstance(entry, ModelChangeEntry) else None

    @property
    def mode(self) -> str | None:
        """The latest mode on the current path."""
        entry = self._tree.latest_on_path("mode_change")
        return entry.mode if isinstance(entry, ModeChangeEntry) else None

    @property
    def writable(self) -> bool:
        """Whether this process holds the writer lock (appends may still take it over)."""
        return self._log.writable

    def holder(self) -> Holder | None:
        """Who holds the writer lock, as that process named itself; None when this process
        does, or when the holder left no readable name."""
        return None if self.writable else read_holder(self.path)

    def path_entries(self) -> list[Entry]:
        """The entries from the root to the current leaf (leaf moves excluded)."""
        return self._tree.path_entries()

    def history(self) -> list[Message]:
        """The messages of the next model request.

        After a compaction on the path: its summary, verbatim, as a user message, then the path's
        messages from the compaction's `first_kept_id` on (or only those after the compaction when
        it keeps none). Without one: every message on the path.
        """
        with gc_paused():
            return self._tree.history()

    def get(self, entry_id: str) -> Entry | None:
        """The entry with that id, on any branch."""
        return self._tree.get(entry_id)

    def branch_lines(self, entry_id: str | None) -> list[JsonObject]:
        """The stored lines from the root down to `entry_id`, leaf moves left out (what a fork
        copies).

        Raises:
            EntryNotFound: no such entry, or it is a leaf move.
        """
        tree = self._tree
        if entry_id is not None and not tree.can_be_leaf(entry_id):
            raise EntryNotFound(entry_id)
        return [
            tree.raw_at(position)
            for position in tree.ancestry(entry_id)
            if tree.kind_at(position) != "leaf_move"
        ]

    # -------------------------------------------------------------------------------- writing

    async def append(self, entry: E) -> E:
        """Append `entry` under the current leaf and return it as stored.

        The id (unless the caller set one), the parent (the current leaf, read inside the write
        queue) and the timestamp (unless set) are filled in. A `LeafMoveEntry` moves the leaf to
        its target. Returns once the line is written and synced. Takes the writer lock first
        if this process does not hold it yet (`claim`).

        Raises:
            SessionBusy: another process holds the writer lock.
            SessionWriteFailed: the line could not be written; the file is as it was.
            EntryNotFound: a leaf move to an entry this session does not have.
            ValueError: the caller's id is already taken.
            RuntimeError: the session is closed.
        """
        async with self._queue:
            await self._log.claim()
            return await self._log.write(entry)

    async def claim(self) -> None:
        """Become this session's writer (a no-op when this process already is): take the writer
        lock, read what the previous writer appended, and answer the tool calls it left without
        results (`repair`).

        Raises:
            SessionBusy: another process holds the lock.
            SessionWriteFailed: the lock file cannot be created (a read-only or full file system).
            RuntimeError: the session is closed.
        """
        async with self._queue:
            await self._log.claim()

    async def repair(self) -> list[ToolResultPart]:
        """Append, append-only, an "interrupted" result for each call of the newest assistant
        message on the current path that has none (a process stopped between a call and its
        result); the results appended (none, usually). Claims the session first.

        Raises:
            SessionBusy, SessionWriteFailed: as `append`.
        """
        async with self._queue:
            await self._log.claim()
            return await self._log.repair()

    async def append_message(self, message: Message) -> MessageEntry:
        """Append one message under the current leaf."""
        return await self.append(MessageEntry(message=message))

    async def rewind(self, entry_id: str | None) -> LeafMoveEntry:
        """Move the leaf to `entry_id` (None: before the first entry); the next append starts a
        branch there. Nothing is removed: the old branch stays in the file.

        A rewind to an assistant message whose calls have no result on the new path answers
        them "interrupted" (`repair`), so the branch it starts is a valid request.

        Raises:
            EntryNotFound: no such entry, or it is a leaf move.
            SessionBusy, SessionWriteFailed: as `append`.
        """
        async with self._queue:
            await self._log.claim()
            moved = await self._log.write(LeafMoveEntry(target_id=entry_id))
            await self._log.repair()
        return moved

    async def refresh(self) -> None:
        """Read what other processes appended since this session last looked (appends do this
        themselves; call it before showing a session another process may be writing)."""
        async with self._queue:
            await self._log.refresh()

    async def aclose(self) -> None:
        """Close the file and let the writer lock go. Idempotent."""
        async with self._queue:
            self._log.close()


class FileLog:
    """The session file, the entry tree read from it, and this process's writer lock, kept in
    step: every read and write happens under the file lock, after catching up with what other
    processes appended. `Session` calls it from inside its write queue."""

    def __init__(
        self,
        *,
        session_id: str,
        file: SessionFile,
        tree: Tree,
        offset: int,
        lines: int,
        writer: WriterLock | None,
        process: str,
    ) -> None:
        self.session_id = session_id
        self.path = file.path
        self.process = process
        self._file = file
        self._tree = tree
        self._offset = offset
        """Bytes of the file already read into the tree."""
        self._lines = lines
        """Newlines in those bytes: numbers the lines warnings point at."""
        self._writer = writer

    @property
    def writable(self) -> bool:
        return self._writer is not None and self._writer.held

    def close(self) -> None:
        self._file.close()
        if self._writer is not None:
            self._writer.release()

    async def claim(self) -> None:
        """Take the writer lock (when not held yet), then answer the calls left open."""
        if self.writable:
            return
        self._open_file()
        try:
            writer = WriterLock.try_acquire(self.path, self.process)
        except OSError as exc:
            raise SessionWriteFailed(str(self.path), exc) from exc
        if writer is None:
            raise SessionBusy(self.session_id, read_holder(self.path))
        if self._file.read_only:
            try:
                self._file.reopen_for_writing()
            except OSError as exc:
                writer.release()
                raise SessionWriteFailed(str(self.path), exc) from exc
        self._writer = writer
        try:
            await self.repair()
        except SessionWriteFailed:
            # Still the writer; the repair is tried again before the next turn (and any append
            # after a failed one starts on a whole line anyway).
            _log.warning("could not answer the tool calls left open", path=str(self.path))

    async def repair(self) -> list[ToolResultPart]:
        file = self._open_file()
        await self._lock(file, exclusive=True)
        try:
            self.catch_up(file)
            calls = unanswered_at_leaf(self._tree.newest_first())
            if not calls:
                return []
            results = [interrupted_result(call) for call in calls]
            message = Message(role="tool", parts=[*results])
            await self._write_line(file, MessageEntry(message=message))
        finally:
            file.unlock()
        _log.warning(
            "answered tool calls left without results (the process stopped before they finished)",
            path=str(self.path),
            calls=[call.id for call in calls],
        )
        return results

    async def write(self, entry: E) -> E:
        file = self._open_file()
        await self._lock(file, exclusive=True)
        try:
            self.catch_up(file)
            return await self._write_line(file, entry)
        finally:
            file.unlock()

    async def refresh(self) -> None:
        file = self._open_file()
        await self._lock(file, exclusive=False)
        try:
            self.catch_up(file)
        finally:
            file.unlock()

    def catch_up(self, file: SessionFile) -> None:
        """Read what was appended since the last look; call with the file lock held."""
        size = file.size()
        if size <= self._offset:
            return
        data = file.read(self._offset, size)
        self._offset = size
        for line in _complete_lines(data, str(self.path), self._lines + 1):
            self._tree.add(line)
        self._lines += data.count(b"\n")

    def _open_file(self) -> SessionFile:
        if self._file.closed:
            raise RuntimeError(f"session {self.session_id} is closed")
        return self._file

    async def _write_line(self, file: SessionFile, entry: E) -> E:
        """Append one entry; call with the exclusive file lock held, after `catch_up`.

        The line is written on the loop and synced in a worker thread: a disk flush takes
        milliseconds (more on a busy disk), and on the loop it would hold up every other session
        and request of the process meanwhile; in threads, the flushes of sessions appending at
        once go to the disk together (the file system commits them as one journal transaction).
        Shielded: once written, the line is synced and counted here even if the caller is
        cancelled meanwhile, so this process's view of the file stays what is on disk."""
        stored = self._stamp(entry)
        line = entry_to_json(stored)
        data = dumps_line(line)
        size = file.size()
        if not file.ends_with_newline(size):
            data = b"\n" + data
        try:
            start = file.write(data)
            with anyio.CancelScope(shield=True):
                self._offset = await anyio.to_thread.run_sync(file.sync, start)
        except OSError as exc:
            raise SessionWriteFailed(str(self.path), exc) from exc
        self._lines += data.count(b"\n")
        self._tree.add(line, None if isinstance(stored, UnknownEntry) else stored)
        if isinstance(stored, TitleEntry):
            try:
                write_title(self.path, stored.title, stored.id)
            except OSError:
                # The entry is on disk; the next full load rewrites the sidecar from it.
                _log.warning("could not write the title sidecar", path=str(self.path))
        return stored

    @staticmethod
    async def _lock(file: SessionFile, *, exclusive: bool) -> None:
        if file.try_lock(exclusive=exclusive):
            return
        # Another process (or another Session on this file) holds it for the length of one
        # write; wait in a thread so the event loop keeps running. Not abandoned on cancel: the
        # thread would take the lock after we stopped listening and never release it.
        await anyio.to_thread.run_sync(partial(file.lock, exclusive=exclusive))

    def _stamp(self, entry: E) -> E:
        tree = self._tree
        target = entry.target_id if isinstance(entry, LeafMoveEntry) else None
        if target is not None and not tree.can_be_leaf(target):
            raise EntryNotFound(target)
        if entry.id and entry.id in tree:
            raise ValueError(f"entry id {entry.id} is already in session {self.session_id}")
        return dataclasses.replace(
            entry, id=entry.id or new_id(), parent_id=tree.leaf_id, ts=entry.ts or utc_now()
        )


def _complete_lines(data: bytes, where: str, first_line: int) -> list[JsonObject]:
    """The objects in `data`, read under a lock (so nobody is mid-write): a last line without
    its newline is either a complete object whose newline never made it, kept, or a torn write,
    skipped with a warning. Either way the next append starts on a fresh line."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    tail = lines.pop()
    objects = parse_lines(enumerate(lines, first_line), where)
    if tail:
        try:
            value: JsonValue = json.loads(tail)
        except ValueError:
            value = None
        if isinstance(value, dict):
            objects.append(value)
        else:
            line = first_line + len(lines)
            _log.warning(
                "torn last line skipped (a writer stopped mid-line)", path=where, line=line
            )
    return objects


def load(path: Path, process: str = DEFAULT_PROCESS, writer: WriterLock | None = None) -> Session:
    """Read a session file (blocking: run it in a worker thread). The session is read-only
    until it is claimed (`Session.claim`, or the first append), unless `writer` is its writer
    lock, already held.

    Raises:
        FileNotFoundError: no such file.
        SessionUnreadable: the first line is not a session header.
    """
    file = SessionFile.open(path)
    try:
        file.lock(exclusive=False)
        try:
            size = file.size()
            data = file.read(0, size)
        finally:
            file.unlock()
        newline = data.find(b"\n")
        header_line = data if newline < 0 else data[:newline]
        try:
            header = header_from_json(json.loads(header_line))
        except (ValueError, MalformedLine) as exc:
            raise SessionUnreadable(f"{path}: {exc}") from exc
        tree = Tree(str(path))
        if newline >= 0:
            with gc_paused():
                for line in _complete_lines(data[newline + 1 :], str(path), 2):
                    tree.add(line)
        lines = data.count(b"\n")
        session = Session(
            header=header,
            file=file,
            tree=tree,
            offset=size,
            lines=lines,
            writer=writer,
            process=process,
        )
        _repair_title(session, file, tree)
    except BaseException:
        file.close()
        if writer is not None:
            writer.release()
        raise
    return session


def _repair_title(session: Session, file: SessionFile, tree: Tree) -> None:
    # The sidecar is written right after its title entry, under the same lock; a crash between
    # the two leaves it behind, and the first full read puts it right.
    title_id = tree.last_title_id
    if title_id is None or read_title(session.path) == (_title_of(tree, title_id), title_id):
        return
    file.lock(exclusive=True)
    try:
        session._log.catch_up(file)  # pyright: ignore[reportPrivateUsage]
        title_id = tree.last_title_id
        if title_id is not None:
            write_title(session.path, _title_of(tree, title_id), title_id)
    except OSError:
        pass  # a read-only data dir: the listing shows an older title until it can be written
    finally:
        file.unlock()


def _title_of(tree: Tree, entry_id: str) -> str:
    title = tree.raw(entry_id).get("title")
    return title if isinstance(title, str) else ""


def write_title(session_path: Path, title: str, entry_id: str) -> None:
    replace_file(title_path(session_path), dumps_line({"title": title, "entry_id": entry_id}))


def read_title(session_path: Path) -> tuple[str, str] | None:
    """The sidecar's `(title, entry_id)`, or None when there is none (or it is damaged)."""
    try:
        value: JsonValue = json.loads(title_path(session_path).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    title = value.get("title")
    entry_id = value.get("entry_id")
    if isinstance(title, str) and isinstance(entry_id, str):
        return title, entry_id
    return None
