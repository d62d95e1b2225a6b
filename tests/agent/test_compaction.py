"""Compaction: where it cuts, what the preamble says, the summary call, `/compact`, and the
in-memory compaction of a history that is not persisted."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from agent.context import ContextShaper, ShapeContext
from agent.context.compaction import (
    PREAMBLE_OPENING,
    SUMMARY_SYSTEM_PROMPT,
    CompactionPolicy,
    FilesTouched,
    build_preamble,
    choose_cut,
    files_touched,
    is_summary_request,
    render_message,
    render_transcript,
    summarise,
    summary_request,
)
from agent.context.tokens import TokenCounter
from agent.events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    TodoItem,
    TurnEnded,
    UsageUpdated,
)
from agent.todos import todos_from_history
from providers.catalog import ModelInfo
from providers.types import (
    ErrorEvent,
    Finish,
    Message,
    ModelRequest,
    ProviderError,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    UsageEvent,
)
from providers.wire.scripted import ScriptedModel, ScriptedTurn
from sessions import CompactionEntry, ExtensionEntry, MessageEntry
from tests.agent.context_support import (
    SUMMARY,
    agentic_model,
    catalog,
    dump_tool,
    transcript_of,
)
from tests.agent.loop_support import collect, env, make_session, of


def _user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def _answer(text: str) -> Message:
    return Message(role="assistant", parts=[TextPart(text=text)])


def _calls(*calls: tuple[str, str, str]) -> Message:
    parts = [
        ToolCallPart(id=call_id, name=name, arguments={"path": path})
        for call_id, name, path in calls
    ]
    return Message(
        role="assistant",
        parts=[ReasoningPart(text="thinking", provider_metadata={"anthropic": {"signature": "s"}})]
        + parts,
    )


def _results(*results: tuple[str, str, str, bool]) -> Message:
    return Message(
        role="tool",
        parts=[
            ToolResultPart(
                tool_call_id=call_id, name=name, content=[TextPart(text=text)], is_error=failed
            )
            for call_id, name, text, failed in results
        ],
    )


def _turn(n: int, size: int = 40) -> list[Message]:
    return [
        _user(f"prompt {n}"),
        _calls((f"c{n}", "read", f"f{n}.py")),
        _results((f"c{n}", "read", "x" * size, False)),
        _answer(f"answer {n}"),
    ]


# ------------------------------------------------------------------------------- the cut


def test_the_cut_keeps_the_last_turns_at_a_user_message() -> None:
    history = [message for n in range(5) for message in _turn(n)]
    cut = choose_cut(history, keep_turns=2, tail_budget=10_000, counter=TokenCounter())
    assert cut == 12 and history[12].text == "prompt 3"


def test_the_cut_moves_later_while_the_tail_is_over_budget() -> None:
    history = [message for n in range(5) for message in _turn(n, size=4_000)]
    counter = TokenCounter()
    cut = choose_cut(history, keep_turns=3, tail_budget=1_200, counter=counter)
    assert cut == 16 and history[16].text == "prompt 4"


def test_one_long_turn_is_cut_before_an_assistant_message_never_inside_a_pair() -> None:
    history: list[Message] = [_user("do everything")]
    for n in range(10):
        history += [
            _calls((f"c{n}", "read", f"f{n}.py")),
            _results((f"c{n}", "read", "y" * 2_000, False)),
        ]
    cut = choose_cut(history, keep_turns=2, tail_budget=1_500, counter=TokenCounter())
    assert cut is not None and cut > 1
    kept = history[cut:]
    assert kept[0].role == "assistant", "whole assistant message kept, reasoning included"
    assert isinstance(kept[0].parts[0], ReasoningPart)
    assert kept[1].role == "tool", "its results come right after it"
    assert TokenCounter().messages(kept) <= 1_500


def test_nothing_to_cut_in_a_single_message_or_after_a_previous_summary() -> None:
    counter = TokenCounter()
    assert choose_cut([_user("hi")], keep_turns=2, tail_budget=10, counter=counter) is None
    only_summary_before = [_user(PREAMBLE_OPENING + " old"), _user("new prompt")]
    cut = choose_cut(only_summary_before, keep_turns=1, tail_budget=10, counter=counter, start=1)
    assert cut is None


def test_policy_threshold_and_budgets_follow_the_window() -> None:
    policy = CompactionPolicy()
    assert policy.threshold(None) is None
    assert policy.threshold(100_000) == 80_000
    assert policy.threshold(100_000, max_output=32_000) == 80_000
    assert policy.threshold(20_000, max_output=8_000) == 15_000
    assert policy.tail_budget(16_000) == 4_800 and policy.tail_budget(None) == 40_000
    assert policy.summary_tokens(16_000, None) == 1_600


# -------------------------------------------------------------------------- the preamble


def test_files_touched_lists_reads_and_changes_but_not_failed_calls() -> None:
    history = [
        _calls(("a", "read", "src/a.py"), ("b", "edit", "src/b.py"), ("c", "write", "bad.py")),
        _results(("a", "read", "", False), ("b", "edit", "", False), ("c", "write", "", True)),
        _calls(("d", "read", "src/b.py"), ("e", "bash", "ignored")),
        _results(("d", "read", "", False), ("e", "bash", "", False)),
    ]
    assert files_touched(history) == FilesTouched(modified=("src/b.py",), read=("src/a.py",))


def test_the_preamble_has_the_summary_open_todos_and_files() -> None:
    todos = [
        TodoItem(content="write tests", status="completed"),
        TodoItem(content="fix the parser", status="in_progress"),
        TodoItem(content="update docs"),
    ]
    text = build_preamble(
        "We fixed things.", todos=todos, files=FilesTouched(modified=("a.py",), read=("b.py",))
    )
    assert text.startswith(PREAMBLE_OPENING)
    assert "We fixed things." in text
    assert "[in progress] fix the parser" in text and "[pending] update docs" in text
    assert "write tests" not in text
    assert "- modified: a.py" in text and "- read: b.py" in text


def test_the_todos_come_from_the_last_todo_call() -> None:
    todo = Message(
        role="assistant",
        parts=[
            ToolCallPart(
                id="t",
                name="todo",
                arguments={"todos": [{"content": "step one", "status": "in_progress"}]},
            )
        ],
    )
    assert todos_from_history([_user("x"), todo]) == (
        TodoItem(content="step one", status="in_progress"),
    )
    assert todos_from_history([_user("x")]) is None


def test_the_transcript_keeps_the_newest_messages_within_its_budget() -> None:
    history = [message for n in range(40) for message in _turn(n, size=3_000)]
    text = render_transcript(history, max_chars=6_000)
    assert len(text) <= 6_500
    assert "answer 39" in text and "prompt 0" not in text
    assert "earlier messages left out" in text
    assert "thinking" not in text, "private reasoning is not rendered"
    whole = render_transcript(history[:4], max_chars=100_000)
    assert "User: prompt 0" in whole and 'Assistant called read: {"path": "f0.py"}' in whole


def test_the_summary_request_carries_the_instructions() -> None:
    request = summary_request("User: hi", instructions="focus on the parser", max_output_tokens=99)
    assert is_summary_request(request) and request.system == SUMMARY_SYSTEM_PROMPT
    assert request.tools == () and request.max_output_tokens == 99
    assert "focus on the parser" in request.messages[0].text
    assert "User: hi" in request.messages[0].text


async def test_summarise_collects_text_and_reports_failures() -> None:
    request = summary_request("t", instructions=None, max_output_tokens=10)
    ok = ScriptedModel([ScriptedTurn(text="the summary", usage=Usage(input_tokens=5))])
    result = await summarise(ok, request)
    assert result.text == "the summary" and result.error is None
    assert result.usage == Usage(input_tokens=5)

    failing = ScriptedModel(
        [ScriptedTurn(error=ProviderError(kind="server", message="boom", retryable=True))]
    )
    assert (await summarise(failing, request)).error is not None
    empty = ScriptedModel([ScriptedTurn(text="  ")])
    error = (await summarise(empty, request)).error
    assert error is not None and "empty summary" in error.message


class _RaisingModel:
    provider_id = "raising"
    model_id = "raising"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield TextDelta(text="partial")
        raise RuntimeError("socket closed")

    async def aclose(self) -> None:
        return None


async def test_summarise_turns_an_exception_into_an_error() -> None:
    request = summary_request("t", instructions=None, max_output_tokens=10)
    result = await summarise(_RaisingModel(), request)
    assert result.error is not None and "socket closed" in result.error.message


# ---------------------------------------------------------------------------- /compact


async def test_manual_compaction_with_instructions(tmp_path: Path) -> None:
    model = ScriptedModel(agentic_model())
    session = await make_session(
        env(tmp_path), model, tools=[dump_tool], catalog=catalog(200_000), system_prompt="Hi."
    )
    for n in range(4):
        await collect(session.run_turn(f"prompt {n}"))
    assert not any(is_summary_request(r) for r in model.requests)

    events = await collect(session.compact("keep the file names"))
    assert isinstance(events[0], CompactionStarted) and events[0].manual
    finished = events[-1]
    assert isinstance(finished, CompactionFinished) and finished.ok
    assert finished.tokens_before is not None and finished.tokens_after is not None
    assert finished.tokens_after < finished.tokens_before
    assert SUMMARY in finished.summary and "src/file1.py" in finished.summary
    usage = of(UsageUpdated, events)
    assert usage and usage[-1].context_tokens == finished.tokens_after

    summary = model.requests[-1]
    assert is_summary_request(summary)
    assert "keep the file names" in summary.messages[-1].text
    assert "prompt 0" in summary.messages[0].text

    entries = session.transcript.stored.path_entries()
    # The summary call's cost is kept after the compaction, as after any model call.
    compaction, totals = entries[-2:]
    assert isinstance(totals, ExtensionEntry) and totals.name == "usage"
    assert isinstance(compaction, CompactionEntry)
    assert compaction.instructions == "keep the file names"
    assert compaction.tokens_before == finished.tokens_before
    kept = session.transcript.stored.get(compaction.first_kept_id or "")
    assert isinstance(kept, MessageEntry) and kept.message.text == "prompt 2"
    history = session.history()
    assert history[0].text == compaction.summary
    assert [m.text for m in history[1:] if m.role == "user"] == ["prompt 2", "prompt 3"]

    # The next turn is sent from the compacted history.
    events = await collect(session.run_turn("prompt 4"))
    assert events[-1] == TurnEnded(reason="end_turn")
    assert model.requests[-1].messages[0].text.startswith(PREAMBLE_OPENING)
    await session.aclose()


async def test_manual_compaction_of_a_single_turn_says_there_is_nothing_to_do(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([ScriptedTurn(text="hello")])
    session = await make_session(env(tmp_path), model, catalog=catalog(None))
    await collect(session.run_turn("hi"))
    events = await collect(session.compact())
    finished = events[-1]
    assert isinstance(finished, CompactionFinished) and not finished.ok
    assert "nothing to compact" in (finished.error or "")
    assert len(model.requests) == 1
    await session.aclose()


async def test_a_failed_manual_compaction_records_nothing(tmp_path: Path) -> None:
    model = ScriptedModel(
        [ScriptedTurn(text=f"a{n}") for n in range(3)]
        + [
            [
                TextDelta(text="half"),
                ErrorEvent(error=ProviderError(kind="auth", message="bad key", retryable=False)),
                Finish(reason="error"),
            ]
        ]
    )
    session = await make_session(env(tmp_path), model, catalog=catalog(100_000))
    for n in range(3):
        await collect(session.run_turn(f"p{n}"))
    before = session.history()
    events = await collect(session.compact())
    finished = events[-1]
    assert isinstance(finished, CompactionFinished) and not finished.ok
    assert "bad key" in (finished.error or "")
    assert session.history() == before
    await session.aclose()


# ---------------------------------------------------------------------- in memory (subagent)


async def test_a_history_without_a_session_is_compacted_in_memory() -> None:
    model = ScriptedModel(
        [ScriptedTurn(text="memory summary", usage=UsageEvent(usage=Usage()).usage)]
    )
    info = ModelInfo(
        provider="scripted",
        id="scripted",
        name="s",
        context_window=4_000,
        max_output=None,
        vision=False,
        reasoning=False,
        tool_call=True,
        cost=None,
    )
    events: list[AgentEvent] = []
    ctx = ShapeContext(model=model, model_info=info, context_tokens=0, emit=events.append)
    shaper = ContextShaper()
    history = [message for n in range(12) for message in _turn(n, size=1_200)]
    history = [_user(m.text + " " + "p" * 1_200) if m.role == "user" else m for m in history]
    transcript = await transcript_of(*history)
    shaped = await shaper.shape_request(transcript, ctx)
    assert [type(e) for e in events] == [CompactionStarted, CompactionFinished]
    assert shaped[0].text.startswith(PREAMBLE_OPENING) and "memory summary" in shaped[0].text
    assert "f0.py" in shaped[0].text
    assert len(shaped) < len(history)
    first_kept = shaped[1]
    assert first_kept.role == "user" and any(first_kept is m for m in history)

    # Later calls apply the same cut to the growing history, without another summary.
    for message in _turn(12):
        await transcript.append(message)
    again = await shaper.shape_request(transcript, ctx)
    assert again[0] is shaped[0] and again[1] is first_kept
    assert again[-1].text == "answer 12"
    assert len(model.requests) == 1


async def test_a_huge_fresh_batch_is_squeezed_into_the_window_without_summarising_again() -> None:
    model = ScriptedModel([ScriptedTurn(text=f"summary {n}") for n in range(5)])
    info = ModelInfo(
        provider="scripted",
        id="scripted",
        name="s",
        context_window=8_000,
        max_output=None,
        vision=False,
        reasoning=False,
        tool_call=True,
        cost=None,
    )
    events: list[AgentEvent] = []
    ctx = ShapeContext(model=model, model_info=info, context_tokens=0, emit=events.append)
    shaper = ContextShaper()
    earlier = [message for n in range(6) for message in _turn(n, size=400)]
    earlier = [_user(m.text + " " + "p" * 2_000) if m.role == "user" else m for m in earlier]
    batch = [(f"b{n}", "read", f"big{n}.py") for n in range(12)]
    fresh = [
        _user("read them all"),
        _calls(*batch),
        _results(*[(call_id, "read", "z" * 3_000, False) for call_id, _, _ in batch]),
    ]
    transcript = await transcript_of(*earlier, *fresh)
    shaped = await shaper.shape_request(transcript, ctx)
    counter = TokenCounter()
    assert counter.messages(shaped) <= 8_000
    assert len(model.requests) == 1
    # The batch's results are all there (squeezed, with the cut stated), none pruned.
    results = [p for p in shaped[-1].parts if isinstance(p, ToolResultPart)]
    assert len(results) == 12 and all("characters cut here" in p.text for p in results)
    # The next call, still over the threshold, does not summarise again at once.
    answer = _answer("read them; now what?")
    await transcript.append(answer)
    await transcript.append(_user("go on"))
    again = await shaper.shape_request(transcript, ctx)
    assert len(model.requests) == 1
    assert counter.messages(again) <= 8_000


def test_render_message_refuses_a_role_it_does_not_know() -> None:
    # A role added to providers.types without a case here must fail loudly, not vanish from
    # the summary's transcript.
    stray = cast(Any, Message(role="user", parts=[TextPart(text="hidden")]))
    object.__setattr__(stray, "role", "system")
    with pytest.raises(AssertionError):
        render_message(stray)


async def test_a_cancelled_manual_compaction_is_announced_finished_as_cancelled() -> None:
    """The shaper announces every compaction (`_compact`); a manual one cancelled while its
    summary is asked for still ends with its finish, once the session settled its costs."""
    asked = anyio.Event()

    async def script(request: ModelRequest) -> ScriptedTurn:
        asked.set()
        return ScriptedTurn(text="summ", hang=True)  # then waits until cancelled

    events: list[AgentEvent] = []
    settled: list[int] = []

    async def settle() -> None:
        settled.append(len(events))

    ctx = ShapeContext(
        model=ScriptedModel(script), model_info=None, context_tokens=0, emit=events.append
    )
    history = [message for n in range(6) for message in _turn(n, size=200)]
    transcript = await transcript_of(*history)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: ContextShaper().compact(transcript, ctx, settle=settle))
            await asked.wait()
            tasks.cancel_scope.cancel()
    started, finished = events
    assert isinstance(started, CompactionStarted) and started.manual
    assert isinstance(finished, CompactionFinished)
    assert finished.compaction_id == started.compaction_id and not finished.ok
    assert finished.error == "the compaction was cancelled"
    assert settled == [1]  # before the finish
    assert transcript.history() == history


def test_only_the_shaper_announces_a_compaction() -> None:
    """One place says a compaction started (manual and automatic alike): the shaper."""
    root = Path(__file__).resolve().parents[2] / "agent"
    announcing = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if re.search(r"(?<!class )\bCompactionStarted\(", path.read_text(encoding="utf-8"))
    )
    assert announcing == ["context/shaper.py"]
