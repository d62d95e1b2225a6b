"""`earshot sessions replay ID [--html OUT]`: a session as it happened.

Every entry of the file, in the order it was written, all branches included: prompts and
answers, each tool call with its arguments, the permission decisions about it, its diff as it
was shown then (`tool_ui`), its output, exit code and sandbox (`tool_outcome`), compactions,
model and mode changes, plans, undo snapshots (and whether they were undone), rewinds and the
branches they started, and where a fork was taken. Read-only: the transcript is never written.

`items` turns the transcript into one list of `Item`s that both renderers walk: plain text for
the terminal (every control character escaped, `earshot.text_safety`) and a self-contained HTML
page (`earshot.replay_html`: inline CSS, no script, every value escaped).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from earshot.audit import decided_by
from earshot.text_safety import terminal_safe
from earshot.transcripts import (
    CallRecord,
    TranscriptFile,
    as_list,
    as_object,
    first_line,
    index_calls,
)
from providers.types import ReasoningPart, TextPart, ToolCallPart
from sessions import (
    CompactionEntry,
    ExtensionEntry,
    LeafMoveEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    TitleEntry,
    UndoSnapshotEntry,
    UnknownEntry,
    extensions,
)

EXIT_OK = 0
EXIT_USAGE = 2
TERMINAL_OUTPUT_LINES = 20
"""A tool's output is cut to this many lines in the terminal (the HTML page keeps it whole)."""

ItemKind = Literal["user", "assistant", "reasoning", "call", "note", "usage"]


@dataclass(slots=True, kw_only=True)
class Item:
    kind: ItemKind
    text: str = ""
    turn: int = 0
    ts: str = ""
    call: CallRecord | None = None
    note: str = ""
    """For notes: model, mode, title, compaction, rewind, branch, plan, snapshot, fork,
    cancelled, unknown."""


@dataclass(slots=True, kw_only=True)
class Replay:
    transcript: TranscriptFile
    items: list[Item] = field(default_factory=lambda: [])
    undone: set[str] = field(default_factory=lambda: set[str]())
    """Snapshot ids of the batches that were undone."""


