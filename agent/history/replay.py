"""A stored conversation as the events a live run would have produced (ACP `session/load`).

Replay shows what happened then, from the transcript alone, never from the disk as it is now:
- assistant messages replay under their entry id as `message_id`;
- each tool call replays as started, ready and finished with its final status (`completed`, or
  `failed`/`interrupted` for an error result); a call the transcript has no result for finishes
  `interrupted`, so no front end shows it running forever (a call whose process died was answered
  "interrupted: the agent stopped before this call finished" when the session was claimed,
  `sessions.repair`; one still without a result is being run by another process that has the
  session open);
- its UI (title, kind, locations, diffs) is the one recorded when the call finished: the loop
  appends a `tool_ui` extension entry after each batch's results (`tool_ui_entry`), holding the
  diffs as they were (a created file: `old_text` None), cut down to the changed lines with a
  little context so the transcript stays small. A call without a record (older transcripts, a
  call that changed nothing) gets the title, kind and locations its arguments give, and no diff:
  a diff computed now would compare against today's file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, assert_never, cast, get_args

from agent.backends import MODES, Diff, Location, ToolKind, ToolUi
from agent.events import (
    AgentEvent,
    CompactionFinished,
    ModeChanged,
    ModelChanged,
    ReasoningChunk,
    TextChunk,
    TitleChanged,
    TodosChanged,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    ToolStatus,
    UserMessageAdded,
)
from agent.todos import TodoPlan, todos_from_json
from agent.tools import AnyTool, ToolContext
from agent.turn import INTERRUPTED_TEXT, CallSinks, interrupted_result, title_for
from providers.types import (
    ImagePart,
    JsonValue,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from sessions import (
    INTERRUPTED_BY_STOP,
    CompactionEntry,
    Entry,
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

DIFF_CONTEXT_LINES = 3
"""Unchanged lines kept around the change in a recorded diff."""
DIFF_TEXT_LIMIT = 32_000
"""Characters kept of each side of a recorded diff (a created file's whole text above all)."""
_KINDS: frozenset[str] = frozenset(get_args(ToolKind))


def replay_events(
    entries: Sequence[Entry],
    tools: Mapping[str, AnyTool],
    context: Callable[[CallSinks], ToolContext],
) -> list[AgentEvent]:
    """Events for `entries` (a session's current path), in order."""
    recorded = _recorded_uis(entries)
    events: list[AgentEvent] = []
    open_calls: dict[str, str] = {}
    """Calls replayed as started whose result has not come yet: id -> name."""
    plan = TodoPlan()
    for entry in entries:
        match entry:
            case MessageEntry():
                if entry.message.role != "tool":
                    # Results follow their calls' message (other entries may come between).
                    _close_unanswered(open_calls, events)
                _message_events(
                    entry.id, entry.message, tools, context, recorded, open_calls, events
                )
            case ModelChangeEntry():
                events.append(
                    ModelChanged(model=entry.model, reasoning_effort=entry.reasoning_effort)
                )
            case ModeChangeEntry():
                for mode in MODES:
                    if mode == entry.mode:
                        events.append(ModeChanged(mode=mode))
            case TitleEntry():
                events.append(TitleChanged(title=entry.title))
            case CompactionEntry():
                events.append(
                    CompactionFinished(
                        compaction_id=entry.id,
                        ok=True,
                        summary=entry.summary,
                        tokens_before=entry.tokens_before,
                    )
                )
            case ExtensionEntry():
                if entry.name == extensions.TODOS:
                    plan = plan.then(entry.id, todos_from_json(entry.data))
                    events.append(TodosChanged(items=plan.items, plan_id=plan.plan_id))
                elif entry.name == extensions.SUBAGENT:
                    events.extend(_child_link(entry.data))
                elif entry.name == extensions.SUBAGENT_WORK:
                    events.extend(_child_work(entry.data))
            case LeafMoveEntry() | UndoSnapshotEntry() | UnknownEntry():
                pass
            case _:
                assert_never(entry)
    _close_unanswered(open_calls, events)
    return events


def _message_events(
    entry_id: str,
    message: Message,
    tools: Mapping[str, AnyTool],
    context: Callable[[CallSinks], ToolContext],
    recorded: Mapping[str, ToolUi],
    open_calls: dict[str, str],
    events: list[AgentEvent],
) -> None:
    match message.role:
        case "user":
            events.append(UserMessageAdded(entry_id=entry_id, text=message.text))
        case "assistant":
            for part in message.parts:
                if isinstance(part, TextPart):
                    if part.text:
                        events.append(TextChunk(text=part.text, message_id=entry_id))
                elif isinstance(part, ReasoningPart):
                    if part.text:
                        events.append(ReasoningChunk(text=part.text, message_id=entry_id))
                elif isinstance(part, ToolCallPart):
                    ui = recorded.get(part.id) or _ui_from_arguments(part, tools, context)
                    open_calls[part.id] = part.name
                    events.append(ToolCallStarted(call_id=part.id, name=part.name, ui=ui))
                    events.append(
                        ToolCallReady(
                            call_id=part.id, name=part.name, arguments=part.arguments, ui=ui
                        )
                    )
        case "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    open_calls.pop(part.tool_call_id, None)
                    events.append(
                        ToolCallFinished(
                            call_id=part.tool_call_id,
                            name=part.name,
                            status=_status(part),
                            result=part,
                            ui=recorded.get(part.tool_call_id),
                        )
                    )
                elif isinstance(part, ImagePart):
                    continue
        case _:
            assert_never(message.role)


def _close_unanswered(open_calls: dict[str, str], events: list[AgentEvent]) -> None:
    """Calls the transcript holds no result for finish as interrupted: that is what they were."""
    for call_id, name in open_calls.items():
        call = ToolCallPart(id=call_id, name=name, arguments={})
        events.append(
            ToolCallFinished(
                call_id=call_id, name=name, status="interrupted", result=interrupted_result(call)
            )
        )
    open_calls.clear()


def _status(part: ToolResultPart) -> ToolStatus:
    if not part.is_error:
        return "completed"
    # A call its process never finished (answered on load, `sessions.repair`) replays as
    # interrupted, which the front end shows as failed with that reason.
    return "interrupted" if part.text in (INTERRUPTED_TEXT, INTERRUPTED_BY_STOP) else "failed"


def _ui_from_arguments(
    call: ToolCallPart,
    tools: Mapping[str, AnyTool],
    context: Callable[[CallSinks], ToolContext],
) -> ToolUi:
    """Title, kind and locations from the arguments; no diff (see the module docstring)."""
    tool = tools.get(call.name)
    if tool is None or call.invalid_arguments is not None:
        return title_for(call.name)
    try:
        args = tool.input_model.model_validate(call.arguments)
        ui = tool.ui(args, context(CallSinks(call_id=call.id, emit=_ignore)))
    except Exception:
        return title_for(call.name)
    return replace(ui, diffs=())


def _child_link(data: JsonValue) -> list[AgentEvent]:
    if not isinstance(data, dict):
        return []
    call_id, session_id = data.get("call_id"), data.get("session_id")
    if not (isinstance(call_id, str) and isinstance(session_id, str)):
        return []
    return [ToolCallProgress(call_id=call_id, child_session_id=session_id)]


def _child_work(data: JsonValue) -> list[AgentEvent]:
    """A subagent's calls, as its task call's nested calls, each in its final state."""
    if not isinstance(data, dict) or not isinstance(parent := data.get("call_id"), str):
        return []
    calls = data.get("calls")
    events: list[AgentEvent] = []
    for item in calls if isinstance(calls, list) else []:
        if not isinstance(item, dict):
            continue
        call_id, title, state = item.get("id"), item.get("title"), item.get("state")
        if not (isinstance(call_id, str) and isinstance(title, str)):
            continue
        status: ToolStatus = next(
            (known for known in get_args(ToolStatus) if known == state), "interrupted"
        )
        ui = ToolUi(title=title)
        result = ToolResultPart(tool_call_id=call_id, name="", content=[])
        events.append(
            ToolCallReady(call_id=call_id, name="", arguments=None, ui=ui, parent_call_id=parent)
        )
        events.append(
            ToolCallFinished(
                call_id=call_id, name="", status=status, result=result, parent_call_id=parent
            )
        )
    return events


def _ignore(event: AgentEvent) -> None:
    return None


# --------------------------------------------------------------------------- the record


def tool_ui_entry(uis: Mapping[str, ToolUi]) -> ExtensionEntry | None:
    """The record of how finished calls were shown (only calls that showed a diff: the rest
    replay as well from their arguments); None when there is nothing to record."""
    calls: dict[str, JsonValue] = {
        call_id: _ui_to_json(ui) for call_id, ui in uis.items() if ui.diffs
    }
    if not calls:
        return None
    return ExtensionEntry(name=extensions.TOOL_UI, data={"calls": calls})


def _ui_to_json(ui: ToolUi) -> JsonValue:
    return {
        "title": ui.title,
        "kind": ui.kind,
        "locations": [{"path": loc.path, "line": loc.line} for loc in ui.locations],
        "diffs": [_diff_to_json(_trimmed(diff)) for diff in ui.diffs],
    }


def _diff_to_json(diff: Diff) -> JsonValue:
    return {"path": diff.path, "old_text": diff.old_text, "new_text": diff.new_text}


def _trimmed(diff: Diff) -> Diff:
    """The changed lines with `DIFF_CONTEXT_LINES` around them, each side capped."""
    if diff.old_text is None:
        return Diff(path=diff.path, old_text=None, new_text=_capped(diff.new_text))
    old = diff.old_text.splitlines(keepends=True)
    new = diff.new_text.splitlines(keepends=True)
    shortest = min(len(old), len(new))
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(0, head - DIFF_CONTEXT_LINES)
    keep_tail = max(0, tail - DIFF_CONTEXT_LINES)
    return Diff(
        path=diff.path,
        old_text=_capped("".join(old[start : len(old) - keep_tail])),
        new_text=_capped("".join(new[start : len(new) - keep_tail])),
    )


def _capped(text: str) -> str:
    if len(text) <= DIFF_TEXT_LIMIT:
        return text
    return text[:DIFF_TEXT_LIMIT] + f"\n… ({len(text) - DIFF_TEXT_LIMIT} more characters)"


def _recorded_uis(entries: Iterable[Entry]) -> dict[str, ToolUi]:
    recorded: dict[str, ToolUi] = {}
    for entry in entries:
        if not (isinstance(entry, ExtensionEntry) and entry.name == extensions.TOOL_UI):
            continue
        data = entry.data
        calls = data.get("calls") if isinstance(data, dict) else None
        if not isinstance(calls, dict):
            continue
        for call_id, raw in calls.items():
            ui = _ui_from_json(raw)
            if ui is not None:
                recorded[call_id] = ui
    return recorded


def _ui_from_json(raw: JsonValue) -> ToolUi | None:
    """A recorded UI, or None when the record is not one (never raises: a transcript is data)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("title"), str):
        return None
    kind = raw.get("kind")
    locations: list[Location] = []
    for item in _objects(raw.get("locations")):
        line = item.get("line")
        if isinstance(item.get("path"), str):
            locations.append(
                Location(
                    path=cast("str", item["path"]),
                    line=line if isinstance(line, int) and not isinstance(line, bool) else None,
                )
            )
    diffs: list[Diff] = []
    for item in _objects(raw.get("diffs")):
        path, old, new = item.get("path"), item.get("old_text"), item.get("new_text")
        if isinstance(path, str) and isinstance(new, str) and (old is None or isinstance(old, str)):
            diffs.append(Diff(path=path, old_text=old, new_text=new))
    return ToolUi(
        title=cast("str", raw["title"]),
        kind=cast("ToolKind", kind) if isinstance(kind, str) and kind in _KINDS else "other",
        locations=tuple(locations),
        diffs=tuple(diffs),
    )


def _objects(value: JsonValue) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [cast("dict[str, Any]", item) for item in value if isinstance(item, dict)]
