"""`earshot sessions tree ID`, `earshot sessions show ID --branch B` and `earshot -p --fork ID`.

A session file is a tree: `/rewind` (and `/clear`) leave the old branch in the file and start
a new one. Its branches are numbered in the order their last entries were written (1 is the
oldest); the current one (where the next prompt goes) is marked. Around the session are other
files: the child sessions its subagents ran in (their header names it as the parent) and the
sessions forked from it (their header names it as the origin); `tree` lists those too, children
recursively.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from earshot.commands import EXIT_OK, EXIT_USAGE, open_to_read, render_transcript

if TYPE_CHECKING:
    from sessions import Entry, Session, SessionStore, SessionSummary

_SHOWN = 70


@dataclass(frozen=True, slots=True)
class Branch:
    number: int
    leaf_id: str | None
    entries: tuple[Entry, ...]
    """Root first, leaf moves left out."""
    current: bool


def branches(session: Session) -> list[Branch]:
    """Every branch of the session: one per entry nothing hangs under, plus the current leaf's
    path when it is not one (a rewind nothing was said after yet)."""
    entries = [e for e in session.entries if e.kind != "leaf_move"]
    by_id = {entry.id: entry for entry in entries}
    parents = {entry.parent_id for entry in entries}
    leaves: list[str | None] = [entry.id for entry in entries if entry.id not in parents]
    current = session.leaf_id
    if current not in leaves:
        leaves.append(current)
    found: list[Branch] = []
    for number, leaf in enumerate(leaves, start=1):
        path: list[Entry] = []
        cursor = leaf
        while cursor is not None and cursor in by_id:
            path.append(by_id[cursor])
            cursor = by_id[cursor].parent_id
        path.reverse()
        found.append(Branch(number, leaf, tuple(path), current=leaf == current))
    return found


def pick_branch(found: Sequence[Branch], selector: str) -> Branch | None:
    """The branch `selector` names: its number, `current`, or (a prefix of) an entry id on it
    (the branch whose last entry that is, else the first branch holding it)."""
    if selector == "current":
        return next((b for b in found if b.current), None)
    if selector.isdigit():
        number = int(selector)
        return found[number - 1] if 1 <= number <= len(found) else None
    ending = [b for b in found if b.leaf_id is not None and b.leaf_id.startswith(selector)]
    if ending:
        return ending[0]
    return next((b for b in found if any(e.id.startswith(selector) for e in b.entries)), None)


def user_lines(entries: Sequence[Entry]) -> list[str]:
    from sessions import MessageEntry

    texts = [
        entry.message.text
        for entry in entries
        if isinstance(entry, MessageEntry) and entry.message.role == "user"
    ]
    return [_short(text) for text in texts]


def render_tree(
    session: Session, children: Sequence[SessionSummary], forks: Sequence[SessionSummary]
) -> str:
    header = session.header
    lines = [f"session {header.session_id}" + (f" — {session.title}" if session.title else "")]
    if header.parent is not None:
        lines.append(f"  child of {header.parent.session_id} (task call {header.parent.call_id})")
    if header.forked_from is not None:
        at = header.forked_from.entry_id or "its leaf"
        lines.append(f"  forked from {header.forked_from.session_id} at {at}")
    found = branches(session)
    lines.append(f"branches ({len(found)}):")
    seen: set[str] = set()
    for branch in found:
        said = user_lines(branch.entries)
        mark = " (current)" if branch.current else ""
        leaf = branch.leaf_id[:13] if branch.leaf_id else "the start"
        lines.append(f"  {branch.number}. ends at {leaf}{mark}: {len(said)} user message(s)")
        # Messages an earlier branch already listed: the branch starts after them.
        common = sum(1 for entry_id in _user_ids(branch.entries) if entry_id in seen)
        if common:
            lines.append(f"       1-{common} as in an earlier branch")
        for index, text in enumerate(said[common:], start=common + 1):
            lines.append(f"       {index}. {text}")
        seen.update(entry.id for entry in branch.entries)
    lines.extend(_related("children", children))
    lines.extend(_related("forks", forks))
    return "\n".join(lines) + "\n"


async def sessions_tree(session_id: str, *, out: TextIO, err: TextIO) -> int:
    """`earshot sessions tree ID`: the branches, children and forks of a session."""
    from sessions import SessionStore

    store = SessionStore()
    session = await open_to_read(session_id, err, store)
    if session is None:
        return EXIT_USAGE
    try:
        everything = _all(store)
        out.write(
            render_tree(
                session, _descendants(everything, session.id), _forks(everything, session.id)
            )
        )
    finally:
        await session.aclose()
    return EXIT_OK


async def sessions_show_branch(session_id: str, selector: str, *, out: TextIO, err: TextIO) -> int:
    """`earshot sessions show ID --branch B`: the transcript of one branch."""
    session = await open_to_read(session_id, err)
    if session is None:
        return EXIT_USAGE
    try:
        found = branches(session)
        branch = pick_branch(found, selector)
        if branch is None:
            err.write(
                f"earshot: session {session.id} has no branch {selector!r} "
                f"(1 to {len(found)}, `current` or an entry id; see `earshot sessions tree`)\n"
            )
            return EXIT_USAGE
        out.write(f"branch {branch.number} of {len(found)}\n")
        out.write(render_transcript(session, branch.entries))
    finally:
        await session.aclose()
    return EXIT_OK


async def fork_for_print(source_id: str, process: str, note: Callable[[str], None]) -> str:
    """`earshot -p --fork ID`: a copy of the session's current branch, to continue in; its id
    (`note` says which it is).

    Raises:
        sessions.SessionNotFound: no such session.
    """
    from sessions import SessionStore

    forked = await SessionStore(process=process).fork(source_id, retitle=True)
    await forked.aclose()
    note(f"forked session {source_id} into {forked.id}")
    return forked.id


def _all(store: SessionStore) -> list[SessionSummary]:
    rows: list[SessionSummary] = []
    cursor: str | None = None
    while True:
        page = store.list(None, cursor=cursor, limit=500)
        rows.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return rows


def _descendants(rows: Sequence[SessionSummary], session_id: str) -> list[SessionSummary]:
    found: list[SessionSummary] = []
    frontier = [session_id]
    while frontier:
        parent = frontier.pop()
        for row in rows:
            if row.parent is not None and row.parent.session_id == parent:
                found.append(row)
                frontier.append(row.id)
    return found


def _forks(rows: Sequence[SessionSummary], session_id: str) -> list[SessionSummary]:
    return [r for r in rows if r.forked_from is not None and r.forked_from.session_id == session_id]


def _related(label: str, rows: Sequence[SessionSummary]) -> list[str]:
    if not rows:
        return []
    lines = [f"{label} ({len(rows)}):"]
    for row in sorted(rows, key=lambda r: r.created):
        how = (
            f" (task call {row.parent.call_id} of {row.parent.session_id[:13]})"
            if row.parent
            else ""
        )
        lines.append(f"  {row.id}{how} — {row.title or '(untitled)'}")
    return lines


def _user_ids(entries: Sequence[Entry]) -> list[str]:
    from sessions import MessageEntry

    return [e.id for e in entries if isinstance(e, MessageEntry) and e.message.role == "user"]


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _SHOWN else line[: _SHOWN - 1] + "…"