def build(transcript: TranscriptFile, *, undone: set[str] | None = None) -> Replay:
    """The items of `transcript`, in file order; `undone`: snapshot ids that were undone."""
    undone = undone or set()
    records = index_calls(transcript.id, transcript.entries)
    calls = {(record.entry_id, record.call_id): record for record in records}
    """By the assistant message's entry and the call id (an id alone may repeat)."""
    orphans = {record.call_id: record for record in records if not record.in_transcript}
    snapshots_of_calls = {record.snapshot for record in records if record.snapshot}
    replay = Replay(transcript=transcript, undone=undone)
    items = replay.items
    header = transcript.header
    if header.forked_from is not None:
        at = header.forked_from.entry_id or "its leaf"
        items.append(
            Item(
                kind="note",
                note="fork",
                text=f"forked from session {header.forked_from.session_id} at entry {at}: "
                "the entries up to there are a copy of that session's branch",
            )
        )
    fork_point = header.forked_from.entry_id if header.forked_from is not None else None
    turn = 0
    prompt = ""
    prompts: dict[str, tuple[int, str]] = {}
    """entry id -> the turn (number, prompt) the entry belongs to: where a rewind went."""
    previous: str | None = None
    rewound_to: str | None = "-"
    usage: dict[str, Any] | None = None
    shown_orphans: set[str] = set()
    for entry in transcript.entries:
        if isinstance(entry, LeafMoveEntry):
            where = prompts.get(entry.target_id or "", (0, "the start"))
            items.append(
                Item(
                    kind="note",
                    note="rewind",
                    ts=entry.ts,
                    text=f"rewound to turn {where[0]} ({where[1]}): what follows is a new "
                    "branch; the entries after that point stay in the file",
                )
            )
            rewound_to = entry.target_id
            continue
        if previous is not None and entry.parent_id not in (previous, rewound_to):
            where = prompts.get(entry.parent_id or "", (0, "the start"))
            items.append(
                Item(
                    kind="note",
                    note="branch",
                    ts=entry.ts,
                    text=f"a branch continuing from turn {where[0]} ({where[1]})",
                )
            )
        rewound_to = "-"
        previous = entry.id
        if isinstance(entry, MessageEntry) and entry.message.role == "user":
            if usage:
                items.append(Item(kind="usage", text=_usage_text(usage), turn=turn))
                usage = None
            turn += 1
            prompt = first_line(entry.message.text, 60)
        prompts[entry.id] = (turn, prompt)
        match entry:
            case MessageEntry():
                _message_items(entry, items, calls, turn)
            case ModelChangeEntry():
                effort = f" (reasoning {entry.reasoning_effort})" if entry.reasoning_effort else ""
                items.append(Item(kind="note", note="model", text=f"model {entry.model}{effort}"))
            case ModeChangeEntry():
                items.append(Item(kind="note", note="mode", text=f"permission mode {entry.mode}"))
            case TitleEntry():
                items.append(Item(kind="note", note="title", text=f"title: {entry.title}"))
            case CompactionEntry():
                before = f" ({entry.tokens_before} tokens)" if entry.tokens_before else ""
                items.append(
                    Item(
                        kind="note",
                        note="compaction",
                        ts=entry.ts,
                        text=f"the conversation so far{before} was compacted into this summary:"
                        f"\n{entry.summary}",
                    )
                )
            case UndoSnapshotEntry():
                if entry.snapshot in snapshots_of_calls:
                    continue  # shown with the calls it was taken for
                paths = ", ".join(entry.paths) or "nothing"
                undid = "; this batch was undone later" if entry.snapshot in undone else ""
                items.append(
                    Item(
                        kind="note",
                        note="snapshot",
                        ts=entry.ts,
                        text=f"undo snapshot before the batch ({paths}){undid}",
                    )
                )
            case ExtensionEntry():
                usage = _extension(entry, items, orphans, shown_orphans, turn) or usage
            case UnknownEntry():
                kind = entry.raw.get("kind")
                items.append(
                    Item(
                        kind="note",
                        note="unknown",
                        text=f"an entry this version cannot show: {kind}",
                    )
                )
        if fork_point is not None and entry.id == fork_point:
            items.append(Item(kind="note", note="fork", text="the fork's own entries start here"))
    if usage:
        items.append(Item(kind="usage", text=_usage_text(usage), turn=turn))
    return replay


def _message_items(
    entry: MessageEntry,
    items: list[Item],
    calls: dict[tuple[str, str], CallRecord],
    turn: int,
) -> None:
    message = entry.message
    if message.role == "user":
        items.append(Item(kind="user", text=message.text, turn=turn, ts=entry.ts))
        return
    for part in message.parts:
        if isinstance(part, TextPart) and part.text.strip():
            items.append(Item(kind="assistant", text=part.text, turn=turn, ts=entry.ts))
        elif isinstance(part, ReasoningPart) and part.text.strip():
            items.append(Item(kind="reasoning", text=part.text, turn=turn))
        elif isinstance(part, ToolCallPart) and (entry.id, part.id) in calls:
            call = calls[(entry.id, part.id)]
            items.append(Item(kind="call", call=call, turn=turn, ts=entry.ts))


def _extension(
    entry: ExtensionEntry,
    items: list[Item],
    orphans: dict[str, CallRecord],
    shown_orphans: set[str],
    turn: int,
) -> dict[str, Any] | None:
    """Plan changes and a subagent's calls become items; usage totals are returned."""
    data = entry.data
    if entry.name == extensions.USAGE and isinstance(data, dict):
        return dict(data)
    if entry.name == extensions.TURN_CANCELLED:
        items.append(
            Item(kind="note", note="cancelled", ts=entry.ts, text=f"turn {turn} was cancelled")
        )
    if entry.name == extensions.TODOS and isinstance(data, list):
        steps = [_plan_step(as_object(step)) for step in data if isinstance(step, dict)]
        items.append(Item(kind="note", note="plan", text="plan:\n" + "\n".join(steps)))
    elif entry.name in (extensions.PERMISSION, extensions.TOOL_OUTCOME) and isinstance(data, dict):
        call_id = data.get("call_id")
        record = orphans.get(call_id) if isinstance(call_id, str) else None
        if record is not None and record.call_id not in shown_orphans:
            shown_orphans.add(record.call_id)
            items.append(Item(kind="call", call=record, turn=turn, ts=entry.ts))
    return None


