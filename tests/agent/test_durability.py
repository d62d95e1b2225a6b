"""Acknowledged means durable: a call is on disk before it is shown finished, a turn's answer
before the turn ends; a transcript cut short at any point (a process killed between a call and its
result, during a compaction, a rewind or a fork) opens as a valid request with its open calls
answered "interrupted"; and a session another process has open is read-only here."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from agent.context.compaction import is_summary_request
from agent.events import AgentEvent, ToolCallFinished, TurnEnded
from providers.types import Message, ModelRequest, TextPart, ToolCallPart, ToolResultPart
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn, TurnSpec
from sessions import INTERRUPTED_BY_STOP, MessageEntry, SessionBusy, SessionStore
from tests.agent.context_support import catalog
from tests.agent.loop_support import Board, collect, env, make_session, waiting_tool


def disk_lines(path: Path, *, skip_torn: bool = False) -> list[dict[str, Any]]:
    """The session file's entries as another process would read them now (with `skip_torn`,
    the line a kill tore, closed by a later append, is left out)."""
    found: list[dict[str, Any]] = []
    for line in path.read_bytes().split(b"\n")[1:]:
        if not line.strip():
            continue
        try:
            found.append(json.loads(line))
        except ValueError:
            if not skip_torn:
                raise
    return found


def results_on_disk(path: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for line in disk_lines(path):
        message: dict[str, Any] = line.get("message") or {}
        if message.get("role") == "tool":
            for part in message["parts"]:
                found[part["tool_call_id"]] = part
    return found


def assert_valid_request(history: Sequence[Message]) -> None:
    """What every vendor checks: each assistant message's calls are answered, in order, by the
    message right after it, and no tool result answers anything else."""
    for index, message in enumerate(history):
        if message.role == "tool":
            previous = history[index - 1] if index else None
            assert previous is not None and previous.role == "assistant", "orphan tool message"
            calls = [call.id for call in previous.tool_calls]
            ids = [p.tool_call_id for p in message.parts if isinstance(p, ToolResultPart)]
            assert ids == calls
        elif message.tool_calls:
            assert index + 1 < len(history), "calls at the end of history have no results"
            assert history[index + 1].role == "tool"


def probe(key: str, wait_for: str | None = None) -> ScriptedCall:
    arguments: dict[str, Any] = {"key": key}
    if wait_for is not None:
        arguments["wait_for"] = wait_for
    return ScriptedCall(name="probe", arguments=arguments, id=f"call-{key}")


async def test_a_call_is_on_disk_before_it_is_shown_finished(tmp_path: Path) -> None:
    board = Board()
    model = ScriptedModel(
        [
            # b runs last (it waits for the test): a and c finish and are shown first.
            ScriptedTurn(tool_calls=[probe("a"), probe("b", wait_for="gate"), probe("c")]),
            ScriptedTurn(text="all done"),
        ]
    )
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board)])
    path = session.transcript.stored.path
    shown: list[str] = []
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async for event in session.run_turn("go"):
            events.append(event)
            if isinstance(event, ToolCallFinished):
                # Another process reading the file right now finds the result shown.
                on_disk = results_on_disk(path)
                assert event.call_id in on_disk, f"{event.call_id} shown before it was saved"
                assert on_disk[event.call_id]["content"][0]["text"] == event.result.text
                shown.append(event.call_id)
                if len(shown) == 2:
                    assert "call-b" not in on_disk  # still running: genuinely one at a time
                    board.event("gate").set()
            if isinstance(event, TurnEnded):
                assert disk_lines(path)[-1]["message"]["parts"][0]["text"] == "all done"
    assert sorted(shown) == ["call-a", "call-b", "call-c"] and shown[-1] == "call-b"
    # One tool message per result on disk, joined in call order for the model.
    history = session.history()
    assert_valid_request(history)
    assert [p.tool_call_id for p in history[2].parts if isinstance(p, ToolResultPart)] == [
        "call-a",
        "call-b",
        "call-c",
    ]
    assert history is not session.history() and session.history()[2] is history[2]
    next_request = model.requests[-1].messages
    assert_valid_request(next_request)
    await session.aclose()


async def test_results_that_finish_together_share_one_append(tmp_path: Path) -> None:
    keys = [f"k{n}" for n in range(6)]
    model = ScriptedModel(
        [ScriptedTurn(tool_calls=[probe(key) for key in keys]), ScriptedTurn(text="ok")]
    )
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(Board())])
    path = session.transcript.stored.path
    events = await collect(session.run_turn("go"))
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == len(keys)
    tool_lines = [
        line for line in disk_lines(path) if line.get("message", {}).get("role") == "tool"
    ]
    assert sum(len(line["message"]["parts"]) for line in tool_lines) == len(keys)
    assert len(tool_lines) < len(keys)  # fewer writes (and syncs) than results
    history = session.history()
    assert_valid_request(history)
    await session.aclose()


# ------------------------------------------------------------------------- crash points


def _script(request: ModelRequest, turns: list[TurnSpec]) -> TurnSpec:
    if is_summary_request(request):
        return ScriptedTurn(text="SUMMARY of the work so far")
    return turns.pop(0)


async def _rich_transcript(tmp_path: Path) -> tuple[SessionStore, Path, Path]:
    """A transcript with every kind of write a crash can interrupt: batches of calls answered
    one by one, a compaction, a rewind to an assistant message, and a fork of it."""
    turns: list[TurnSpec] = [
        ScriptedTurn(tool_calls=[probe("a1"), probe("a2")]),
        ScriptedTurn(tool_calls=[probe("b1"), probe("b2"), probe("b3")]),
        ScriptedTurn(text="first answer"),
        ScriptedTurn(text="second answer"),
        ScriptedTurn(tool_calls=[probe("c1"), probe("c2")]),
        ScriptedTurn(text="third answer"),
        ScriptedTurn(tool_calls=[probe("d1")]),
        ScriptedTurn(text="fourth answer"),
    ]
    where = env(tmp_path / "source")
    model = ScriptedModel(lambda request: _script(request, turns))
    session = await make_session(
        where,
        model,
        tools=[waiting_tool(Board())],
        catalog=catalog(200_000),
        model_name="scripted/scripted",
    )
    for prompt in ("one", "two", "three"):
        await collect(session.run_turn(prompt))
    compacted = await collect(session.compact())
    assert compacted[-1].kind == "compaction_finished" and getattr(compacted[-1], "ok", False)
    await collect(session.run_turn("four"))
    stored = session.transcript.stored
    assert stored is not None
    calls_c = next(
        entry
        for entry in stored.path_entries()
        if isinstance(entry, MessageEntry)
        and [c.id for c in entry.message.tool_calls] == ["call-c1", "call-c2"]
    )
    await stored.rewind(calls_c.id)  # answers c1 and c2 "interrupted" on the new branch
    assert _interrupted_tail(stored.path) == ["call-c1", "call-c2"]
    assert_valid_request(stored.history())
    fork = await where.store.fork(stored.id, at_entry=calls_c.id)
    fork_path = fork.path
    assert _interrupted_tail(fork_path) == ["call-c1", "call-c2"]
    await fork.aclose()
    path = stored.path
    await session.aclose()
    return where.store, path, fork_path


def _interrupted_tail(path: Path) -> list[str]:
    """The calls the file's last line answers "interrupted"."""
    message = disk_lines(path, skip_torn=True)[-1]["message"]
    assert message["role"] == "tool"
    assert {part["content"][0]["text"] for part in message["parts"]} == {INTERRUPTED_BY_STOP}
    return [part["tool_call_id"] for part in message["parts"]]


