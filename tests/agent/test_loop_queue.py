"""Prompts queued mid-turn go in between one model call and the next, never mid-batch."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import anyio

from agent.events import AgentEvent, Notice, ToolCallFinished, TurnEnded, UserMessageAdded
from agent.session import AgentSession, SessionOptions, create_session
from agent.settings import load_settings
from agent.tools import AnyTool
from providers.model import Model
from providers.types import ToolResultPart
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from tests.agent.loop_support import (
    Board,
    Env,
    GatedModel,
    assert_every_call_answered,
    env,
    make_session,
    of,
    waiting_tool,
)
from tests.processes import Fifo


async def test_a_prompt_queued_during_a_batch_follows_its_results(tmp_path: Path) -> None:
    board = Board()
    calls = [
        ScriptedCall(name="probe", arguments={"key": "a", "wait_for": "go"}),
        ScriptedCall(name="probe", arguments={"key": "b"}),
    ]
    model = ScriptedModel([ScriptedTurn(tool_calls=calls), ScriptedTurn(text="both handled")])
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board)])
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async for event in session.run_turn("start"):
            events.append(event)
            if event.kind == "tool_call_running" and event.call_id == "call_1_1":
                assert session.queue_prompt("also do this")
                board.event("go").set()

    kinds = [e.kind for e in events]
    queued = of(UserMessageAdded, events)[1]
    assert queued.queued and queued.text == "also do this"
    last_finish = max(i for i, e in enumerate(events) if isinstance(e, ToolCallFinished))
    assert kinds.index("user_message", 2) > last_finish
    second = model.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool", "user"]
    assert second[-1].text == "also do this"
    assert [p.name for p in second[2].parts if isinstance(p, ToolResultPart)] == [
        "probe",
        "probe",
    ]
    assert events[-1] == TurnEnded(reason="end_turn")
    assert_every_call_answered(session.history())
    await session.aclose()


async def test_a_prompt_queued_during_the_final_answer_gets_one_more_call(tmp_path: Path) -> None:
    inner = ScriptedModel([ScriptedTurn(text="first answer"), ScriptedTurn(text="second answer")])
    model = GatedModel(inner, gated=[1])
    session = await make_session(env(tmp_path), model)
    events: list[AgentEvent] = []

    async def queue_when_answer_streams() -> None:
        await model.reached[1].wait()
        assert session.queue_prompt("and one more thing")
        model.release(1)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(queue_when_answer_streams)
            events = [event async for event in session.run_turn("question")]

    assert len(inner.requests) == 2
    assert [m.text for m in session.history()] == [
        "question",
        "first answer",
        "and one more thing",
        "second answer",
    ]
    assert [e.queued for e in of(UserMessageAdded, events)] == [False, True]
    assert events[-1] == TurnEnded(reason="end_turn")
    await session.aclose()


async def test_queue_prompt_without_a_running_turn_says_no(tmp_path: Path) -> None:
    session = await make_session(env(tmp_path), [ScriptedTurn(text="x")])
    assert session.queue_prompt("hello") is False
    assert session.history() == []
    await session.aclose()


async def test_prompt_queued_when_the_turn_stops_is_kept_for_the_next_turn(
    tmp_path: Path,
) -> None:
    inner = ScriptedModel([ScriptedTurn(text="a", hang=True), ScriptedTurn(text="reply")])
    session = await make_session(env(tmp_path), inner)
    with anyio.fail_after(10):
        async for event in session.run_turn("first"):
            if event.kind == "text":
                assert session.queue_prompt("typed while it ran")
                session.cancel()
    history = session.history()
    assert [m.text for m in history] == ["first", "a", "typed while it ran"]
    with anyio.fail_after(10):
        events = [e async for e in session.run_turn("next")]
    assert events[-1] == TurnEnded(reason="end_turn")
    assert [m.text for m in inner.requests[1].messages] == [
        "first",
        "a",
        "typed while it ran",
        "next",
    ]
    await session.aclose()


async def test_once_the_turn_has_ended_queueing_is_refused(tmp_path: Path) -> None:
    session = await make_session(env(tmp_path), [ScriptedTurn(text="x")])
    answers: list[bool] = []
    with anyio.fail_after(10):
        async for event in session.run_turn("go"):
            if isinstance(event, TurnEnded):
                answers.append(session.queue_prompt("too late"))
    assert answers == [False]
    assert [m.text for m in session.history()] == ["go", "x"]
    await session.aclose()


# ------------------------------------------------------- hooks and the end of the turn


async def _hooked_session(
    where: Env, model: Model, hooks: Mapping[str, object], **tools: AnyTool
) -> AgentSession:
    """A session whose user settings (no trust needed) configure `hooks`."""
    config = where.tmp / "config"
    (config / "earshot").mkdir(parents=True, exist_ok=True)
    (config / "earshot" / "settings.json").write_text(
        json.dumps({"hooks": hooks}), encoding="utf-8"
    )
    settings = load_settings(where.cwd, environ={}, config_home=config)
    return await create_session(
        store=where.store,
        cwd=where.cwd,
        options=SessionOptions(
            model_name="scripted/test", builtin_tools=False, extra_tools=list(tools.values())
        ),
        model_factory=lambda name: model,
        settings=settings,
        data_dir=where.data,
    )


_FORBIDDEN_HOOK = {
    "user_prompt_submit": [
        {"command": "grep -q forbidden && { echo 'no forbidden words' >&2; exit 2; } || exit 0"}
    ]
}


async def test_a_queued_prompt_goes_through_the_prompt_hook_and_a_blocked_one_is_dropped(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    board = Board()
    call = ScriptedCall(name="probe", arguments={"key": "a", "wait_for": "go"})
    model = ScriptedModel([ScriptedTurn(tool_calls=[call]), ScriptedTurn(text="done")])
    session = await _hooked_session(where, model, _FORBIDDEN_HOOK, probe=waiting_tool(board))
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async for event in session.run_turn("start"):
            events.append(event)
            if event.kind == "tool_call_running":
                assert session.queue_prompt("now something forbidden")
                assert session.queue_prompt("and something fine")
                board.event("go").set()

    assert events[-1] == TurnEnded(reason="end_turn")
    notices = [n.message for n in of(Notice, events)]
    assert any("no forbidden words" in text for text in notices), notices
    assert [(u.text, u.queued) for u in of(UserMessageAdded, events)] == [
        ("start", False),
        ("and something fine", True),
    ]
    sent = [m.text for m in model.requests[1].messages if m.role == "user"]
    assert sent == ["start", "and something fine"]
    assert all("forbidden" not in m.text for m in session.history())
    await session.aclose()


async def test_a_blocked_prompt_queued_during_the_final_answer_costs_no_model_call(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    inner = ScriptedModel([ScriptedTurn(text="first answer"), ScriptedTurn(text="never")])
    model = GatedModel(inner, gated=[1])
    session = await _hooked_session(where, model, _FORBIDDEN_HOOK)

    async def queue_when_answer_streams() -> None:
        await model.reached[1].wait()
        assert session.queue_prompt("something forbidden")
        model.release(1)

    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(queue_when_answer_streams)
            events = [event async for event in session.run_turn("question")]

    assert events[-1] == TurnEnded(reason="end_turn")
    assert len(inner.requests) == 1
    assert [m.text for m in session.history()] == ["question", "first answer"]
    assert any("no forbidden words" in n.message for n in of(Notice, events))
    await session.aclose()


async def test_a_prompt_sent_while_the_stop_hook_runs_is_refused_and_gets_its_own_turn(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    started, release = Fifo(where.tmp / "stop-started"), Fifo(where.tmp / "stop-release")
    stop_hook = {"stop": [{"command": f"echo > {started.path}; read _ < {release.path}"}]}
    model = ScriptedModel([ScriptedTurn(text="first answer"), ScriptedTurn(text="late answer")])
    session = await _hooked_session(where, model, stop_hook)
    answers: list[bool] = []
    events: list[AgentEvent] = []

    async def prompt_during_the_stop_hook() -> None:
        await started.wait()
        answers.append(session.queue_prompt("typed late"))
        release.send()

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(prompt_during_the_stop_hook)
            events = [event async for event in session.run_turn("question")]

    # The turn had already ended for the model: the prompt is not taken into it (where nothing
    # would answer it) but refused, so the front end runs it as a turn of its own.
    assert answers == [False]
    assert events[-1] == TurnEnded(reason="end_turn")
    assert [m.text for m in session.history()] == ["question", "first answer"]
    assert len(model.requests) == 1
    release.send()  # the stop hook of the second turn
    with anyio.fail_after(20):
        late = [event async for event in session.run_turn("typed late")]
    assert late[-1] == TurnEnded(reason="end_turn")
    assert [m.text for m in session.history()] == [
        "question",
        "first answer",
        "typed late",
        "late answer",
    ]
    await session.aclose()
    started.close()
    release.close()
