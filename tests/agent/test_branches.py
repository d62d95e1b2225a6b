"""`/rewind` and `/fork`: the conversation goes back to before a user message (append-only),
optionally with the files, or is copied into a new session from there."""

from __future__ import annotations

from pathlib import Path

from agent.backends import PermissionOptionKind, PermissionPrompt
from agent.commands import CommandCall
from agent.events import CommandOutput, TodosChanged, ToolCallFinished, ToolCallStarted
from agent.session import AgentSession
from providers.types import ModelRequest
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import LeafMoveEntry, MessageEntry
from tests.agent.loop_support import Answering, Env, collect, env, make_session, of


def _texts(request: ModelRequest) -> list[str]:
    return [message.text for message in request.messages if message.role == "user"]


def _writes(where: Env) -> ScriptedModel:
    """Three turns: the second and third each write a version of notes.txt."""
    return ScriptedModel(
        [
            ScriptedTurn(text="hello"),
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(name="read", arguments={"path": "notes.txt"}),
                    ScriptedCall(name="write", arguments={"path": "notes.txt", "content": "v2\n"}),
                ]
            ),
            ScriptedTurn(text="wrote v2"),
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(name="read", arguments={"path": "notes.txt"}),
                    ScriptedCall(name="write", arguments={"path": "new.txt", "content": "made\n"}),
                    ScriptedCall(name="write", arguments={"path": "notes.txt", "content": "v3\n"}),
                ]
            ),
            ScriptedTurn(text="wrote v3"),
            ScriptedTurn(text="after the rewind"),
        ]
    )


async def _three_turns(
    where: Env, answer: PermissionOptionKind | None
) -> tuple[ScriptedModel, AgentSession]:
    (where.cwd / "notes.txt").write_bytes(b"v1\n")
    model = _writes(where)
    interaction = Answering(answer)
    session = await make_session(where, model, builtin=True, interaction=interaction, mode="yolo")
    for prompt in ("first", "second", "third"):
        await collect(session.run_turn(prompt))
    return model, session


def _asked(session: AgentSession) -> list[PermissionPrompt]:
    interaction = session._interaction  # pyright: ignore[reportPrivateUsage]
    assert isinstance(interaction, Answering)
    return interaction.prompts


async def test_rewind_without_a_number_lists_the_user_messages(tmp_path: Path) -> None:
    where = env(tmp_path)
    _, session = await _three_turns(where, "allow_once")
    events = await collect(session.run_command(CommandCall(name="rewind")))
    said = of(CommandOutput, events)[0].text
    assert said.startswith("1. first\n2. second\n3. third")
    assert "/rewind N" in said
    assert (where.cwd / "notes.txt").read_text() == "v3\n"
    await session.aclose()


