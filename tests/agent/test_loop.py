"""The turn loop's invariants, driven through a real session on the scripted model."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent.events import (
    PermissionDecided,
    TextChunk,
    ToolCallFinished,
    ToolCallReady,
    ToolCallRunning,
    ToolCallStarted,
    TurnEnded,
    TurnStarted,
    UsageUpdated,
    UserMessageAdded,
)
from providers.types import Message, ProviderError, ToolResultPart, Usage
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from tests.agent.loop_support import (
    Answering,
    Board,
    assert_every_call_answered,
    collect,
    env,
    fail_tool,
    make_session,
    of,
    results_of,
    waiting_tool,
)


async def test_text_turn_streams_live_chunks_under_one_message_id_and_persists(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    session = await make_session(where, [ScriptedTurn(text="hello there world", chunk_size=5)])
    events = await collect(session.run_turn("say hi"))

    assert isinstance(events[0], TurnStarted)
    assert isinstance(events[1], UserMessageAdded) and events[1].text == "say hi"
    chunks = of(TextChunk, events)
    assert "".join(c.text for c in chunks) == "hello there world"
    assert len(chunks) == 4
    assert len({c.message_id for c in chunks}) == 1
    assert events[-1] == TurnEnded(reason="end_turn")
    assert len(of(UsageUpdated, events)) == 1

    reopened = await where.store.open(session.id)
    history = reopened.history()
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[1].text == "hello there world"
    # The live message id is the stored entry id, so a replay shows the same message.
    assert chunks[0].message_id in {e.id for e in reopened.path_entries()}
    await reopened.aclose()
    await session.aclose()


async def test_unknown_tool_invalid_json_and_schema_failures_all_get_error_results(
    tmp_path: Path,
) -> None:
    board = Board()
    calls = [
        ScriptedCall(name="nonexistent", arguments={}),
        ScriptedCall(name="probe", raw_arguments='{"key": '),
        ScriptedCall(name="probe", arguments={"key": 7}),
        ScriptedCall(name="probe", arguments={}),
        ScriptedCall(name="fail", arguments={"how": "sideways"}),
        ScriptedCall(name="probe", arguments={"key": "fine"}),
    ]
    model = ScriptedModel([ScriptedTurn(tool_calls=calls), ScriptedTurn(text="ok")])
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board), fail_tool])
    events = await collect(session.run_turn("go"))

    history = session.history()
    assert_every_call_answered(history)
    results = [p for p in history[2].parts if isinstance(p, ToolResultPart)]
    assert [r.is_error for r in results] == [True, True, True, True, True, False]
    assert "Unknown tool `nonexistent`" in results[0].text and "probe" in results[0].text
    assert "not valid JSON" in results[1].text
    assert "Invalid arguments for `probe`" in results[2].text and "key" in results[2].text
    assert "'key' is a required property" in results[3].text
    # Passes the JSON schema, fails the input model's own validator.
    assert "how must be tool_error, exception or ok" in results[4].text
    assert board.log == ["start fine", "end fine"]
    finished = of(ToolCallFinished, events)
    assert [f.status for f in finished] == ["failed"] * 5 + ["completed"]
    # The second request carries every result back to the model.
    assert model.requests[1].messages[-1].role == "tool"
    assert events[-1] == TurnEnded(reason="end_turn")
    await session.aclose()


async def test_tool_errors_and_exceptions_are_data_and_the_turn_goes_on(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            ScriptedTurn(
                tool_calls=[
                    ScriptedCall(name="fail", arguments={"how": "tool_error"}),
                    ScriptedCall(name="fail", arguments={"how": "exception"}),
                ]
            ),
            ScriptedTurn(text="I see both failed"),
        ]
    )
    session = await make_session(env(tmp_path), model, tools=[fail_tool])
    events = await collect(session.run_turn("go"))

    results = list(results_of(session.history()).values())
    assert results[0].is_error and results[0].text == "the file is locked"
    assert results[1].is_error and "RuntimeError: kaboom" in results[1].text
    assert events[-1] == TurnEnded(reason="end_turn")
    assert session.history()[-1].text == "I see both failed"
    await session.aclose()


async def test_ready_event_carries_ui_computed_from_validated_arguments(tmp_path: Path) -> None:
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="probe", arguments={"key": "a"})]),
            ScriptedTurn(text="done"),
        ]
    )
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board)])
    events = await collect(session.run_turn("go"))
    started = of(ToolCallStarted, events)[0]
    ready = of(ToolCallReady, events)[0]
    assert started.ui.title == "probe"
    assert ready.ui.title == "probe a" and ready.arguments == {"key": "a"}
    order = [type(e).__name__ for e in events if e.kind.startswith(("tool_call", "permission"))]
    assert order == [
        "ToolCallStarted",
        "ToolCallArguments",
        "ToolCallReady",
        "PermissionDecided",
        "ToolCallRunning",
        "ToolCallFinished",
    ]
    await session.aclose()


async def test_read_only_calls_run_concurrently_and_results_keep_emission_order(
    tmp_path: Path,
) -> None:
    board = Board()
    # a waits for b, b waits for c: run one at a time this would deadlock.
    calls = [
        ScriptedCall(name="probe", arguments={"key": "a", "wait_for": "b"}),
        ScriptedCall(name="probe", arguments={"key": "b", "wait_for": "c"}),
        ScriptedCall(name="probe", arguments={"key": "c"}),
    ]
    model = ScriptedModel([ScriptedTurn(tool_calls=calls), ScriptedTurn(text="ok")])
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board)])
    events = await collect(session.run_turn("go"))

    assert board.max_running == 3
    assert [e for e in board.log if e.startswith("end")] == ["end c", "end b", "end a"]
    assert [f.result.text for f in of(ToolCallFinished, events)] == ["done c", "done b", "done a"]
    tool_message = session.history()[2]
    assert [p.text for p in tool_message.parts if isinstance(p, ToolResultPart)] == [
        "done a",
        "done b",
        "done c",
    ]
    await session.aclose()


async def test_mutating_calls_run_one_at_a_time_in_emission_order(tmp_path: Path) -> None:
    board = Board()
    reader = waiting_tool(board, "peek")
    writer = waiting_tool(board, "touch", read_only=False)
    calls = [
        ScriptedCall(name="peek", arguments={"key": "r1"}),
        ScriptedCall(name="touch", arguments={"key": "w1"}),
        ScriptedCall(name="touch", arguments={"key": "w2"}),
        ScriptedCall(name="peek", arguments={"key": "r2"}),
        ScriptedCall(name="peek", arguments={"key": "r3"}),
    ]
    model = ScriptedModel([ScriptedTurn(tool_calls=calls), ScriptedTurn(text="ok")])
    session = await make_session(
        env(tmp_path), model, tools=[reader, writer], interaction=Answering("allow_once")
    )
    await collect(session.run_turn("go"))

    log = board.log
    # Each write starts after everything before it ended and ends before anything after starts.
    assert log[:6] == ["start r1", "end r1", "start w1", "end w1", "start w2", "end w2"]
    assert sorted(log[6:]) == ["end r2", "end r3", "start r2", "start r3"]
    assert_every_call_answered(session.history())
    await session.aclose()


async def test_rejected_permission_is_a_denied_result(tmp_path: Path) -> None:
    board = Board()
    interaction = Answering("reject_once")
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", arguments={"key": "w"})]),
            ScriptedTurn(text="ok, I will not"),
        ]
    )
    session = await make_session(
        env(tmp_path),
        model,
        tools=[waiting_tool(board, "touch", read_only=False)],
        interaction=interaction,
    )
    events = await collect(session.run_turn("go"))

    assert len(interaction.prompts) == 1
    assert interaction.prompts[0].ui.title == "touch w"
    assert interaction.prompts[0].call_id == "call_1_1"
    decided = of(PermissionDecided, events)[0]
    assert not decided.allowed and decided.answer == "reject_once"
    finished = of(ToolCallFinished, events)[0]
    assert finished.status == "denied" and "Permission denied" in finished.result.text
    assert board.log == []
    assert events[-1] == TurnEnded(reason="end_turn")
    await session.aclose()


async def test_plan_mode_refuses_mutations_without_asking(tmp_path: Path) -> None:
    board = Board()
    interaction = Answering("allow_once")
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", arguments={"key": "w"})]),
            ScriptedTurn(text="planning only"),
        ]
    )
    session = await make_session(
        env(tmp_path),
        model,
        tools=[waiting_tool(board, "touch", read_only=False)],
        interaction=interaction,
        mode="plan",
    )
    events = await collect(session.run_turn("go"))
    assert interaction.prompts == []
    assert of(ToolCallFinished, events)[0].status == "denied"
    assert board.log == []
    await session.aclose()


async def test_a_failing_model_call_ends_the_turn_with_a_clear_sentence(tmp_path: Path) -> None:
    error = ProviderError(
        kind="auth", message="invalid x-api-key", retryable=False, status=401, provider="acme"
    )
    model = ScriptedModel([ScriptedTurn(text="partial", error=error)])
    session = await make_session(env(tmp_path), model)
    events = await collect(session.run_turn("go"))

    end = events[-1]
    assert isinstance(end, TurnEnded) and end.reason == "error" and end.error == error
    assert end.message is not None and "acme rejected the credentials" in end.message
    # The failed attempt's partial text never reaches history.
    assert [m.role for m in session.history()] == ["user"]
    await session.aclose()


async def test_model_raising_is_reported_not_crashing(tmp_path: Path) -> None:
    def script(request: object) -> ScriptedTurn:
        raise ValueError("scripted bug")

    session = await make_session(env(tmp_path), ScriptedModel(script))
    events = await collect(session.run_turn("go"))
    end = events[-1]
    assert isinstance(end, TurnEnded) and end.reason == "error"
    assert end.message is not None and "scripted bug" in end.message
    await session.aclose()


async def test_max_turns_stops_the_loop_with_every_call_answered(tmp_path: Path) -> None:
    board = Board()
    turns = [
        ScriptedTurn(tool_calls=[ScriptedCall(name="probe", arguments={"key": str(n)})])
        for n in range(5)
    ]
    model = ScriptedModel(turns)
    session = await make_session(env(tmp_path), model, tools=[waiting_tool(board)], max_turns=2)
    events = await collect(session.run_turn("go"))
    assert events[-1] == TurnEnded(reason="max_turns")
    assert len(model.requests) == 2
    assert_every_call_answered(session.history())
    await session.aclose()


async def test_usage_and_cost_are_reported_after_every_call(tmp_path: Path) -> None:
    from providers.catalog import Cost, ModelCatalog, ModelOverride

    catalog = ModelCatalog.load(
        overrides={
            "scripted/priced": ModelOverride(
                context_window=10_000, cost=Cost(input=1.0, output=2.0)
            )
        }
    )
    board = Board()
    usage = Usage(input_tokens=1000, output_tokens=500)
    model = ScriptedModel(
        [
            ScriptedTurn(
                tool_calls=[ScriptedCall(name="probe", arguments={"key": "a"})], usage=usage
            ),
            ScriptedTurn(text="ok", usage=usage),
        ],
        model_id="priced",
    )
    session = await make_session(
        env(tmp_path),
        model,
        tools=[waiting_tool(board)],
        catalog=catalog,
        model_name="scripted/priced",
    )
    events = await collect(session.run_turn("go"))
    updates = of(UsageUpdated, events)
    assert len(updates) == 2
    assert updates[0].context_tokens == 1500 and updates[0].context_window == 10_000
    assert updates[1].total == Usage(input_tokens=2000, output_tokens=1000)
    assert updates[0].cost_usd == pytest.approx(0.002)
    assert updates[1].cost_usd == pytest.approx(0.004)
    await session.aclose()


async def test_unknown_price_is_none_not_zero(tmp_path: Path) -> None:
    model = ScriptedModel([ScriptedTurn(text="x", usage=Usage(input_tokens=3, output_tokens=1))])
    session = await make_session(env(tmp_path), model)
    events = await collect(session.run_turn("go"))
    assert of(UsageUpdated, events)[0].cost_usd is None
    await session.aclose()


async def test_running_flag_and_second_turn_refused_while_running(tmp_path: Path) -> None:
    model = ScriptedModel([ScriptedTurn(text="one"), ScriptedTurn(text="two")])
    session = await make_session(env(tmp_path), model)
    turn = session.run_turn("first")
    assert session.running
    with pytest.raises(RuntimeError, match="already running"):
        session.run_turn("second")
    await collect(turn)
    assert not session.running
    events = await collect(session.run_turn("second"))
    assert events[-1] == TurnEnded(reason="end_turn")
    assert [m.text for m in session.history()] == ["first", "one", "second", "two"]
    await session.aclose()


async def test_tool_running_events_only_for_calls_that_run(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=[ScriptedCall(name="nope"), ScriptedCall(name="nope")]),
            ScriptedTurn(text="ok"),
        ]
    )
    session = await make_session(env(tmp_path), model)
    events = await collect(session.run_turn("go"))
    assert of(ToolCallRunning, events) == []
    assert [f.status for f in of(ToolCallFinished, events)] == ["failed", "failed"]
    await session.aclose()


async def test_history_is_reloadable_message_for_message(tmp_path: Path) -> None:
    where = env(tmp_path)
    board = Board()
    model = ScriptedModel(
        [
            ScriptedTurn(
                text="reading", tool_calls=[ScriptedCall(name="probe", arguments={"key": "a"})]
            ),
            ScriptedTurn(text="done"),
        ]
    )
    session = await make_session(where, model, tools=[waiting_tool(board)])
    await collect(session.run_turn("go"))
    live: list[Message] = session.history()
    reopened = await where.store.open(session.id)
    assert reopened.history() == live
    await reopened.aclose()
    await session.aclose()


async def test_a_thousand_one_character_deltas_all_arrive_in_order(tmp_path: Path) -> None:
    # The relay drains without a checkpoint per event; nothing may be dropped or reordered.
    session = await make_session(env(tmp_path), [ScriptedTurn(text="x" * 1000, chunk_size=1)])
    with anyio.fail_after(30):
        events = await collect(session.run_turn("go"))
    chunks = of(TextChunk, events)
    assert len(chunks) == 1000 and "".join(c.text for c in chunks) == "x" * 1000
    await session.aclose()


async def test_terminal_ids_and_live_output_reach_the_stream(tmp_path: Path) -> None:
    from pydantic import BaseModel

    from agent.backends import ToolUi
    from agent.events import ToolCallProgress
    from agent.tools import ToolContext, ToolOutput, define_tool

    class Empty(BaseModel):
        pass

    async def in_terminal(args: Empty, ctx: ToolContext) -> ToolOutput:
        await ctx.terminal("term-7")
        await ctx.progress("line 1\n")
        return ToolOutput.text("exit 0")

    tool = define_tool(
        name="term",
        description="runs in an editor terminal",
        input_model=Empty,
        execute=in_terminal,
        ui=lambda args, ctx: ToolUi(title="term", kind="execute"),
        read_only=True,
    )
    model = ScriptedModel(
        [ScriptedTurn(tool_calls=[ScriptedCall(name="term")]), ScriptedTurn(text="ok")]
    )
    session = await make_session(env(tmp_path), model, tools=[tool])
    events = await collect(session.run_turn("go"))
    progress = of(ToolCallProgress, events)
    assert [(p.terminal_id, p.text) for p in progress] == [("term-7", ""), (None, "line 1\n")]
    assert of(ToolCallFinished, events)[0].terminal_id == "term-7"
    await session.aclose()


async def test_aclose_during_a_turn_stops_it_and_settles_the_transcript(tmp_path: Path) -> None:
    where = env(tmp_path)
    model = ScriptedModel([ScriptedTurn(text="thinking", hang=True)])
    session = await make_session(where, model)
    events: list[object] = []
    streaming = anyio.Event()

    async def consume() -> None:
        async for event in session.run_turn("go"):
            events.append(event)
            if event.kind == "text":
                streaming.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(consume)
            await streaming.wait()
            await session.aclose()
    assert events[-1] == TurnEnded(reason="cancelled")
    reopened = await where.store.open(session.id)
    assert [m.text for m in reopened.history()] == ["go", "thinking"]
    await reopened.aclose()
