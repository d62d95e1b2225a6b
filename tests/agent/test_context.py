"""The shapers end to end: a long session never overflows, compacts when it should, and a
reloaded session builds the same request history."""

from __future__ import annotations

import re
from pathlib import Path

from agent.compaction import PREAMBLE_OPENING, is_summary_request
from agent.context import ContextShaper
from agent.events import CompactionFinished, CompactionStarted, TurnEnded, UsageUpdated
from providers.wire.scripted import ScriptedModel
from sessions import CompactionEntry, SessionStore
from tests.agent.context_support import (
    SUMMARY,
    agentic_model,
    catalog,
    dump_tool,
    request_tokens,
)
from tests.agent.loop_support import collect, env, make_session, of

WINDOW = 16_000


async def test_a_300_turn_session_never_sends_a_request_over_the_window(tmp_path: Path) -> None:
    where = env(tmp_path)
    model = ScriptedModel(agentic_model(window=WINDOW))
    session = await make_session(
        where, model, tools=[dump_tool], catalog=catalog(WINDOW), system_prompt="You help."
    )
    finished: list[CompactionFinished] = []
    started: list[CompactionStarted] = []
    for turn in range(300):
        events = await collect(session.run_turn(f"turn {turn}: " + "please dump it. " * 20))
        assert events[-1] == TurnEnded(reason="end_turn")
        finished += of(CompactionFinished, events)
        started += of(CompactionStarted, events)

    sizes = [request_tokens(request) for request in model.requests]
    assert max(sizes) <= WINDOW
    threshold = int(WINDOW * 0.8)
    normal = [r for r in model.requests if not is_summary_request(r)]
    assert max(request_tokens(r) for r in normal) <= threshold

    # Compacted when it had to, and only then.
    assert len(started) == len(finished) >= 3
    assert all(not event.manual for event in started)
    assert all(event.ok for event in finished)
    for event in finished:
        assert event.tokens_before is not None and event.tokens_after is not None
        assert event.tokens_before > threshold > event.tokens_after
    summaries = [r for r in model.requests if is_summary_request(r)]
    assert len(summaries) == len(finished)
    entries = [e for e in session._stored.path_entries() if isinstance(e, CompactionEntry)]  # pyright: ignore[reportPrivateUsage]
    assert len(entries) == len(finished)
    assert all(SUMMARY in entry.summary for entry in entries)
    assert "src/file1.py" in entries[-1].summary, "files touched survive every compaction"

    # Requests after a compaction start from its preamble.
    last = normal[-1]
    assert last.messages[0].text.startswith(PREAMBLE_OPENING)

    # The stored history is complete, and a reload rebuilds exactly the same request history.
    before = session.history()
    all_messages = [e for e in session._stored.path_entries() if e.kind == "message"]  # pyright: ignore[reportPrivateUsage]
    assert len(all_messages) == 300 * 4
    shaped_before = ContextShaper().shape(before, WINDOW)
    session_id = session.id
    await session.aclose()
    reopened = await SessionStore(where.data / "sessions").open(session_id)
    after = reopened.history()
    assert after == before
    assert ContextShaper().shape(after, WINDOW) == shaped_before
    await reopened.aclose()


async def test_usage_events_report_the_context_against_the_window(tmp_path: Path) -> None:
    model = ScriptedModel(agentic_model())
    session = await make_session(
        env(tmp_path), model, tools=[dump_tool], catalog=catalog(WINDOW), system_prompt="Hi."
    )
    events = await collect(session.run_turn("dump one"))
    updates = of(UsageUpdated, events)
    assert len(updates) == 2
    first, second = updates
    assert first.context_window == WINDOW and second.context_window == WINDOW
    assert first.context_tokens == request_tokens(model.requests[0]) + 30
    assert second.context_tokens == request_tokens(model.requests[1]) + 30
    assert second.total.input_tokens == first.call.input_tokens + second.call.input_tokens
    await session.aclose()


async def test_an_unknown_window_never_compacts_automatically(tmp_path: Path) -> None:
    model = ScriptedModel(agentic_model(dump_size=40_000))
    session = await make_session(
        env(tmp_path), model, tools=[dump_tool], catalog=catalog(None), system_prompt="Hi."
    )
    assert session.model_info is not None and session.model_info.context_window is None
    for turn in range(12):
        events = await collect(session.run_turn(f"turn {turn}"))
        assert of(CompactionStarted, events) == []
    assert not any(is_summary_request(r) for r in model.requests)
    # Capping and pruning still apply (their defaults do not depend on a window).
    assert request_tokens(model.requests[-1]) < 12 * 10_000
    await session.aclose()


async def test_without_a_catalog_there_is_no_window_and_no_compaction(tmp_path: Path) -> None:
    model = ScriptedModel(agentic_model(dump_size=8_000))
    session = await make_session(env(tmp_path), model, tools=[dump_tool])
    for turn in range(5):
        events = await collect(session.run_turn(f"turn {turn}"))
        assert of(CompactionStarted, events) == []
    await session.aclose()


async def test_when_no_summary_can_be_had_an_overflow_drops_the_earlier_part(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(agentic_model(window=WINDOW, summary=""))  # empty summary: a failure
    session = await make_session(
        env(tmp_path), model, tools=[dump_tool], catalog=catalog(WINDOW), system_prompt="Hi."
    )
    outcomes: list[CompactionFinished] = []
    for turn in range(80):
        events = await collect(session.run_turn(f"turn {turn}: " + "more text " * 40))
        assert events[-1] == TurnEnded(reason="end_turn")
        outcomes += of(CompactionFinished, events)
    failed = [e for e in outcomes if not e.ok]
    dropped = [e for e in outcomes if e.ok]
    assert failed and all("empty summary" in (e.error or "") for e in failed)
    assert dropped, "an overflow with no summary available leaves the earlier part out"
    assert all("could not be summarised" in e.summary for e in dropped)
    assert "The user's requests in that part" in dropped[0].summary
    assert re.search(r"- turn \d+: more text", dropped[0].summary), "earlier requests are kept"
    summaries = sum(1 for r in model.requests if is_summary_request(r))
    assert summaries <= 2 * len(dropped) + 8, "a failing summariser is not asked on every call"
    await session.aclose()
