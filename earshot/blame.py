"""`earshot blame FILE [--json]`: for each line of FILE, the session, turn and tool call that last
wrote it, or "not written by earshot".

The file's story is replayed from the transcripts of every session whose directory holds it
(oldest first, a fork's copied entries once), with the undo snapshots as ground truth:
- a `write` call gives the whole new text; an `edit` call is re-applied to the text as it was
  (exactly as the tool applies it); lines a call changed or added are that call's, the others
  keep their origin (a line diff, as `git blame` does per commit);
- an undo snapshot, taken before each batch of mutating calls, holds the file as it really was
  then: lines that differ from the replayed text were changed by someone else (the user, another
  program): "not written by earshot". When a command earshot ran (`bash`) came in between, the
  change is put down to that command, flagged as not certain (a command's writes are not
  recorded, only that it ran);
- an undone batch (its snapshot ref moved to `refs/earshot-undone/`) puts the file back to the
  snapshot taken before it, with the origins it had then. An undo is not in the transcript, so it
  is placed where it must have happened: `undo` takes a session's newest batch not yet undone,
  so it came after the batch and before the session's next batch that was not undone (or after
  everything, when none is);
- finally the file on disk is compared the same way with the replayed text.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from agent.files import read_exact
from earshot.text_safety import terminal_safe
from earshot.transcripts import CallRecord, TranscriptFile, resolve_in
from earshot.undo_reader import FileAt, SnapshotReader
from sessions import UndoSnapshotEntry

EXIT_OK = 0
EXIT_FAILED = 1
_LINES = re.compile(r"[^\n]*\n|[^\n]+$")
_END = "\uffff"
"""Sorts after every timestamp: events placed after everything."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Origin:
    session_id: str
    turn: int
    prompt: str
    call_id: str
    tool: str
    ts: str
    certain: bool = True
    """False for a change put down to a command (see the module docstring)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            "prompt": self.prompt,
            "call_id": self.call_id,
            "tool": self.tool,
            "ts": self.ts,
            "certain": self.certain,
        }


@dataclass(slots=True)
class FileState:
    """The replayed file: its lines and who wrote each; `known` False once it cannot be
    followed (an edit that does not apply to the replayed text)."""

    known: bool = False
    exists: bool = False
    lines: list[str] = field(default_factory=lambda: [])
    origins: list[Origin | None] = field(default_factory=lambda: [])

    def copy(self) -> FileState:
        return FileState(self.known, self.exists, list(self.lines), list(self.origins))


@dataclass(frozen=True, slots=True)
class _Event:
    key: tuple[str, int, float]
    kind: str
    """snapshot, write, command or undo."""
    snapshot: str = ""
    call: CallRecord | None = None


class Snapshots(Protocol):
    """The undo snapshots of one directory (`earshot.undo_reader.SnapshotReader`)."""

    def undone(self) -> set[str]: ...

    def files_at(self, snapshots: Sequence[str], path: Path) -> dict[str, FileAt]: ...


def split_lines(text: str) -> list[str]:
    return _LINES.findall(text)


# ----------------------------------------------------------------------------- replaying


def blame_lines(
    target: Path,
    transcripts: Sequence[TranscriptFile],
    current: str,
    *,
    readers: Mapping[str, Snapshots] | None = None,
) -> list[tuple[str, Origin | None]]:
    """Each line of `current` (the file's text now) with its origin."""
    readers = readers if readers is not None else {}
    events: list[_Event] = []
    contents: dict[str, FileAt] = {}
    for order, transcript in enumerate(transcripts):
        reader = readers.get(transcript.header.cwd)
        events.extend(_session_events(target, transcript, order, reader, contents))
    events.sort(key=lambda event: event.key)
    state = FileState()
    saved: dict[str, FileState] = {}
    pending: Origin | None = None
    for event in events:
        match event.kind:
            case "snapshot":
                known = contents.get(event.snapshot)
                if known is not None:
                    state = _reconcile(state, known, pending)
                    pending = None
                saved[event.snapshot] = state.copy()
            case "undo":
                if event.snapshot in saved:
                    state = saved[event.snapshot].copy()
            case "command":
                assert event.call is not None
                pending = _origin(event.call, certain=False)
            case _:
                assert event.call is not None
                state = _apply(state, event.call)
    final = _reconcile(state, FileAt(True, current), pending)
    return list(zip(final.lines, final.origins, strict=True))


def _session_events(
    target: Path,
    transcript: TranscriptFile,
    order: int,
    reader: Snapshots | None,
    contents: dict[str, FileAt],
) -> list[_Event]:
    cwd = transcript.header.cwd
    events: list[_Event] = []
    snapshots = [e for e in transcript.entries if isinstance(e, UndoSnapshotEntry)]
    covering = [e.snapshot for e in snapshots if _covers(e, cwd, target)]
    undone = reader.undone() if reader is not None else set[str]()
    if reader is not None:
        contents.update(reader.files_at(covering, target))
    for position, entry in enumerate(snapshots):
        if entry.snapshot in covering:
            events.append(_Event((entry.ts, 1, order + position / 1e6), "snapshot", entry.snapshot))
    for call in transcript.calls():
        if call.result_ts is None or call.status not in ("completed", "failed"):
            continue
        key = (call.result_ts, 1, order + 0.5)
        if call.name == "bash":
            events.append(_Event(key, "command", call=call))
        elif call.name in ("write", "edit") and call.status == "completed":
            arguments = call.arguments if isinstance(call.arguments, dict) else {}
            path = resolve_in(cwd, arguments.get("path"))
            if path is not None and _same_file(path, target):
                events.append(_Event(key, call.name, call=call))
    # Undos: after the batch, before the session's next batch that was not undone.
    for index, entry in enumerate(snapshots):
        if entry.snapshot not in undone:
            continue
        later = next((s for s in snapshots[index + 1 :] if s.snapshot not in undone), None)
        when = later.ts if later is not None else _END
        events.append(_Event((when, 0, -index), "undo", entry.snapshot))
    return events


def _covers(entry: UndoSnapshotEntry, cwd: str, target: Path) -> bool:
    for shown in entry.paths:
        path = resolve_in(cwd, shown)
        if path is None:
            continue
        if _same_file(path, target) or path in target.parents:
            return True
    return False


def _same_file(path: Path, target: Path) -> bool:
    if path == target:
        return True
    return os.path.realpath(path) == os.path.realpath(target)


def _origin(call: CallRecord, *, certain: bool = True) -> Origin:
    return Origin(
        session_id=call.session_id,
        turn=call.turn,
        prompt=call.prompt,
        call_id=call.call_id,
        tool=call.name,
        ts=call.ts,
        certain=certain,
    )


def _reconcile(state: FileState, actual: FileAt, pending: Origin | None) -> FileState:
    """The replayed state corrected to what the file really was: changed lines are the
    command's that ran in between (`pending`), else nobody's."""
    if not actual.exists or actual.text is None:
        return FileState(known=True, exists=False)
    lines = split_lines(actual.text)
    if not state.known:
        return FileState(True, True, lines, [None] * len(lines))
    if not state.exists:  # known to be absent: whatever ran in between created it
        return FileState(True, True, lines, [pending] * len(lines))
    return _diffed(state, lines, pending)


def _apply(state: FileState, call: CallRecord) -> FileState:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    origin = _origin(call)
    if call.name == "write":
        content = arguments.get("content")
        if not isinstance(content, str):
            return FileState()
        lines = split_lines(content)
        if not (state.known and state.exists):
            return FileState(True, True, lines, [origin] * len(lines))
        return _diffed(state, lines, origin)
    if not (state.known and state.exists):
        return FileState()
    text = _edited("".join(state.lines), arguments)
    if text is None:
        return FileState()
    return _diffed(state, split_lines(text), origin)


def _edited(text: str, arguments: dict[str, Any]) -> str | None:
    """`agent.tools.edit`'s replacement, or None when it does not apply to `text`."""
    old, new = arguments.get("old_string"), arguments.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        return None
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        return None
    return (
        text.replace(old, new)
        if arguments.get("replace_all") is True
        else text.replace(old, new, 1)
    )


def _diffed(state: FileState, lines: list[str], changed: Origin | None) -> FileState:
    origins: list[Origin | None] = []
    matcher = difflib.SequenceMatcher(None, state.lines, lines, autojunk=False)
    for tag, old_start, _old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            origins.extend(state.origins[old_start : old_start + (new_end - new_start)])
        else:
            origins.extend([changed] * (new_end - new_start))
    return FileState(True, True, lines, origins)


# ----------------------------------------------------------------------------- the command


async def run_blame(file: str, *, cwd: Path, as_json: bool, out: TextIO, err: TextIO) -> int:
    from earshot.transcripts import dedupe, read_transcripts
    from sessions import data_dir

    # Resolved once and read exactly there (`agent.files.safe_paths`): the history is matched to the
    # file that was read, a regular file (a FIFO would block), with no link swapped in between.
    target = Path(os.path.realpath(cwd / Path(file).expanduser()))
    try:
        data, _, _ = read_exact(target)
    except OSError as exc:
        err.write(f"earshot: cannot read {file}: {exc.strerror or exc}\n")
        return EXIT_FAILED
    current = data.decode("utf-8", errors="surrogateescape")
    transcripts: list[TranscriptFile] = []
    for directory in (target.parent, *target.parent.parents):
        transcripts.extend(await read_transcripts(directory, include_forks_once=False))
    transcripts.sort(key=lambda t: (t.header.created, t.id))
    transcripts = dedupe(transcripts)
    readers = {
        cwd_: SnapshotReader(cwd_, data_dir()) for cwd_ in {t.header.cwd for t in transcripts}
    }
    lines = blame_lines(target, transcripts, current, readers=readers)
    if as_json:
        json.dump(
            {
                "file": str(target),
                "sessions": [t.id for t in transcripts],
                "lines": [
                    {
                        "line": number,
                        "text": text.removesuffix("\n"),
                        "origin": None if origin is None else origin.to_json(),
                    }
                    for number, (text, origin) in enumerate(lines, start=1)
                ],
            },
            out,
            ensure_ascii=False,
        )
        out.write("\n")
        return EXIT_OK
    render(lines, out)
    return EXIT_OK


def render(lines: Sequence[tuple[str, Origin | None]], out: TextIO) -> None:
    width = len(str(len(lines)))
    seen: dict[tuple[str, int], str] = {}
    for number, (text, origin) in enumerate(lines, start=1):
        if origin is None:
            who = "(not written by earshot)"
        else:
            mark = "" if origin.certain else "~"
            who = f"{origin.session_id[:13]} t{origin.turn} {mark}{origin.tool} {origin.call_id}"
            seen.setdefault((origin.session_id, origin.turn), origin.prompt)
        body = terminal_safe(text.removesuffix("\n"))
        out.write(f"{who:<48} {number:>{width}}) {body}\n")
    if seen:
        out.write("\n")
        for (session_id, turn), prompt in seen.items():
            out.write(terminal_safe(f"{session_id[:13]} t{turn}: {prompt}", single_line=True))
            out.write("\n")
    if any(origin is not None and not origin.certain for _, origin in lines):
        out.write("~ a command earshot ran changed the file in between; it may not be its line\n")