def _plan_step(step: dict[str, Any]) -> str:
    content = step.get("content", "")
    match step.get("status"):
        case "completed":
            return f"[x] {content}"
        case "in_progress":
            return f"[~] {content} (in progress)"
        case _:
            return f"[ ] {content}"


def _usage_text(usage: dict[str, Any]) -> str:
    cost = usage.get("cost_usd")
    priced = f"${cost:.4f}" if isinstance(cost, int | float) else "cost unknown"
    return (
        f"session so far: {usage.get('input_tokens', 0)} input tokens, "
        f"{usage.get('output_tokens', 0)} output tokens, {priced}"
    )


# --------------------------------------------------------------------------- call details


def call_title(call: CallRecord) -> str:
    if call.ui is not None and isinstance(call.ui.get("title"), str):
        return str(call.ui["title"])
    arguments = as_object(call.arguments)
    if call.name == "bash":
        described = arguments.get("description")
        return f"bash: {first_line(described, 120)}" if isinstance(described, str) else "bash"
    for key in _TITLE_KEYS:
        value = arguments.get(key)
        if isinstance(value, str):
            return f"{call.name} {first_line(value, 120)}"
    return call.name


_TITLE_KEYS = ("path", "url", "pattern", "description")


def call_arguments(call: CallRecord) -> str:
    """What to show of the arguments (a command in full; a write's content is its diff)."""
    arguments = as_object(call.arguments)
    if call.name == "bash" and isinstance(arguments.get("command"), str):
        return f"$ {arguments['command']}"
    if call.name in ("write", "edit") and call_diffs(call):
        return ""
    if set(arguments) <= {next((k for k in _TITLE_KEYS if k in arguments), "")}:
        return ""  # the title says it all
    if call.name == "edit":
        return (
            f"replace:\n{arguments.get('old_string', '')}\nwith:\n{arguments.get('new_string', '')}"
        )
    if not arguments:
        return "" if call.arguments is None else json.dumps(call.arguments, ensure_ascii=False)
    return json.dumps(arguments, ensure_ascii=False, indent=1)


def call_diffs(call: CallRecord) -> list[tuple[str, list[str]]]:
    """(path, unified diff lines) for each diff recorded as shown (none for a transcript that
    recorded none: a diff computed now would compare with today's file)."""
    diffs: list[tuple[str, list[str]]] = []
    for item in as_list(as_object(call.ui).get("diffs")):
        diff = as_object(item)
        path, old, new = diff.get("path"), diff.get("old_text"), diff.get("new_text")
        if not isinstance(path, str) or not isinstance(new, str):
            continue
        if not (old is None or isinstance(old, str)):
            continue
        lines = list(
            difflib.unified_diff(
                (old or "").splitlines(),
                new.splitlines(),
                fromfile="(new file)" if old is None else path,
                tofile=path,
                lineterm="",
                n=3,
            )
        )
        diffs.append((path, lines[2:] if len(lines) > 2 else lines))
    return diffs


def call_outcome(call: CallRecord) -> str:
    """Status, exit code and sandbox, in a few words."""
    parts = [call.status]
    raw = as_object(as_object(call.outcome).get("raw_output"))
    if raw:
        if isinstance(raw.get("exit_code"), int):
            parts.append(f"exit {raw['exit_code']}")
        if raw.get("timed_out"):
            parts.append("timed out")
        sandbox = raw.get("sandbox")
        if call.name == "bash":
            parts.append(
                {
                    "confined": "in the sandbox",
                    "outside": "OUTSIDE the sandbox (the user allowed it)",
                    "stopped": "stopped by the sandbox",
                }.get(str(sandbox), "not sandboxed")
            )
        if isinstance(raw.get("status"), int):
            parts.append(f"HTTP {raw['status']}")
    if not call.in_transcript:
        parts.append("a subagent's call")
    return ", ".join(parts)


