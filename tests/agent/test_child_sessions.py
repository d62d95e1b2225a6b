"""Subagents run in child sessions: their own id and file, a header naming the parent session
and `task` call, listed (and filterable) as children, loadable, cancelled with the parent, with
usage kept on the child and rolled up into the parent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio

from agent.events import AgentEvent, ToolCallProgress, TurnEnded, UsageUpdated
from agent.turn import INTERRUPTED_TEXT
from providers.types import ToolResultPart, Usage
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import ExtensionEntry, MessageEntry, extensions
from tests.agent.loop_support import (
    Answering,
    Board,
    collect,
    env,
    make_session,
    of,
    results_of,
    waiting_tool,
)
from tests.agent.test_task import TwoLevelScript


def _task(call_id: str = "task_1") -> ScriptedCall:
    return ScriptedCall(
        name="task",
        id=call_id,
        arguments={"description": "Look around", "prompt": "What is in the project?"},
    )


async def test_a_subagent_runs_in_a_child_session_linked_both_ways(tmp_path: Path) -> None:
    where = env(tmp_path)
    (where.cwd / "a.txt").write_text("alpha\n", encoding="utf-8")
    script = TwoLevelScript(
        parent=[ScriptedTurn(tool_calls=[_task()]), ScriptedTurn(text="done")],
        child=[
            ScriptedTurn(
                tool_calls=[ScriptedCall(name="ls", id="c_ls", arguments={"path": "."})],
                usage=Usage(input_tokens=100, output_tokens=10),
            ),
            ScriptedTurn(text="There is a.txt.", usage=Usage(input_tokens=200, output_tokens=20)),
        ],
    )
    session = await make_session(where, ScriptedModel(script), builtin=True)
    events = await collect(session.run_turn("survey"))
    assert events[-1] == TurnEnded(reason="end_turn")

    linked = [e for e in of(ToolCallProgress, events) if e.child_session_id is not None]
    assert len(linked) == 1 and linked[0].call_id == "task_1" and linked[0].parent_call_id is None
    child_id = linked[0].child_session_id
    assert child_id is not None and child_id != session.id

    child = await where.store.open(child_id, claim=False)
    assert child.header.parent is not None
    assert (child.header.parent.session_id, child.header.parent.call_id) == (session.id, "task_1")
    assert child.path.parent == session.transcript.stored.path.parent  # same project
    assert [m.role for m in child.history()] == ["user", "assistant", "tool", "assistant"]
    assert child.history()[0].text == "What is in the project?"
    assert child.history()[-1].text == "There is a.txt."
    assert child.model == "scripted/test"
    # Usage: the child keeps its own totals ...
    usage = [e for e in child.path_entries() if isinstance(e, ExtensionEntry)]
    totals = [e.data for e in usage if e.name == extensions.USAGE]
    assert isinstance(totals[-1], dict) and totals[-1]["input_tokens"] == 300
    await child.aclose()
    # ... and the parent's include them.
    assert max(u.total.input_tokens for u in of(UsageUpdated, events)) >= 300
    assert session.usage.tracker.total.input_tokens >= 300

    # The parent's file links the call to the child; the raw header has the agreed shape.
    parent = await where.store.open(session.id, claim=False)
    links = [
        e.data
        for e in parent.entries
        if isinstance(e, ExtensionEntry) and e.name == extensions.SUBAGENT
    ]
    assert links == [{"call_id": "task_1", "session_id": child_id}]
    await parent.aclose()
    first_line = (where.store.root / child.path.parent.name / f"{child_id}.jsonl").read_text()
    assert (
        f'"parent":{{"session_id":"{session.id}","call_id":"task_1"}}' in first_line.split("\n")[0]
    )
    assert results_of(session.history())["task_1"].text == "There is a.txt."

    # Listed as a child, and filterable.
    listed = where.store.list(where.cwd)
    assert {item.id for item in listed.items} == {session.id, child_id}
    assert {item.id for item in where.store.list(where.cwd, children=False).items} == {session.id}
    only = where.store.list(where.cwd, parent_id=session.id).items
    assert [item.id for item in only] == [child_id]
    assert only[0].parent is not None and only[0].parent.call_id == "task_1"

    assert only[0].title == "Subagent: What is in the project?"
    # `--continue` never picks a child, even one written last.
    child_path = where.store.root / child.path.parent.name / f"{child_id}.jsonl"
    newest = child_path.stat().st_mtime_ns + 10**9
    os.utime(child_path, ns=(newest, newest))
    latest = await where.store.latest(where.cwd)
    assert latest is not None and latest.id == session.id
    await latest.aclose()

    # A reopened parent replays the link.
    replayed = session.replay_events()
    assert [e.child_session_id for e in of(ToolCallProgress, replayed)] == [child_id]
    await session.aclose()


async def test_cancelling_the_parent_cancels_the_child_and_leaves_it_whole(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    script = TwoLevelScript(
        parent=[ScriptedTurn(tool_calls=[_task()])],
        child=[
            ScriptedTurn(
                text="looking",
                tool_calls=[ScriptedCall(name="ls", id="c_ls", arguments={"path": "."})],
            ),
            ScriptedTurn(text="partial", hang=True),
        ],
    )
    session = await make_session(where, ScriptedModel(script), builtin=True)
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async for event in session.run_turn("survey"):
            events.append(event)
            # The child's second model call is streaming: cancel the user's turn.
            if event.kind == "text" and getattr(event, "text", "") == "partial":
                session.cancel()
    assert events[-1] == TurnEnded(reason="cancelled")
    child_id = next(e.child_session_id for e in of(ToolCallProgress, events) if e.child_session_id)
    assert child_id is not None
    assert results_of(session.history())["task_1"].is_error

    child = await where.store.open(child_id)  # loadable, and claimable: the lock was let go
    assert child.writable
    roles = [m.role for m in child.history()]
    assert roles[:3] == ["user", "assistant", "tool"]
    answered = [
        part
        for entry in child.path_entries()
        if isinstance(entry, MessageEntry)
        for part in entry.message.parts
        if isinstance(part, ToolResultPart)
    ]
    assert answered and all(p.text != INTERRUPTED_TEXT or p.is_error for p in answered)
    await child.aclose()
    await session.aclose()


async def test_a_childs_permission_decisions_are_audited_in_its_own_file(tmp_path: Path) -> None:
    where = env(tmp_path)
    board = Board()
    touch = waiting_tool(board, "touch", read_only=False)
    task = ScriptedCall(
        name="task",
        id="task_1",
        arguments={"description": "Touch", "prompt": "touch w", "tools": ["touch"]},
    )
    script = TwoLevelScript(
        parent=[ScriptedTurn(tool_calls=[task]), ScriptedTurn(text="done")],
        child=[
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", id="t1", arguments={"key": "w"})]),
            ScriptedTurn(text="touched"),
        ],
    )
    session = await make_session(
        where, ScriptedModel(script), tools=[touch], interaction=Answering("allow_once")
    )
    events = await collect(session.run_turn("go"))
    child_id = next(e.child_session_id for e in of(ToolCallProgress, events) if e.child_session_id)
    assert child_id is not None and board.log == ["start w", "end w"]

    async def audited(session_id: str) -> list[object]:
        opened = await where.store.open(session_id, claim=False)
        try:
            return [
                e.data
                for e in opened.entries
                if isinstance(e, ExtensionEntry) and e.name == extensions.PERMISSION
            ]
        finally:
            await opened.aclose()

    decisions = await audited(child_id)
    assert len(decisions) == 1 and "t1" in json.dumps(decisions[0])
    assert await audited(session.id) == []
    await session.aclose()