async def test_rewind_with_files_restores_them_byte_for_byte_and_the_next_request_is_rewound(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    model, session = await _three_turns(where, "allow_always")
    assert (where.cwd / "new.txt").exists()
    events = await collect(session.run_command(CommandCall(name="rewind", argument="2")))

    # Asked, as a permission prompt on a call the front end was shown first. Neither rewind is
    # a rejection, and the lighter one takes the plain "allow" (one option per kind).
    asked = _asked(session)
    assert [(o.label, o.kind) for o in asked[0].options] == [
        ("Rewind the conversation only", "allow_once"),
        ("Rewind the conversation and restore new.txt, notes.txt", "allow_always"),
        ("Don't rewind", "reject_once"),
    ]
    assert of(ToolCallStarted, events)[0].call_id == asked[0].call_id
    assert of(ToolCallFinished, events)[0].status == "completed"
    said = of(CommandOutput, events)[-1]
    assert said.branch_changed and "before message 2" in said.text
    assert of(TodosChanged, events)
    # Both later batches undone, newest first: the file is as it was before message 2.
    assert (where.cwd / "notes.txt").read_bytes() == b"v1\n"
    assert not (where.cwd / "new.txt").exists()

    await collect(session.run_turn("again"))
    assert _texts(model.requests[-1]) == ["first", "again"]
    # Append-only: the old branch is still in the file, after a leaf move.
    reopened = await where.store.open(session.id, claim=False)
    assert any(isinstance(e, LeafMoveEntry) for e in reopened.entries)
    assert "third" in [e.message.text for e in reopened.entries if isinstance(e, MessageEntry)]
    assert [m.text for m in reopened.history() if m.role == "user"] == ["first", "again"]
    await reopened.aclose()
    await session.aclose()


async def test_dont_rewind_changes_nothing(tmp_path: Path) -> None:
    where = env(tmp_path)
    _, session = await _three_turns(where, "reject_once")
    before = session.history()
    events = await collect(session.run_command(CommandCall(name="rewind", argument="2")))
    assert of(CommandOutput, events)[-1].text == "Rewind cancelled: nothing changed."
    assert session.history() == before
    assert (where.cwd / "notes.txt").read_bytes() == b"v3\n"
    await session.aclose()


async def test_rewind_conversation_only_leaves_the_files(tmp_path: Path) -> None:
    where = env(tmp_path)
    model, session = await _three_turns(where, "allow_once")
    events = await collect(session.run_command(CommandCall(name="rewind", argument="3")))
    assert of(CommandOutput, events)[-1].branch_changed
    assert (where.cwd / "notes.txt").read_bytes() == b"v3\n"
    await collect(session.run_turn("instead"))
    assert _texts(model.requests[-1]) == ["first", "second", "instead"]
    await session.aclose()


async def test_a_cancelled_rewind_question_changes_nothing(tmp_path: Path) -> None:
    where = env(tmp_path)
    _, session = await _three_turns(where, None)
    before = session.history()
    events = await collect(session.run_command(CommandCall(name="rewind", argument="2")))
    assert "cancelled" in of(CommandOutput, events)[-1].text
    assert not of(CommandOutput, events)[-1].branch_changed
    assert session.history() == before
    assert (where.cwd / "notes.txt").read_bytes() == b"v3\n"
    await session.aclose()


async def test_rewind_files_in_advance_and_bad_numbers(tmp_path: Path) -> None:
    where = env(tmp_path)
    _, session = await _three_turns(where, None)
    for argument, expected in (("9", "no user message 9"), ("x", "not a message number")):
        events = await collect(session.run_command(CommandCall(name="rewind", argument=argument)))
        assert expected in of(CommandOutput, events)[-1].text
    await collect(session.run_command(CommandCall(name="rewind", argument="3 files")))
    assert _asked(session) == []
    assert (where.cwd / "notes.txt").read_bytes() == b"v2\n"
    assert not (where.cwd / "new.txt").exists()
    # The undone batch is not undone again by /undo: the next one back is.
    assert "notes.txt" in await session.undo()
    assert (where.cwd / "notes.txt").read_bytes() == b"v1\n"
    await session.aclose()


async def test_fork_copies_the_branch_up_to_a_message_into_a_new_session(tmp_path: Path) -> None:
    where = env(tmp_path)
    _, session = await _three_turns(where, "allow_once")
    events = await collect(session.run_command(CommandCall(name="fork", argument="3")))
    said = of(CommandOutput, events)[-1].text
    forked_id = said.split("into session ")[1].split(".")[0]
    assert forked_id != session.id
    forked = await where.store.open(forked_id, claim=False)
    assert forked.header.forked_from is not None
    assert forked.header.forked_from.session_id == session.id
    assert [m.text for m in forked.history() if m.role == "user"] == ["first", "second"]
    await forked.aclose()
    # The source is unchanged.
    assert [m.text for m in session.history() if m.role == "user"] == [
        "first",
        "second",
        "third",
    ]
    whole = await collect(session.run_command(CommandCall(name="fork")))
    whole_id = of(CommandOutput, whole)[-1].text.split("into session ")[1].split(".")[0]
    copy = await where.store.open(whole_id, claim=False)
    assert copy.history() == session.history()
    await copy.aclose()
    await session.aclose()