def call_output(call: CallRecord) -> str:
    """The result text; for a write or edit whose diff is shown, only its first line (the rest
    repeats the diff); a command's output as a terminal showed it (`as_shown`)."""
    if call.result is None:
        return ""
    text = call.result.text.rstrip()
    if call.name == "bash":
        text = as_shown(text)
    if call.name in ("write", "edit") and call.status == "completed" and call_diffs(call):
        return text.strip().splitlines()[0] if text.strip() else ""
    return text.strip("\n")


def as_shown(output: str) -> str:
    """Terminal output as the terminal showed it: a PTY ends lines with CR LF, and a bare CR
    (a progress bar) returns to the start of the line, where what follows overwrites what was
    there. Other control characters stay escaped by the renderers."""
    lines: list[str] = []
    for line in output.replace("\r\n", "\n").split("\n"):
        shown = ""
        for piece in line.split("\r"):
            shown = piece + shown[len(piece) :]
        lines.append(shown)
    return "\n".join(lines)


def undo_note(call: CallRecord, undone: set[str]) -> str:
    """What became of the call's batch; nothing for a call that was refused (the snapshot was
    taken before the gate decided: the call changed nothing to undo)."""
    if call.snapshot is None or call.status == "denied":
        return ""
    if call.snapshot in undone:
        return "its batch was undone later (the files were put back as they were before it)"
    return "undo snapshot taken before its batch"


def call_decisions(call: CallRecord) -> list[str]:
    said: list[str] = []
    for decision in call.decisions:
        verdict = "allowed" if decision.get("allowed") else "refused"
        extra = " outside the sandbox" if decision.get("unsandboxed") else ""
        follow = " (a follow-up request)" if decision.get("follow_up") else ""
        said.append(f"permission {verdict}{extra}{follow}: {decided_by(decision)}")
    return said


# ------------------------------------------------------------------------------ terminal


def render_text(replay: Replay, out: TextIO) -> None:
    header = replay.transcript.header
    title = f" — {replay.transcript.title}" if replay.transcript.title else ""
    lines = [f"session {header.session_id}{title}", f"cwd {header.cwd}, created {header.created}"]
    if replay.transcript.parent is not None:
        lines.append(f"child of session {replay.transcript.parent.session_id}")
    lines.append("")
    for item in replay.items:
        lines.extend(_text_lines(item, replay.undone))
    out.write(terminal_safe("\n".join(lines).rstrip() + "\n"))


def _text_lines(item: Item, undone: set[str]) -> list[str]:
    match item.kind:
        case "user":
            return [
                f"━━ turn {item.turn} ━━ {item.ts[:19].replace('T', ' ')}",
                *_quoted(item.text),
                "",
            ]
        case "assistant":
            return [*item.text.strip().splitlines(), ""]
        case "reasoning":
            return [*("  (thinking) " + line for line in item.text.strip().splitlines()[:5]), ""]
        case "usage":
            return [f"  · {item.text}", ""]
        case "note":
            first, *rest = item.text.splitlines() or [""]
            return [f"[{first}]", *("    " + line for line in rest), ""]
        case "call":
            return _call_lines(item.call, undone) if item.call is not None else []


def _quoted(text: str) -> list[str]:
    return ["> " + line for line in text.strip().splitlines()]


def _call_lines(call: CallRecord, undone: set[str]) -> list[str]:
    lines = [f"→ {call_title(call)}  [{call.call_id}]"]
    shown = call_arguments(call)
    if shown:
        lines.extend("    " + line for line in shown.splitlines())
    lines.extend("  " + said for said in call_decisions(call))
    for path, diff in call_diffs(call):
        lines.append(f"    diff {path}")
        lines.extend("    " + line for line in diff)
    mark = "←" if call.status == "completed" else "✗"
    lines.append(f"  {mark} {call_outcome(call)}")
    note = undo_note(call, undone)
    if note and call.name in ("write", "edit", "bash"):
        lines.append(f"  ({note})")
    output = call_output(call).splitlines()
    if output:
        lines.extend("    " + line for line in output[:TERMINAL_OUTPUT_LINES])
        if len(output) > TERMINAL_OUTPUT_LINES:
            lines.append(f"    … {len(output) - TERMINAL_OUTPUT_LINES} more lines (see --html)")
    return [*lines, ""]


def diff_line_class(line: str) -> str:
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "ctx"


__all__: Sequence[str] = ("Item", "Replay", "build", "render_text")
