"""Where session files live, and finding, listing, creating, forking and deleting them.

Layout: `<root>/<cwd-hash>/<session-id>.jsonl`, plus `<session-id>.title` beside a session that
has a title and `<session-id>.archived` beside an archived one (`sessions.archive`). The cwd hash
is the first 16 hex digits of the SHA-256 of the absolute cwd (symlinks not resolved: the path
the editor or shell gave is the project's name).

Listing reads no session file whole: it stats the files, sorts them newest first by modification
time (ties broken by session id, which is time-ordered), and for the page it returns reads only
each header line and the title sidecar. The sidecar is one small file per session rather than a
shared index, so two processes never contend on it: it is replaced atomically (write, rename)
under the session file's own exclusive lock, right after the title entry it mirrors, and a full
load repairs it if a crash fell between the two.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import dataclasses
import functools
import json
import os
import re
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

import anyio.to_thread

from providers.logs import get_logger
from providers.records import Record
from sessions.archive import ArchiveFilter, archived_path, is_archived, kept, set_archived
from sessions.entries import FORMAT_VERSION, ForkOrigin, Header, ParentLink, TitleEntry
from sessions.errors import (
    InvalidCursor,
    SessionBusy,
    SessionNotFound,
    SessionUnreadable,
    SessionWriteFailed,
)
from sessions.files import SessionFile
from sessions.ids import new_id
from sessions.lines import JsonObject, MalformedLine, dumps_line, header_from_json, header_to_json
from sessions.paths import data_dir
from sessions.reserve import cwd_hash
from sessions.session import Session, load, read_title, title_path, write_title
from sessions.times import utc_from_ns, utc_now
from sessions.tree import Tree
from sessions.writer_lock import DEFAULT_PROCESS, WriterLock, lock_path, read_holder

_log = get_logger(__name__)
_SUFFIX = ".jsonl"
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
"""Session ids arrive from editors; anything else could name a path outside the store."""
_HEADER_READ = 16 * 1024
_HEADER_LIMIT = 1024 * 1024


class SessionSummary(Record):
    """One row of a listing."""

    id: str
    cwd: str
    title: str | None
    """The latest title entry in the file (on any branch)."""
    created: str
    """ISO 8601 UTC, from the header."""
    updated: str
    """ISO 8601 UTC: the file's modification time."""
    size_bytes: int
    additional_directories: tuple[str, ...] = field(default=())
    parent: ParentLink | None = None
    """Set for a subagent's session: the session and `task` call that ran it."""
    forked_from: ForkOrigin | None = None
    archived: bool = False
    """Hidden from the editor's default list (`sessions.archive`)."""


class SessionPage(Record):
    items: builtins.list[SessionSummary]
    next_cursor: str | None
    """Pass to `list()` for the next page; None on the last."""


class _Found(Record, kw_only=False):
    mtime_ns: int
    session_id: str
    path: Path
    size: int

    @property
    def key(self) -> tuple[int, str]:
        return (self.mtime_ns, self.session_id)


