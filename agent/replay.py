"""A stored conversation as the events a live run would have produced (ACP `session/load`).

Assistant messages replay under their entry id as `message_id`; each tool call replays as
started, ready (with the UI computed from its arguments, as live) and finished. A call another
process is still running (a session open elsewhere, shown read-only) has no result yet and
replays as started; one whose process died was answered "interrupted" when the session was
claimed, and replays as interrupted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import assert_never

from agent.backends import MODES, ToolUi
from agent.events import (
    AgentEvent,
    CompactionFinished,
    ModeChanged,
    ModelChanged,
    PlanChanged,
    ReasoningChunk,
    TextChunk,
    TitleChanged,
    ToolCallFinished,
    ToolCallReady,
    ToolCallStarted,
    ToolStatus,
    UserMessageAdded,
)
from agent.execution import INTERRUPTED_TEXT, CallSinks, title_for
from agent.tools.base import AnyTool, ToolContext
from providers.types import (
    ImagePart,
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
)

PLAN_EXTENSION = "plan"


def replay_events(
    entries: Sequence[Entry],
    tools: Mapping[str, AnyTool],
    context: Callable[[CallSinks], ToolContext],
) -> list[AgentEvent]:
    """Events for `entries` (a session's current path), in order."""
    events: list[AgentEvent] = []
    for entry in entries:
        match entry:
            case MessageEntry():
                _message_events(entry.id, entry.message, tools, context, events)
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
                if entry.name == PLAN_EXTENSION:
                    from agent.session_parts import plan_from_json

                    events.append(PlanChanged(entries=plan_from_json(entry.data)))
            case LeafMoveEntry() | UndoSnapshotEntry() | UnknownEntry():
                pass
            case _:
                assert_never(entry)
    return events


def _message_events(
    entry_id: str,
    message: Message,
    tools: Mapping[str, AnyTool],
    context: Callable[[CallSinks], ToolContext],
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
                    ui = _ui_for(part, tools, context)
                    events.append(ToolCallStarted(call_id=part.id, name=part.name, ui=ui))
                    events.append(
                        ToolCallReady(
                            call_id=part.id, name=part.name, arguments=part.arguments, ui=ui
                        )
                    )
        case "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    events.append(
                        ToolCallFinished(
                            call_id=part.tool_call_id,
                            name=part.name,
                            status=_status(part),
                            result=part,
                        )
                    )
                elif isinstance(part, ImagePart):
                    continue
        case _:
            assert_never(message.role)


def _status(part: ToolResultPart) -> ToolStatus:
    if not part.is_error:
        return "completed"
    # A call its process never finished (answered on load, `sessions.repair`) replays as
    # interrupted, which the front end shows as failed with that reason.
    return "interrupted" if part.text in (INTERRUPTED_TEXT, INTERRUPTED_BY_STOP) else "failed"


def _ui_for(
    call: ToolCallPart,
    tools: Mapping[str, AnyTool],
    context: Callable[[CallSinks], ToolContext],
) -> ToolUi:
    tool = tools.get(call.name)
    if tool is None or call.invalid_arguments is not None:
        return title_for(call.name)
    try:
        args = tool.input_model.model_validate(call.arguments)
        return tool.ui(args, context(CallSinks(call_id=call.id, emit=_ignore)))
    except Exception:
        return title_for(call.name)


def _ignore(event: AgentEvent) -> None:
    return None
