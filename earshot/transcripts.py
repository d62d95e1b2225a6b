"""Transcripts read back for `earshot audit`, `earshot blame` and `earshot sessions replay`.

Read-only: sessions are opened without claiming them (another process may be writing one), and
nothing is ever appended. Every entry of a file is read, all branches included: a call on a branch
the user later rewound away from still ran, and still wrote its files.

A transcript is hostile content (the model wrote most of it, tools copied files and command
output into it): values are read defensively, and whatever renders them escapes them.

Forks copy their source's branch with the entry ids kept; `dedupe` drops, across the sessions
read, every entry already seen in an earlier one, so a call is audited (and blamed) once.

A session that another session started (a child session: its header names the parent session
and the tool call that started it, `parent`) is read like any other session of its directory; its
rows say whose child it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from providers.types import JsonValue, ToolCallPart, ToolResultPart
from sessions import Entry, ExtensionEntry, Header, MessageEntry, UndoSnapshotEntry, extensions


@dataclass(frozen=True, slots=True)
class ParentRef:
    """The session (and tool call) that started a child session."""

    session_id: str
    call_id: str | None = None


@dataclass(slots=True, kw_only=True)
class CallRecord:
    """One tool call as the transcript tells it: arguments, result, decisions, outcome."""

    session_id: str
    call_id: str
    name: str
    arguments: JsonValue
    turn: int
    """1-based: the number of user prompts in the file up to the call."""
    prompt: str
    """The prompt of that turn (first line, cut)."""
    called_ts: str
    entry_id: str
    """The assistant message's entry."""
    result: ToolResultPart | None = None
    result_ts: str | None = None
    decisions: list[dict[str, Any]] = field(default_factory=lambda: [])
    outcome: dict[str, Any] | None = None
    ui: dict[str, Any] | None = None
    in_transcript: bool = True
    """False for a call known only from its audit entries (a subagent's call)."""
    snapshot: str | None = None
    """The undo snapshot taken before the call's batch ran (a mutating batch)."""

    @property
    def ts(self) -> str:
        return self.result_ts or self.called_ts

    @property
    def status(self) -> str:
        """completed, failed, denied or interrupted (no result yet: `open`)."""
        if self.outcome is not None and isinstance(self.outcome.get("status"), str):
            return cast("str", self.outcome["status"])
        if any(decision.get("allowed") is False for decision in self.decisions):
            return "denied"
        if self.result is None:
            return "open" if self.in_transcript else "unknown"
        if not self.result.is_error:
            return "completed"
        return "interrupted" if self.result.text.startswith("interrupted:") else "failed"


@dataclass(slots=True, kw_only=True)
class TranscriptFile:
    """A session file read back: its header and every entry of every branch."""

    header: Header
    path: Path
    entries: list[Entry]
    """File order, every branch; after `dedupe`, only the entries first seen here."""
    parent: ParentRef | None = None
    title: str | None = None

    @property
    def id(self) -> str:
        return self.header.session_id

    def calls(self) -> list[CallRecord]:
        """Every tool call, in the order the model made them, with what the transcript says
        about each; then calls known only from audit entries (a subagent's)."""
        return index_calls(self.id, self.entries)


def index_calls(session_id: str, entries: Sequence[Entry]) -> list[CallRecord]:
    """The calls of `entries`, in order. A call id names the latest call that had it: ids are
    unique per provider, but not across everything (a scripted model restarts its numbering in
    each process), so a result, decision or outcome goes to the newest call with its id."""
    records: list[CallRecord] = []
    calls: dict[str, CallRecord] = {}
    turn = 0
    prompt = ""
    orphans: dict[str, CallRecord] = {}
    batch: list[CallRecord] = []
    """The calls of the latest assistant message: an undo snapshot is taken before them."""
    for entry in entries:
        if isinstance(entry, UndoSnapshotEntry):
            for record in batch:
                if record.result is None and record.snapshot is None:
                    record.snapshot = entry.snapshot
            continue
        if isinstance(entry, MessageEntry):
            message = entry.message
            if message.role == "user":
                turn += 1
                prompt = first_line(message.text)
            if message.role == "assistant":
                batch = []
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    record = CallRecord(
                        session_id=session_id,
                        call_id=part.id,
                        name=part.name,
                        arguments=part.arguments,
                        turn=turn,
                        prompt=prompt,
                        called_ts=entry.ts,
                        entry_id=entry.id,
                    )
                    calls[part.id] = record
                    records.append(record)
                    batch.append(record)
                elif isinstance(part, ToolResultPart) and part.tool_call_id in calls:
                    record = calls[part.tool_call_id]
                    if record.result is None:
                        record.result, record.result_ts = part, entry.ts
        elif isinstance(entry, ExtensionEntry):
            _attach(entry, calls, orphans, session_id, turn, prompt)
    return [*records, *orphans.values()]


