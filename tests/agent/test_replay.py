"""`agent.history.replay`: the record of how calls were shown, and replay from the transcript
alone."""

from __future__ import annotations

from typing import Any, cast

from agent.backends import Diff, Location, ToolUi
from agent.events import AgentEvent, ToolCallFinished, ToolCallReady
from agent.history.replay import (
    DIFF_CONTEXT_LINES,
    DIFF_TEXT_LIMIT,
    replay_events,
    tool_ui_entry,
)
from agent.tools import ToolContext
from agent.turn import CallSinks
from providers.types import Message, TextPart, ToolCallPart, ToolResultPart
from sessions import Entry, ExtensionEntry, MessageEntry, extensions


def _no_context(sinks: CallSinks) -> ToolContext:
    raise AssertionError("replay of a recorded call needs no tool context")


def _only_diff(entry: ExtensionEntry | None) -> dict[str, Any]:
    """The one diff of call `c` in a record."""
    assert entry is not None and entry.name == extensions.TOOL_UI
    data = cast("dict[str, Any]", entry.data)
    [diff] = data["calls"]["c"]["diffs"]
    return cast("dict[str, Any]", diff)


def _finished(events: list[AgentEvent]) -> list[ToolCallFinished]:
    return [e for e in events if isinstance(e, ToolCallFinished)]


def test_a_recorded_diff_keeps_the_change_with_a_little_context() -> None:
    old = "".join(f"line {n}\n" for n in range(1000))
    new = old.replace("line 500\n", "line five hundred\n")
    entry = tool_ui_entry(
        {
            "c": ToolUi(
                title="Edit f", kind="edit", diffs=(Diff(path="/f", old_text=old, new_text=new),)
            )
        }
    )
    diff = _only_diff(entry)
    kept = 2 * DIFF_CONTEXT_LINES + 1
    assert diff["old_text"].count("\n") == kept
    assert "line 500\n" in diff["old_text"] and "line five hundred\n" in diff["new_text"]
    assert diff["old_text"].startswith(f"line {500 - DIFF_CONTEXT_LINES}\n")


def test_a_created_file_is_recorded_as_created_and_capped() -> None:
    huge = "x" * (DIFF_TEXT_LIMIT * 2)
    entry = tool_ui_entry(
        {"c": ToolUi(title="Write f", diffs=(Diff(path="/f", old_text=None, new_text=huge),))}
    )
    diff = _only_diff(entry)
    assert diff["old_text"] is None
    assert len(diff["new_text"]) < DIFF_TEXT_LIMIT + 100
    assert diff["new_text"].endswith(f"({DIFF_TEXT_LIMIT} more characters)")


def test_calls_without_a_diff_are_not_recorded() -> None:
    assert tool_ui_entry({"c": ToolUi(title="Read f", kind="read")}) is None


def test_replay_uses_the_record_and_finishes_calls_that_have_no_result() -> None:
    call = ToolCallPart(id="c1", name="write", arguments={"path": "/w", "content": "new\n"})
    lost = ToolCallPart(id="c2", name="nosuchtool", arguments={})
    ui = ToolUi(
        title="Write w",
        kind="edit",
        locations=(Location(path="/w", line=1),),
        diffs=(Diff(path="/w", old_text=None, new_text="new\n"),),
    )
    record = tool_ui_entry({"c1": ui})
    assert record is not None
    entries: list[Entry] = [
        MessageEntry(message=Message(role="user", parts=[TextPart(text="go")]), id="u"),
        MessageEntry(message=Message(role="assistant", parts=[call]), id="a"),
        MessageEntry(
            message=Message(
                role="tool",
                parts=[
                    ToolResultPart(tool_call_id="c1", name="write", content=[TextPart(text="ok")])
                ],
            ),
            id="t",
        ),
        record,
        MessageEntry(message=Message(role="assistant", parts=[lost]), id="a2"),
        ExtensionEntry(name="usage", data={}),
    ]
    events = replay_events(entries, {}, _no_context)
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready[0].ui == ui
    finished = _finished(events)
    assert [(f.call_id, f.status) for f in finished] == [("c1", "completed"), ("c2", "interrupted")]
    assert finished[0].ui == ui
