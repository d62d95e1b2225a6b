"""Cancellation at each stage leaves a transcript that reloads with every call answered."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path

import anyio

from agent.events import (
    AgentEvent,
    TextChunk,
    ToolCallFinished,
    ToolCallProgress,
    TurnEnded,
)
from agent.session import AgentSession
from agent.turn import INTERRUPTED_TEXT
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import ExtensionEntry, extensions
from tests.agent.loop_support import (
    Answering,
    Board,
    Env,
    Hanging,
    assert_every_call_answered,
    env,
    fail_tool,
    make_session,
    of,
    results_of,
    shell_tool,
    waiting_tool,
)
from tests.processes import running_with_argv, unique_sleep, until_gone


async def _run_and_cancel_on(
    session: AgentSession, prompt: str, trigger: type[AgentEvent], text: str | None = None
) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async for event in session.run_turn(prompt):
            events.append(event)
            if isinstance(event, trigger) and (text is None or text in getattr(event, "text", "")):
                session.cancel()
    return events


async def _run_and_cancel_when_asked(
    session: AgentSession, prompt: str, interaction: Hanging
) -> list[AgentEvent]:
    events: list[AgentEvent] = []

    async def cancel_when_asked() -> None:
        await interaction.asked.wait()
        session.cancel()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(cancel_when_asked)
            async for event in session.run_turn(prompt):
                events.append(event)
    return events


async def _reloaded_history_is_whole(where: Env, session: AgentSession) -> None:
    reopened = await where.store.open(session.id)
    history = reopened.history()
    assert history == session.history()
    assert_every_call_answered(history)
    await reopened.aclose()


async def test_cancel_while_streaming_keeps_the_partial_message_and_answers_its_calls(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    model = ScriptedModel(
        [
            ScriptedTurn(
                text="I will look",
                tool_calls=[ScriptedCall(name="fail", arguments={"how": "ok"})],
                hang=True,
            )
        ]
    )
    session = await make_session(where, model, tools=[fail_tool])
    events = await _run_and_cancel_on(session, "go", TextChunk)

    assert events[-1] == TurnEnded(reason="cancelled")
    finished = of(ToolCallFinished, events)
    assert [(f.call_id, f.status) for f in finished] == [("call_1_1", "interrupted")]
    history = session.history()
    assert [m.role for m in history] == ["user", "assistant", "tool"]
    assert history[1].text == "I will look"
    assert results_of(history)["call_1_1"].text == INTERRUPTED_TEXT
    await _reloaded_history_is_whole(where, session)
    assert not session.running
    await session.aclose()


async def test_cancel_before_any_output_appends_nothing_but_the_prompt(tmp_path: Path) -> None:
    where = env(tmp_path)
    model = ScriptedModel([ScriptedTurn(hang=True)])
    session = await make_session(where, model)
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async for event in session.run_turn("go"):
            events.append(event)
            if event.kind == "user_message":
                session.cancel()
    assert events[-1] == TurnEnded(reason="cancelled")
    assert [m.role for m in session.history()] == ["user"]
    await _reloaded_history_is_whole(where, session)
    # The transcript says the turn was cancelled (`earshot sessions replay` marks it).
    reopened = await where.store.open(session.id)
    last = reopened.entries[-1]
    await reopened.aclose()
    assert isinstance(last, ExtensionEntry) and last.name == extensions.TURN_CANCELLED
    await session.aclose()


async def test_cancel_while_waiting_for_permission(tmp_path: Path) -> None:
    where = env(tmp_path)
    board = Board()
    calls = [
        ScriptedCall(name="probe", arguments={"key": "r"}),
        ScriptedCall(name="touch", arguments={"key": "w"}),
        ScriptedCall(name="touch", arguments={"key": "w2"}),
    ]
    model = ScriptedModel([ScriptedTurn(tool_calls=calls), ScriptedTurn(text="never")])
    hanging = Hanging()
    session = await make_session(
        where,
        model,
        tools=[waiting_tool(board), waiting_tool(board, "touch", read_only=False)],
        interaction=hanging,
    )
    events = await _run_and_cancel_when_asked(session, "go", hanging)

    assert events[-1] == TurnEnded(reason="cancelled")
    statuses = {f.call_id: f.status for f in of(ToolCallFinished, events)}
    assert statuses == {
        "call_1_1": "completed",
        "call_1_2": "interrupted",
        "call_1_3": "interrupted",
    }
    assert board.log == ["start r", "end r"]
    results = results_of(session.history())
    assert results["call_1_1"].text == "done r"
    assert results["call_1_2"].text == INTERRUPTED_TEXT
    assert len(model.requests) == 1
    await _reloaded_history_is_whole(where, session)
    await session.aclose()


async def test_a_cancelled_permission_answer_cancels_the_whole_turn(tmp_path: Path) -> None:
    where = env(tmp_path)
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", arguments={"key": "w"})]),
            ScriptedTurn(text="never"),
        ]
    )
    session = await make_session(
        where,
        model,
        tools=[waiting_tool(board, "touch", read_only=False)],
        interaction=Answering(None),
    )
    with anyio.fail_after(10):
        events = [event async for event in session.run_turn("go")]
    assert events[-1] == TurnEnded(reason="cancelled")
    assert of(ToolCallFinished, events)[0].status == "interrupted"
    assert board.log == []
    assert len(model.requests) == 1
    await _reloaded_history_is_whole(where, session)
    await session.aclose()


async def test_cancel_while_a_command_runs_kills_it_and_streams_progress_first(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    pid_file = where.cwd / "pid"
    command = f"echo $$ > {pid_file}; echo started; sleep 30; echo never"
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="shell", arguments={"command": command})]),
            ScriptedTurn(text="never"),
        ]
    )
    session = await make_session(where, model, tools=[shell_tool], interaction=Answering())
    events = await _run_and_cancel_on(session, "go", ToolCallProgress, text="started")

    assert events[-1] == TurnEnded(reason="cancelled")
    progress = of(ToolCallProgress, events)
    assert any("started" in p.text for p in progress)
    finished = of(ToolCallFinished, events)
    assert [(f.status, f.result.text) for f in finished] == [("interrupted", INTERRUPTED_TEXT)]
    pid = int(pid_file.read_text(encoding="utf-8"))
    await until_gone([pid])
    await _reloaded_history_is_whole(where, session)
    await session.aclose()


async def test_cancel_while_the_builtin_bash_tool_runs_ends_its_background_children(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    sleep = unique_sleep(1000)
    # `sleep & wait`: bash itself blocks in `wait`, the sleep is a separate process that only a
    # kill of the whole process group (or of the sandbox) reaches.
    command = f"{sleep} & echo started; wait"
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="bash", arguments={"command": command})]),
            ScriptedTurn(text="never"),
        ]
    )
    session = await make_session(where, model, builtin=True, mode="auto")
    events = await _run_and_cancel_on(session, "go", ToolCallProgress, text="started")

    assert events[-1] == TurnEnded(reason="cancelled")
    finished = of(ToolCallFinished, events)
    assert [(f.name, f.status, f.result.text) for f in finished] == [
        ("bash", "interrupted", INTERRUPTED_TEXT)
    ]
    await until_gone(running_with_argv(sleep))
    assert len(model.requests) == 1
    reopened = await where.store.open(session.id)
    assert results_of(reopened.history())["call_1_1"].text == INTERRUPTED_TEXT
    await reopened.aclose()
    await _reloaded_history_is_whole(where, session)
    await session.aclose()


async def test_cancel_during_a_retry_wait(tmp_path: Path) -> None:
    from agent.events import Retrying
    from providers.types import ProviderError

    where = env(tmp_path)
    error = ProviderError(kind="server", message="overloaded", retryable=True, retry_after=30)
    model = ScriptedModel([ScriptedTurn(text="par", error=error), ScriptedTurn(text="never")])
    session = await make_session(where, model, retry_max_delay=60)
    events = await _run_and_cancel_on(session, "go", Retrying)
    assert events[-1] == TurnEnded(reason="cancelled")
    assert [m.role for m in session.history()] == ["user"]
    await session.aclose()


async def test_closing_the_stream_early_stops_and_settles_the_turn(tmp_path: Path) -> None:
    where = env(tmp_path)
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(
                tool_calls=[ScriptedCall(name="probe", arguments={"key": "a", "wait_for": "z"})]
            ),
            ScriptedTurn(text="never"),
        ]
    )
    session = await make_session(where, model, tools=[waiting_tool(board)])
    with anyio.fail_after(10):
        async with aclosing(session.run_turn("go")) as stream:
            async for event in stream:
                if event.kind == "tool_call_running":
                    break
    assert not session.running
    assert results_of(session.history())["call_1_1"].text == INTERRUPTED_TEXT
    await _reloaded_history_is_whole(where, session)
    await session.aclose()


async def test_outer_cancellation_of_the_consumer_settles_the_turn(tmp_path: Path) -> None:
    where = env(tmp_path)
    model = ScriptedModel([ScriptedTurn(text="thinking", hang=True)])
    session = await make_session(where, model)
    with anyio.move_on_after(10) as outer:
        async with aclosing(session.run_turn("go")) as stream:
            async for event in stream:
                if event.kind == "text":
                    outer.cancel()
    assert outer.cancelled_caught
    assert not session.running
    assert [m.text for m in session.history()] == ["go", "thinking"]
    await _reloaded_history_is_whole(where, session)
    await session.aclose()