def _attach(
    entry: ExtensionEntry,
    calls: dict[str, CallRecord],
    orphans: dict[str, CallRecord],
    session_id: str,
    turn: int,
    prompt: str,
) -> None:
    data = entry.data
    if entry.name == extensions.TOOL_UI:
        shown = data.get("calls") if isinstance(data, dict) else None
        if isinstance(shown, dict):
            for call_id, ui in shown.items():
                if call_id in calls and isinstance(ui, dict):
                    calls[call_id].ui = cast("dict[str, Any]", ui)
        return
    if entry.name not in (extensions.PERMISSION, extensions.TOOL_OUTCOME) or not isinstance(
        data, dict
    ):
        return
    call_id, tool = data.get("call_id"), data.get("tool")
    if not isinstance(call_id, str) or not isinstance(tool, str):
        return
    record = calls.get(call_id) or orphans.get(call_id)
    if record is None:
        # A call the transcript's messages do not hold: a subagent's (its messages live in
        # its own conversation).
        record = CallRecord(
            session_id=session_id,
            call_id=call_id,
            name=tool,
            arguments=None,
            turn=turn,
            prompt=prompt,
            called_ts=entry.ts,
            entry_id=entry.id,
            in_transcript=False,
        )
        orphans[call_id] = record
    payload = {**cast("dict[str, Any]", data), "ts": entry.ts}
    if entry.name == extensions.PERMISSION:
        record.decisions.append(payload)
    else:
        record.outcome = payload
        if not record.in_transcript:
            record.result_ts = entry.ts


def as_object(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (a transcript is data: never raise)."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    return cast("list[Any]", value) if isinstance(value, list) else []


def first_line(text: str, limit: int = 80) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


# ------------------------------------------------------------------------------- reading


async def read_transcripts(
    cwd: Path | None, *, root: Path | None = None, include_forks_once: bool = True
) -> list[TranscriptFile]:
    """The sessions of `cwd` (every directory's when None), oldest first; with
    `include_forks_once`, entries a fork copied from an earlier session are dropped (`dedupe`).
    Unreadable files are skipped."""
    from sessions import SessionStore

    store = SessionStore(root)
    ids: list[str] = []
    cursor: str | None = None
    while True:
        page = store.list(cwd, cursor=cursor, limit=200)
        ids.extend(item.id for item in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    transcripts: list[TranscriptFile] = []
    for session_id in ids:
        transcript = await read_transcript(session_id, store=store)
        if transcript is not None:
            transcripts.append(transcript)
    transcripts.sort(key=lambda t: (t.header.created, t.id))
    return dedupe(transcripts) if include_forks_once else transcripts


async def read_transcript(session_id: str, *, store: Any = None) -> TranscriptFile | None:
    """One session by id (read-only), or None when it cannot be read."""
    from sessions import SessionNotFound, SessionStore, SessionUnreadable

    store = store if store is not None else SessionStore()
    try:
        session = await store.open(session_id, claim=False)
    except (SessionNotFound, SessionUnreadable, OSError):
        return None
    try:
        return TranscriptFile(
            header=session.header,
            path=session.path,
            entries=list(session.entries),
            parent=_parent_of(session.path),
            title=session.title,
        )
    finally:
        await session.aclose()


def dedupe(transcripts: Iterable[TranscriptFile]) -> list[TranscriptFile]:
    """Each transcript with the entries an earlier one already holds (a fork's copy) left out."""
    seen: set[str] = set()
    kept: list[TranscriptFile] = []
    for transcript in transcripts:
        own = [entry for entry in transcript.entries if entry.id not in seen]
        seen.update(entry.id for entry in transcript.entries)
        kept.append(
            TranscriptFile(
                header=transcript.header,
                path=transcript.path,
                entries=own,
                parent=transcript.parent,
                title=transcript.title,
            )
        )
    return kept


def _parent_of(path: Path) -> ParentRef | None:
    """The `parent` a child session's header names (`{"session_id", "call_id"}`); the header
    dataclass leaves out fields it does not know, so the raw first line is read."""
    try:
        with path.open("rb") as file:
            raw = json.loads(file.readline() or b"{}")
    except (OSError, ValueError):
        return None
    parent = as_object(as_object(raw).get("parent"))
    session_id = parent.get("session_id")
    call_id = parent.get("call_id")
    if not isinstance(session_id, str):
        return None
    return ParentRef(session_id, call_id if isinstance(call_id, str) else None)


# ------------------------------------------------------------------------------- helpers


def resolve_in(cwd: str, raw: object) -> Path | None:
    """A tool's `path` argument as the tool resolved it: `~` expanded, relative to the
    session's cwd, normalised (not resolved: the file may be gone)."""
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(cwd) / path
    return Path(os.path.normpath(path))


def inside(path: Path, roots: Sequence[str]) -> bool:
    for root in roots:
        base = Path(os.path.normpath(root))
        if path == base or base in path.parents:
            return True
    return False