@functools.cache
def earshot_version() -> str:
    """The installed earshot version (sessions may not import `earshot` itself)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("earshot-agent")
    except PackageNotFoundError:
        return "0+unknown"


class SessionStore:
    """All sessions under one root directory.

    Sessions it creates, forks or opens for writing are claimed at once (this process holds
    their writer lock until they are closed); `process` is how this process names itself to
    another that finds one held (e.g. "earshot --stdio")."""

    def __init__(self, root: Path | None = None, *, process: str = DEFAULT_PROCESS) -> None:
        self.root = root if root is not None else data_dir() / "sessions"
        self.process = process

    async def create(
        self,
        cwd: Path,
        *,
        additional_directories: Sequence[str] = (),
        forked_from: ForkOrigin | None = None,
        session_id: str | None = None,
        parent: ParentLink | None = None,
    ) -> Session:
        """Start an empty session in `cwd` (made absolute). `session_id` is an id minted earlier
        with `sessions.ids.new_id` (the ACP server promises it before the session is built);
        None mints one now. A file `sessions.reserve` wrote for that id (the header alone, same
        cwd) is adopted: the session continues in it. `parent` makes it a child session (a
        subagent's), listed with that link.

        Raises:
            ValueError: `session_id` is not an id, or a session with entries already has it.
        """
        if session_id is not None:
            existing = self._find(session_id) if _SAFE_ID.fullmatch(session_id) else None
            if existing is not None:
                return await self._adopt(existing, str(os.path.abspath(cwd)))
            if not _SAFE_ID.fullmatch(session_id):
                raise ValueError(f"cannot create a session with id {session_id!r}")
        header = self._header(
            str(os.path.abspath(cwd)), list(additional_directories), forked_from, session_id
        )
        if parent is not None:
            header = dataclasses.replace(header, parent=parent)
        return self._write_new(header, [])

    async def _adopt(self, path: Path, cwd: str) -> Session:
        """The reserved file of a new session (`sessions.reserve`), opened (and claimed, as a
        new session is) to continue it.

        Raises:
            SessionBusy: another process already has it open.
            SessionWriteFailed: it cannot be written.
        """
        # The lock the reservation took in this process, handed over (not taken anew).
        writer = WriterLock.take_reserved(path, self.process)
        try:
            session = await anyio.to_thread.run_sync(load, path, self.process, writer)
        except BaseException:
            # Cancelled (the server is stopping) or unreadable: the lock must not outlive it.
            if writer is not None:
                writer.release()
            raise
        if session.header.cwd == cwd and not session.path_entries():
            try:
                await session.claim()
            except BaseException:
                with anyio.CancelScope(shield=True):  # cancelled too: the lock goes with it
                    await session.aclose()
                raise
            return session
        await session.aclose()
        raise ValueError(f"cannot create a session with id {session.id!r}: it exists")

    async def open(self, session_id: str, *, claim: bool = True) -> Session:
        """Open a session by id, whatever its cwd. With `claim`, this process becomes its
        writer if nobody else is (see `Session.claim`: calls a crashed writer left open are
        answered); otherwise, or when another process holds it, it is read-only
        (`Session.writable`, `Session.holder()`) until an append takes it over.

        Raises:
            SessionNotFound: no such session (`SessionUnreadable` when the file is damaged).
        """
        path = self._find(session_id)
        if path is None:
            raise SessionNotFound(session_id)
        try:
            session = await anyio.to_thread.run_sync(load, path, self.process)
        except FileNotFoundError as exc:
            raise SessionNotFound(session_id) from exc
        if claim:
            with contextlib.suppress(SessionBusy, SessionWriteFailed):
                await session.claim()
        return session

    async def latest(self, cwd: Path) -> Session | None:
        """The most recently updated session of `cwd` (for `--continue`), or None; read-only
        (open it by id to write to it). A subagent's session (a child) is never it."""
        absolute = os.path.abspath(cwd)
        candidates = sorted(self._scan([self.root / cwd_hash(absolute)]), key=_newest, reverse=True)
        for found in candidates:
            try:
                session = await anyio.to_thread.run_sync(load, found.path, self.process)
            except (FileNotFoundError, SessionUnreadable):
                continue
            if session.header.cwd == absolute and session.header.parent is None:
                return session
            await session.aclose()
        return None

    def list(
        self,
        cwd: Path | None = None,
        *,
        cursor: str | None = None,
        limit: int = 50,
        children: bool = True,
        parent_id: str | None = None,
        archived: ArchiveFilter = "include",
    ) -> SessionPage:
        """Sessions newest first (by last update), one page at a time; all cwds when `cwd` is
        None. A session updated while paging moves to the front and is not repeated. Without
        `children`, subagents' sessions are left out; with `parent_id`, only the children of
        that session are listed; `archived` keeps all, only the unarchived or only the archived
        sessions (before paging).

        Raises:
            InvalidCursor: `cursor` is not one this store handed out.
            ValueError: `limit` is below 1.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")
        absolute = None if cwd is None else os.path.abspath(cwd)
        directories = (
            self._all_directories() if absolute is None else [self.root / cwd_hash(absolute)]
        )
        found = sorted(self._scan(directories), key=_newest, reverse=True)
        if cursor is not None:
            after = _decode_cursor(cursor)
            found = [item for item in found if item.key < after]
        items: builtins.list[SessionSummary] = []
        examined = 0
        while examined < len(found) and len(items) < limit:
            summary = _summarise(found[examined], absolute)
            examined += 1
            if (
                summary is not None
                and _wanted(summary, children, parent_id)
                and kept(summary.archived, archived)
            ):
                items.append(summary)
        more = examined < len(found)
        return SessionPage(
            items=items, next_cursor=_encode_cursor(found[examined - 1].key) if more else None
        )

    def exists(self, session_id: str) -> bool:
        """Whether a session has this id (any cwd); reads no file."""
        return self._find(session_id) is not None

    def ids_starting_with(self, prefix: str) -> builtins.list[str]:
        """The ids of every session (any cwd) that start with `prefix`, sorted; reads no file.
        A prefix that could not start an id matches nothing."""
        if not prefix or not _SAFE_ID.fullmatch(prefix):
            return []
        found = {
            name[: -len(_SUFFIX)]
            for directory in self._all_directories()
            for name in _names(directory)
            if name.startswith(prefix) and name.endswith(_SUFFIX)
        }
        return sorted(found)

    async def delete(self, session_id: str) -> bool:
        """Delete a session's file; False when there was none. Close it first if it is open:
        appends through a still-open `Session` would go to the deleted file."""
        path = self._find(session_id)
        if path is None:
            return False
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        title_path(path).unlink(missing_ok=True)
        archived_path(path).unlink(missing_ok=True)
        lock_path(path).unlink(missing_ok=True)
        return True

    def archive(self, session_id: str, *, archived: bool = True) -> bool:
        """Archive (or with `archived=False` unarchive) a session, open or not, whoever holds
        it; False when there is none. Doing it twice is no error.

        Raises:
            SessionWriteFailed: the store's directory cannot be written.
        """
        path = self._find(session_id)
        if path is None:
            return False
        try:
            set_archived(path, archived)
        except OSError as exc:
            raise SessionWriteFailed(str(archived_path(path)), exc) from exc
        return True

    async def fork(
        self, session_id: str, *, at_entry: str | None = None, retitle: bool = False
    ) -> Session:
        """A new session holding a copy of the branch from the root to `at_entry` (default: the
        leaf), entry ids kept, and recording where it came from. With `retitle`, a title entry of
        its own follows the copy ("<source's title> (fork)"): editors list the two side by
        side. The source is not changed (nor claimed: another process may be writing it).
        Calls the copied branch leaves without results are answered "interrupted" in the fork.

        Raises:
            SessionNotFound: no such session.
            EntryNotFound: the source has no such entry.
        """
        source = await self.open(session_id, claim=False)
        try:
            target = at_entry if at_entry is not None else source.leaf_id
            lines = source.branch_lines(target)
            title = f"{source.title} (fork)" if source.title else f"Fork of {source.id[:13]}"
        finally:
            await source.aclose()
        header = self._header(
            source.header.cwd,
            list(source.header.additional_directories),
            ForkOrigin(session_id=source.id, entry_id=target),
        )
        forked = await anyio.to_thread.run_sync(self._write_new, header, lines)
        # A fork taken between a call and its result answers it, as a crash would be repaired.
        with contextlib.suppress(SessionWriteFailed):
            await forked.repair()
            if retitle:
                await forked.append(TitleEntry(title=title))
        return forked

    # ------------------------------------------------------------------------------- helpers

    def _header(
        self,
        cwd: str,
        additional_directories: builtins.list[str],
        forked: ForkOrigin | None,
        session_id: str | None = None,
    ) -> Header:
        return Header(
            session_id=session_id or new_id(),
            cwd=cwd,
            created=utc_now(),
            earshot_version=earshot_version(),
            version=FORMAT_VERSION,
            forked_from=forked,
            additional_directories=additional_directories,
        )

    def _write_new(self, header: Header, lines: builtins.list[JsonObject]) -> Session:
        """Create the file, holding its writer lock from before it exists.

        Raises:
            SessionWriteFailed: the data dir cannot be written (read-only, full).
        """
        directory = self.root / cwd_hash(header.cwd)
        path = directory / f"{header.session_id}{_SUFFIX}"
        content = b"".join([dumps_line(header_to_json(header)), *map(dumps_line, lines)])
        writer: WriterLock | None = None
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            writer = WriterLock.try_acquire(path, self.process)
            if writer is None:  # only a process that guessed this brand-new id could hold it
                raise SessionBusy(header.session_id, read_holder(path))
            # A fork's copy appears whole or not at all (a kill mid-copy leaves no half file).
            file = (
                SessionFile.create_whole(path, content)
                if lines
                else SessionFile.create(path, content)
            )
        except OSError as exc:
            if writer is not None:
                writer.release()
            if isinstance(exc, FileExistsError):
                raise
            raise SessionWriteFailed(str(path), exc) from exc
        except BaseException:
            if writer is not None:
                writer.release()
            raise
        tree = Tree(str(path))
        for line in lines:
            tree.add(line)
        title_id = tree.last_title_id
        if title_id is not None:
            title = tree.raw(title_id).get("title")
            with contextlib.suppress(OSError):  # the first full load writes it
                write_title(path, title if isinstance(title, str) else "", title_id)
        return Session(
            header=header,
            file=file,
            tree=tree,
            offset=len(content),
            lines=len(lines) + 1,
            writer=writer,
            process=self.process,
        )

    def _find(self, session_id: str) -> Path | None:
        if not _SAFE_ID.fullmatch(session_id):
            return None
        name = session_id + _SUFFIX
        for directory in self._all_directories():
            candidate = directory / name
            if candidate.is_file():
                return candidate
        return None

    def _all_directories(self) -> builtins.list[Path]:
        try:
            with os.scandir(self.root) as entries:
                return [Path(entry.path) for entry in entries if entry.is_dir()]
        except (FileNotFoundError, NotADirectoryError):
            return []

    @staticmethod
    def _scan(directories: builtins.list[Path]) -> builtins.list[_Found]:
        found: builtins.list[_Found] = []
        for directory in directories:
            try:
                entries = os.scandir(directory)
            except FileNotFoundError:
                continue
            with entries:
                for entry in entries:
                    name = entry.name
                    if not name.endswith(_SUFFIX) or name.startswith("."):
                        continue
                    try:
                        stat = entry.stat()
                    except FileNotFoundError:  # deleted while we looked
                        continue
                    if stat.st_size == 0:
                        continue  # being created: its header comes next (`SessionFile.create`)
                    session_id = name[: -len(_SUFFIX)]
                    path = Path(entry.path)
                    found.append(_Found(stat.st_mtime_ns, session_id, path, stat.st_size))
        return found


def _wanted(summary: SessionSummary, children: bool, parent_id: str | None) -> bool:
    if parent_id is not None:
        return summary.parent is not None and summary.parent.session_id == parent_id
    return children or summary.parent is None


def _names(directory: Path) -> builtins.list[str]:
    try:
        return os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _newest(found: _Found) -> tuple[int, str]:
    return found.key


def _summarise(found: _Found, cwd: str | None) -> SessionSummary | None:
    try:
        with found.path.open("rb") as handle:
            first = handle.read(_HEADER_READ)
            while b"\n" not in first and len(first) < _HEADER_LIMIT:
                more = handle.read(_HEADER_READ)
                if not more:
                    break
                first += more
    except FileNotFoundError:
        return None
    try:
        header = header_from_json(json.loads(first.split(b"\n", 1)[0]))
    except (ValueError, MalformedLine):
        _log.warning("session file without a readable header, not listed", path=str(found.path))
        return None
    if cwd is not None and header.cwd != cwd:
        return None
    title = read_title(found.path)
    return SessionSummary(
        id=header.session_id,
        cwd=header.cwd,
        title=None if title is None else title[0],
        created=header.created,
        updated=utc_from_ns(found.mtime_ns),
        size_bytes=found.size,
        additional_directories=tuple(header.additional_directories),
        parent=header.parent,
        forked_from=header.forked_from,
        archived=is_archived(found.path),
    )


def _encode_cursor(key: tuple[int, str]) -> str:
    return base64.urlsafe_b64encode(f"{key[0]}:{key[1]}".encode()).decode("ascii")


def _decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        mtime, session_id = base64.urlsafe_b64decode(cursor.encode("ascii")).decode().split(":", 1)
        return int(mtime), session_id
    except (ValueError, UnicodeError) as exc:
        raise InvalidCursor(cursor) from exc