def _cut_points(data: bytes) -> list[int]:
    """Every line boundary, and the middle of every line (a write torn by the kill)."""
    points: list[int] = []
    start = data.index(b"\n") + 1  # a file is created with its header in one write
    while start < len(data):
        end = data.index(b"\n", start) + 1
        points.extend([start, (start + end) // 2])
        start = end
    points.append(len(data))
    return points


@pytest.mark.parametrize("which", ["session", "fork"])
async def test_a_transcript_cut_at_any_point_opens_as_a_valid_request(
    tmp_path: Path, which: str
) -> None:
    _, source_path, fork_path = await _rich_transcript(tmp_path)
    data = (source_path if which == "session" else fork_path).read_bytes()
    points = _cut_points(data)
    assert len(points) > 20
    repaired = 0
    for number, point in enumerate(points):
        root = tmp_path / f"cut{number}"
        target = root / source_path.parent.name / source_path.name
        target.parent.mkdir(parents=True)
        target.write_bytes(data[:point])
        store = SessionStore(root)
        with capture_logs() as logs:
            session = await store.open(target.stem)
        assert session.writable
        history = session.history()
        assert_valid_request(history)
        # What was written stays byte for byte; the repair only appends.
        after = target.read_bytes()
        assert after.startswith(data[:point].rsplit(b"\n", 1)[0])
        torn = point > 0 and data[point - 1 : point] != b"\n"
        assert torn == any(log["event"].startswith("torn last line") for log in logs)
        # Every result the cut file held is still the result the model gets.
        kept = {
            part.tool_call_id: part
            for message in history
            if message.role == "tool"
            for part in message.parts
            if isinstance(part, ToolResultPart)
        }
        on_path: dict[str, ToolResultPart] = {}
        for entry in session.path_entries():
            if isinstance(entry, MessageEntry) and entry.message.role == "tool":
                for part in entry.message.parts:
                    if isinstance(part, ToolResultPart):
                        on_path.setdefault(part.tool_call_id, part)
        for call_id, part in kept.items():
            assert on_path[call_id] == part
        # Calls left open were answered on disk (not only in the request), append-only.
        if len(after) > len(data[:point]) + (1 if torn else 0):
            repaired += 1
            assert _interrupted_tail(target)
        # Opening it again changes nothing more, and a new prompt continues it.
        await session.aclose()
        again = await store.open(target.stem)
        assert again.path.read_bytes() == after
        await again.append_message(Message(role="user", parts=[TextPart(text="continue")]))
        assert_valid_request(again.history())
        await again.aclose()
    assert repaired >= 3  # the cuts between calls and their results were there


async def test_an_old_transcript_with_calls_answered_by_nothing_is_still_a_valid_request(
    tmp_path: Path,
) -> None:
    """Before this fix a crashed session went on with the calls unanswered mid-path; it works."""
    where = env(tmp_path)
    stored = await where.store.create(where.cwd)
    call = ToolCallPart(id="lost", name="probe", arguments={"key": "x"})
    await stored.append_message(Message(role="user", parts=[TextPart(text="one")]))
    await stored.append_message(Message(role="assistant", parts=[call]))
    await stored.append_message(Message(role="user", parts=[TextPart(text="two")]))
    stray = ToolResultPart(tool_call_id="nobody", name="probe", content=[TextPart(text="?")])
    await stored.append_message(Message(role="tool", parts=[stray]))
    history = stored.history()
    assert_valid_request(history)
    assert [m.role for m in history] == ["user", "assistant", "tool", "user"]
    assert history[2].parts[0] == ToolResultPart(
        tool_call_id="lost",
        name="probe",
        content=[TextPart(text=INTERRUPTED_BY_STOP)],
        is_error=True,
    )
    await stored.aclose()


# ----------------------------------------------------------------------------- one writer


async def test_a_session_open_elsewhere_replays_but_refuses_to_write(tmp_path: Path) -> None:
    where = env(tmp_path)
    holder = await make_session(where, [ScriptedTurn(text="hi"), ScriptedTurn(text="again")])
    await collect(holder.run_turn("hello"))
    before = holder.transcript.stored.path.read_bytes()

    other = await make_session(where, [ScriptedTurn(text="never")], resume_id=holder.id)
    assert holder.transcript.stored is not None and other.transcript.stored is not None
    assert holder.transcript.stored.writable and not other.transcript.stored.writable
    assert [e.kind for e in other.replay_events()][-1] == "text"
    with pytest.raises(SessionBusy, match=f"pid {os.getpid()}"):
        await other.ensure_writable()
    with pytest.raises(SessionBusy):
        await other.set_mode("plan")
    assert other.mode != "plan"
    # A turn started anyway (no front end checked first) ends saying why, having written nothing.
    events = await collect(other.run_turn("sneaky"))
    assert isinstance(events[-1], TurnEnded) and events[-1].reason == "error"
    assert "is open in earshot" in (events[-1].message or "")
    assert holder.transcript.stored.path.read_bytes() == before

    # The holder keeps working; once it closes, the other one takes over (and sees its turn).
    await collect(holder.run_turn("still mine"))
    await holder.aclose()
    await other.ensure_writable()
    assert other.transcript.stored.writable
    assert [m.text for m in other.history() if m.role == "user"] == ["hello", "still mine"]
    await other.aclose()


async def test_a_failed_write_is_rolled_back_and_the_next_one_is_whole(tmp_path: Path) -> None:
    """A real short write: the file size limit (RLIMIT_FSIZE) of a child process, which gets
    EFBIG past it, part of the line written."""
    where = env(tmp_path)
    stored = await where.store.create(where.cwd)
    await stored.append_message(Message(role="user", parts=[TextPart(text="before")]))
    await stored.aclose()
    size = stored.path.stat().st_size
    script = tmp_path / "limited.py"
    script.write_text(_LIMITED_WRITER, encoding="utf-8")
    with anyio.fail_after(20):
        result = await anyio.run_process(
            [sys.executable, str(script), str(where.store.root), stored.id, str(size + 300)],
            check=False,
        )
    output = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    # EFBIG after 300 of the 5000 bytes were written; the file is back to its size before.
    assert output.split() == ["failed", str(errno.EFBIG), str(size), "appended"]
    lines = stored.path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    parsed = [json.loads(line) for line in lines[:-1]]  # every line whole
    texts = [line["message"]["parts"][0]["text"][:6] for line in parsed[1:]]
    assert texts == ["before", "after"]


_LIMITED_WRITER = """
import resource, signal, sys
from pathlib import Path
import anyio
from providers.types import Message, TextPart
from sessions import SessionStore, SessionWriteFailed

async def main(root, session_id, limit):
    session = await SessionStore(Path(root)).open(session_id)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        await session.append_message(Message(role="user", parts=[TextPart(text="x" * 5000)]))
    except SessionWriteFailed as exc:
        print("failed", exc.errno)
    print(session.path.stat().st_size)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    await session.append_message(Message(role="user", parts=[TextPart(text="after")]))
    print("appended")
    await session.aclose()

anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
"""
