"""One open session: its tree of entries and its write queue.

Every append goes through one queue per `Session` (an anyio lock) and, inside it, an exclusive
lock on the file. Inside both, the session first reads whatever other processes appended since it
last looked, then takes the current leaf as the new entry's parent, so concurrent appends, from
tasks of this process or from other processes, form one chain instead of siblings of a stale leaf.

Damage is never fatal: a line that is not JSON is skipped with a warning, and a torn last line
(a writer killed mid-write) is skipped with a warning and closed with a newline by the next
append. An entry whose append returned is on disk whatever happens next.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import anyio
import anyio.to_thread

from providers.types import JsonValue, Message, ReasoningEffort
from sessions._gc import gc_paused
from sessions._log import warn
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
from sessions.errors import EntryNotFound, SessionUnreadable
from sessions.files import SessionFile, replace_file
from sessions.ids import new_id
from sessions.lines import JsonObject, MalformedLine, dumps_line, entry_to_json, header_from_json
from sessions.times import utc_now
from sessions.tree import Tree, parse_lines

E = TypeVar("E", bound=Entry)


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
        self, *, header: Header, file: SessionFile, tree: Tree, offset: int, lines: int
    ) -> None:
        self.id = header.session_id
        self.cwd = Path(header.cwd)
        self.path = file.path
        self.header = header
        self._file = file
        self._tree = tree
        self._offset = offset
        """Bytes of the file already read into the tree."""
        self._lines = lines
        """Newlines in those bytes: numbers the lines warnings point at."""
        self._queue = anyio.Lock()

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
        its target. Returns once the line is written and synced.

        Raises:
            EntryNotFound: a leaf move to an entry this session does not have.
            ValueError: the caller's id is already taken.
            RuntimeError: the session is closed.
        """
        async with self._queue:
            file = self._open_file()
            await self._lock(file, exclusive=True)
            try:
                self._catch_up(file)
                stored = self._stamp(entry)
                line = entry_to_json(stored)
                data = dumps_line(line)
                size = file.size()
                if not file.ends_with_newline(size):
                    data = b"\n" + data
                self._offset = file.append(data)
                self._lines += data.count(b"\n")
                self._tree.add(line, None if isinstance(stored, UnknownEntry) else stored)
                if isinstance(stored, TitleEntry):
                    write_title(self.path, stored.title, stored.id)
            finally:
                file.unlock()
        return stored

    async def append_message(self, message: Message) -> MessageEntry:
        """Append one message under the current leaf."""
        return await self.append(MessageEntry(message=message))

    async def rewind(self, entry_id: str | None) -> LeafMoveEntry:
        """Move the leaf to `entry_id` (None: before the first entry); the next append starts a
        branch there. Nothing is removed: the old branch stays in the file.

        Raises:
            EntryNotFound: no such entry, or it is a leaf move.
        """
        return await self.append(LeafMoveEntry(target_id=entry_id))

    async def refresh(self) -> None:
        """Read what other processes appended since this session last looked (appends do this
        themselves; call it before showing a session another process may be writing)."""
        async with self._queue:
            file = self._open_file()
            await self._lock(file, exclusive=False)
            try:
                self._catch_up(file)
            finally:
                file.unlock()

    async def aclose(self) -> None:
        """Close the file. Idempotent."""
        async with self._queue:
            self._file.close()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------------------- helpers

    def _open_file(self) -> SessionFile:
        if self._file.closed:
            raise RuntimeError(f"session {self.id} is closed")
        return self._file

    @staticmethod
    async def _lock(file: SessionFile, *, exclusive: bool) -> None:
        if file.try_lock(exclusive=exclusive):
            return
        # Another process (or another Session on this file) holds it for the length of one
        # write; wait in a thread so the event loop keeps running. Not abandoned on cancel: the
        # thread would take the lock after we stopped listening and never release it.
        await anyio.to_thread.run_sync(partial(file.lock, exclusive=exclusive))

    def _catch_up(self, file: SessionFile) -> None:
        size = file.size()
        if size <= self._offset:
            return
        data = file.read(self._offset, size)
        self._offset = size
        for line in _complete_lines(data, str(self.path), self._lines + 1):
            self._tree.add(line)
        self._lines += data.count(b"\n")

    def _stamp(self, entry: E) -> E:
        tree = self._tree
        target = entry.target_id if isinstance(entry, LeafMoveEntry) else None
        if target is not None and not tree.can_be_leaf(target):
            raise EntryNotFound(target)
        if entry.id and entry.id in tree:
            raise ValueError(f"entry id {entry.id} is already in session {self.id}")
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
            warn("torn last line skipped (a writer stopped mid-line)", path=where, line=line)
    return objects


def load(path: Path) -> Session:
    """Read a session file (blocking: run it in a worker thread).

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
        session = Session(header=header, file=file, tree=tree, offset=size, lines=lines)
        _repair_title(session, file, tree)
    except BaseException:
        file.close()
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
        session._catch_up(file)  # pyright: ignore[reportPrivateUsage]
        title_id = tree.last_title_id
        if title_id is not None:
            write_title(session.path, _title_of(tree, title_id), title_id)
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
