"""Usage and cost: per call, session totals, cache prices, and unknown prices staying unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.context.usage import (
    UsageTracker,
    call_cost,
    format_cost,
    format_tokens,
    usage_summary,
)
from agent.events import TextChunk, UsageUpdated, UserMessageAdded
from providers.catalog import Cost, ModelInfo
from providers.types import Usage
from providers.wire.scripted import ScriptedModel, ScriptedTurn
from sessions import ExtensionEntry, extensions
from tests.agent.context_support import catalog
from tests.agent.loop_support import collect, env, make_session, of

PRICED = Cost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


def _info(cost: Cost | None, window: int | None = 200_000) -> ModelInfo:
    return ModelInfo(
        provider="anthropic",
        id="claude-x",
        name="Claude X",
        context_window=window,
        max_output=32_000,
        vision=True,
        reasoning=True,
        tool_call=True,
        cost=cost,
    )


def test_cache_reads_and_writes_are_priced_apart_from_fresh_input() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        cached_input_tokens=200_000,
        cache_write_tokens=100_000,
        output_tokens=10_000,
        reasoning_tokens=4_000,
    )
    # 700k fresh x $3 + 200k cached x $0.30 + 100k written x $3.75 + 10k out x $15, per million.
    assert call_cost(_info(PRICED), usage) == pytest.approx(2.1 + 0.06 + 0.375 + 0.15)


def test_an_unknown_price_is_none_never_zero() -> None:
    usage = Usage(input_tokens=1_000, cached_input_tokens=500, output_tokens=10)
    assert call_cost(_info(None), usage) is None
    assert call_cost(None, usage) is None
    no_cache_price = Cost(input=3.0, output=15.0)
    assert call_cost(_info(no_cache_price), usage) is None
    # A price that this usage does not need does not matter.
    assert call_cost(_info(no_cache_price), Usage(input_tokens=1_000_000)) == pytest.approx(3.0)
    assert call_cost(_info(None), Usage()) == 0.0


def test_the_tracker_totals_calls_and_an_unknown_cost_stays_unknown() -> None:
    tracker = UsageTracker(model_info=_info(PRICED))
    first = tracker.record(Usage(input_tokens=1_000_000, output_tokens=0), context_tokens=1_000)
    assert first.cost_usd == pytest.approx(3.0)
    assert first.context_tokens == 1_000 and first.context_window == 200_000
    second = tracker.record(Usage(input_tokens=0, output_tokens=1_000_000))
    assert second.total == Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert second.cost_usd == pytest.approx(18.0)
    assert second.context_tokens == 1_000, "unchanged when not given"

    tracker.model_info = _info(None)  # /model to an unpriced model
    third = tracker.record(Usage(input_tokens=10, output_tokens=1))
    assert third.cost_usd is None
    tracker.model_info = _info(PRICED)
    assert tracker.record(Usage(input_tokens=10)).cost_usd is None, "unknown stays unknown"
    assert tracker.calls == 4


def test_a_completed_call_without_usage_makes_the_cost_unknown() -> None:
    tracker = UsageTracker(model_info=_info(PRICED))
    event = tracker.record(None)
    assert event.call == Usage() and event.cost_usd is None


def test_a_compaction_reports_the_new_context_size_without_a_call() -> None:
    tracker = UsageTracker(model_info=_info(PRICED))
    tracker.record(Usage(input_tokens=100, output_tokens=10), context_tokens=150_000)
    event = tracker.context_changed(20_000)
    assert event == UsageUpdated(
        call=Usage(),
        total=Usage(input_tokens=100, output_tokens=10),
        context_tokens=20_000,
        context_window=200_000,
        cost_usd=pytest.approx(0.00045),  # pyright: ignore[reportArgumentType]
    )


async def test_a_session_reports_usage_and_cost_for_each_call(tmp_path: Path) -> None:
    usage = Usage(input_tokens=2_000, cached_input_tokens=1_000, output_tokens=100)
    model = ScriptedModel(
        [ScriptedTurn(text="one", usage=usage), ScriptedTurn(text="two", usage=usage)]
    )
    session = await make_session(
        env(tmp_path), model, catalog=catalog(50_000, cost=PRICED), system_prompt="Hi."
    )
    first = of(UsageUpdated, await collect(session.run_turn("a")))
    second = of(UsageUpdated, await collect(session.run_turn("b")))
    per_call = (1_000 * 3.0 + 1_000 * 0.3 + 100 * 15.0) / 1_000_000
    assert [e.cost_usd for e in first + second] == [
        pytest.approx(per_call),
        pytest.approx(2 * per_call),
    ]
    assert second[-1].total == usage + usage
    assert second[-1].context_window == 50_000
    assert second[-1].context_tokens == 2_100, "the reported usage is the context size"
    await session.aclose()


async def test_a_session_on_an_unpriced_model_reports_no_cost(tmp_path: Path) -> None:
    model = ScriptedModel([ScriptedTurn(text="one", usage=Usage(input_tokens=10))])
    session = await make_session(env(tmp_path), model, catalog=catalog(50_000))
    events = of(UsageUpdated, await collect(session.run_turn("a")))
    assert len(events) == 1 and events[0].cost_usd is None
    await session.aclose()


def test_a_usage_summary_fits_one_line_and_says_what_is_unknown() -> None:
    event = UsageUpdated(
        call=Usage(input_tokens=900, output_tokens=40),
        total=Usage(input_tokens=12_345, cached_input_tokens=8_000, output_tokens=1_200),
        context_tokens=9_876,
        context_window=16_000,
        cost_usd=0.01234,
    )
    assert usage_summary(event) == (
        "tokens 12.3k in (8k cached) / 1.2k out, context 9.9k/16k (62%), $0.0123"
    )
    unknown = UsageUpdated(
        call=Usage(),
        total=Usage(input_tokens=512, output_tokens=3),
        context_tokens=515,
        context_window=None,
        cost_usd=None,
    )
    assert usage_summary(unknown) == (
        "tokens 512 in / 3 out, context 515 (window unknown), cost unknown"
    )
    assert format_cost(0.0) == "$0.0000" and format_cost(12.5) == "$12.50"
    assert format_tokens(2_500_000) == "2.5M" and format_tokens(1_000) == "1k"


async def test_a_resumed_session_continues_its_totals_and_cost(tmp_path: Path) -> None:
    where = env(tmp_path)
    first_usage = Usage(input_tokens=2_000, cached_input_tokens=1_000, output_tokens=100)
    second_usage = Usage(input_tokens=3_000, cache_write_tokens=500, output_tokens=40)
    third_usage = Usage(input_tokens=4_000, output_tokens=7, reasoning_tokens=3)
    priced = catalog(50_000, cost=PRICED)
    model = ScriptedModel(
        [
            ScriptedTurn(text="one", usage=first_usage),
            ScriptedTurn(text="two", usage=second_usage),
        ]
    )
    session = await make_session(where, model, catalog=priced, system_prompt="Hi.")
    await collect(session.run_turn("a"))
    before = of(UsageUpdated, await collect(session.run_turn("b")))[-1]
    await session.aclose()

    resumed = await make_session(
        where,
        ScriptedModel([ScriptedTurn(text="three", usage=third_usage)]),
        catalog=priced,
        system_prompt="Hi.",
        resume_id=session.id,
    )
    # The usage lines change nothing a replay shows.
    replayed = resumed.replay_events()
    assert [e.text for e in of(UserMessageAdded, replayed)] == ["a", "b"]
    assert [e.text for e in of(TextChunk, replayed)] == ["one", "two"]
    after = of(UsageUpdated, await collect(resumed.run_turn("c")))
    await resumed.aclose()

    assert len(after) == 1
    assert after[0].call == third_usage
    assert after[0].total == first_usage + second_usage + third_usage
    assert before.cost_usd is not None and before.cost_usd > 0
    third_cost = call_cost(priced.get("scripted", "scripted"), third_usage)
    assert third_cost is not None
    assert after[0].cost_usd == pytest.approx(before.cost_usd + third_cost)


async def test_an_unknown_cost_stays_unknown_after_resume(tmp_path: Path) -> None:
    where = env(tmp_path)
    unpriced = catalog(50_000)
    model = ScriptedModel([ScriptedTurn(text="one", usage=Usage(input_tokens=10))])
    session = await make_session(where, model, catalog=unpriced)
    await collect(session.run_turn("a"))
    await session.aclose()

    # The resumed model has prices, but the calls before it could not be priced.
    resumed = await make_session(
        where,
        ScriptedModel([ScriptedTurn(text="two", usage=Usage(input_tokens=20))]),
        catalog=catalog(50_000, cost=PRICED),
        resume_id=session.id,
    )
    after = of(UsageUpdated, await collect(resumed.run_turn("b")))
    await resumed.aclose()
    assert [e.total for e in after] == [Usage(input_tokens=30)]
    assert [e.cost_usd for e in after] == [None]


def test_a_malformed_usage_entry_leaves_the_totals_at_zero() -> None:
    tracker = UsageTracker(model_info=_info(PRICED))
    tracker.restore([ExtensionEntry(name=extensions.USAGE, data={"input_tokens": "many"})])
    assert tracker.total == Usage() and tracker.cost_usd == 0.0
    tracker.record(Usage(input_tokens=5, output_tokens=1), context_tokens=6)
    restored = UsageTracker()
    restored.restore([tracker.snapshot(), ExtensionEntry(name="plan", data=[])])
    assert (restored.total, restored.cost_usd, restored.context_tokens) == (
        tracker.total,
        tracker.cost_usd,
        6,
    )
