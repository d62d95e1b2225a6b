from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from providers.types import Message, TextPart, ToolCallPart, ToolResultPart
from sessions import (
    CompactionEntry,
    EntryNotFound,
    ExtensionEntry,
    LeafMoveEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    SessionBusy,
    SessionStore,
    TitleEntry,
    UndoSnapshotEntry,
    UnknownEntry,
)


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def texts(messages: list[Message]) -> list[str]:
    return [message.text for message in messages]


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_append_fills_identity_and_chains(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    first = await session.append_message(user("one"))
    second = await session.append_message(user("two"))

    assert first.id and first.ts.endswith("Z")
    assert first.parent_id is None
    assert second.parent_id == first.id
    assert second.id > first.id
    assert session.leaf_id == second.id
    header, *entries = lines_of(session.path)
    assert header["kind"] == "header"
    assert header["session_id"] == session.id
    assert header["cwd"] == str(project)
    assert header["version"] == 1
    assert [e["id"] for e in entries] == [first.id, second.id]
    assert entries[1]["parent_id"] == first.id


async def test_every_kind_round_trips_through_the_file(store: SessionStore, project: Path) -> None:
    session = await store.create(project, additional_directories=["/extra"])
    call = ToolCallPart(
        id="c1",
        name="bash",
        arguments={"command": "ls"},
        provider_metadata={"anthropic": {"signature": "sig"}},
    )
    stored = [
        await session.append_message(user("hello")),
        await session.append_message(
            Message(role="assistant", parts=[call], provider_metadata={"openai": {"phase": "x"}})
        ),
        await session.append(ModelChangeEntry(model="anthropic/claude", reasoning_effort="high")),
        await session.append(ModeChangeEntry(mode="plan")),
        await session.append(TitleEntry(title="A title")),
        await session.append(CompactionEntry(summary="sum", first_kept_id=None, tokens_before=9)),
        await session.append(UndoSnapshotEntry(snapshot="abc", batch_id="b1", paths=["a.py"])),
        await session.append(ExtensionEntry(name="plan", data={"todos": [1, "two", None]})),
    ]
    await session.aclose()

    reopened = await store.open(session.id)
    assert list(reopened.entries) == stored
    assert reopened.header.additional_directories == ["/extra"]
    assert reopened.model == "anthropic/claude"
    assert reopened.reasoning_effort == "high"
    assert reopened.mode == "plan"
    assert reopened.title == "A title"
    await reopened.aclose()


async def test_rewind_branches_and_keeps_the_old_branch(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    one = await session.append_message(user("one"))
    await session.append_message(user("two"))
    await session.append(TitleEntry(title="old branch title"))

    move = await session.rewind(one.id)
    three = await session.append_message(user("three"))

    assert move.target_id == one.id
    assert three.parent_id == one.id
    assert texts(session.history()) == ["one", "three"]
    assert session.title is None  # the title is on the abandoned branch
    assert [e.id for e in session.path_entries()] == [one.id, three.id]
    assert len(session.entries) == 5  # nothing removed, the leaf move included

    await session.rewind(None)
    four = await session.append_message(user("four"))
    assert four.parent_id is None
    assert texts(session.history()) == ["four"]
    await session.aclose()

    reopened = await store.open(session.id)
    assert texts(reopened.history()) == ["four"]
    assert reopened.leaf_id == four.id
    await reopened.aclose()


async def test_rewind_to_unknown_or_leaf_move_is_refused(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    one = await session.append_message(user("one"))
    move = await session.rewind(one.id)
    size = session.path.stat().st_size

    with pytest.raises(EntryNotFound):
        await session.rewind("nope")
    with pytest.raises(EntryNotFound):
        await session.rewind(move.id)
    assert session.path.stat().st_size == size
    await session.aclose()


async def test_compaction_history(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    ids = [(await session.append_message(user(f"m{i}"))).id for i in range(5)]
    await session.append(CompactionEntry(summary="SUMMARY", first_kept_id=ids[3]))
    await session.append_message(user("after"))

    history = session.history()
    assert history[0] == Message(role="user", parts=[TextPart(text="SUMMARY")])
    assert texts(history) == ["SUMMARY", "m3", "m4", "after"]

    # A later compaction wins; keeping nothing keeps only what follows it.
    await session.append(CompactionEntry(summary="S2", first_kept_id=None))
    await session.append_message(user("last"))
    assert texts(session.history()) == ["S2", "last"]

    # Rewinding to before the compactions brings the full history back.
    await session.rewind(ids[4])
    assert texts(session.history()) == ["m0", "m1", "m2", "m3", "m4"]
    await session.aclose()


async def test_concurrent_appends_in_one_process_chain(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    async with anyio.create_task_group() as group:
        for index in range(40):
            group.start_soon(session.append_message, user(str(index)))

    entries = list(session.entries)
    assert len(entries) == 40
    assert entries[0].parent_id is None
    for previous, entry in zip(entries, entries[1:], strict=False):
        assert entry.parent_id == previous.id
    assert len(session.history()) == 40
    await session.aclose()


async def test_a_second_session_object_is_read_only_until_the_first_closes(
    store: SessionStore, project: Path
) -> None:
    first = await store.create(project)
    second = await store.open(first.id)
    assert first.writable and not second.writable
    holder = second.holder()
    assert holder is not None and holder.pid == os.getpid() and holder.process == "earshot"
    async with anyio.create_task_group() as group:
        for index in range(20):
            group.start_soon(first.append_message, user(f"a{index}"))
    with pytest.raises(SessionBusy, match=f"pid {os.getpid()}"):
        await second.append_message(user("refused"))
    await first.aclose()
    # Free now: the next append takes it over, after reading what the first one wrote.
    taken = await second.append_message(user("b"))
    assert second.writable
    await second.aclose()

    reopened = await store.open(first.id)
    entries = list(reopened.entries)
    assert len(entries) == 21
    assert entries[-1].id == taken.id
    for previous, entry in zip(entries, entries[1:], strict=False):
        assert entry.parent_id == previous.id
    await reopened.aclose()


async def test_refresh_sees_other_writers(store: SessionStore, project: Path) -> None:
    writer = await store.create(project)
    reader = await store.open(writer.id)
    await writer.append_message(user("new"))
    assert reader.history() == []
    await reader.refresh()
    assert texts(reader.history()) == ["new"]
    await writer.aclose()
    await reader.aclose()


async def test_caller_ids_are_kept_and_must_be_unique(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    entry = await session.append(MessageEntry(message=user("x"), id="my-id"))
    assert entry.id == "my-id"
    with pytest.raises(ValueError, match="already"):
        await session.append(MessageEntry(message=user("y"), id="my-id"))
    assert session.get("my-id") == entry
    assert session.get("missing") is None
    await session.aclose()


async def test_closed_session_refuses_appends(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    await session.aclose()
    await session.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await session.append_message(user("late"))


def write_raw(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def message_line(entry_id: str, parent: str | None, text: str) -> str:
    return json.dumps(
        {
            "kind": "message",
            "id": entry_id,
            "parent_id": parent,
            "ts": "2025-01-01T00:00:00.000Z",
            "message": {"role": "user", "parts": [{"kind": "text", "text": text}]},
        }
    )


async def test_unknown_kinds_and_newer_header_are_tolerated(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    await session.aclose()
    header = json.loads(session.path.read_text(encoding="utf-8").splitlines()[0])
    header |= {"version": 7, "future_field": {"x": 1}}
    future = {
        "kind": "bookmark",
        "id": "b",
        "parent_id": "a",
        "ts": "2025-01-01T00:00:00.000Z",
        "label": "here",
    }
    write_raw(
        session.path,
        [
            json.dumps(header),
            message_line("a", None, "one"),
            json.dumps(future),
            message_line("c", "b", "two"),
        ],  # fmt: skip
    )

    with capture_logs() as logs:
        reopened = await store.open(session.id)
    assert logs == []
    assert reopened.header.version == 7
    unknown = reopened.get("b")
    assert isinstance(unknown, UnknownEntry)
    assert unknown.raw["label"] == "here"
    assert unknown.parent_id == "a"
    assert texts(reopened.history()) == ["one", "two"]
    appended = await reopened.append_message(user("three"))
    assert appended.parent_id == "c"
    await reopened.aclose()

    # A fork copies the unknown line verbatim.
    fork = await store.fork(session.id)
    copied = [line for line in lines_of(fork.path) if line.get("id") == "b"]
    assert copied == [future]
    await fork.aclose()


async def test_malformed_known_kind_is_kept_as_unknown(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    await session.aclose()
    header = session.path.read_text(encoding="utf-8").splitlines()[0]
    bad = {"kind": "message", "id": "x", "parent_id": "a", "ts": "", "message": {"role": 5}}
    write_raw(session.path, [header, message_line("a", None, "one"), json.dumps(bad)])

    with capture_logs() as logs:
        reopened = await store.open(session.id)
        assert texts(reopened.history()) == ["one"]
    assert isinstance(reopened.get("x"), UnknownEntry)
    assert [log["event"] for log in logs] == ["session entry unreadable, kept as unknown"]
    await reopened.aclose()


async def test_garbage_line_in_the_middle_is_skipped(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    await session.aclose()
    header = session.path.read_text(encoding="utf-8").splitlines()[0]
    torn = message_line("b", "a", "torn")[:40]
    write_raw(
        session.path,
        [
            header,
            message_line("a", None, "one"),
            "not json at all",
            torn,
            "[1, 2]",
            message_line("c", "a", "two"),
        ],  # fmt: skip
    )

    with capture_logs() as logs:
        reopened = await store.open(session.id)
    assert texts(reopened.history()) == ["one", "two"]
    assert [log["line"] for log in logs] == [3, 4, 5]
    assert all(log["log_level"] == "warning" for log in logs)
    await reopened.aclose()


async def test_torn_last_line_is_skipped_and_the_next_append_starts_fresh(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    one = await session.append_message(user("one"))
    await session.aclose()
    with session.path.open("a", encoding="utf-8") as handle:
        handle.write(message_line("torn", one.id, "half")[:50])

    with capture_logs() as logs:
        reopened = await store.open(session.id)
    assert [log["event"] for log in logs] == ["torn last line skipped (a writer stopped mid-line)"]
    assert reopened.leaf_id == one.id
    two = await reopened.append_message(user("two"))
    assert two.parent_id == one.id
    await reopened.aclose()

    raw_lines = session.path.read_text(encoding="utf-8").split("\n")
    assert raw_lines[-1] == ""  # the file ends with a newline again
    assert json.loads(raw_lines[-2])["id"] == two.id
    with capture_logs() as logs:
        again = await store.open(session.id)
    assert texts(again.history()) == ["one", "two"]
    assert [log["event"] for log in logs] == ["session line is not JSON, skipped"]
    await again.aclose()


async def test_torn_line_is_detected_by_a_writer_that_is_already_open(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    one = await session.append_message(user("one"))
    with session.path.open("a", encoding="utf-8") as handle:
        handle.write('{"kind":"message","id":"t","par')
    with capture_logs() as logs:
        two = await session.append_message(user("two"))
    assert two.parent_id == one.id
    assert [log["line"] for log in logs] == [3]
    await session.aclose()
    reopened = await store.open(session.id)
    assert texts(reopened.history()) == ["one", "two"]
    await reopened.aclose()


async def test_complete_last_line_without_newline_is_kept(
    store: SessionStore, project: Path
) -> None:
    session = await store.create(project)
    one = await session.append_message(user("one"))
    await session.aclose()
    with session.path.open("a", encoding="utf-8") as handle:
        handle.write(message_line("b", one.id, "two"))

    with capture_logs() as logs:
        reopened = await store.open(session.id)
    assert logs == []
    assert texts(reopened.history()) == ["one", "two"]
    three = await reopened.append_message(user("three"))
    assert three.parent_id == "b"
    await reopened.aclose()
    assert all(json.loads(line) for line in session.path.read_text(encoding="utf-8").splitlines())


async def test_leaf_move_to_unknown_target_is_ignored(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    await session.aclose()
    header = session.path.read_text(encoding="utf-8").splitlines()[0]
    move = {"kind": "leaf_move", "id": "m", "parent_id": "a", "ts": "", "target_id": "zzz"}
    write_raw(session.path, [header, message_line("a", None, "one"), json.dumps(move)])
    with capture_logs() as logs:
        reopened = await store.open(session.id)
    assert reopened.leaf_id == "a"
    assert len(logs) == 1
    assert isinstance(reopened.get("m"), LeafMoveEntry)
    await reopened.aclose()


async def test_tool_round_survives_reload(store: SessionStore, project: Path) -> None:
    session = await store.create(project)
    call = ToolCallPart(id="c1", name="read", arguments={"path": "a"}, invalid_arguments=None)
    result = ToolResultPart(tool_call_id="c1", name="read", content=[TextPart(text="body")])
    messages = [
        user("read a"),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[result]),
    ]
    for message in messages:
        await session.append_message(message)
    await session.aclose()
    reopened = await store.open(session.id)
    assert reopened.history() == messages
    await reopened.aclose()
